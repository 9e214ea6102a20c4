"""What both Tianshou recipes share: the env Tianshou steps, their seeding, and Tianshou's
two-seat returns kept out of the log.  Used by ``tianshou_dqn`` and ``tianshou_ppo``."""

from __future__ import annotations

import logging

import numpy as np
import torch
from tianshou.env.pettingzoo_env import PettingZooEnv

from hanamikoji_env import raw_env


def make(variant: str = "full") -> PettingZooEnv:
    """The env Tianshou steps: ``variant`` ``mini`` for the small game measured exactly."""
    return PettingZooEnv(raw_env(variant=variant))


def seed_all(seed: int) -> None:
    """Seed torch (the networks, the moves sampled) and numpy's global generator, which Tianshou
    draws minibatches, exploration and replay samples from (and seeds so itself in its high-level
    API)."""
    torch.manual_seed(seed)
    np.random.seed(seed)


def _not_two_seat_returns(record: logging.LogRecord) -> bool:
    return "but only 1D sequences are supported" not in record.getMessage()


def quiet_two_seat_stats() -> None:
    """Tianshou's collector summarises a game's returns (one column a seat) before the trainer
    reduces them with ``multi_agent_return_reduction``, and logs a warning each time it does: a
    line every collect, megabytes a run.  Those warnings alone are dropped."""
    logging.getLogger("tianshou.data.stats").addFilter(_not_two_seat_returns)
