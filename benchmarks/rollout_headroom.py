"""Headroom of a policy against RandomBot: the policy alone and with one step of lookahead.

Plays ``--games`` mirrored games against ``random`` for the policy
(``ckpt:PATH``, greedy) and for ``rollout:ckpt=PATH,samples=N`` (RolloutBot
over the same policy: every legal action scored by ``--samples``
determinized games played out with the policy on its side and RandomBot on
the other), with the tournament of ``hanamikoji_env.tournament`` and the same
``--seed``, so both play the same deals.  Prints both win rates with Wilson
95% intervals: the lookahead's win rate is what a policy that made its
choices (one at a time) could reach, so the gap is what training has left on
the table.

Usage: ``python benchmarks/rollout_headroom.py [--ckpt checkpoints/ppo_selfplay.pt] [--games 600]
[--samples 128] [--seed 0] [--workers N]``  (about 7 minutes at the defaults on 2 cores)
"""

from __future__ import annotations

import argparse

from hanamikoji_env.bots.spec import parse_player
from hanamikoji_env.tournament import run_tournament


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ckpt", default="checkpoints/ppo_selfplay.pt")
    parser.add_argument("--games", type=int, default=600, help="mirrored games per player, even")
    parser.add_argument("--samples", type=int, default=128)
    parser.add_argument("--seed", type=int, default=0, help="seed of the deals and the bots")
    parser.add_argument("--workers", type=int, default=None, help="processes (default: all cores)")
    args = parser.parse_args()
    try:
        players = [
            parse_player(f"ckpt:{args.ckpt}"),
            parse_player(f"rollout:ckpt={args.ckpt},samples={args.samples}"),
        ]
        opponent = parse_player("random")
        pairs = [
            run_tournament([p, opponent], args.games, args.seed, args.workers)["pairs"][0] for p in players
        ]
    except ValueError as e:
        parser.error(str(e))
    print(f"{args.games} games against random (seed {args.seed}, both seats of each deal), {args.ckpt}:")
    for name, pair in zip(
        ("policy (greedy)", f"policy + lookahead ({args.samples} samples)"), pairs, strict=True
    ):
        low, high = pair["ci95"]
        print(f"  {name:<36} {pair['win_rate']:.3f}  [{low:.3f}, {high:.3f}]")
    print(f"  lookahead - policy: {pairs[1]['win_rate'] - pairs[0]['win_rate']:+.3f}")


if __name__ == "__main__":
    main()
