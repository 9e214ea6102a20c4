"""The RL clients users train with, each through the shipped recipe in ``examples/``
(``hanamikoji_env.examples``): Tianshou 2.x, TorchRL and the PettingZoo SB3 tutorial's wrapper.
They play ``raw_env``, which raises on an illegal move, so a run that finishes made none.  CI
installs every client (the ``tianshou``, ``torchrl`` and ``sb3`` extras); elsewhere a missing one
skips."""

from __future__ import annotations

import pytest
from helpers import extra


@pytest.mark.slow
def test_tianshou_trains_masked_dqn_for_both_seats() -> None:
    extra("tianshou")
    from hanamikoji_env.examples import tianshou_dqn

    gradient_steps, env_steps = tianshou_dqn.main(steps=2000)
    assert gradient_steps >= 40 and env_steps >= 2000


@pytest.mark.slow
def test_tianshou_trains_masked_ppo_in_self_play() -> None:
    extra("tianshou")
    from hanamikoji_env.examples import tianshou_ppo

    updates, games = tianshou_ppo.main(steps=3000)
    assert updates >= 5 and games >= 20


def test_tianshous_envs_play_the_variant_asked_for() -> None:
    """The algorithm table's mini rows step Tianshou's ``PettingZooEnv`` over the mini game."""
    extra("tianshou")
    from hanamikoji_env.examples import tianshou_dqn, tianshou_ppo

    for module in (tianshou_dqn, tianshou_ppo):
        assert module.make("mini").env.variant.name == "mini"
        assert module.make().env.variant.name == "full"


@pytest.mark.slow
def test_torchrl_pettingzoo_wrapper_rolls_out_masked() -> None:
    extra("torchrl")
    from hanamikoji_env.examples import torchrl_rollout

    played, games = torchrl_rollout.main(steps=1500)
    assert played == 1500 and games >= 10


@pytest.mark.slow
def test_pettingzoos_sb3_tutorial_wrapper_with_its_gymnasium_fix() -> None:
    extra("sb3_contrib")
    from hanamikoji_env.examples import sb3_tutorial

    assert sb3_tutorial.main(steps=1024) >= 1024


def test_the_dqn_buffer_checks_each_entry_for_nan_once_after_it_is_added() -> None:
    """Tianshou's trainer asks the buffer for NaNs after every collect; ours reads only what was
    added since (an overwritten entry included), and finds the NaN Tianshou's own check finds."""
    extra("tianshou")
    import numpy as np
    from tianshou.data import Batch, VectorReplayBuffer

    from hanamikoji_env.examples.tianshou_dqn import NewEntriesCheckedBuffer

    def step(rewards: list[float]) -> Batch:
        n = len(rewards)
        return Batch(
            obs=np.zeros((n, 3)), act=np.zeros(n, dtype=int), rew=np.array(rewards), terminated=np.zeros(n, bool),
            truncated=np.zeros(n, bool), obs_next=np.zeros((n, 3)), info=Batch(),
        )  # fmt: skip

    buffer = NewEntriesCheckedBuffer(8, 2)  # two sub-buffers of 4
    assert not buffer.hasnull()
    buffer.add(step([0.0, 0.0]))
    assert not buffer.hasnull()
    buffer.add(step([0.0, np.nan]))
    assert buffer.hasnull() and VectorReplayBuffer.hasnull(buffer)
    for _ in range(3):
        buffer.add(step([0.0, 0.0]))
    assert not buffer.hasnull()  # checked once; the NaN is still held
    buffer.add(step([np.nan, 0.0]))  # the first sub-buffer wraps: an overwritten entry is new
    assert buffer.hasnull()
    buffer.add(step([0.0, 0.0]))
    buffer.reset()
    assert not buffer.hasnull() and not VectorReplayBuffer.hasnull(buffer)


def test_tianshous_two_seat_returns_warning_is_kept_out_of_the_log(caplog) -> None:
    """Tianshou warns every collect that a game's returns have a column a seat (megabytes a run);
    the recipes drop that warning and no other."""
    extra("tianshou")
    import logging

    import numpy as np
    from tianshou.data.stats import SequenceSummaryStats

    from hanamikoji_env.examples.tianshou_env import quiet_two_seat_stats

    stats = logging.getLogger("tianshou.data.stats")
    filters = list(stats.filters)  # a recipe run before this test added ours
    stats.filters[:] = [f for f in filters if f.__module__ != "hanamikoji_env.examples.tianshou_env"]
    try:
        with caplog.at_level(logging.WARNING, logger="tianshou.data.stats"):
            SequenceSummaryStats.from_sequence(np.zeros((4, 2)))
            assert len(caplog.records) == 1  # Tianshou's own
            quiet_two_seat_stats()
            quiet_two_seat_stats()  # once is enough; twice adds nothing
            SequenceSummaryStats.from_sequence(np.zeros((4, 2)))
            stats.warning("another warning")
        assert [r.getMessage() for r in caplog.records][1:] == ["another warning"]
        assert len(stats.filters) == 1
    finally:
        stats.filters[:] = filters
