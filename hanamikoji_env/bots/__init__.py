"""Bots: every one is ``Bot(seed=0, **options)`` with ``reset(seed=None)`` and ``act(obs) -> int``.

``act`` gets the acting agent's observation dict from the AEC env and nothing
else, so no bot can see what its player may not know.
"""

from __future__ import annotations

from hanamikoji_env.bots.base import Bot
from hanamikoji_env.bots.heuristic import HeuristicBot
from hanamikoji_env.bots.random import RandomBot
from hanamikoji_env.bots.search import SearchBot

__all__ = ["Bot", "HeuristicBot", "RandomBot", "SearchBot"]
