"""Every loop that plays games between two players, in one place.

- :func:`play_env` (and :func:`play_game`, its result): one game on the AEC env, each bot
  reading its own observation version.  The tournament's one-game-at-a-time path, the boards'
  watched games, the first-run check, the demo and the benchmarks' timed games.
- :func:`play_lockstep`: many games on AEC envs at once, each bot making its moves in all the
  games where it is to act with one ``act_batch`` call, every game the one :func:`play_env`
  plays.  The tournament's default path for batched bots.
- :func:`play_batch`: every game of the batch engine (:class:`~hanamikoji_env.vector.BatchEngine`)
  once to its end, each side a :data:`BatchPlayer`.  The training monitor's evaluations.

Training's own rollouts (``training/collector.py``) step the batch engine in their own loop:
they keep every game going, record each decision and start new ones, where these play a set of
games to their ends.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING

import numpy as np

from hanamikoji_env.aec import raw_env
from hanamikoji_env.bots.base import Bot

if TYPE_CHECKING:  # the batch engine is imported by its users, not by every game played here
    from hanamikoji_env.vector import BatchEngine

Watcher = Callable[[raw_env, str, dict[str, np.ndarray], int, float], None]
"""Called after each move of :func:`play_env`: the env after it, the agent that moved, what it
saw, its action and the seconds its bot took."""

BatchPlayer = Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]
"""One side of :func:`play_batch`: ``(observations, masks, rows)`` of the games where it is to
move (``rows``: their indices in the engine) -> their actions."""


def play_game(bots: tuple[Bot, Bot], deal_seed: int, round_limit: int | None) -> tuple[float, int]:
    """One game, ``bots[0]`` as player_0; returns (player_0's reward, rounds played)."""
    history = play_env(bots, deal_seed, round_limit).history()
    return history.rewards[0], history.round


def play_env(
    bots: tuple[Bot, Bot], deal_seed: int, round_limit: int | None,
    watch: Watcher | None = None, render_mode: str | None = None, env: raw_env | None = None,
) -> raw_env:  # fmt: skip
    """One game, ``bots[0]`` as player_0; returns the finished env (its rewards and history).
    ``watch`` sees every move (:data:`Watcher`); ``render_mode`` is the env's.  ``env``: the env
    to play in (reset here; ``round_limit`` and ``render_mode`` are then its own), for a caller
    that must see the game while it is played."""
    e = raw_env(render_mode=render_mode, round_limit=round_limit) if env is None else env
    e.reset(seed=deal_seed)
    seats = {"player_0": bots[0], "player_1": bots[1]}
    for agent in e.agent_iter():
        _, _, term, trunc, _ = e.last(observe=False)
        if term or trunc:
            e.step(None)
            continue
        bot = seats[agent]
        obs = e.observe(agent, bot.observation_version)
        start = time.perf_counter()
        action = bot.act(obs)
        seconds = time.perf_counter() - start
        e.step(action)
        if watch is not None:
            watch(e, agent, obs, action, seconds)
    return e


def _pending(e: raw_env) -> bool:
    """Whether an agent is to act in ``e``; False once the game is over (the agents' closing
    ``step(None)`` done)."""
    while e.agents:
        _, _, term, trunc, _ = e.last(observe=False)
        if not (term or trunc):
            return True
        e.step(None)
    return False


def play_lockstep(
    bots: tuple[Bot, Bot], deal_seeds: Sequence[int], seats: Sequence[int],
    rngs: tuple[Sequence[np.random.Generator], Sequence[np.random.Generator]], round_limit: int | None,
) -> Iterator[tuple[int, raw_env]]:  # fmt: skip
    """Games ``g`` = 0, 1, ... all at once: game ``g`` deals from ``deal_seeds[g]`` with
    ``bots[0]`` in seat ``seats[g]``, bot ``i`` drawing from ``rngs[i][g]`` and keeping a game
    state of its own there, so each game is the one :func:`play_env` plays with bots reset to
    those generators.  Every step each bot moves in all the games where it is to act with one
    ``act_batch`` call.  Yields ``(g, finished env)`` as games end."""
    envs = []
    for deal_seed in deal_seeds:
        e = raw_env(round_limit=round_limit)
        e.reset(seed=deal_seed)
        envs.append(e)
    states: tuple[list[tuple[int, ...]], list[tuple[int, ...]]] = ([()] * len(envs), [()] * len(envs))
    live = list(range(len(envs)))
    while live:
        waiting: tuple[list[int], list[int]] = ([], [])
        views: tuple[list[dict[str, np.ndarray]], list[dict[str, np.ndarray]]] = ([], [])
        for g in live:
            if not _pending(envs[g]):
                yield g, envs[g]
                continue
            agent = envs[g].agent_selection
            who = 0 if agent == f"player_{seats[g]}" else 1
            waiting[who].append(g)
            views[who].append(envs[g].observe(agent, bots[who].observation_version))
        for who, bot in enumerate(bots):
            if not waiting[who]:
                continue
            own = [states[who][g] for g in waiting[who]]
            actions = bot.act_batch(
                np.stack([v["observation"] for v in views[who]]),
                np.stack([v["action_mask"] for v in views[who]]),
                rngs=[rngs[who][g] for g in waiting[who]],
                states=own,
            )
            for g, action, state in zip(waiting[who], actions, own, strict=True):
                states[who][g] = state
                envs[g].step(int(action))
        live = waiting[0] + waiting[1]


def play_batch(
    engine: BatchEngine, players: tuple[BatchPlayer, BatchPlayer], seats: np.ndarray
) -> np.ndarray:
    """Every game of ``engine``, reset, to its end, ``players[0]`` in seat ``seats[g]`` of game
    ``g``; returns ``players[0]``'s final reward in each game.  A game that ends restarts in the
    engine; its new game is played on (any legal move) and not counted."""
    obs, mask, to_play = engine.reset()
    result = np.full(engine.num_envs, np.nan)
    while np.isnan(result).any():
        live = np.isnan(result)
        actions = mask.argmax(1)  # games already over: any legal move
        for who, player in enumerate(players):
            rows = np.flatnonzero(live & ((to_play == seats) == (who == 0)))
            if rows.size:
                actions[rows] = player(obs[rows], mask[rows], rows)
        obs, mask, to_play, rewards, done, _ = engine.step(actions)
        first = done & np.isnan(result)
        result[first] = rewards[first, seats[first]]
    return result
