"""Training throughput by torch thread count, alone and on a shared machine.

Trains the main job's config (``quick``) with ``torch_threads`` 1, 2 and
``auto``, each measured twice: alone, and beside one busy process per core
(a pure-Python loop, the CPU-bound neighbour of a shared machine), and prints
the learner's decisions/s, each setting's shared/alone ratio and each against
1 thread in the same conditions.

Usage: ``python benchmarks/thread_speed.py [--updates 6] [--settings 1,2,auto]``
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the training/ package of this checkout


def _busy() -> None:
    while True:
        pass


def decisions_per_second(threads: str, updates: int) -> float:
    """The trainer's learner decisions/s over ``updates`` updates (after one to warm up)."""
    import tempfile

    from hanamikoji_env.training.config import load_config
    from hanamikoji_env.training.ppo import Trainer

    cfg = load_config("quick", [f"torch_threads={threads}", "total_decisions=1000000000"])
    with tempfile.TemporaryDirectory() as run_dir:
        trainer = Trainer(cfg, Path(run_dir))
        trainer.learn(trainer.collect())
        start, before = time.perf_counter(), trainer.decisions
        for _ in range(updates):
            trainer.learn(trainer.collect())
        return (trainer.decisions - before) / (time.perf_counter() - start)


def _measure(threads: str, updates: int, out) -> None:
    out.put(decisions_per_second(threads, updates))


def measure(threads: str, updates: int, busy: int) -> float:
    """:func:`decisions_per_second` in a fresh process, beside ``busy`` busy processes."""
    ctx = multiprocessing.get_context("spawn")
    neighbours = [ctx.Process(target=_busy, daemon=True) for _ in range(busy)]
    for p in neighbours:
        p.start()
    try:
        out = ctx.Queue()
        worker = ctx.Process(target=_measure, args=(threads, updates, out))
        worker.start()
        result = out.get()
        worker.join()
        return result
    finally:
        for p in neighbours:
            p.kill()
            p.join()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--updates", type=int, default=6)
    p.add_argument("--settings", default="1,2,auto")
    args = p.parse_args()
    cores = os.cpu_count() or 1
    settings = args.settings.split(",")
    rows = {}
    for busy in (0, cores):
        for threads in settings:
            rows[(threads, busy)] = measure(threads, args.updates, busy)
            print(
                f"torch_threads={threads}, {busy} busy processes: {rows[(threads, busy)]:,.0f} decisions/s",
                flush=True,
            )
    print(f"\n{cores} cores; quick config, {args.updates} updates each\n")
    print(
        "| torch_threads | alone | beside a busy process per core | shared / alone | alone vs 1 | shared vs 1 |"
    )
    print("|---|---|---|---|---|---|")
    for threads in settings:
        alone, shared = rows[(threads, 0)], rows[(threads, cores)]
        base_alone, base_shared = rows.get(("1", 0), alone), rows.get(("1", cores), shared)
        print(
            f"| {threads} | {alone:,.0f} | {shared:,.0f} | {shared / alone:.2f} | "
            f"{alone / base_alone:.2f} | {shared / base_shared:.2f} |"
        )


if __name__ == "__main__":
    main()
