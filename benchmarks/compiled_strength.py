"""Are the compiled bots as strong as the Python bots they replaced?  Mirrored games, same run.

- ``search`` (compiled, :mod:`hanamikoji_env.bots.search`) against
  ``search-reference`` (the Python SearchBot it replaced): head to head, target
  a win rate within [0.47, 0.53]; and each of them against ``random`` and
  ``heuristic``: the compiled one's win rate inside the reference's 95% interval.
- ``heuristic`` (compiled; ties to the first in enumeration order) against
  ``heuristic-random-ties`` (the readable reference with the tie rule it had
  before: random among ties), each against ``random`` and ``search``: the
  compiled one's win rate inside the other's 95% interval.

Usage: ``python benchmarks/compiled_strength.py [--games 2000] [--workers 2] [--seed 0] [--only search|heuristic]``
"""

from __future__ import annotations

import argparse
import multiprocessing
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor

import numpy as np

from hanamikoji_env.bots import HeuristicBot, RandomBot, SearchBot
from hanamikoji_env.bots.base import Bot
from hanamikoji_env.bots.heuristic_reference import HeuristicReference
from hanamikoji_env.bots.search_reference import SearchReference
from hanamikoji_env.games import play_game
from hanamikoji_env.stats import wilson


class HeuristicRandomTies(HeuristicReference):
    """The heuristic with the tie rule it had before it was compiled: random among ties."""

    _argmax = Bot._argmax


PLAYERS: dict[str, Callable[[int], Bot]] = {
    "random": RandomBot,
    "heuristic": HeuristicBot,
    "heuristic-random-ties": HeuristicRandomTies,
    "search": SearchBot,
    "search-reference": SearchReference,
}


def _games(args: tuple[str, str, list[int], int]) -> list[float]:
    """A's reward in both seatings of each deal."""
    name_a, name_b, deals, seed = args
    a, b = PLAYERS[name_a](0), PLAYERS[name_b](0)
    out = []
    for deal in deals:
        for a_seat in (0, 1):
            game_seed = (seed * 1_000_003 + deal) * 2 + a_seat
            a.reset(seed=game_seed)
            b.reset(seed=game_seed + 10**9)
            reward, _ = play_game((a, b) if a_seat == 0 else (b, a), seed * 1_000_003 + deal, None)
            out.append(reward if a_seat == 0 else -reward)
    return out


def match(pool: ProcessPoolExecutor, a: str, b: str, games: int, seed: int) -> tuple[float, float, float]:
    deals = list(range(games // 2))
    chunks = [deals[k : k + 25] for k in range(0, len(deals), 25)]
    rewards = np.concatenate(list(pool.map(_games, [(a, b, c, seed) for c in chunks])))
    score = float((rewards > 0).sum() + 0.5 * (rewards == 0).sum())
    lo, hi = wilson(score, len(rewards))
    return score / len(rewards), lo, hi


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", type=int, default=2000, help="mirrored games per pair")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--only", choices=("search", "heuristic"), default=None, help="one bot's comparisons (default both)"
    )
    args = parser.parse_args()
    start = time.perf_counter()
    with ProcessPoolExecutor(args.workers, multiprocessing.get_context("spawn")) as pool:

        def show(a: str, b: str) -> tuple[float, float, float]:
            rate, lo, hi = match(pool, a, b, args.games, args.seed)
            print(
                f"{a:<22} vs {b:<18} {rate:.3f} [{lo:.3f}, {hi:.3f}]  ({time.perf_counter() - start:.0f} s)"
            )
            return rate, lo, hi

        verdicts = []
        if args.only in (None, "search"):
            head = show("search", "search-reference")
            verdicts.append(("search vs search-reference in [0.47, 0.53]", 0.47 <= head[0] <= 0.53))
        for new, old, field in (
            ("search", "search-reference", ("random", "heuristic")),
            ("heuristic", "heuristic-random-ties", ("random", "search")),
        ):
            if args.only not in (None, new):
                continue
            for other in field:
                mine, theirs = show(new, other), show(old, other)
                inside = theirs[1] <= mine[0] <= theirs[2]
                verdicts.append((f"{new} vs {other} inside {old}'s interval", inside))
    print()
    for what, ok in verdicts:
        print(f"{what}: {'met' if ok else 'MISSED'}")
    print(f"total {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
