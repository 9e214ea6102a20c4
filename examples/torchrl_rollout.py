"""TorchRL: the AEC env through TorchRL's ``PettingZooWrapper`` with its action mask, checked by
``check_env_specs``, and a rollout of random moves drawn within the mask.

    python -m hanamikoji_env.examples.torchrl_rollout [--steps 1500]
"""

from __future__ import annotations

import argparse
import warnings

import torch

from hanamikoji_env import raw_env
from hanamikoji_env.aec import AGENTS


def main(steps: int = 1500, seed: int = 0) -> tuple[int, int]:
    """A ``steps``-step rollout; the moves played (each checked against its mask) and games ended."""
    from torchrl.envs import PettingZooWrapper
    from torchrl.envs.utils import check_env_specs

    with warnings.catch_warnings():  # TorchRL notes the PettingZoo release it was tested with
        warnings.filterwarnings("ignore", "PettingZoo in TorchRL is tested using version")
        env = PettingZooWrapper(raw_env(), use_mask=True, categorical_actions=True, seed=seed)
    check_env_specs(env)
    rollout = env.rollout(steps, break_when_any_done=False)  # random actions drawn within the mask
    played = 0
    for agent in AGENTS:
        moved = rollout[agent]["mask"].squeeze(-1)  # the steps where this agent acted
        masks = rollout[agent]["action_mask"].squeeze(1)[moved]
        actions = rollout[agent]["action"].squeeze(-1)[moved]
        if not masks[torch.arange(len(actions)), actions].all():
            raise AssertionError(f"{agent} played outside its mask")
        played += int(moved.sum())
    games = int(rollout["next", "done"].sum())
    print(f"torchrl: {played} moves, all within the mask, {games} games ended")
    return played, games


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    parser.add_argument("--steps", type=int, default=1500, help="rollout length (default: %(default)s)")
    main(parser.parse_args().steps)
