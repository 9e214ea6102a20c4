"""Timed games for the benchmarks: how long one bot takes over each of its decisions.

``from timing import timed_decisions`` in a benchmark script (run as ``python benchmarks/X.py``,
so this folder is on the import path).
"""

from __future__ import annotations

import time
from collections.abc import Iterator

from hanamikoji_env import env
from hanamikoji_env.bots.base import Bot


def timed_decisions(bot: Bot, opponent: Bot, games: int, first_deal: int) -> Iterator[tuple[dict, float]]:
    """``bot`` against ``opponent`` in ``games`` games in the AEC env (deals ``first_deal``,
    ``first_deal + 1``, ...; ``bot`` seated first in even games, both bots reset with the game's
    number): yields ``(observation, milliseconds)`` for each of ``bot``'s decisions."""
    for g in range(games):
        e = env()
        e.reset(seed=first_deal + g)
        me = f"player_{g % 2}"
        bot.reset(seed=g)
        opponent.reset(seed=g)
        for name in e.agent_iter():
            obs, _, term, trunc, _ = e.last()
            if term or trunc:
                e.step(None)
            elif name != me:
                e.step(opponent.act(obs))
            else:
                start = time.perf_counter()
                action = bot.act(obs)
                yield obs, 1000 * (time.perf_counter() - start)
                e.step(action)
