"""PettingZoo's SB3 action-masking tutorial wrapper, run on this env with MaskablePPO.

The tutorial's wrapper is a ``pettingzoo.utils.BaseWrapper`` only; under gymnasium 1.x it must also
be a ``gymnasium.Env``, which is the one change made here.  Both seats are played by the same
model.  ``SingleAgentEnv`` (``hanamikoji_env.wrappers``) is the simpler route: a fixed opponent and
the learner's own reward.

    python -m hanamikoji_env.examples.sb3_tutorial [--steps 20000]
"""

from __future__ import annotations

import argparse

import gymnasium
import numpy as np
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


def main(steps: int = 20_000, seed: int = 0) -> int:
    """Train for ``steps`` timesteps; the timesteps the model counted."""
    wrapped = SB3ActionMaskWrapper(env())
    wrapped.reset(seed=seed)  # as the tutorial does: sets the spaces SB3 reads
    masked = ActionMasker(wrapped, lambda e: e.action_mask())
    model = MaskablePPO("MlpPolicy", masked, n_steps=256, batch_size=64, seed=seed, verbose=0)
    model.learn(total_timesteps=steps)
    print(f"sb3 tutorial wrapper: MaskablePPO trained {model.num_timesteps} timesteps")
    return model.num_timesteps


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    parser.add_argument(
        "--steps", type=int, default=20_000, help="timesteps to train for (default: %(default)s)"
    )
    main(parser.parse_args().steps)
