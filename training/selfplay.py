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

import numpy as np
import torch

from hanamikoji_env.nn import PolicyNet

SELF = -1
"""Opponent code of a pure self-play game."""


class OpponentPool:
    """Past snapshots of the policy, as frozen networks."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.nets: list[PolicyNet] = []

    def add(self, model: PolicyNet) -> None:
        snap = copy.deepcopy(model).eval()
        for p in snap.parameters():
            p.requires_grad_(False)
        self.nets.append(snap)
        del self.nets[: -self.size]

    def state(self) -> list[dict[str, torch.Tensor]]:
        return [net.state_dict() for net in self.nets]

    def load(self, states: list[dict[str, torch.Tensor]], config: dict[str, int]) -> None:
        self.nets = []
        for sd in states:
            net = PolicyNet(**config)
            net.load_state_dict(sd)
            self.add(net)


class OpponentSchedule:
    """Draws each new game's opponent code: SELF, a pool slot (>= 0), or a bot (<= -2)."""

    def __init__(self, pool_share: float, bot_shares: dict[str, float]) -> None:
        self.bots = sorted(name for name, share in bot_shares.items() if share > 0)
        shares = [pool_share] + [bot_shares[b] for b in self.bots]
        self.cumulative = np.cumsum(shares)

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
