"""Information sets: what a player cannot see, and full games consistent with what it can.

A player's observation (:mod:`hanamikoji_env.observation`) hides the
opponent's hand, Secret and Trade-off cards, the removed card and the draw
pile.  A *determinization* deals the cards the player has not seen (its
``unseen`` counts) to exactly those places, so it is a full game the player
cannot tell from the real one.  The search bots sample them
(:mod:`hanamikoji_env.bots`), and the OpenSpiel game resamples its states with
them for ISMCTS (:mod:`hanamikoji_env.openspiel`).  How many cards each hidden
place holds comes from the rules' constants (token sizes, the removed card,
the draw pile).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from hanamikoji_env.actions import COMPETITION, GIFT, NUM_TOKENS, SECRET, TOKEN_SIZES, TRADEOFF
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
    MAX_SELECTION,
    NO_WINNER,
    ROUND_OVER,
    SELECT_PHASE,
    SET_SIZE,
    SPLIT_PHASE,
    TOKEN_PHASE,
    WIDTH,
    state_from_row,
)
from hanamikoji_env.excerpt import short
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
    O_UNSEEN,
    OBS_SIZE,
    cards,
    decision_phase,
    entry,
    one_hot,
    turns_played,
)
from hanamikoji_env.rules import CENTRE, DRAW_PILE_SIZE, NUM_CARDS, NUM_GEISHAS, NUM_REMOVED, State


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
    opp_secret = TOKEN_SIZES[SECRET] * entry(o, O_S_OPP + SECRET)
    opp_trade = TOKEN_SIZES[TRADEOFF] * entry(o, O_S_OPP + TRADEOFF)
    opp_hand = entry(o, O_SIZES + 1)
    pile = entry(o, O_SIZES + 2)
    if (
        phase < 0
        or pool.shape[0] != opp_hand + opp_secret + opp_trade + NUM_REMOVED + pile
        or pile > DRAW_PILE_SIZE
    ):
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
        s[i, C_SEL_LEN] = cards(o, O_SEL, s[i, C_SELECTION : C_SELECTION + MAX_SELECTION])
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
        s[i, C_OFFER_LEN] = cards(o, O_OFFER, s[i, C_OFFER : C_OFFER + MAX_SELECTION])
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
    k += NUM_REMOVED
    s[i, C_PILE_POS] = DRAW_PILE_SIZE - pile
    for j in range(pile):
        s[i, C_PILE + DRAW_PILE_SIZE - pile + j] = pool[k + j]
    return True


def unseen_counts(vector: np.ndarray) -> np.ndarray:
    """The observation's count of unseen cards per geisha (int64, each clipped to a deck's)."""
    return np.clip(np.rint(vector[O_UNSEEN : O_UNSEEN + NUM_GEISHAS]).astype(np.int64), 0, NUM_CARDS)


def determinized_rows(
    vector: np.ndarray,
    rng: np.random.Generator,
    n: int,
    known: tuple[int, ...] | list[int] = (),
    hand_odds: np.ndarray | None = None,
) -> np.ndarray:
    """``n`` engine rows, each a full game consistent with the observation ``vector``, the
    observing player as seat 0: the cards it has not seen shuffled with ``rng`` for each row
    and dealt by :func:`determinize_row`.  ``known`` (empty unless a measurement knows them,
    ``benchmarks/belief_headroom.py``) are unseen cards dealt first, in every row, in
    :func:`determinize_row`'s order: the opponent's hand, then its Secret and Trade-off.
    ``hand_odds`` (``[7]``, a belief: :func:`hanamikoji_env.belief.hand_odds`) deals the
    opponent's hand by weight instead, each unseen card of geisha ``g`` drawn with weight
    ``hand_odds[g]`` (without replacement); the rest are shuffled as before."""
    v = np.ascontiguousarray(vector, dtype=np.float32)
    if v.shape != (OBS_SIZE,):
        raise ValueError(f"an observation vector has shape ({OBS_SIZE},), got {v.shape}")
    first = np.asarray(known, dtype=np.int64)
    rest = unseen_counts(v) - np.bincount(first, minlength=NUM_GEISHAS)
    if (rest < 0).any():
        raise ValueError(f"the known cards {list(known)} are not all among the unseen ones")
    pool = np.repeat(np.arange(NUM_GEISHAS, dtype=np.int64), rest)
    rows = np.zeros((n, WIDTH), dtype=np.int32)
    if hand_odds is not None:
        odds = np.asarray(hand_odds, dtype=np.float64)
        if odds.shape != (NUM_GEISHAS,) or not (np.isfinite(odds) & (odds > 0)).all():
            raise ValueError(f"hand_odds must be {NUM_GEISHAS} finite positive weights, got {short(odds)}")
        hand = max(round(float(v[O_SIZES + 1])) - len(first), 0)  # the opponent's, still to deal
    for i in range(n):
        order = pool.copy()
        rng.shuffle(order)
        if hand_odds is not None and len(order):  # weighted draws by exponential keys, then the rest
            keys = rng.exponential(size=len(order)) / odds[order]
            drawn = np.argsort(keys, kind="stable")
            order = np.concatenate([order[drawn[:hand]], order[np.sort(drawn[hand:])]])
        if not determinize_row(v, np.concatenate([first, order]), rows, i):
            raise ValueError(
                "observation inconsistent: its unseen cards do not fill the places it cannot see"
            )
    return rows


@njit(cache=True)
def next_arrangement(a):
    """``a`` rearranged into the next permutation in lexicographic order; False (and ``a``
    sorted again) after the last.  Over a multiset: each distinct arrangement once."""
    n = a.shape[0]
    i = n - 2
    while i >= 0 and a[i] >= a[i + 1]:
        i -= 1
    if i < 0:
        a[:] = np.sort(a)
        return False
    j = n - 1
    while a[j] <= a[i]:
        j -= 1
    a[i], a[j] = a[j], a[i]
    lo, hi = i + 1, n - 1
    while lo < hi:
        a[lo], a[hi] = a[hi], a[lo]
        lo += 1
        hi -= 1
    return True


def deals(unseen: np.ndarray) -> int:
    """How many distinct deals of the unseen cards (counts per geisha) there are: the
    arrangements of that multiset, ``n! / prod(count!)``."""
    counts = [int(c) for c in unseen]
    return math.factorial(sum(counts)) // math.prod(math.factorial(c) for c in counts)


def every_deal(vector: np.ndarray, n: int) -> np.ndarray | None:
    """Every distinct deal of the cards the observation ``vector`` has not seen, as engine rows
    (:func:`determinized_rows`' form), each ``n // count`` times so as to fill up to ``n`` rows,
    if there are at most ``n`` of them (:func:`deals`); else None.  A mean over these rows is
    the exact mean over the deals a uniform shuffle gives: each distinct order of the unseen
    multiset is equally likely."""
    v = np.ascontiguousarray(vector, dtype=np.float32)
    unseen = unseen_counts(v)
    count = deals(unseen)
    if count > n:
        return None
    order = np.repeat(np.arange(NUM_GEISHAS, dtype=np.int64), unseen)
    rows = np.zeros((count, WIDTH), dtype=np.int32)
    for i in range(count):
        if not determinize_row(v, order, rows, i):
            raise ValueError(
                "observation inconsistent: its unseen cards do not fill the places it cannot see"
            )
        next_arrangement(order)
    return np.repeat(rows, n // count, axis=0)


def determinize(vector: np.ndarray, rng: np.random.Generator, round_limit: int | None = None) -> State:
    """A full state consistent with the observation ``vector``, the unseen cards dealt at
    random with ``rng``: the observing player is seat 0, the opponent seat 1."""
    return state_from_row(determinized_rows(vector, rng, 1)[0], round_limit, None)
