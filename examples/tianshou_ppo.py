"""Tianshou 2.x: masked PPO in self-play (one network for both seats) on the AEC env through
Tianshou's ``PettingZooEnv``.

    python -m hanamikoji_env.examples.tianshou_ppo [--steps 30000]
"""

from __future__ import annotations

import argparse

import torch
from tianshou.algorithm import PPO
from tianshou.algorithm.modelfree.reinforce import ProbabilisticActorPolicy
from tianshou.algorithm.multiagent.marl import MultiAgentOnPolicyAlgorithm
from tianshou.algorithm.optim import AdamOptimizerFactory
from tianshou.data import Collector, CollectStats, VectorReplayBuffer
from tianshou.env import DummyVectorEnv
from tianshou.trainer import OnPolicyTrainerParams
from torch import nn

from hanamikoji_env.actions import NUM_ACTIONS
from hanamikoji_env.examples.tianshou_env import make, quiet_two_seat_stats, seed_all
from hanamikoji_env.observation import OBS_SIZE


class MaskedActor(nn.Module):
    """Tianshou hands the policy ``obs.obs`` and ``obs.mask``; illegal logits go to -1e9."""

    def __init__(self) -> None:
        super().__init__()
        self.net = nn.Sequential(nn.Linear(OBS_SIZE, 64), nn.Tanh(), nn.Linear(64, NUM_ACTIONS))

    def forward(self, obs, state=None, info=None):
        logits = self.net(torch.as_tensor(obs.obs, dtype=torch.float32))
        return logits.masked_fill(~torch.as_tensor(obs.mask, dtype=torch.bool), -1e9), state


class Critic(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.net = nn.Sequential(nn.Linear(OBS_SIZE, 64), nn.Tanh(), nn.Linear(64, 1))

    def forward(self, obs, **kwargs):
        return self.net(torch.as_tensor(obs.obs, dtype=torch.float32))


def build(seed: int = 0) -> tuple[MultiAgentOnPolicyAlgorithm, MaskedActor]:
    """The self-play PPO algorithm and its actor (one network for both seats), seeded
    (:func:`seed_all`)."""
    seed_all(seed)
    env = make()
    actor = MaskedActor()
    policy = ProbabilisticActorPolicy(
        actor=actor,
        dist_fn=lambda logits: torch.distributions.Categorical(logits=logits),
        action_space=env.action_space,
        action_scaling=False,
        action_bound_method=None,
    )
    ppo = PPO(policy=policy, critic=Critic(), optim=AdamOptimizerFactory(lr=1e-3), gamma=1.0)
    return MultiAgentOnPolicyAlgorithm(algorithms=[ppo, ppo], env=env), actor


def main(steps: int = 30_000, seed: int = 0) -> tuple[int, int]:
    """Train for ``steps`` environment steps; the updates made and the games collected."""
    algorithm, _ = build(seed)
    quiet_two_seat_stats()
    train, test = DummyVectorEnv([make] * 4), DummyVectorEnv([make] * 2)
    train.seed(seed)
    test.seed(seed + 1)
    collector = Collector[CollectStats](algorithm, train, VectorReplayBuffer(4000, 4))
    result = algorithm.run_training(
        OnPolicyTrainerParams(
            training_collector=collector,
            test_collector=Collector[CollectStats](algorithm, test),
            max_epochs=1,
            epoch_num_steps=steps,
            collection_step_num_env_steps=500,
            test_step_num_episodes=2,
            batch_size=128,
            update_step_num_repetitions=2,
            multi_agent_return_reduction=lambda rewards: rewards[:, 0],
        )
    )
    print(f"tianshou PPO: {result.update_step} updates over {collector.collect_episode} games")
    return result.update_step, collector.collect_episode


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    parser.add_argument(
        "--steps", type=int, default=30_000, help="environment steps to train for (default: %(default)s)"
    )
    main(parser.parse_args().steps)
