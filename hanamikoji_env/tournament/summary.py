"""A tournament's games (:class:`GameResult`) and their statistics: per pair wins, draws,
losses and Wilson intervals; Bradley-Terry ratings with bootstrap intervals; the
``results.json`` schema."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from hanamikoji_env._version import __version__
from hanamikoji_env.stats import bootstrap_elo, bradley_terry, wilson

SCHEMA = "hanamikoji-eval/1"


class GameResult(NamedTuple):
    """One game of a pair, as a worker reports it."""

    pair: int
    deal: int
    a_seat: int
    """Player A's seat (0 or 1): each deal is played in both seatings."""
    reward: float
    """Player A's reward: 1, 0 or -1."""
    rounds: int
    record: str | None
    """The game record as a JSON line, when the tournament keeps them."""


def summarise(
    names: list[str],
    pairs: list[tuple[int, int]],
    results: Sequence[GameResult],
    games: int,
    seed: int,
    round_limit: int | None,
) -> dict[str, Any]:
    """The results dict (the ``results.json`` schema, see docs/bots.md)."""
    n = len(names)
    wins = np.zeros((n, n))
    matrix: list[list[float | None]] = [[None] * n for _ in range(n)]
    rows = []
    outcomes: list[tuple[int, int, tuple[int, int, int]]] = []
    for k, (i, j) in enumerate(pairs):
        rewards = np.array([r.reward for r in results if r.pair == k])
        w, d, lo = int((rewards > 0).sum()), int((rewards == 0).sum()), int((rewards < 0).sum())
        score = w + 0.5 * d
        ci = wilson(score, len(rewards))
        wins[i, j] += score
        wins[j, i] += lo + 0.5 * d
        outcomes.append((i, j, (w, d, lo)))
        matrix[i][j] = score / len(rewards)
        matrix[j][i] = 1 - score / len(rewards)
        rows.append(
            {
                "a": names[i],
                "b": names[j],
                "games": len(rewards),
                "wins": w,
                "draws": d,
                "losses": lo,
                "win_rate": score / len(rewards),
                "ci95": [ci[0], ci[1]],
            }
        )
    elo = bradley_terry(wins)
    anchor = names.index("random") if "random" in names else 0
    elo = elo - elo[anchor]
    intervals = bootstrap_elo(outcomes, n, anchor, seed=seed)
    return {
        "schema": SCHEMA,
        "env_version": __version__,
        "seed": seed,
        "round_limit": round_limit,
        "games_per_pair": games,
        "players": names,
        "pairs": rows,
        "elo": {name: float(e) for name, e in zip(names, elo, strict=True)},
        "elo_anchor": names[anchor],
        "elo_ci95": {name: [float(lo), float(hi)] for name, (lo, hi) in zip(names, intervals, strict=True)},
        "win_rate_matrix": matrix,
    }
