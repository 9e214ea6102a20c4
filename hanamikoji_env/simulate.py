"""Simulation for the search bots: apply action sequences to many game rows, play them out.

A search bot builds full states consistent with what it knows (its
determinizations), turns them into engine rows
(:func:`hanamikoji_env.engine.rows_from_states`), applies its candidate moves
(:func:`apply_sequences`), plays each row to the end of its round with uniform
random moves (:func:`playout`), and reads the outcome (:func:`row_outcomes`).
Everything runs on the engine of record's kernels.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from hanamikoji_env.actions import NUM_ACTIONS
from hanamikoji_env.engine import C_MARKERS, C_PHASE, C_WINNER, ROUND_OVER, apply_one, legal, pick
from hanamikoji_env.rules import NUM_GEISHAS, VALUES

PLAYOUT_STEPS = 64
"""Uniforms needed per row by :func:`playout` (a round has at most 56 decisions)."""

_VALUES = np.array(VALUES, dtype=np.int64)


@njit(cache=True)
def _apply_sequences(s, actions, lengths, round_limit):
    """Apply ``actions[i, :lengths[i]]`` to row ``i`` (each legal in turn, or the row is marked)."""
    m = np.zeros(NUM_ACTIONS, dtype=np.int8)
    ok = np.ones(s.shape[0], dtype=np.bool_)
    for i in range(s.shape[0]):
        for k in range(lengths[i]):
            legal(s, i, m)
            if m[actions[i, k]] == 0:
                ok[i] = False
                break
            apply_one(s, i, actions[i, k], round_limit)
    return ok


@njit(cache=True)
def _playout(s, u, round_limit):
    m = np.zeros(NUM_ACTIONS, dtype=np.int8)
    for i in range(s.shape[0]):
        k = 0
        while s[i, C_PHASE] < ROUND_OVER:
            legal(s, i, m)
            apply_one(s, i, pick(m, u[i, k]), round_limit)
            k += 1


def apply_sequences(
    rows: np.ndarray, actions: np.ndarray, lengths: np.ndarray, round_limit: int | None
) -> None:
    """Apply per-row action sequences in place; ``ValueError`` if one is illegal."""
    ok = _apply_sequences(rows, actions.astype(np.int64), lengths.astype(np.int64), round_limit or 0)
    if not ok.all():
        raise ValueError(f"illegal action sequence in rows {np.flatnonzero(~ok)[:10].tolist()}")


def playout(rows: np.ndarray, uniforms: np.ndarray, round_limit: int | None) -> None:
    """Play every row to the end of its round, in place: uniform random legal actions drawn
    from ``uniforms`` (``[N, PLAYOUT_STEPS]`` in [0, 1), e.g. ``rng.random(...)``)."""
    if uniforms.shape != (rows.shape[0], PLAYOUT_STEPS):
        raise ValueError(f"uniforms must have shape ({rows.shape[0]}, {PLAYOUT_STEPS}), got {uniforms.shape}")
    _playout(rows, uniforms, round_limit or 0)


def round_values(rows: np.ndarray) -> np.ndarray:
    """Seat 0's value of each row after a round's scoring, in [-1, 1]: +1 / -1 for a game won or
    lost there, 0 for a drawn game, otherwise half the lead in charm points and geishas the
    markers give (they carry over to the next round), clipped to [-0.5, 0.5]."""
    winner, points, geishas = row_outcomes(rows)
    lead = (points[:, 0] - points[:, 1]) / 11.0 + (geishas[:, 0] - geishas[:, 1]) / 4.0
    value = np.where(winner == 0, 1.0, np.where(winner == 1, -1.0, 0.5 * np.clip(lead, -1.0, 1.0)))
    return np.where(winner == -1, 0.0, value)


def row_outcomes(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per row after a round: winner (-2 none, -1 draw, 0, 1), points ``[N, 2]``, geishas ``[N, 2]``."""
    markers = rows[:, C_MARKERS : C_MARKERS + NUM_GEISHAS]
    points = np.stack([((markers == p) * _VALUES).sum(1) for p in (0, 1)], axis=1)
    geishas = np.stack([(markers == p).sum(1) for p in (0, 1)], axis=1)
    return rows[:, C_WINNER], points, geishas
