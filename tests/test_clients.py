"""The RL clients users train with, each through its own recipe: Tianshou 2.x, TorchRL and the
PettingZoo SB3 tutorial's wrapper.  They play ``raw_env``, which raises on an illegal move, so a
run that finishes made none.  Skipped only where the client is not installed (CI installs them:
the ``tianshou`` and ``torchrl`` extras)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from helpers import extra
from torch import nn

from hanamikoji_env import raw_env


@pytest.mark.slow
def test_tianshou_trains_masked_dqn_for_both_seats() -> None:
    extra("tianshou")
    from tianshou.algorithm import DQN, MultiAgentOffPolicyAlgorithm
    from tianshou.algorithm.modelfree.dqn import DiscreteQLearningPolicy
    from tianshou.algorithm.optim import AdamOptimizerFactory
    from tianshou.data import Collector, CollectStats, VectorReplayBuffer
    from tianshou.env import DummyVectorEnv
    from tianshou.env.pettingzoo_env import PettingZooEnv
    from tianshou.trainer import OffPolicyTrainerParams
    from tianshou.utils.net.common import Net

    def make() -> PettingZooEnv:
        return PettingZooEnv(raw_env())

    env = make()

    def dqn() -> DQN:  # masked: Tianshou's Q-learning policy reads the env's action mask
        net = Net(state_shape=env.observation_space["observation"].shape, action_shape=23, hidden_sizes=[64])
        policy = DiscreteQLearningPolicy(model=net, action_space=env.action_space, eps_training=0.2)
        return DQN(policy=policy, optim=AdamOptimizerFactory(lr=1e-3), gamma=1.0, target_update_freq=100)

    torch.manual_seed(0)
    algorithm = MultiAgentOffPolicyAlgorithm(algorithms=[dqn(), dqn()], env=env)
    train, test = DummyVectorEnv([make] * 4), DummyVectorEnv([make] * 2)
    train.seed(0)
    test.seed(1)
    collector = Collector[CollectStats](algorithm, train, VectorReplayBuffer(5000, 4), exploration_noise=True)
    collector.reset()
    collector.collect(n_step=256)
    result = algorithm.run_training(
        OffPolicyTrainerParams(
            training_collector=collector,
            test_collector=Collector[CollectStats](algorithm, test),
            max_epochs=1,
            epoch_num_steps=2000,
            collection_step_num_env_steps=40,
            test_step_num_episodes=2,
            batch_size=64,
            update_step_num_gradient_steps_per_sample=0.1,
            multi_agent_return_reduction=lambda rewards: rewards[:, 0],
        )
    )
    assert result.update_step >= 40 and collector.collect_step >= 2000


@pytest.mark.slow
def test_tianshou_trains_masked_ppo_in_self_play() -> None:
    extra("tianshou")
    from tianshou.algorithm import PPO
    from tianshou.algorithm.modelfree.reinforce import ProbabilisticActorPolicy
    from tianshou.algorithm.multiagent.marl import MultiAgentOnPolicyAlgorithm
    from tianshou.algorithm.optim import AdamOptimizerFactory
    from tianshou.data import Collector, CollectStats, VectorReplayBuffer
    from tianshou.env import DummyVectorEnv
    from tianshou.env.pettingzoo_env import PettingZooEnv
    from tianshou.trainer import OnPolicyTrainerParams

    def make() -> PettingZooEnv:
        return PettingZooEnv(raw_env())

    env = make()
    size = env.observation_space["observation"].shape[0]

    class MaskedActor(nn.Module):
        """Tianshou hands the policy ``obs.obs`` and ``obs.mask``; illegal logits go to -1e9."""

        def __init__(self) -> None:
            super().__init__()
            self.net = nn.Sequential(nn.Linear(size, 64), nn.Tanh(), nn.Linear(64, 23))

        def forward(self, obs, state=None, info=None):
            logits = self.net(torch.as_tensor(obs.obs, dtype=torch.float32))
            return logits.masked_fill(~torch.as_tensor(obs.mask, dtype=torch.bool), -1e9), state

    class Critic(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.net = nn.Sequential(nn.Linear(size, 64), nn.Tanh(), nn.Linear(64, 1))

        def forward(self, obs, **kwargs):
            return self.net(torch.as_tensor(obs.obs, dtype=torch.float32))

    torch.manual_seed(0)
    policy = ProbabilisticActorPolicy(
        actor=MaskedActor(),
        dist_fn=lambda logits: torch.distributions.Categorical(logits=logits),
        action_space=env.action_space,
        action_scaling=False,
        action_bound_method=None,
    )
    ppo = PPO(policy=policy, critic=Critic(), optim=AdamOptimizerFactory(lr=1e-3), gamma=1.0)
    algorithm = MultiAgentOnPolicyAlgorithm(algorithms=[ppo, ppo], env=env)  # one network, both seats
    train, test = DummyVectorEnv([make] * 4), DummyVectorEnv([make] * 2)
    train.seed(0)
    test.seed(1)
    collector = Collector[CollectStats](algorithm, train, VectorReplayBuffer(4000, 4))
    result = algorithm.run_training(
        OnPolicyTrainerParams(
            training_collector=collector,
            test_collector=Collector[CollectStats](algorithm, test),
            max_epochs=1,
            epoch_num_steps=3000,
            collection_step_num_env_steps=500,
            test_step_num_episodes=2,
            batch_size=128,
            update_step_num_repetitions=2,
            multi_agent_return_reduction=lambda rewards: rewards[:, 0],
        )
    )
    assert result.update_step >= 5 and collector.collect_episode >= 20


@pytest.mark.slow
# TorchRL notes the PettingZoo release it was tested with; ours is newer and the test is the check
@pytest.mark.filterwarnings("ignore:PettingZoo in TorchRL is tested using version")
def test_torchrl_pettingzoo_wrapper_rolls_out_masked() -> None:
    extra("torchrl")
    from torchrl.envs import PettingZooWrapper
    from torchrl.envs.utils import check_env_specs

    env = PettingZooWrapper(raw_env(), use_mask=True, categorical_actions=True, seed=0)
    check_env_specs(env)
    rollout = env.rollout(1500, break_when_any_done=False)  # random actions drawn within the mask
    played = 0
    for agent in ("player_0", "player_1"):
        moved = rollout[agent]["mask"].squeeze(-1)  # the steps where this agent acted
        masks = rollout[agent]["action_mask"].squeeze(1)[moved]
        actions = rollout[agent]["action"].squeeze(-1)[moved]
        assert masks[torch.arange(len(actions)), actions].all()
        played += int(moved.sum())
    assert played == 1500 and int(rollout["next", "done"].sum()) >= 10


@pytest.mark.slow
def test_pettingzoos_sb3_tutorial_wrapper_with_its_gymnasium_fix() -> None:
    """PettingZoo's SB3 action-masking tutorial wrapper is a ``BaseWrapper`` only; under
    gymnasium 1.x it must also be a ``gymnasium.Env`` (the fix shown in docs/training.md)."""
    extra("sb3_contrib")
    import gymnasium
    import pettingzoo.utils
    from sb3_contrib import MaskablePPO
    from sb3_contrib.common.wrappers import ActionMasker

    from hanamikoji_env import env

    class SB3ActionMaskWrapper(pettingzoo.utils.BaseWrapper, gymnasium.Env):
        def reset(self, seed=None, options=None):
            super().reset(seed, options)
            self.observation_space = super().observation_space(self.possible_agents[0])["observation"]
            self.action_space = super().action_space(self.possible_agents[0])
            return self.observe(self.agent_selection), {}

        def step(self, action):
            super().step(action)
            return super().last()

        def observe(self, agent):
            return super().observe(agent)["observation"]

        def action_mask(self) -> np.ndarray:
            return super().observe(self.agent_selection)["action_mask"]

    wrapped = SB3ActionMaskWrapper(env())
    wrapped.reset(seed=0)  # as the tutorial does: sets the spaces SB3 reads
    masked = ActionMasker(wrapped, lambda e: e.action_mask())
    model = MaskablePPO("MlpPolicy", masked, n_steps=256, batch_size=64, seed=0, verbose=0)
    model.learn(total_timesteps=1024)
    assert model.num_timesteps >= 1024
