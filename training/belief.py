"""Train a belief over the opponent's hidden hand (:mod:`hanamikoji_env.belief`) and report it.

    python -m hanamikoji_env.training.belief --policy pretrained --decisions 400000 --out belief.pt
    python -m hanamikoji_env.training.belief --opponents self,search,heuristic --out mixed.pt

plays the policy on the batch engine (against itself, or the players ``--opponents`` names),
fits the model, saves it (the weights, loaded with ``weights_only``) and prints its likelihood
against the uniform deal's and its calibration on games of other deals.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import torch

from hanamikoji_env.belief import calibration, collect, hand_chances, nll, save_belief, train, uniform_chances
from hanamikoji_env.bots.spec import parse_player
from hanamikoji_env.nn import load_policy


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(
        prog="python -m hanamikoji_env.training.belief", description=__doc__.split("\n")[0]
    )
    p.add_argument("--policy", default="pretrained", help="the self-play policy: a checkpoint or pretrained")
    p.add_argument("--decisions", type=int, default=400_000, help="training decisions (default 400000)")
    p.add_argument(
        "--test", type=int, default=100_000, help="held-back decisions, another seed (default 100000)"
    )
    p.add_argument(
        "--opponents",
        default="self",
        help="comma-separated players the policy meets, game rows shared among them: player specs "
        "(search, heuristic, enum, ...) or self (the policy itself; default: self)",
    )
    p.add_argument("--epochs", type=int, default=8)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", type=Path, required=True, help="where to save the belief model")
    args = p.parse_args(argv)
    if args.decisions < 1 or args.test < 1 or args.epochs < 1:
        p.error("--decisions, --test and --epochs must be positive")
    policy = load_policy(args.policy)
    try:
        names = [name.strip() for name in args.opponents.split(",")]
        opponents = [None if name == "self" else parse_player(name).make(args.seed) for name in names]
    except ValueError as e:
        p.error(f"--opponents: {e}")
    torch.set_num_threads(1)
    obs, hand = collect(policy, args.decisions, args.seed, opponents=opponents)
    test_obs, test_hand = collect(policy, args.test, args.seed + 1, opponents=opponents)
    net = train(obs, hand, args.epochs, seed=args.seed)
    save_belief(net, args.out)
    chances = hand_chances(net, test_obs)
    print(f"held-back decisions: {len(test_obs):,}")
    print(
        f"NLL per unseen card: belief {nll(chances, test_obs, test_hand):.4f}, "
        f"uniform deal {nll(uniform_chances(test_obs), test_obs, test_hand):.4f}"
    )
    print("| chance predicted | fraction seen | unseen cards |\n|---|---|---|")
    for predicted, seen, count in calibration(chances, test_obs, test_hand):
        print(f"| {predicted:.3f} | {seen:.3f} | {count:,} |")
    print(f"saved {args.out}")


if __name__ == "__main__":
    main()
