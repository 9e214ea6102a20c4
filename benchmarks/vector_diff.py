"""The long differential check: 100,000 games through the batch engine and the AEC env.

Same decks, same random legal actions; every decision's observation, mask and
acting player, and every game's rewards, winner and rounds must be equal.
Usage: ``python benchmarks/vector_diff.py [--games 100000] [--seed 0]``.
"""

from __future__ import annotations

import argparse
import time

from tqdm import tqdm

from hanamikoji_env.differential import compare_engines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    start = time.perf_counter()
    total = {"games": 0, "decisions": 0, "rounds": 0}
    # three quarters official games, the rest with round limits 1 and 3
    plan = [
        (None, args.games * 3 // 4),
        (1, args.games // 8),
        (3, args.games - args.games * 3 // 4 - args.games // 8),
    ]
    with tqdm(total=args.games, unit="game") as bar:
        for k, (limit, games) in enumerate(plan):
            stats = compare_engines(
                games, num_envs=512, seed=args.seed + k, round_limit=limit, progress=bar.update
            )
            for key in total:
                total[key] += stats[key]
    elapsed = time.perf_counter() - start
    print(
        f"identical: {total['games']:,} games, {total['rounds']:,} rounds, {total['decisions']:,} decisions"
        f" compared in {elapsed:.0f} s (seed {args.seed})"
    )


if __name__ == "__main__":
    main()
