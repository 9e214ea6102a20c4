"""Bots: each has ``reset(seed=None)`` and ``act(obs) -> int``.  Most are ``Bot(seed=0, **options)``;
those that play a trained policy take it first: ``PolicyBot(path, seed=0, ...)``,
``RolloutBot(policy, seed=0, ...)``, ``PolicySearchBot(policy, seed=0, ...)``,
``SB3Bot(path, seed=0, ...)``.  A player spec (:mod:`hanamikoji_env.bots.spec`) builds any of
them by name.

``act`` gets the acting agent's observation dict from the AEC env and nothing
else, so no bot can see what its player may not know.

``PolicyBot``, ``RolloutBot``, ``PolicySearchBot`` and ``SB3Bot`` need torch (and SB3Bot
sb3-contrib): they are imported on first use, so ``import hanamikoji_env.bots``
stays light.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from hanamikoji_env.bots.base import Bot
from hanamikoji_env.bots.heuristic import HeuristicBot
from hanamikoji_env.bots.random import RandomBot
from hanamikoji_env.bots.search import SearchBot
from hanamikoji_env.bots.spec import PlayerSpec, parse_player
from hanamikoji_env.excerpt import short

if TYPE_CHECKING:
    from hanamikoji_env.bots.policy import PolicyBot
    from hanamikoji_env.bots.psearch import PolicySearchBot
    from hanamikoji_env.bots.rollout import RolloutBot
    from hanamikoji_env.bots.sb3 import SB3Bot

_LAZY = {
    "PolicyBot": "hanamikoji_env.bots.policy",
    "PolicySearchBot": "hanamikoji_env.bots.psearch",
    "RolloutBot": "hanamikoji_env.bots.rollout",
    "SB3Bot": "hanamikoji_env.bots.sb3",
}

__all__ = [
    "Bot",
    "HeuristicBot",
    "PlayerSpec",
    "PolicyBot",
    "PolicySearchBot",
    "RandomBot",
    "RolloutBot",
    "SB3Bot",
    "SearchBot",
    "parse_player",
]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'hanamikoji_env.bots' has no attribute {short(name)}")
