"""Timed games for the benchmarks: how long one bot takes over each of its decisions.

``from timing import timed_decisions`` in a benchmark script (run as ``python benchmarks/X.py``,
so this folder is on the import path).
"""

from __future__ import annotations

from collections.abc import Iterator

from hanamikoji_env.bots.base import Bot
from hanamikoji_env.games import Watcher, play_env


def timed_decisions(bot: Bot, opponent: Bot, games: int, first_deal: int) -> Iterator[tuple[dict, float]]:
    """``bot`` against ``opponent`` in ``games`` games in the AEC env (deals ``first_deal``,
    ``first_deal + 1``, ...; ``bot`` seated first in even games, both bots reset with the game's
    number): yields ``(observation, milliseconds)`` for each of ``bot``'s decisions."""
    for g in range(games):
        me = f"player_{g % 2}"
        bot.reset(seed=g)
        opponent.reset(seed=g)
        moves: list[tuple[str, dict, float]] = []
        play_env(
            (bot, opponent) if g % 2 == 0 else (opponent, bot), first_deal + g, None, watch=moves_into(moves)
        )
        yield from ((obs, 1000 * seconds) for agent, obs, seconds in moves if agent == me)


def moves_into(moves: list[tuple[str, dict, float]]) -> Watcher:
    """A watcher keeping each move's agent, observation and seconds in ``moves``."""
    return lambda e, agent, obs, action, seconds: moves.append((agent, obs, seconds))
