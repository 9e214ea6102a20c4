"""Who the learner plays: itself, a pool of its past snapshots, or baseline bots.

At the start of every game in every env the trainer draws the opponent:

- with probability ``pool_share`` a past snapshot of the policy (uniform over
  the pool, which keeps the ``pool_size`` most recent snapshots, one taken
  every ``snapshot_every`` updates; until the first snapshot the current
  policy stands in);
- with probability ``bot_shares[name]`` that baseline bot;
- otherwise the current policy itself: both seats are the learner and both
  seats' decisions are training data.

Against a snapshot or a bot the learner takes a random seat and only its
decisions are trained on.  Defaults (``training/config.py``): 30% pool, 5%
heuristic, 5% random, 60% pure self-play, so the policy keeps beating its
own past and the fixed baselines instead of chasing its own tail.
"""

from __future__ import annotations

import copy
from collections.abc import Callable

import numpy as np
import torch

from hanamikoji_env.bots.base import Bot
from hanamikoji_env.bots.spec import parse_player
from hanamikoji_env.nn import PolicyNet, PolicyStack
from hanamikoji_env.vector import BatchEngine

SELF = -1
"""Opponent code of a pure self-play game."""
SNAPSHOTS = "snapshots"
"""The name of the pool of past snapshots as one opponent (results, a league's shares)."""


class OpponentPool:
    """Past snapshots of the policy, frozen.  They play as one network (:class:`PolicyStack`):
    one batched call for all the rows they play, however many snapshots those rows belong to."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.nets: list[PolicyNet] = []
        self._stack: PolicyStack | None = None
        """The snapshots stacked; built on first use after the pool changes."""

    def add(self, model: PolicyNet) -> None:
        snap = copy.deepcopy(model).eval()
        for p in snap.parameters():
            p.requires_grad_(False)
        self.nets.append(snap)
        del self.nets[: -self.size]
        self._stack = None

    def logits(self, slots: np.ndarray, obs: np.ndarray, mask: np.ndarray) -> torch.Tensor:
        """Masked logits ``[n, 23]`` on the CPU: row i is snapshot ``slots[i]``'s at ``obs[i]``."""
        if self._stack is None:
            self._stack = PolicyStack(self.nets)
        return self._stack.logits(slots, obs, mask)

    def state(self) -> list[dict[str, torch.Tensor]]:
        return [net.state_dict() for net in self.nets]

    def load(
        self, states: list[dict[str, torch.Tensor]], config: dict[str, int], observation_version: int
    ) -> None:
        self.nets = []
        for sd in states:
            net = PolicyNet(**config, observation_version=observation_version)
            net.load_state_dict(sd)
            self.add(net)


class OpponentSchedule:
    """Draws each new game's opponent code: SELF, a pool slot (>= 0), or a bot (<= -2)."""

    def __init__(self, pool_share: float, bot_shares: dict[str, float]) -> None:
        self.bots = sorted(name for name, share in bot_shares.items() if share > 0)
        """The bots by code (``-2 - index``); a league appends its exploiters, so codes stay."""
        self.set_shares(pool_share, bot_shares)

    def set_shares(self, pool_share: float, bot_shares: dict[str, float]) -> None:
        """New games' shares from now on: the pool's and each of :attr:`bots`' (missing: 0)."""
        self.cumulative = np.cumsum([pool_share] + [bot_shares.get(b, 0.0) for b in self.bots])

    def add_bot(self, name: str) -> None:
        """A new opponent, with share 0 until :meth:`set_shares` gives it one."""
        self.bots.append(name)
        self.cumulative = np.append(self.cumulative, self.cumulative[-1])

    def bot_code(self, name: str) -> int:
        return -2 - self.bots.index(name)

    def bot_name(self, code: int) -> str:
        return self.bots[-2 - code]

    def draw(self, rng: np.random.Generator, n: int, pool_len: int) -> np.ndarray:
        u = rng.random(n)
        which = np.searchsorted(self.cumulative, u, side="right")  # 0 pool, 1.. bots, len: self
        slots = rng.integers(0, max(pool_len, 1), n)
        codes = np.full(n, SELF, dtype=np.int64)
        if pool_len:  # until the first snapshot, pool games are self-play
            codes[which == 0] = slots[which == 0]
        for k, _ in enumerate(self.bots):
            codes[which == k + 1] = -2 - k
        return codes


def make_bot(spec: str, seed: int, round_limit: int | None) -> Bot:
    """A bot from a player spec (``random``, ``heuristic``, ``search:samples=100``, or a frozen
    checkpoint: ``ckpt:PATH`` plays greedy, ``sampled:ckpt=PATH`` samples its policy)."""
    return parse_player(spec).make(seed, round_limit)


def views_for(
    bot: Bot, engine: BatchEngine, obs: np.ndarray, mask: np.ndarray, rows: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The observations and masks of the seat to move in the engine's ``rows``, in ``bot``'s
    observation version: ``obs`` and ``mask`` (those rows' in the engine's version) where the
    bot reads that one, else encoded anew."""
    if bot.observation_version == engine.encoding.number:
        return obs, mask
    seen, legal = engine.observe(engine.to_play(), bot.observation_version)
    return seen[rows], legal[rows]


def bot_moves(
    bot: Bot, obs: np.ndarray, mask: np.ndarray, envs: np.ndarray, states: dict[int, tuple[int, ...]]
) -> np.ndarray:
    """``bot``'s moves in the games ``envs`` (their rows of ``obs`` and ``mask``): one bot plays
    many games, each with its own game state in ``states`` (env -> state, updated)."""
    games = [states.get(int(i), ()) for i in envs]
    actions = bot.act_batch(obs, mask, states=games)
    for i, state in zip(envs, games, strict=True):
        if state:
            states[int(i)] = state
        else:
            states.pop(int(i), None)
    return actions


GameStates = dict[int, tuple[int, ...]]
"""Env -> a bot's game state in the game there (``Bot.game_state``; ``()`` states are not kept)."""


def states_to_lists(states: GameStates) -> list[list[int]]:
    """``states`` for a checkpoint: ``[[env, *state], ...]`` (lists of ints only)."""
    return [[env, *state] for env, state in states.items() if state]


def states_from_lists(saved: list[list[int]]) -> GameStates:
    """:func:`states_to_lists`'s lists back as game states."""
    return {int(p[0]): tuple(int(x) for x in p[1:]) for p in saved}


Sample = Callable[[torch.Tensor], np.ndarray]
"""Actions sampled from masked logits ``[n, 23]``: how snapshots play."""


class Opponents:
    """Who plays the other seat of each env's game: the opponent code and the learner's seat
    per env, the snapshot pool, the bots and each game's bot state."""

    def __init__(
        self, num_envs: int, pool_size: int, pool_share: float, bot_shares: dict[str, float],
        seed: int, round_limit: int | None,
    ) -> None:  # fmt: skip
        self.pool = OpponentPool(pool_size)
        self.schedule = OpponentSchedule(pool_share, bot_shares)
        self.bots = {name: make_bot(name, seed, round_limit) for name in self.schedule.bots}
        self.code = np.full(num_envs, SELF, dtype=np.int64)
        """Per env: SELF, a pool slot (>= 0) or a bot (<= -2)."""
        self.learner_seat = np.zeros(num_envs, dtype=np.int64)
        self.bot_states: GameStates = {}
        """Env -> its bot opponent's game state (``Bot.game_state``)."""
        self.seed, self.round_limit = seed, round_limit
        self.results: dict[str, list[float]] = {}
        """Opponent name -> [learner's wins (draws half), games] of the games finished since
        :meth:`take_results` (snapshots are one opponent, :data:`SNAPSHOTS`)."""

    def add_bot(self, spec: str) -> None:
        """A new opponent for the rest of the run (a league's exploiter), share 0 until set."""
        self.schedule.add_bot(spec)
        self.bots[spec] = make_bot(spec, self.seed, self.round_limit)

    def opponent_name(self, code: int) -> str:
        """The name an opponent code stands for: a bot's spec, or ``snapshots``."""
        return SNAPSHOTS if code >= 0 else self.schedule.bot_name(code)

    def finished(self, envs: np.ndarray, rewards: np.ndarray) -> None:
        """Count the learner's results in the games that just ended in ``envs`` (``rewards``:
        the engine's, ``[N, 2]`` by seat), against snapshots and bots (not self-play)."""
        for i in envs:
            code = int(self.code[i])
            if code == SELF:
                continue
            reward = rewards[i, self.learner_seat[i]]
            tally = self.results.setdefault(self.opponent_name(code), [0.0, 0])
            tally[0] += 1.0 if reward > 0 else 0.5 if reward == 0 else 0.0
            tally[1] += 1

    def take_results(self) -> dict[str, tuple[float, int]]:
        """The results counted since the last call (and forget them)."""
        out = {name: (won, int(games)) for name, (won, games) in self.results.items()}
        self.results = {}
        return out

    def new_games(self, envs: np.ndarray, rng: np.random.Generator) -> None:
        """Draw the opponent and the learner's seat for the games starting in ``envs``."""
        self.code[envs] = self.schedule.draw(rng, len(envs), len(self.pool.nets))
        self.learner_seat[envs] = rng.integers(0, 2, len(envs))
        for i in envs:
            self.bot_states.pop(int(i), None)

    def is_learner(self, seats: np.ndarray) -> np.ndarray:
        """Per env: is the seat to move the learner's (both seats are, in pure self-play)?"""
        return (self.code == SELF) | (seats == self.learner_seat)

    def moves(
        self, rows: np.ndarray, obs: np.ndarray, mask: np.ndarray, *, rng: np.random.Generator,
        sample: Sample, engine: BatchEngine,
    ) -> np.ndarray:  # fmt: skip
        """The moves in the engine's ``rows`` where a snapshot or a bot is to play (``obs`` and
        ``mask``: the whole batch, the engine's version; a bot that reads another gets its own
        from ``engine``), aligned with ``rows``.  Snapshots' moves come from ``sample``, the bots'
        draws from ``rng``."""
        out = np.zeros(rows.size, np.int64)
        codes = self.code[rows]
        pooled = codes >= 0
        if pooled.any():  # every snapshot's rows in one batched call
            sub = rows[pooled]
            out[pooled] = sample(self.pool.logits(codes[pooled], obs[sub], mask[sub]))
        for code in np.unique(codes[~pooled]):
            at = codes == code
            sub = rows[at]
            bot = self.bots[self.schedule.bot_name(code)]
            seen, legal = views_for(bot, engine, obs[sub], mask[sub], sub)
            if bot.batched:  # one compiled or network call for all the games it plays
                bot.seed(int(rng.integers(2**31)))  # its draws from the run's generator
                out[at] = bot_moves(bot, seen, legal, sub, self.bot_states)
            else:
                one = np.zeros(sub.size, np.int64)
                for k, i in enumerate(sub):
                    bot.seed(int(rng.integers(2**31)))  # each decision's draws from the run's generator
                    one[k] = bot_moves(bot, seen[[k]], legal[[k]], np.array([i]), self.bot_states)[0]
                out[at] = one
        return out

    def state(self) -> dict[str, object]:
        """For checkpoints (tensors and lists of ints only)."""
        return {
            "pool": self.pool.state(),
            "opponent": torch.as_tensor(self.code),
            "learner_seat": torch.as_tensor(self.learner_seat),
            "bot_states": states_to_lists(self.bot_states),
        }

    def load(self, data: dict, model_config: dict[str, int], observation_version: int) -> None:
        self.pool.load(data["pool"], model_config, observation_version)
        self.code = data["opponent"].numpy().copy()
        self.learner_seat = data["learner_seat"].numpy().copy()
        saved = data.get("bot_states", data.get("plans", []))  # older checkpoints name it "plans"
        self.bot_states = states_from_lists(saved)
