"""Simulation for the search bots: determinize, apply action sequences, play out, score.

A search bot builds full games consistent with what it knows (its
determinizations: :func:`determinize_row` deals the cards it has not seen, in
an order it drew, to the places it cannot see), applies its candidate moves
(:func:`apply_sequences`), plays each row to the end of its round with uniform
random moves (:func:`playout`), and scores it (:func:`round_values`).
Everything runs on the engine of record's kernels; the ``*_row`` kernels are
the per-row pieces that the compiled search (:mod:`hanamikoji_env.bots.search`)
calls inside its own loop.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from hanamikoji_env.actions import COMPETITION, GIFT, NUM_ACTIONS, NUM_TOKENS, SECRET, TRADEOFF
from hanamikoji_env.engine import (
    C_CURRENT,
    C_HANDS,
    C_MARKERS,
    C_OFFER,
    C_OFFER_LEN,
    C_PHASE,
    C_PILE,
    C_PILE_POS,
    C_PLACED,
    C_REMOVED,
    C_ROUND,
    C_SECRETS,
    C_SEL_LEN,
    C_SELECTION,
    C_SPENT,
    C_STARTER,
    C_TO_MOVE,
    C_TOKEN,
    C_TRADEOFFS,
    C_TURN,
    C_WINNER,
    COMP_PHASE,
    GIFT_PHASE,
    NO_WINNER,
    ROUND_OVER,
    SELECT_PHASE,
    SET_SIZE,
    SPLIT_PHASE,
    TOKEN_PHASE,
    apply_one,
    legal,
    pick,
)
from hanamikoji_env.observation import (
    O_HAND,
    O_M_ME,
    O_M_OPP,
    O_OFFER,
    O_P_ME,
    O_P_OPP,
    O_ROUND,
    O_S_ME,
    O_S_OPP,
    O_SECRET,
    O_SEL,
    O_SET_A,
    O_SET_B,
    O_SIZES,
    O_STARTED,
    O_TOKEN,
    O_TRADE,
    cards,
    decision_phase,
    entry,
    one_hot,
    turns_played,
)
from hanamikoji_env.rules import CENTRE, DRAW, DRAW_PILE_SIZE, NUM_GEISHAS, VALUES, WIN_GEISHAS, WIN_POINTS

PLAYOUT_STEPS = 64
"""Uniforms needed per row by :func:`playout` (a round has at most 56 decisions)."""

_VALUES = np.array(VALUES, dtype=np.int64)


@njit(cache=True)
def determinize_row(o, pool, s, i):
    """Row ``i`` of ``s``: a full game consistent with observation ``o``, the observing player
    as seat 0 and on move.  ``pool`` holds the cards the player has not seen (``o``'s unseen
    counts), in the order drawn: they go to the opponent's hand, its Secret (if placed), its
    Trade-off (if placed), the removed card and the draw pile, in that order.  Returns False
    (the row unspecified) if ``o`` is not a consistent decision of the player to move."""
    s[i, :] = 0
    phase = decision_phase(o)
    phase = phase if phase < ROUND_OVER else -1
    token = one_hot(o, O_TOKEN, NUM_TOKENS)
    opp_secret = entry(o, O_S_OPP + SECRET)
    opp_trade = 2 * entry(o, O_S_OPP + TRADEOFF)
    opp_hand = entry(o, O_SIZES + 1)
    pile = entry(o, O_SIZES + 2)
    if phase < 0 or pool.shape[0] != opp_hand + opp_secret + opp_trade + 1 + pile or pile > DRAW_PILE_SIZE:
        return False
    if phase == SELECT_PHASE and token < 0:
        return False
    my_turn = phase in (TOKEN_PHASE, SELECT_PHASE, SPLIT_PHASE)
    s[i, C_ROUND] = entry(o, O_ROUND)
    s[i, C_STARTER] = 0 if o[O_STARTED] > 0.5 else 1
    s[i, C_TURN] = turns_played(o)
    s[i, C_CURRENT] = 0 if my_turn else 1
    s[i, C_TO_MOVE] = 0
    s[i, C_PHASE] = phase
    if phase == SELECT_PHASE:
        s[i, C_TOKEN] = token
        s[i, C_SEL_LEN] = cards(o, O_SEL, s[i, C_SELECTION : C_SELECTION + 4])
    elif phase in (SPLIT_PHASE, COMP_PHASE):
        s[i, C_TOKEN] = COMPETITION
    elif phase == GIFT_PHASE:
        s[i, C_TOKEN] = GIFT
    else:
        s[i, C_TOKEN] = -1
    if phase == COMP_PHASE:  # set A, then set B
        n = cards(o, O_SET_A, s[i, C_OFFER : C_OFFER + SET_SIZE])
        if n != SET_SIZE or cards(o, O_SET_B, s[i, C_OFFER + SET_SIZE : C_OFFER + 2 * SET_SIZE]) != SET_SIZE:
            return False
        s[i, C_OFFER_LEN] = 2 * SET_SIZE
    else:
        s[i, C_OFFER_LEN] = cards(o, O_OFFER, s[i, C_OFFER : C_OFFER + 4])
    s[i, C_WINNER] = NO_WINNER
    s[i, C_SECRETS] = one_hot(o, O_SECRET, NUM_GEISHAS)
    s[i, C_SECRETS + 1] = -1
    for g in range(NUM_GEISHAS):
        s[i, C_HANDS + g] = entry(o, O_HAND + g)
        s[i, C_TRADEOFFS + g] = entry(o, O_TRADE + g)
        s[i, C_PLACED + g] = entry(o, O_P_ME + g)
        s[i, C_PLACED + NUM_GEISHAS + g] = entry(o, O_P_OPP + g)
        s[i, C_MARKERS + g] = 0 if o[O_M_ME + g] > 0.5 else (1 if o[O_M_OPP + g] > 0.5 else CENTRE)
    for t in range(NUM_TOKENS):
        s[i, C_SPENT + t] = entry(o, O_S_ME + t)
        s[i, C_SPENT + NUM_TOKENS + t] = entry(o, O_S_OPP + t)
    k = 0
    for _ in range(opp_hand):
        s[i, C_HANDS + NUM_GEISHAS + pool[k]] += 1
        k += 1
    if opp_secret:
        s[i, C_SECRETS + 1] = pool[k]
        k += 1
    for _ in range(opp_trade):
        s[i, C_TRADEOFFS + NUM_GEISHAS + pool[k]] += 1
        k += 1
    s[i, C_REMOVED] = pool[k]
    k += 1
    s[i, C_PILE_POS] = DRAW_PILE_SIZE - pile
    for j in range(pile):
        s[i, C_PILE + DRAW_PILE_SIZE - pile + j] = pool[k + j]
    return True


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
    lead = points / float(WIN_POINTS) + geishas / float(WIN_GEISHAS)
    return 0.5 * min(max(lead, -1.0), 1.0)


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


def row_outcomes(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per row after a round: winner (-2 none, -1 draw, 0, 1), points ``[N, 2]``, geishas ``[N, 2]``."""
    markers = rows[:, C_MARKERS : C_MARKERS + NUM_GEISHAS]
    points = np.stack([((markers == p) * _VALUES).sum(1) for p in (0, 1)], axis=1)
    geishas = np.stack([(markers == p).sum(1) for p in (0, 1)], axis=1)
    return rows[:, C_WINNER], points, geishas
