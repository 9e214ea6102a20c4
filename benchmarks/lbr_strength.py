"""Does the full game's local best response exploit the fixed players at least as well as the
best player we ship?  (The target of the "How good is an agent" issue.)

Against each ``--opponents`` player (default: random and the heuristic), the LBR player
(:mod:`hanamikoji_env.lbr`, its default budget unless ``--particles``/``--samples``/``--plans``) and each
``--players`` player (default: the shipped agent, the search bot, PolicySearchBot over the
agent) play ``--games`` games, half in each seat, all on the same deals (the seed's).  Prints a
row per opponent and player: the score with its Wilson interval, the median time per decision
with a choice, and the LBR player's score minus the best fixed player's.

Usage: ``python benchmarks/lbr_strength.py [--games 400] [--opponents random heuristic]
[--players pretrained search psearch:ckpt=pretrained] [--plans 10] [--own-moves pretrained]
[--out runs/lbr_strength.json]``; about
an hour on one core at the defaults (the LBR against the heuristic and PolicySearchBot dominate).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import torch

from hanamikoji_env.bots.spec import parse_player
from hanamikoji_env.lbr import BotPlayer, Budget, lbr_player, play_games


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--games", type=int, default=400)
    p.add_argument("--opponents", nargs="+", default=["random", "heuristic"])
    p.add_argument("--players", nargs="+", default=["pretrained", "search", "psearch:ckpt=pretrained"])
    p.add_argument("--particles", type=int, default=Budget.particles)
    p.add_argument("--samples", type=int, default=Budget.samples)
    p.add_argument("--plans", type=int, default=Budget.plans)
    p.add_argument(
        "--own-moves", metavar="SPEC", default=None,
        help="the player making the LBR player's own later moves in its playouts (default: the target)",
    )  # fmt: skip
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", type=Path, default=Path("runs/lbr_strength.json"))
    args = p.parse_args()
    torch.set_num_threads(1)
    budget = Budget(args.particles, args.samples, args.plans)
    own = (
        None
        if args.own_moves is None
        else parse_player(args.own_moves).make(seed=args.seed, round_limit=None)
    )
    rows = []
    print("| opponent | player | score | 95% interval | median ms |\n|---|---|---|---|---|", flush=True)
    for name in args.opponents:
        target = parse_player(name).make(seed=args.seed, round_limit=None)
        scores = {}
        for player in ["lbr", *args.players]:
            if player == "lbr":
                make = lbr_player(target, budget, own)
            else:
                bot = parse_player(player).make(seed=args.seed, round_limit=None)
                make = lambda seat, rng, bot=bot: BotPlayer(bot)  # noqa: E731
            result = play_games(target, args.games, make, seed=args.seed, progress=False).as_dict()
            scores[player] = result["br_score"]
            rows.append({"opponent": name, "player": player, **result})
            low, high = result["ci95"]
            print(
                f"| {name} | {player} | {result['br_score']:.3f} | [{low:.3f}, {high:.3f}] | "
                f"{result['decision_ms']['median']} |",
                flush=True,
            )
        best = max(args.players, key=lambda k: scores[k])
        print(
            f"| {name} | lbr minus the best fixed player ({best}) | {scores['lbr'] - scores[best]:+.3f} | | |"
        )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(
        json.dumps(
            {
                "budget": vars(budget),
                "own_moves": args.own_moves or "target",
                "games": args.games,
                "rows": rows,
            },
            indent=2,
        )
        + "\n"
    )
    print(f"written to {args.out}")


if __name__ == "__main__":
    main()
