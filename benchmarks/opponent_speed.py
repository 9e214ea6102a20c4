"""The opponents at engine speed: compiled, batched bots against their single-game Python path.

Two measurements, each against its peer in the same run:

1. Bot decisions/s on the same positions (decisions of the player to move,
   from varied play): HeuristicBot's one compiled call for a batch of
   ``--batch`` rows against the readable reference (``HeuristicReference``,
   the single-game Python path the heuristic played before it was compiled),
   and SearchBot's batch against ``SearchReference`` at the default budget
   and at the training opponents' ``samples=50,candidates=6``.
2. Learner decisions/s of PPO training, rollout plus update, each configuration
   in its own process: the quick config's network and games (128 units, 256
   games) with every game against ``random``, against ``heuristic`` and against
   ``search:samples=50,candidates=6`` and against its own past snapshots (a
   pool of 20, one taken every update), printed as a share of the ``random``
   speed (what an opponent costs the trainer: random costs next to nothing);
   stage 7's opponents (512 units; 60% ``search:samples=50,candidates=6``, 10%
   heuristic, 20% random, 10% snapshots); and the from-scratch recipe's
   (``configs/from_scratch.yaml``'s first stage: its network, games and
   opponents, snapshots included).  ``--before DIR`` (a checkout of older
   code: ``git worktree add /tmp/before REV``) runs every configuration with
   that code too.

Usage: ``python benchmarks/opponent_speed.py [--seconds 60] [--batch 1024] [--threads 1] [--before DIR] [--skip-training]``
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the training/ package of this checkout

from hanamikoji_env.bots import HeuristicBot, SearchBot
from hanamikoji_env.bots.heuristic_reference import HeuristicReference
from hanamikoji_env.bots.search_reference import SearchReference
from hanamikoji_env.training.curriculum import load_curriculum
from hanamikoji_env.vector import BatchEngine, random_actions

STAGE7 = {"heuristic": 0.1, "random": 0.2, "search:samples=50,candidates=6": 0.6}
"""Stage 7's opponents (configs/ppo_selfplay.yaml), besides 10% snapshots."""
QUICK_OPPONENTS = ["random", "heuristic", "search:samples=50,candidates=6"]
"""Every game against one of these, in the quick config's run."""


def positions(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """``n`` decisions of every phase, both seats, from 64 games the heuristic plays against
    itself, a fifth of the moves random."""
    engine = BatchEngine(64, seed=seed)
    obs, mask, _ = engine.reset()
    rng, bot = np.random.default_rng(seed), HeuristicBot(0)
    kept_obs, kept_mask = [], []
    while sum(len(o) for o in kept_obs) < n:
        kept_obs.append(obs)
        kept_mask.append(mask)
        actions = bot.act_batch(obs, mask)
        random_rows = rng.random(len(obs)) < 0.2
        actions[random_rows] = random_actions(mask[random_rows], rng)
        obs, mask, *_ = engine.step(actions)
    order = rng.permutation(n)  # a mix of phases in every slice
    return np.concatenate(kept_obs)[:n][order], np.concatenate(kept_mask)[:n][order]


def rate(fn, count: int, seconds: float) -> float:
    """Calls of ``fn`` (each ``count`` decisions) per second, for at least ``seconds``."""
    fn()  # warm-up: compiled kernels load from the cache
    start, done = time.perf_counter(), 0
    while time.perf_counter() - start < seconds or done == 0:
        fn()
        done += count
    return done / (time.perf_counter() - start)


def bot_rates(batch: int, seconds: float) -> list[tuple[str, float, float]]:
    obs, mask = positions(max(batch, 400))  # the search rows too
    rows = []

    def one_by_one(bot, k):
        def run():
            for i in range(k):
                bot.reset()
                bot.act({"observation": obs[i], "action_mask": mask[i]})

        return run

    compiled = HeuristicBot(0)
    rows.append(
        (
            f"heuristic, batch of {batch}",
            rate(lambda: compiled.act_batch(obs[:batch], mask[:batch]), batch, seconds),
            rate(one_by_one(HeuristicReference(0), 200), 200, seconds),
        )
    )
    for samples, candidates, k in ((400, 10, 20), (50, 6, 100)):
        bot = SearchBot(0, samples=samples, candidates=candidates)
        ref = SearchReference(0, samples=samples, candidates=candidates)
        rows.append(
            (
                f"search:samples={samples},candidates={candidates}, batch of {k * 4}",
                rate(lambda b=bot, k=k: b.act_batch(obs[: k * 4], mask[: k * 4]), k * 4, seconds),
                rate(one_by_one(ref, k * 4), k * 4, seconds),
            )
        )
    return rows


TRAIN = """
import json, sys, time
code, config, seconds = sys.argv[1], json.loads(sys.argv[2]), float(sys.argv[3])
sys.path.insert(0, code)
import hanamikoji_env
assert hanamikoji_env.__file__.startswith(code), f"imported {hanamikoji_env.__file__}, not {code}"
from hanamikoji_env.training.config import Config
from hanamikoji_env.training.ppo import Trainer
trainer = Trainer(Config.from_dict(config), "/nonexistent")
trainer.learn(trainer.collect())  # warm-up (kernels compile or load), and a first snapshot for the pool
start, before = time.perf_counter(), trainer.decisions
while time.perf_counter() - start < seconds:
    trainer.learn(trainer.collect())
print((trainer.decisions - before) / (time.perf_counter() - start))
"""
"""Learner decisions/s of one configuration with the code of a checkout (run in its own process)."""


def training_rate(
    code: Path, hidden: int, num_envs: int, bot_shares: dict[str, float], pool_share: float, seconds: float,
    threads: int,
) -> float:  # fmt: skip
    config = {
        "num_envs": num_envs, "rollout_steps": 64, "hidden": hidden, "layers": 2, "update_epochs": 4,
        "num_minibatches": 16, "pool_share": pool_share, "bot_shares": bot_shares, "snapshot_every": 1,
        "total_decisions": 10**12, "torch_threads": threads,
    }  # fmt: skip
    out = subprocess.run(
        [sys.executable, "-c", TRAIN, str(code.resolve()), json.dumps(config), str(seconds)],
        capture_output=True, text=True, check=True, cwd=code,
    )  # fmt: skip
    return float(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=60.0, help="timed training per configuration")
    parser.add_argument("--bot-seconds", type=float, default=10.0, help="timed decisions per bot")
    parser.add_argument("--batch", type=int, default=1024, help="rows per heuristic batch")
    parser.add_argument("--skip-training", action="store_true", help="only the bots' decisions/s")
    parser.add_argument(
        "--threads", type=lambda v: v if v == "auto" else int(v), default=1,
        help="torch threads: a number (the curriculum's: 1) or auto",
    )  # fmt: skip
    parser.add_argument(
        "--before",
        type=Path,
        default=None,
        help="a checkout of the code to compare training with, e.g. git worktree add /tmp/before 6eab619",
    )
    args = parser.parse_args()
    print(f"{'bot':<46}{'compiled/s':>12}{'reference/s':>13}{'speed-up':>10}")
    for name, fast, slow in bot_rates(args.batch, args.bot_seconds):
        print(f"{name:<46}{fast:>12,.0f}{slow:>13,.0f}{fast / slow:>9.1f}x")
    if args.skip_training:
        return
    here = Path(__file__).resolve().parents[1]
    codes = [("this code", here)] + ([("--before", args.before)] if args.before else [])
    print(f"\ntraining, learner decisions/s ({args.threads} torch thread(s); share: of every-game-random's)")
    print(f"{'configuration':<58}" + "".join(f"{name:>14}{'share':>8}" for name, _ in codes))
    rows = [(f"quick (128 units, 256 games), every game vs {spec}", 128, 256, {spec: 1.0}, 0.0)
            for spec in QUICK_OPPONENTS]  # fmt: skip
    rows.append(("quick (128 units, 256 games), every game vs a snapshot", 128, 256, {}, 1.0))
    rows.append(("stage 7's opponents, 512 units, 512 games", 512, 512, STAGE7, 0.1))
    recipe = load_curriculum("from_scratch")[0].cfg  # stage 1: 256 units
    rows.append((f"from-scratch opponents, {recipe.hidden} units, {recipe.num_envs} games", recipe.hidden,
                 recipe.num_envs, recipe.bot_shares, recipe.pool_share))  # fmt: skip
    free: dict[str, float] = {}
    for name, hidden, envs, shares, pool in rows:
        line = f"{name:<58}"
        for label, code in codes:
            speed = training_rate(code, hidden, envs, shares, pool, args.seconds, args.threads)
            free.setdefault(label, speed)  # the first row: every game against random
            line += f"{speed:>14,.0f}{speed / free[label]:>8.2f}"
        print(line, flush=True)


if __name__ == "__main__":
    main()
