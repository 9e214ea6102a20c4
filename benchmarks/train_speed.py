"""Training throughput: our PPO trainer against sb3-contrib's MaskablePPO, same run.

Both train the same network (two hidden layers of ``--hidden`` units) against
a RandomBot opponent with 4 epochs per update, and both count learner
decisions (SB3's timesteps) per second of wall time, rollout plus update:

- ours: ``training.ppo.Trainer`` on the batch engine (``--num-envs`` games);
- SB3: ``MaskablePPO`` on ``SingleAgentEnv`` in a ``DummyVecEnv`` of 4 envs.

Usage: ``python benchmarks/train_speed.py [--seconds 60] [--hidden 64]``
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the training/ package of this checkout


def ours(seconds: float, hidden: int, num_envs: int) -> float:
    from training.config import Config
    from training.ppo import Trainer

    cfg = Config.from_dict({
        "num_envs": num_envs, "rollout_steps": 64, "hidden": hidden, "layers": 2, "update_epochs": 4,
        "num_minibatches": 8, "pool_share": 0.0, "bot_shares": {"random": 1.0}, "total_decisions": 10**12,
        "torch_threads": torch.get_num_threads(),
    })  # fmt: skip
    trainer = Trainer(cfg, "/nonexistent")
    trainer.learn(trainer.collect())  # warm-up (compiles the engine's kernels)
    start, before = time.perf_counter(), trainer.decisions
    while time.perf_counter() - start < seconds:
        trainer.learn(trainer.collect())
    return (trainer.decisions - before) / (time.perf_counter() - start)


def sb3(seconds: float, hidden: int) -> float:
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.vec_env import DummyVecEnv

    from hanamikoji_env.wrappers import SingleAgentEnv

    venv = DummyVecEnv([lambda: SingleAgentEnv("random") for _ in range(4)])
    model = MaskablePPO("MlpPolicy", venv, n_steps=512, batch_size=256, n_epochs=4, gamma=1.0,
                        policy_kwargs={"net_arch": [hidden, hidden]}, seed=0, verbose=0)  # fmt: skip
    model.learn(2048)  # warm-up
    steps = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        model.learn(2048, reset_num_timesteps=False)
        steps += 2048
    return steps / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=60.0, help="timed training per trainer")
    parser.add_argument("--hidden", type=int, default=64, help="units per hidden layer, both trainers")
    parser.add_argument("--num-envs", type=int, default=1024, help="games stepped together by our trainer")
    args = parser.parse_args()
    theirs = sb3(args.seconds, args.hidden)
    mine = ours(args.seconds, args.hidden, args.num_envs)
    print(f"{'trainer':<40}{'decisions/s':>14}")
    print(f"{'ours (training.ppo, batch engine)':<40}{mine:>14,.0f}")
    print(f"{'sb3-contrib MaskablePPO (SingleAgentEnv)':<40}{theirs:>14,.0f}")
    ratio = mine / theirs
    print(f"\nratio: {ratio:.1f}x (target >= 25x: {'met' if ratio >= 25 else 'MISSED'})")


if __name__ == "__main__":
    main()
