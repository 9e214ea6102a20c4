"""Simulation for the search bots: apply action sequences, play out, score.

A search bot builds full games consistent with what it knows (its
determinizations, :mod:`hanamikoji_env.infoset`), applies its candidate moves
(:func:`apply_sequences`), plays each row on and scores it.  There is one
playout driver, :func:`play_out`: every row plays on until its round is scored
(valued by :func:`round_values`) or, with ``to_game_end``, until its game ends
(valued by its final return), the next rounds dealt by an
:class:`~hanamikoji_env.engine.Dealer` and the moves chosen by the caller's
policy.  Uniform random moves are its compiled special case: :func:`playout`,
and per row :func:`playout_row`, which the compiled search
(:mod:`hanamikoji_env.bots.search`) calls inside its own loop.  PolicySearchBot
plays a network to the round's end, RolloutBot a network and a random opponent to
the game's end, both through :func:`play_out`.  Everything runs on the engine
of record's kernels.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numba import njit

from hanamikoji_env.actions import NUM_ACTIONS
from hanamikoji_env.engine import (
    C_MARKERS,
    C_PHASE,
    C_TO_MOVE,
    C_WINNER,
    GAME_OVER,
    ROUND_OVER,
    Dealer,
    apply_one,
    final_returns_of,
    legal,
    pick,
)
from hanamikoji_env.observation import OBS_SIZE, encode_rows
from hanamikoji_env.rules import DRAW, NUM_GEISHAS, VALUES, lead

PLAYOUT_STEPS = 64
"""Uniforms needed per row by :func:`playout` (a round has at most 56 decisions)."""

_VALUES = np.array(VALUES, dtype=np.int64)
_lead = njit(cache=True)(lead)
""":func:`hanamikoji_env.rules.lead`, compiled."""


@njit(cache=True)
def apply_sequence_row(s, i, actions, length, round_limit, m):
    """Apply ``actions[:length]`` to row ``i``, each legal in turn (False at the first that is
    not, the row part-applied); ``m`` is scratch for the mask."""
    for k in range(length):
        legal(s, i, m)
        if m[actions[k]] == 0:
            return False
        apply_one(s, i, actions[k], round_limit)
    return True


@njit(cache=True)
def playout_row(s, i, u, round_limit, m):
    """Play row ``i`` to the end of its round: the legal action at ``u[k]`` at its ``k``-th
    decision (:func:`~hanamikoji_env.engine.pick`); ``m`` is scratch for the mask."""
    k = 0
    while s[i, C_PHASE] < ROUND_OVER:
        legal(s, i, m)
        apply_one(s, i, pick(m, u[k]), round_limit)
        k += 1


@njit(cache=True)
def row_value(s, i):
    """Seat 0's value of row ``i`` after a round's scoring (see :func:`round_values`)."""
    w = s[i, C_WINNER]
    if w == 0:
        return 1.0
    if w == 1:
        return -1.0
    if w == DRAW:
        return 0.0
    points = 0
    geishas = 0
    for g in range(NUM_GEISHAS):
        owner = s[i, C_MARKERS + g]
        if owner == 0:
            points += _VALUES[g]
            geishas += 1
        elif owner == 1:
            points -= _VALUES[g]
            geishas -= 1
    return 0.5 * min(max(_lead(points, geishas), -1.0), 1.0)


@njit(cache=True)
def _apply_sequences(s, actions, lengths, round_limit):
    """Apply ``actions[i, :lengths[i]]`` to row ``i`` (each legal in turn, or the row is marked)."""
    m = np.zeros(NUM_ACTIONS, dtype=np.int8)
    ok = np.ones(s.shape[0], dtype=np.bool_)
    for i in range(s.shape[0]):
        ok[i] = apply_sequence_row(s, i, actions[i], lengths[i], round_limit, m)
    return ok


@njit(cache=True)
def _playout(s, u, round_limit):
    m = np.zeros(NUM_ACTIONS, dtype=np.int8)
    for i in range(s.shape[0]):
        playout_row(s, i, u[i], round_limit, m)


@njit(cache=True)
def _round_values(s, out):
    for i in range(s.shape[0]):
        out[i] = row_value(s, i)


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
    out = np.empty(rows.shape[0])
    _round_values(rows, out)
    return out


Chooser = Callable[[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int], np.ndarray]
"""``choose(ids, seats, obs, mask, step) -> actions``: a move for each row still playing
(``ids``: their indices in the rows first given; ``seats``, ``obs``, ``mask``: the seat to move
and its observation and legal mask; ``step``: moves made so far)."""


def play_out(
    rows: np.ndarray,
    choose: Chooser,
    round_limit: int | None,
    to_game_end: bool = False,
    dealer: Dealer | None = None,
    max_steps: int = PLAYOUT_STEPS,
    score: Callable[[np.ndarray], np.ndarray] = round_values,
) -> np.ndarray:
    """Play every row on with ``choose``'s moves (each checked legal) and return seat 0's value
    of each: until its round is scored, valued by ``score`` (:func:`round_values`, or e.g.
    PolicySearchBot's value-head leaves; given the rows just scored); or, with
    ``to_game_end``, until its game ends, valued by its final return, the next rounds dealt by
    ``dealer`` (one game per row, its scripted decks by round).  ``rows`` is consumed.
    ``RuntimeError`` if a row is still playing after ``max_steps`` moves."""
    if to_game_end and dealer is None:
        raise ValueError("to_game_end needs a dealer for the next rounds")
    value = np.zeros(len(rows))
    ids = np.arange(len(rows))
    ones = np.ones(len(rows), dtype=np.int64)
    for step in range(max_steps + 1):
        phase = rows[:, C_PHASE]
        if to_game_end:
            assert dealer is not None
            scored = np.flatnonzero(phase == ROUND_OVER)
            if scored.size:
                dealer.deal(rows, scored, np.zeros(scored.size, dtype=np.bool_))
            over = phase == GAME_OVER
            value[ids[over]] = final_returns_of(rows[over])[:, 0]
        else:
            over = phase >= ROUND_OVER
            value[ids[over]] = score(rows[over])
        if over.any():  # finished: keep the value, drop the row
            keep = ~over
            rows, ids = rows[keep], ids[keep]
            if dealer is not None:
                dealer.decks, dealer.n_decks = dealer.decks[keep], dealer.n_decks[keep]
        if len(rows) == 0:
            return value
        if step == max_steps:
            break
        seats = rows[:, C_TO_MOVE].astype(np.int8)
        obs = np.zeros((len(rows), OBS_SIZE), dtype=np.float32)
        mask = np.zeros((len(rows), NUM_ACTIONS), dtype=np.int8)
        encode_rows(rows, seats, obs, mask)
        apply_sequences(rows, choose(ids, seats, obs, mask, step)[:, None], ones[: len(rows)], round_limit)
    raise RuntimeError(f"a playout ran past {max_steps} moves")


def row_outcomes(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per row after a round: winner (-2 none, -1 draw, 0, 1), points ``[N, 2]``, geishas ``[N, 2]``."""
    markers = rows[:, C_MARKERS : C_MARKERS + NUM_GEISHAS]
    points = np.stack([((markers == p) * _VALUES).sum(1) for p in (0, 1)], axis=1)
    geishas = np.stack([(markers == p).sum(1) for p in (0, 1)], axis=1)
    return rows[:, C_WINNER], points, geishas
