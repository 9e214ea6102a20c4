"""hanamikoji-env: the Hanamikoji card game as a PettingZoo AEC environment.

>>> from hanamikoji_env import env
>>> e = env()
>>> e.reset(seed=0)
>>> e.agent_selection
'player_0'
"""

from __future__ import annotations

from typing import Any

from hanamikoji_env._version import __version__
from hanamikoji_env.aec import env, raw_env
from hanamikoji_env.excerpt import short

__all__ = ["BatchEngine", "__version__", "env", "raw_env"]


def __getattr__(name: str) -> Any:
    # the batch engine imports numba (slow to import): load it on first use only
    if name in ("BatchEngine", "VectorHanamikoji"):
        from hanamikoji_env import vector

        return getattr(vector, name)
    raise AttributeError(f"module 'hanamikoji_env' has no attribute {short(name)}")


GYMNASIUM_ID = "hanamikoji/HanamikojiVsBot-v0"
"""``gymnasium.make(GYMNASIUM_ID, opponent="heuristic")``: the learner's seat against a bot
(:class:`hanamikoji_env.wrappers.SingleAgentEnv`, its keywords as ``make``'s)."""

import gymnasium  # noqa: E402 - registered once the package's names are defined

if GYMNASIUM_ID not in gymnasium.registry:
    gymnasium.register(GYMNASIUM_ID, entry_point="hanamikoji_env.wrappers:SingleAgentEnv")

try:  # PettingZoo >= 1.26 has a registry: make("aec", "hanamikoji/Hanamikoji-v0")
    from pettingzoo import aec_registry, register

    if "hanamikoji/Hanamikoji-v0" not in aec_registry:
        register("aec", "hanamikoji/Hanamikoji-v0", entry_point="hanamikoji_env.aec:env")
except ImportError:  # pragma: no cover - older PettingZoo
    pass
