"""Statistics for evaluations: Wilson score intervals and Bradley-Terry ratings."""

from __future__ import annotations

import math

import numpy as np

Z95 = 1.959963984540054


def wilson(successes: float, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval for a proportion ``successes / n`` (95% by default).

    ``successes`` may be fractional (a draw counts as half a win).
    """
    if n <= 0:
        raise ValueError(f"n must be positive, got {n}")
    if not 0 <= successes <= n:
        raise ValueError(f"successes must be in [0, n={n}], got {successes}")
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == n else min(1.0, centre + half)
    return low, high


def bradley_terry(
    wins: np.ndarray, prior: float = 0.5, iterations: int = 10_000, tol: float = 1e-10
) -> np.ndarray:
    """Bradley-Terry strengths (Elo scale, mean 0) from ``wins[i, j]`` = games i won against j.

    Fitted by the MM algorithm (Hunter 2004).  ``prior`` adds that many virtual
    wins each way to every pair that played, so a player who never lost still
    gets a finite rating; ``prior=0`` gives the plain maximum-likelihood fit.
    Elo scale: a difference of ``d`` means an expected score ``1 / (1 + 10**(-d/400))``.
    """
    w = np.asarray(wins, dtype=np.float64)
    if w.ndim != 2 or w.shape[0] != w.shape[1]:
        raise ValueError(f"wins must be a square matrix, got shape {w.shape}")
    if (w < 0).any():
        raise ValueError("wins must be non-negative")
    played = (w + w.T) > 0
    w = w + prior * played
    np.fill_diagonal(w, 0.0)
    n = w + w.T
    total_wins = w.sum(axis=1)
    if (total_wins == 0).any():
        raise ValueError("every player needs a win (or a prior > 0) for a finite rating")
    p = np.ones(len(w))
    for _ in range(iterations):
        denom = (n / (p[:, None] + p[None, :])).sum(axis=1)
        new = total_wins / denom
        new /= math.exp(np.log(new).mean())
        if np.abs(new - p).max() < tol:
            p = new
            break
        p = new
    elo = 400.0 * np.log10(p)
    return elo - elo.mean()


def bootstrap_elo(
    outcomes: list[tuple[int, int, tuple[int, int, int]]],
    n: int,
    anchor: int,
    samples: int = 500,
    seed: int = 0,
    level: float = 0.95,
) -> np.ndarray:
    """``level`` intervals of :func:`bradley_terry` ratings, anchored at ``anchor`` (= 0), by a
    bootstrap over games: each pair's games are resampled with replacement (``outcomes``: the
    pairs ``(i, j, (i's wins, draws, i's losses))``) and the ratings refitted ``samples`` times.
    Returns ``[n, 2]``: each player's low and high end (the anchor's is ``[0, 0]``)."""
    rng = np.random.default_rng(seed)
    fits = np.empty((samples, n))
    for b in range(samples):
        wins = np.zeros((n, n))
        for i, j, counts in outcomes:
            total = sum(counts)
            w, d, lo = rng.multinomial(total, np.asarray(counts, dtype=np.float64) / total)
            wins[i, j] += w + 0.5 * d
            wins[j, i] += lo + 0.5 * d
        elo = bradley_terry(wins)
        fits[b] = elo - elo[anchor]
    tail = 100 * (1 - level) / 2
    return np.percentile(fits, [tail, 100 - tail], axis=0).T
