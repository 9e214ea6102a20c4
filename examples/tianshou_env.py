"""What both Tianshou recipes share: the env Tianshou steps, and its two-seat returns kept out of
the log.  Used by ``tianshou_dqn`` and ``tianshou_ppo``."""

from __future__ import annotations

import logging

from tianshou.env.pettingzoo_env import PettingZooEnv

from hanamikoji_env import raw_env


def make(variant: str = "full") -> PettingZooEnv:
    """The env Tianshou steps: ``variant`` ``mini`` for the small game measured exactly."""
    return PettingZooEnv(raw_env(variant=variant))


def _not_two_seat_returns(record: logging.LogRecord) -> bool:
    return "but only 1D sequences are supported" not in record.getMessage()


def quiet_two_seat_stats() -> None:
    """Tianshou's collector summarises a game's returns (one column a seat) before the trainer
    reduces them with ``multi_agent_return_reduction``, and logs a warning each time it does: a
    line every collect, megabytes a run.  Those warnings alone are dropped."""
    logging.getLogger("tianshou.data.stats").addFilter(_not_two_seat_returns)
