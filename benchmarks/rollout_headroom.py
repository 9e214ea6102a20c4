"""Headroom of a policy against RandomBot: the policy alone and with one step of lookahead.

Plays ``--deals`` deals twice each (seats swapped) against ``RandomBot`` for
the policy (``PolicyBot``, greedy) and for ``RolloutBot`` over the same policy
(every legal action scored by ``--samples`` determinized games played out
with the policy on its side and RandomBot on the other), on the same deals,
over ``--workers`` processes.  Prints both win rates with Wilson 95%
intervals: the lookahead's win rate is what a policy that made its choices
(one at a time) could reach, so the gap is what training has left on the table.

Usage: ``python benchmarks/rollout_headroom.py [--ckpt checkpoints/ppo_selfplay.pt] [--deals 150]
[--samples 128] [--workers 2] [--seed 1000]``  (about 40 minutes at the defaults on 2 cores)
"""

from __future__ import annotations

import argparse
from concurrent.futures import ProcessPoolExecutor

import torch
from tqdm import tqdm

from hanamikoji_env.bots.policy import PolicyBot
from hanamikoji_env.bots.random import RandomBot
from hanamikoji_env.bots.rollout import RolloutBot
from hanamikoji_env.stats import wilson
from hanamikoji_env.tournament import play_game


def play_deals(ckpt: str, samples: int, deals: list[int]) -> tuple[float, float]:
    """Points (win 1, draw 1/2) of the policy and of the lookahead over both seats of ``deals``."""
    torch.set_num_threads(1)
    policy, lookahead = PolicyBot(ckpt), RolloutBot(ckpt, seed=deals[0], samples=samples)
    points = [0.0, 0.0]
    for k, bot in enumerate((policy, lookahead)):
        opponent = RandomBot(deals[0])
        for deal in deals:
            first, _ = play_game((bot, opponent), deal, None)
            second, _ = play_game((opponent, bot), deal, None)
            points[k] += (first > 0) + 0.5 * (first == 0) + (second < 0) + 0.5 * (second == 0)
    return points[0], points[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ckpt", default="checkpoints/ppo_selfplay.pt")
    parser.add_argument("--deals", type=int, default=150)
    parser.add_argument("--samples", type=int, default=128)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=1000, help="first deal seed")
    args = parser.parse_args()
    if min(args.deals, args.samples, args.workers) < 1 or args.seed < 0:
        parser.error("--deals, --samples and --workers must be >= 1, --seed >= 0")
    PolicyBot(args.ckpt)  # a bad checkpoint fails here, not in a worker
    deals = list(range(args.seed, args.seed + args.deals))
    chunks = [deals[i : i + 5] for i in range(0, len(deals), 5)]
    totals = [0.0, 0.0]
    with ProcessPoolExecutor(args.workers) as pool, tqdm(total=len(deals), unit="deal") as bar:
        for chunk, points in zip(
            chunks,
            pool.map(play_deals, [args.ckpt] * len(chunks), [args.samples] * len(chunks), chunks),
            strict=True,
        ):
            totals = [t + p for t, p in zip(totals, points, strict=True)]
            bar.update(len(chunk))
    games = 2 * len(deals)
    print(f"{games} games against RandomBot (deals {deals[0]}..{deals[-1]}, both seats), {args.ckpt}:")
    for name, points in zip(
        ("policy (greedy)", f"policy + lookahead ({args.samples} samples)"), totals, strict=True
    ):
        low, high = wilson(points, games)
        print(f"  {name:<36} {points / games:.3f}  [{low:.3f}, {high:.3f}]")
    print(f"  lookahead - policy: {(totals[1] - totals[0]) / games:+.3f}")


if __name__ == "__main__":
    main()
