"""Strength and cost of the enumeration bot (``enum``), against the targets of the league issue.

1. ``enum`` (its defaults, or ``--spec``) against ``heuristic`` (target: at least 0.55) and
   against ``search`` (reported), ``--games`` mirrored games a pair, with Wilson intervals;
2. its milliseconds per decision that has a choice, batched on one core (numba's threads set
   to 1): the decisions of ``--timing-games`` games against the heuristic, each decision timed
   alone and the same decisions as one batch (target: median at most 50 ms).

Usage: ``python benchmarks/enum_strength.py [--games 2000] [--timing-games 20] [--spec enum]
[--workers N]``.  On 2 cores the default takes about 35 minutes (the games), most of it in the
enum bot's decisions.
"""

from __future__ import annotations

import argparse
import time

import numba
import numpy as np
from timing import timed_decisions

from hanamikoji_env.bots import HeuristicBot
from hanamikoji_env.bots.spec import parse_player
from hanamikoji_env.observation import decode
from hanamikoji_env.rules import Phase
from hanamikoji_env.tournament import run_tournament

TARGET_VS_HEURISTIC = 0.55
MAX_MEDIAN_MS = 50.0


def timing(spec: str, games: int) -> tuple[np.ndarray, np.ndarray, float]:
    """Per decision with a choice: milliseconds alone (all of them; those it valued: not a card
    of a plan chosen at the token decision), and the mean over them as one batch."""
    numba.set_num_threads(1)
    bot = parse_player(spec).make(0)
    alone, valued, positions = [], [], []
    for obs, ms in timed_decisions(bot, HeuristicBot(1), games, first_deal=20_000):
        if obs["action_mask"].sum() > 1:
            alone.append(ms)
            if decode(obs["observation"]).phase != Phase.SELECT:
                valued.append(ms)
            positions.append((obs["observation"], obs["action_mask"]))
    obs = np.stack([p[0] for p in positions])
    mask = np.stack([p[1] for p in positions])
    start = time.perf_counter()
    bot.act_batch(obs, mask)  # no plans: each token or selection decision plans its turn anew
    batched = 1000 * (time.perf_counter() - start) / len(positions)
    return np.array(alone), np.array(valued), batched


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--games", type=int, default=2000)
    p.add_argument("--timing-games", type=int, default=20)
    p.add_argument("--spec", default="enum")
    p.add_argument("--workers", type=int, default=None)
    args = p.parse_args()
    for opponent in ("heuristic", "search"):
        start = time.perf_counter()
        result = run_tournament(
            [parse_player(args.spec), parse_player(opponent)], args.games, seed=1, workers=args.workers
        )
        pair = result["pairs"][0]
        target = f" (target >= {TARGET_VS_HEURISTIC})" if opponent == "heuristic" else ""
        print(
            f"{args.spec} vs {opponent}: {pair['win_rate']:.3f} [{pair['ci95'][0]:.3f}, {pair['ci95'][1]:.3f}] "
            f"over {pair['games']} mirrored games{target}, {time.perf_counter() - start:.0f} s",
            flush=True,
        )
    alone, valued, batched = timing(args.spec, args.timing_games)
    print(
        f"{args.spec}, one core: {len(alone)} decisions with a choice, median {np.median(alone):.1f} ms alone "
        f"(target: median <= {MAX_MEDIAN_MS:.0f} ms); the {len(valued)} it valued (tokens, splits, answers): "
        f"median {np.median(valued):.1f} ms (p90 {np.percentile(valued, 90):.1f}, max {valued.max():.1f}); "
        f"all of them replanned as one batch: {batched:.1f} ms each"
    )


if __name__ == "__main__":
    main()
