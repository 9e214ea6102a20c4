"""How well a policy's value head predicts a game's result at each round's start.

PolicySearchBot with ``value=1`` (``hanamikoji_env.bots.psearch.continuation_values``) values
a round that leaves the game going by the markers' lead potential plus the value heads at the
next round's first decision.  This measures the candidates on ``--games`` games of the policy
against itself (sampled moves, the batch engine): at every round's first decision, each
estimate of the first mover's final result (+1 win, -1 loss) against the result.

* ``markers``: half the markers' lead, clipped (what the search uses without ``value=1``);
* ``own head``: the mover's value head plus the lead potential (``shaping * lead / 2``);
* ``both heads``: half the difference of the two players' heads, each from its own view,
  plus the potential (what ``value=1`` uses).

Printed per group of rounds: the estimates' mean (the results' mean is about 0 in self-play,
so a mean far from it is a bias), their correlation with the result and their mean squared
error (0 for a perfect estimate, 1 for always guessing 0).

Usage: ``python benchmarks/value_calibration.py [--ckpt pretrained] [--games 2048] [--seed 0]``
(about a minute on one core)
"""

from __future__ import annotations

import argparse

import numpy as np

from hanamikoji_env.bots.psearch import value_shaping
from hanamikoji_env.nn import load_checkpoint, policy_from, policy_probs, policy_values, sample_actions
from hanamikoji_env.pretrained import resolve_checkpoint
from hanamikoji_env.rules import VALUES, lead
from hanamikoji_env.vector import BatchEngine


def round_starts(ckpt: str, games: int, seed: int) -> dict[str, np.ndarray]:
    """Per round's first decision of ``games`` self-play games: the game, its mover, the round,
    the game's result for the mover and the three estimates of it."""
    path = resolve_checkpoint(ckpt)
    data = load_checkpoint(path)
    shaping, model = value_shaping(data.get("config"), path), policy_from(data, path)
    engine = BatchEngine(games, seed=seed, autoreset=False)
    obs, mask, to_play = engine.reset()
    rng = np.random.default_rng(seed + 1)
    seen = np.zeros(games, dtype=np.int64)
    result = np.zeros(games)
    over = np.zeros(games, dtype=np.bool_)
    found: list[np.ndarray] = []
    while not over.all():
        rounds, markers = engine.markers()
        new = np.flatnonzero((rounds != seen) & ~over)
        if new.size:
            other_obs, other_mask = engine.observe((1 - to_play).astype(np.int8))
            mover = to_play[new]
            mine, theirs = markers[new] == mover[:, None], markers[new] == 1 - mover[:, None]
            points = ((mine.astype(float) - theirs) * np.array(VALUES)).sum(1)
            found.append(
                np.stack(
                    [
                        new, rounds[new], mover,
                        policy_values(model, obs[new], mask[new]),
                        policy_values(model, other_obs[new], other_mask[new]),
                        lead(points, mine.sum(1) - theirs.sum(1)),
                    ],
                    axis=1,
                )
            )  # fmt: skip
            seen[new] = rounds[new]
        live = np.flatnonzero(mask.sum(1) > 0)
        actions = np.zeros(games, dtype=np.int64)
        actions[live] = sample_actions(policy_probs(model, obs[live], mask[live]), rng.random(live.size))
        obs, mask, to_play, rewards, done, _ = engine.step(actions)
        result[done], over[done] = rewards[done, 0], True
    env, rnd, mover, own, other, lead_ = np.concatenate(found).T
    final = result[env.astype(np.int64)] * np.where(mover == 0, 1.0, -1.0)
    potential = 0.5 * shaping * lead_
    return {
        "game": env.astype(np.int64),
        "mover": mover.astype(np.int64),
        "round": rnd,
        "final": final,
        "markers": 0.5 * np.clip(lead_, -1.0, 1.0),
        "own head": np.clip(own + potential, -1.0, 1.0),
        "both heads": np.clip((own - other) / 2 + potential, -1.0, 1.0),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ckpt", default="pretrained", help="a .pt checkpoint, or pretrained")
    parser.add_argument("--games", type=int, default=2048)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if args.games < 1:
        parser.error(f"--games must be positive, got {args.games}")
    try:
        starts = round_starts(args.ckpt, args.games, args.seed)
    except (ValueError, OSError) as e:
        parser.error(str(e))
    print(f"{args.ckpt}, {args.games} self-play games: estimates of the first mover's result")
    print(
        "| rounds | starts | estimate | mean | correlation | mean squared error |\n|---|---|---|---|---|---|"
    )
    for name, group in (("1", starts["round"] == 1), ("2 and on", starts["round"] >= 2)):
        final = starts["final"][group]
        for estimate in ("markers", "own head", "both heads"):
            e = starts[estimate][group]
            corr = np.corrcoef(e, final)[0, 1] if e.std() > 0 else float("nan")
            print(
                f"| {name} | {group.sum()} | {estimate} | {e.mean():+.3f} | {corr:.3f} | "
                f"{np.mean((e - final) ** 2):.3f} |"
            )


if __name__ == "__main__":
    main()
