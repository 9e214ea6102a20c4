"""Strength and speed of the baseline bots: a mirrored round-robin and search timing.

Plays ``random``, ``heuristic`` and ``search`` (default budget) against each
other, ``--games`` mirrored games per pair (default 2000), with the tournament
of ``hanamikoji_env.tournament``, checks the targets of the bots issue, and
times the search bot's decisions in games against the heuristic.

Usage: ``python benchmarks/bot_strength.py [--games 2000] [--timing-games 100] [--out runs/bot_strength]``
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
from timing import timed_decisions

from hanamikoji_env.bots import HeuristicBot, SearchBot
from hanamikoji_env.bots.spec import parse_player
from hanamikoji_env.tournament import format_table, run_tournament, write_outputs

TARGETS = [("heuristic", "random", 0.85), ("search", "random", 0.90), ("search", "heuristic", 0.60)]


def search_timing(games: int, seed: int = 0) -> dict[str, float]:
    """Milliseconds per SearchBot decision, all decisions and those it searched."""
    all_ms, searched_ms = [], []
    for obs, ms in timed_decisions(SearchBot(seed), HeuristicBot(seed + 1), games, first_deal=10_000):
        all_ms.append(ms)
        phase = int(np.argmax(obs["observation"][:7]))
        if obs["action_mask"].sum() > 1 and phase != 1:  # token, split or answer with a choice
            searched_ms.append(ms)
    a, s = np.array(all_ms), np.array(searched_ms)
    return {
        "decisions": len(a),
        "median_all": float(np.median(a)),
        "mean_all": float(a.mean()),
        "searched": len(s),
        "median_searched": float(np.median(s)),
        "p90_searched": float(np.percentile(s, 90)),
        "max_searched": float(s.max()),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", type=int, default=2000, help="mirrored games per pair")
    parser.add_argument("--timing-games", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=Path("runs/bot_strength"))
    args = parser.parse_args()

    start = time.perf_counter()
    timing = search_timing(args.timing_games, args.seed)
    print(
        f"SearchBot (default budget) over {args.timing_games} games vs heuristic: "
        f"median {timing['median_all']:.1f} ms over all {timing['decisions']} decisions "
        f"(mean {timing['mean_all']:.1f}); over the {timing['searched']} searched decisions "
        f"median {timing['median_searched']:.1f} ms, p90 {timing['p90_searched']:.1f}, max {timing['max_searched']:.0f}"
    )
    players = [parse_player(p) for p in ("random", "heuristic", "search")]
    results = run_tournament(players, args.games, seed=args.seed)
    print(format_table(results))
    write_outputs(results, args.out)
    pairs = {(r["a"], r["b"]): r for r in results["pairs"]}
    print()
    for a, b, target in TARGETS:
        r = pairs.get((a, b)) or pairs[(b, a)]
        rate = r["win_rate"] if r["a"] == a else 1 - r["win_rate"]
        lo, hi = r["ci95"] if r["a"] == a else (1 - r["ci95"][1], 1 - r["ci95"][0])
        ok = "met" if rate >= target else "MISSED"
        print(
            f"{a} vs {b}: {rate:.3f} [{lo:.3f}, {hi:.3f}] over {r['games']} games (target >= {target}: {ok})"
        )
    ok = "met" if timing["median_all"] <= 50 else "MISSED"
    print(f"search median decision time {timing['median_all']:.1f} ms (target <= 50 ms: {ok})")
    print(f"total {time.perf_counter() - start:.0f} s; tables in {args.out}")


if __name__ == "__main__":
    main()
