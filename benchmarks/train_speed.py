"""Training throughput: our PPO trainer against sb3-contrib's MaskablePPO, same run.

Both train the same network (two hidden layers of ``--hidden`` units) against
a RandomBot opponent with 4 epochs per update, and both count learner
decisions (SB3's timesteps) per second of wall time, rollout plus update:

- ours: ``training.ppo.Trainer`` on the batch engine (``--num-envs`` games);
- SB3: ``MaskablePPO`` on ``SingleAgentEnv`` in a ``DummyVecEnv`` of 4 envs.

``--ray`` adds our trainer with ``backend: ray`` and 1 and 2 rollout workers on a
local Ray (the same games split among the workers; the update stays in this
process), against ``backend: local`` in the same run: on one machine that
measures Ray's overhead, not its scaling (see docs/training.md).  ``--device``
puts the network and its updates on a GPU (``cuda``) for all of our runs.

Usage: ``python benchmarks/train_speed.py [--seconds 60] [--hidden 64] [--ray] [--device auto]``
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the training/ package of this checkout


def ours(
    seconds: float, hidden: int, num_envs: int, backend: str = "local", workers: int = 1, device: str = "cpu"
) -> float:
    from hanamikoji_env.training.config import Config
    from hanamikoji_env.training.ppo import Trainer

    cfg = Config.from_dict({
        "num_envs": num_envs, "rollout_steps": 64, "hidden": hidden, "layers": 2, "update_epochs": 4,
        "num_minibatches": 8, "pool_share": 0.0, "bot_shares": {"random": 1.0}, "total_decisions": 10**12,
        "torch_threads": torch.get_num_threads(), "backend": backend, "num_workers": workers, "device": device,
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
    parser.add_argument("--ray", action="store_true", help="also backend: ray with 1 and 2 workers")
    parser.add_argument("--device", default="cpu", help="our network's device: auto, cpu, cuda, cuda:N")
    parser.add_argument("--no-sb3", action="store_true", help="skip MaskablePPO (e.g. for --ray alone)")
    args = parser.parse_args()
    rows = []
    theirs = None if args.no_sb3 else sb3(args.seconds, args.hidden)
    mine = ours(args.seconds, args.hidden, args.num_envs, device=args.device)
    rows.append((f"ours (training.ppo, batch engine, {args.device})", mine))
    if args.ray:
        import ray

        ray.init(num_cpus=2, include_dashboard=False)
        for workers in (1, 2):
            dps = ours(args.seconds, args.hidden, args.num_envs, "ray", workers, args.device)
            rows.append((f"ours, backend ray, {workers} worker(s)", dps))
        ray.shutdown()
    if theirs is not None:
        rows.append(("sb3-contrib MaskablePPO (SingleAgentEnv)", theirs))
    print(f"{'trainer':<44}{'decisions/s':>14}{'vs local':>10}")
    for name, dps in rows:
        print(f"{name:<44}{dps:>14,.0f}{dps / mine:>9.2f}x")
    if theirs is not None:
        ratio = mine / theirs
        print(f"\nours / MaskablePPO: {ratio:.1f}x (target >= 25x: {'met' if ratio >= 25 else 'MISSED'})")


if __name__ == "__main__":
    main()
