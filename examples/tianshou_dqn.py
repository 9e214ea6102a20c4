"""Tianshou 2.x: two masked DQN agents, one per seat, trained on the AEC env through Tianshou's
``PettingZooEnv``.

    python -m hanamikoji_env.examples.tianshou_dqn [--steps 20000]
"""

from __future__ import annotations

import argparse

import numpy as np
from tianshou.algorithm import DQN, MultiAgentOffPolicyAlgorithm
from tianshou.algorithm.modelfree.dqn import DiscreteQLearningPolicy
from tianshou.algorithm.optim import AdamOptimizerFactory
from tianshou.data import Collector, CollectStats, VectorReplayBuffer
from tianshou.data.types import RolloutBatchProtocol
from tianshou.env import DummyVectorEnv
from tianshou.env.pettingzoo_env import PettingZooEnv
from tianshou.trainer import OffPolicyTrainerParams
from tianshou.utils.net.common import Net

from hanamikoji_env.actions import NUM_ACTIONS
from hanamikoji_env.examples.tianshou_env import make, quiet_two_seat_stats, seed_all


def dqn(env: PettingZooEnv) -> DQN:
    """Masked: Tianshou's Q-learning policy reads the env's action mask."""
    net = Net(
        state_shape=env.observation_space["observation"].shape, action_shape=NUM_ACTIONS, hidden_sizes=[64]
    )
    policy = DiscreteQLearningPolicy(model=net, action_space=env.action_space, eps_training=0.2)
    return DQN(policy=policy, optim=AdamOptimizerFactory(lr=1e-3), gamma=1.0, target_update_freq=100)


class NewEntriesCheckedBuffer(VectorReplayBuffer):
    """Tianshou's ``VectorReplayBuffer`` whose NaN check reads only the entries added since the last
    check.

    Tianshou 2.0's trainer calls ``buffer.hasnull()`` after every collect (even with its validation
    switched off), and a buffer's ``hasnull`` copies and scans everything it holds: with 50,000
    entries and 40 steps a collect, that scan took most of a DQN run's time and grew with the
    buffer. An entry is checked once, by the first check after ``add`` writes it (the trainer
    stops there on a NaN, with Tianshou's error); nothing else differs.
    """

    def __init__(self, total_size: int, buffer_num: int) -> None:
        super().__init__(total_size, buffer_num)
        self._unchecked: list[np.ndarray] = []

    def add(
        self, batch: RolloutBatchProtocol, buffer_ids: np.ndarray | list[int] | None = None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        added = super().add(batch, buffer_ids)
        self._unchecked.append(np.asarray(added[0]))
        return added

    def reset(self, keep_statistics: bool = False) -> None:
        super().reset(keep_statistics)
        self._unchecked = []

    def hasnull(self) -> bool:
        if not self._unchecked:
            return False
        fresh, self._unchecked = np.unique(np.concatenate(self._unchecked)), []
        return bool(self[fresh].hasnull())


def main(steps: int = 20_000, seed: int = 0) -> tuple[int, int]:
    """Train for ``steps`` environment steps; the gradient steps and environment steps taken."""
    seed_all(seed)
    quiet_two_seat_stats()
    env = make()
    algorithm = MultiAgentOffPolicyAlgorithm(algorithms=[dqn(env), dqn(env)], env=env)
    train, test = DummyVectorEnv([make] * 4), DummyVectorEnv([make] * 2)
    train.seed(seed)
    test.seed(seed + 1)
    collector = Collector[CollectStats](
        algorithm, train, NewEntriesCheckedBuffer(5000, 4), exploration_noise=True
    )
    collector.reset()
    collector.collect(n_step=256)
    result = algorithm.run_training(
        OffPolicyTrainerParams(
            training_collector=collector,
            test_collector=Collector[CollectStats](algorithm, test),
            max_epochs=1,
            epoch_num_steps=steps,
            collection_step_num_env_steps=40,
            test_step_num_episodes=2,
            batch_size=64,
            update_step_num_gradient_steps_per_sample=0.1,
            multi_agent_return_reduction=lambda rewards: rewards[:, 0],
        )
    )
    print(f"tianshou DQN: {result.update_step} gradient steps over {collector.collect_step} env steps")
    return result.update_step, collector.collect_step


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    parser.add_argument(
        "--steps", type=int, default=20_000, help="environment steps to train for (default: %(default)s)"
    )
    main(parser.parse_args().steps)
