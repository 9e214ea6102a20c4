"""Bots playing whole games on the AEC env: the one driver of a game between two bots.

The tournament, the boards' watched games and the benchmarks play through it, so a
game is played one way everywhere: each bot reads its own observation version.
"""

from __future__ import annotations

from hanamikoji_env.aec import raw_env
from hanamikoji_env.bots.base import Bot


def play_game(bots: tuple[Bot, Bot], deal_seed: int, round_limit: int | None) -> tuple[float, int]:
    """One game, ``bots[0]`` as player_0; returns (player_0's reward, rounds played)."""
    history = play_env(bots, deal_seed, round_limit).history()
    return history.rewards[0], history.round


def play_env(bots: tuple[Bot, Bot], deal_seed: int, round_limit: int | None) -> raw_env:
    """One game, ``bots[0]`` as player_0; returns the finished env (its rewards and history)."""
    e = raw_env(round_limit=round_limit)
    e.reset(seed=deal_seed)
    seats = {"player_0": bots[0], "player_1": bots[1]}
    for agent in e.agent_iter():
        _, _, term, trunc, _ = e.last(observe=False)
        bot = seats[agent]
        e.step(None if term or trunc else bot.act(e.observe(agent, bot.observation_version)))
    return e
