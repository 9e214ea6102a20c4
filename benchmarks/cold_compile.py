"""How long a first run compiles: each compiled part from an empty numba cache, and the first
commands a newcomer runs, each in a fresh process with an empty ``NUMBA_CACHE_DIR``.

- parts, in the order of :data:`hanamikoji_env.first_run.PARTS`, sharing one cache (so each part
  counts only what the parts above it did not compile): the seconds the first-run announcement
  quotes;
- commands, each from an empty cache: ``hanamikoji-eval --players heuristic search --games 2``
  (one worker), ``hanamikoji-eval --players pretrained heuristic --games 2`` and one update of
  ``hanamikoji-train --config quick``.

``--before DIR`` times the same commands in another checkout (a ``git worktree`` of an older
commit, run with its own code) in the same run and prints the ratios.  Run it on idle cores.

Usage: ``python benchmarks/cold_compile.py [--before DIR]``
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

PART_CODE = {
    "engine": "from hanamikoji_env.bots.spec import parse_player as p; from hanamikoji_env.games import play_game; "
    "play_game((p('random').make(0), p('random').make(1)), 0, None)",
    "batch": "import numpy as np; from hanamikoji_env.vector import BatchEngine, random_actions; "
    "v = BatchEngine(4, seed=0); obs, mask, _ = v.reset(); rng = np.random.default_rng(0)\n"
    "for _ in range(60): obs, mask, *_ = v.step(random_actions(mask, rng))",
    "heuristic": "from hanamikoji_env.bots.spec import parse_player as p; from hanamikoji_env.games import play_game; "
    "play_game((p('heuristic').make(0), p('random').make(1)), 0, None)",
    "search": "from hanamikoji_env.bots.spec import parse_player as p; from hanamikoji_env.games import play_game; "
    "play_game((p('search:samples=2').make(0), p('random').make(1)), 0, None)",
    "playouts": "from hanamikoji_env.bots.spec import parse_player as p; from hanamikoji_env.games import play_game; "
    "play_game((p('psearch:ckpt=pretrained,samples=2,candidates=2').make(0), p('random').make(1)), 0, None)",
}

COMMANDS = {
    "hanamikoji-eval --players heuristic search --games 2": [
        "-m", "hanamikoji_env.tournament", "--players", "heuristic", "search", "--games", "2", "--workers", "1",
        "--no-progress",
    ],
    "hanamikoji-eval --players pretrained heuristic --games 2": [
        "-m", "hanamikoji_env.tournament", "--players", "pretrained", "heuristic", "--games", "2", "--workers", "1",
        "--no-progress",
    ],
    "hanamikoji-train --config quick (one update)": [
        "-m", "training.train", "--config", "configs/quick.yaml", "total_decisions=1", "--no-progress",
    ],
}  # fmt: skip


def timed(args: list[str], cwd: Path, cache: Path, scratch: Path) -> float:
    """Seconds of ``python ARGS`` in ``cwd`` with numba's cache in ``cache`` (runs go to ``scratch``)."""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache), "PYTHONPATH": str(cwd)}
    if "training.train" in args:
        args = [*args, f"runs_dir={scratch}", f"run_name=r{time.monotonic_ns()}"]
    start = time.perf_counter()
    out = subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if out.returncode:
        raise SystemExit(f"{' '.join(args)} failed in {cwd}:\n{out.stderr[-2000:]}")
    return seconds


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--before", type=Path, help="another checkout to time the same commands in")
    args = p.parse_args()
    print(f"{os.cpu_count()} cores; every figure from an empty numba cache, in a fresh process")
    with tempfile.TemporaryDirectory() as tmp:
        shared = Path(tmp) / "parts"
        print("| part (after the ones above) | seconds |\n|---|---|")
        for name, code in PART_CODE.items():
            print(f"| {name} | {timed(['-c', code], ROOT, shared, Path(tmp)):.1f} |", flush=True)
        trees = {"this checkout": ROOT, **({"before": args.before.resolve()} if args.before else {})}
        print(f"\n| command | {' | '.join(trees)} |{' ratio |' if args.before else ''}")
        print("|---|" + "---|" * (len(trees) + bool(args.before)))
        for name, command in COMMANDS.items():
            seconds = [
                timed(command, tree, Path(tmp) / f"{label}-{name}", Path(tmp) / "runs")
                for label, tree in trees.items()
            ]
            ratio = f" {seconds[0] / seconds[1]:.2f} |" if args.before else ""
            print(f"| {name} | {' | '.join(f'{s:.1f} s' for s in seconds)} |{ratio}", flush=True)


if __name__ == "__main__":
    main()
