"""The long differential checks (hanamikoji_env.differential), 100,000 games each by default.

1. The engine of record's kernels against the readable specification (rules.py):
   same decks, same random legal moves, the whole state equal at every decision.
2. The batch engine against the AEC env: every decision's observation, mask and
   acting player, and every game's rewards, winner and rounds equal.

Usage: ``python benchmarks/vector_diff.py [--games 100000] [--seed 0]``.
"""

from __future__ import annotations

import argparse
import time

from tqdm import tqdm

from hanamikoji_env.differential import compare_engines, compare_with_spec


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    # three quarters official games, the rest with round limits 1 and 3
    plan = [
        (None, args.games * 3 // 4),
        (1, args.games // 8),
        (3, args.games - args.games * 3 // 4 - args.games // 8),
    ]
    for name, check in (
        (
            "engine vs specification",
            lambda g, k, limit, bar: compare_with_spec(g, args.seed + k, limit, bar.update),
        ),
        (
            "batch engine vs AEC env",
            lambda g, k, limit, bar: compare_engines(g, 512, args.seed + k, limit, progress=bar.update),
        ),
    ):
        total = {"games": 0, "decisions": 0, "rounds": 0}
        start = time.perf_counter()
        with tqdm(total=args.games, unit="game", desc=name) as bar:
            for k, (limit, games) in enumerate(plan):
                stats = check(games, k, limit, bar)
                for key in total:
                    total[key] += stats[key]
        print(
            f"{name}: identical over {total['games']:,} games, {total['rounds']:,} rounds, "
            f"{total['decisions']:,} decisions in {time.perf_counter() - start:.0f} s (seed {args.seed})"
        )


if __name__ == "__main__":
    main()
