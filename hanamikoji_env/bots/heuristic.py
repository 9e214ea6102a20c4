"""HeuristicBot: a hand-written strategy, one ply deep over whole turns, as compiled kernels.

For every way to play its turn (token, cards, split) the bot scores the
position that results, assuming the opponent answers a Gift or Competition
with the choice that is worst for the bot.  A position is scored per geisha:
an expected final margin from the cards already placed, the bot's Secret, the
cards left in its hand (weighted by how its unspent tokens will distribute
them), and the cards it has not seen (weighted by the share of them the
opponent holds or will draw, and how the opponent's unspent tokens distribute
them); a tie leans to the marker's owner.  The margin becomes a probability of
holding the geisha, weighted by charm plus a bonus for the geisha count.  So
it values majorities and charm points, hides a card it needs with Secret,
trades away cards that cannot matter, offers Gifts and Competitions whose
every answer is good for it, answers offers by the value gained, and tracks
the unseen cards.

Ties: scores within :data:`TIE_TOL` of the best tie, and the first in
enumeration order wins: tokens in id order, then card multisets in
lexicographic order (one token's best must beat an earlier token's by more
than the tolerance), splits and Gift answers in action-id order; a
Competition answer takes set A unless set B scores higher by more than the tolerance.  The bot
draws no random numbers.

This module is the one implementation that plays: numba kernels over
observation rows, a whole batch in one call (:func:`heuristic_actions`);
:class:`HeuristicBot` plays one row through the same kernel, and
:class:`~hanamikoji_env.bots.search.SearchBot` takes its candidate plans from
:func:`plans_row`.  :mod:`hanamikoji_env.bots.heuristic_reference` is the same
strategy as readable numpy, the test reference (``tests/test_heuristic.py``
compares the two over 100,000 positions).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from hanamikoji_env.actions import (
    CARD_BASE,
    COMP_TAKE_A,
    COMP_TAKE_B,
    COMPETITION,
    GIFT,
    GIFT_TAKE_BASE,
    NUM_ACTIONS,
    NUM_TOKENS,
    SECRET,
    SPLIT_BASE,
    SPLITS,
    TOKEN_SIZES,
    TRADEOFF,
)
from hanamikoji_env.bots.base import Bot, certain, check_batch, run_rows
from hanamikoji_env.engine import COMP_PHASE, GIFT_PHASE, SELECT_PHASE, SPLIT_PHASE, TOKEN_PHASE
from hanamikoji_env.observation import (
    O_HAND,
    O_M_ME,
    O_M_OPP,
    O_OFFER,
    O_P_ME,
    O_P_OPP,
    O_S_ME,
    O_S_OPP,
    O_SECRET,
    O_SEL,
    O_SET_A,
    O_SET_B,
    O_TOKEN,
    O_UNSEEN,
    cards,
    decision_phase,
    entry,
    one_hot,
)
from hanamikoji_env.rules import NUM_GEISHAS, VALUES

WEIGHTS = np.array(VALUES, dtype=np.float64) + 1.5
"""Charm value plus a bonus for the geisha count (4 geishas also win)."""
SHARPNESS = 1.6
"""How sharply an expected margin turns into a probability of holding a geisha."""
TIE_LEAN = 0.45
"""Margin credited to the current owner of a marker (ties do not move it)."""
TIE_TOL = 1e-9
"""Scores this close to the best tie (the first in enumeration order wins)."""

MAX_PLANS = 128
"""More than the whole-turn plans of any hand (7 + 21 + 35 + 35 for a 7-card hand)."""

_SIZES = np.array(TOKEN_SIZES, dtype=np.int64)
NO_TOKEN, TYPED_COMPETITION = np.int64(-1), np.int64(COMPETITION)  # typed: see engine.ZERO
_SPLITS = np.array(SPLITS, dtype=np.int64)
_VALUES = np.array(VALUES, dtype=np.int64)

# ----------------------------------------------------- the evaluation ---


@njit(cache=True)
def _live(o, spent_at, excluded):
    """Of the tokens a player has not spent (flags at ``o[spent_at:]``) other than ``excluded``
    (-1: none): the cards they will use, and the expected (to the player - to the other) per
    card of them."""
    used = 0
    gain = 0.0
    for t in range(NUM_TOKENS):
        if t != excluded and entry(o, spent_at + t) == 0:
            used += _SIZES[t]
            if t in (SECRET, GIFT):
                gain += 1.0
    return used, (gain / used if used else 0.0)


@njit(cache=True)
def position(o, phase, pos):
    """The constant parts of the evaluation of one decision into ``pos`` ``[3, 7]``: the base
    margin, the tie lean and my hand."""
    total = 0.0
    for g in range(NUM_GEISHAS):
        total += o[O_UNSEEN + g]
    total = max(total, 1.0)
    # the opponent's current token is in play when I answer, not in its future
    answering = GIFT if phase == GIFT_PHASE else (COMPETITION if phase == COMP_PHASE else -1)
    future, share = _live(o, O_S_OPP, answering)
    # its hand and future draws are exactly the cards its unspent tokens will use
    ratio = min(float(future), total) / total
    secret_placed = entry(o, O_S_OPP + SECRET) == 1
    for g in range(NUM_GEISHAS):
        unseen = float(o[O_UNSEEN + g])
        v = float(o[O_P_ME + g]) - float(o[O_P_OPP + g]) - unseen * ratio * share
        if secret_placed:  # its hidden Secret is one of the unseen cards
            v -= unseen / total
        pos[0, g] = v
        pos[1, g] = TIE_LEAN if o[O_M_ME + g] > 0.5 else (-TIE_LEAN if o[O_M_OPP + g] > 0.5 else 0.0)
        pos[2, g] = float(o[O_HAND + g])
    secret = one_hot(o, O_SECRET, NUM_GEISHAS)
    if secret >= 0:
        pos[0, secret] += 1.0


@njit(cache=True)
def _term(pos, g, to_me, to_opp, used, share):
    """Geisha ``g``'s part of :func:`value`."""
    margin = pos[0, g] + to_me - to_opp + (pos[2, g] - used) * share + pos[1, g]
    p = 1.0 / (1.0 + np.exp(-SHARPNESS * margin))
    return (2.0 * p - 1.0) * WEIGHTS[g]


@njit(cache=True)
def value(pos, to_me, to_opp, used, share):
    """Score of one outcome: cards placed on each side and taken from my hand, my unspent
    tokens distributing the rest of my hand at ``share``."""
    total = 0.0
    for g in range(NUM_GEISHAS):
        total += _term(pos, g, to_me[g], to_opp[g], used[g], share)
    return total


@njit(cache=True)
def _memo_value(pos, to_me, to_opp, used, share, memo):
    """:func:`value`, each geisha's term computed once per (cards to me, to the opponent, from
    my hand) and kept in ``memo`` (``[7, 5, 3, 5]``, NaN where not yet computed, for one
    ``share``): the same numbers, with a few dozen exponentials per decision instead of
    thousands."""
    total = 0.0
    for g in range(NUM_GEISHAS):
        t = memo[g, int(to_me[g]), int(to_opp[g]), int(used[g])]
        if np.isnan(t):
            t = _term(pos, g, to_me[g], to_opp[g], used[g], share)
            memo[g, int(to_me[g]), int(to_opp[g]), int(used[g])] = t
        total += t
    return total


@njit(cache=True)
def _my_share(o, token):
    """The share of my tokens still unspent after ``token`` (-1: none is being played)."""
    return _live(o, O_S_ME, token)[1]


@njit(cache=True)
def _score_option(pos, token, c, share, used, to_me, to_opp, memo):
    """The score of playing ``token`` with the sorted cards ``c``, the opponent answering a Gift
    or Competition with what is worst for me."""
    used[:] = 0.0
    for k in range(_SIZES[token]):
        used[c[k]] += 1.0
    if token == SECRET:
        to_opp[:] = 0.0
        return _memo_value(pos, used, to_opp, used, share, memo)
    if token == TRADEOFF:
        to_me[:] = 0.0
        return _memo_value(pos, to_me, to_me, used, share, memo)
    if token == GIFT:  # the opponent takes the card that is worst for me
        worst = np.inf
        for k in range(_SIZES[GIFT]):
            if k > 0 and c[k] == c[k - 1]:
                continue
            for g in range(NUM_GEISHAS):  # loops, not array slices: no shape-check code to compile
                to_me[g] = used[g]
            to_me[c[k]] -= 1.0
            to_opp[:] = 0.0
            to_opp[c[k]] = 1.0
            worst = min(worst, _memo_value(pos, to_me, to_opp, used, share, memo))
        return worst
    # Competition: my best split, then the opponent's worst-for-me set
    best = -np.inf
    for k in range(_SPLITS.shape[0]):
        to_me[:] = 0.0  # set A
        to_opp[:] = 0.0  # set B
        to_me[c[_SPLITS[k, 0]]] += 1.0
        to_me[c[_SPLITS[k, 1]]] += 1.0
        to_opp[c[_SPLITS[k, 2]]] += 1.0
        to_opp[c[_SPLITS[k, 3]]] += 1.0
        they_take_a = _memo_value(pos, to_opp, to_me, used, share, memo)
        they_take_b = _memo_value(pos, to_me, to_opp, used, share, memo)
        best = max(best, min(they_take_a, they_take_b))
    return best


@njit(cache=True)
def plans_row(o, pos, tokens, prefix, n_prefix, plan_token, plan_cards, plan_score):
    """Every whole-turn plan of the tokens flagged in ``tokens`` whose cards start with
    ``prefix[:n_prefix]``, with its score: written to ``plan_token``, ``plan_cards`` (sorted,
    -1 padded) and ``plan_score`` in enumeration order (tokens in id order, card multisets in
    lexicographic order); returns how many (-1 if the prefix is not in my hand)."""
    hand = np.zeros(NUM_GEISHAS, dtype=np.int64)
    for g in range(NUM_GEISHAS):
        hand[g] = entry(o, O_HAND + g)
    for k in range(n_prefix):
        hand[prefix[k]] -= 1
        if hand[prefix[k]] < 0 or (k > 0 and prefix[k] < prefix[k - 1]):
            return -1
    seq = np.full(4, -1, dtype=np.int64)
    cur = np.zeros(5, dtype=np.int64)
    used, to_me, to_opp = np.zeros(NUM_GEISHAS), np.zeros(NUM_GEISHAS), np.zeros(NUM_GEISHAS)
    memo = np.empty((NUM_GEISHAS, 5, 3, 5))
    count = 0
    for token in range(NUM_TOKENS):
        if not tokens[token]:
            continue
        size = _SIZES[token]
        if n_prefix >= size:
            return -1
        share = _my_share(o, token)
        memo[:] = np.nan
        for x in range(4):
            seq[x] = prefix[x] if x < n_prefix else -1
        # non-decreasing card sequences in lexicographic order: a depth-first walk
        at = n_prefix
        cur[at] = prefix[n_prefix - 1] if n_prefix > 0 else 0
        while at >= n_prefix:
            g = cur[at]
            if g >= NUM_GEISHAS:  # this depth is exhausted: back up one card
                at -= 1
                if at >= n_prefix:
                    hand[seq[at]] += 1
                    cur[at] = seq[at] + 1
                continue
            if hand[g] == 0:
                cur[at] = g + 1
                continue
            seq[at] = g
            if at + 1 == size:
                if count == plan_token.shape[0]:
                    return -1
                plan_token[count] = token
                for x in range(4):
                    plan_cards[count, x] = seq[x]
                plan_score[count] = _score_option(pos, token, seq, share, used, to_me, to_opp, memo)
                count += 1
                cur[at] = g + 1
            else:
                hand[g] -= 1
                at += 1
                cur[at] = g
        for k in range(n_prefix, 4):
            seq[k] = -1
    return count


@njit(cache=True)
def best_plan(plan_token, plan_score, count):
    """The heuristic's plan among ``count`` listed plans (the module docstring's tie rule)."""
    best = -1
    start = 0
    while start < count:
        stop = start
        top = -np.inf
        while stop < count and plan_token[stop] == plan_token[start]:
            top = max(top, plan_score[stop])
            stop += 1
        for j in range(start, stop):  # this token's best: the first within the tolerance
            if plan_score[j] >= top - TIE_TOL:
                if best < 0 or plan_score[j] > plan_score[best] + TIE_TOL:
                    best = j
                break
        start = stop
    return best


@njit(cache=True)
def _split(o, pos, mask):
    offer = np.zeros(4, dtype=np.int64)
    if cards(o, O_OFFER, offer) != 4:
        return -1
    share = _my_share(o, TYPED_COMPETITION)
    a = np.zeros(NUM_GEISHAS)
    b = np.zeros(NUM_GEISHAS)
    zero = np.zeros(NUM_GEISHAS)
    best, best_score = -1, -np.inf
    for k in range(_SPLITS.shape[0]):
        if not mask[SPLIT_BASE + k]:
            continue
        a[:] = 0.0
        b[:] = 0.0
        a[offer[_SPLITS[k, 0]]] += 1.0
        a[offer[_SPLITS[k, 1]]] += 1.0
        b[offer[_SPLITS[k, 2]]] += 1.0
        b[offer[_SPLITS[k, 3]]] += 1.0
        score = min(value(pos, b, a, zero, share), value(pos, a, b, zero, share))
        if score > best_score + TIE_TOL:
            best, best_score = k, score
    return SPLIT_BASE + best if best >= 0 else -1


@njit(cache=True)
def _gift_answer(o, pos):
    share = _my_share(o, NO_TOKEN)
    to_me = np.zeros(NUM_GEISHAS)
    to_opp = np.zeros(NUM_GEISHAS)
    zero = np.zeros(NUM_GEISHAS)
    scores = np.full(NUM_GEISHAS, -np.inf)
    top = -np.inf
    for g in range(NUM_GEISHAS):
        if entry(o, O_OFFER + g) == 0:
            continue
        for h in range(NUM_GEISHAS):
            to_me[h] = 0.0
            to_opp[h] = o[O_OFFER + h]
        to_me[g] = 1.0
        to_opp[g] -= 1.0
        scores[g] = value(pos, to_me, to_opp, zero, share)
        top = max(top, scores[g])
    for g in range(NUM_GEISHAS):
        if scores[g] > -np.inf and scores[g] >= top - TIE_TOL:
            return GIFT_TAKE_BASE + g
    return -1


@njit(cache=True)
def _competition_answer(o, pos, mask):
    share = _my_share(o, NO_TOKEN)
    a = np.zeros(NUM_GEISHAS)
    b = np.zeros(NUM_GEISHAS)
    zero = np.zeros(NUM_GEISHAS)
    for g in range(NUM_GEISHAS):
        a[g] = o[O_SET_A + g]
        b[g] = o[O_SET_B + g]
    if not mask[COMP_TAKE_B]:
        return COMP_TAKE_A
    take_a, take_b = value(pos, a, b, zero, share), value(pos, b, a, zero, share)
    return COMP_TAKE_A if take_a >= take_b - TIE_TOL else COMP_TAKE_B


@njit(cache=True, inline="always")
def heuristic_row(o, m):
    """The heuristic's action for observation row ``o`` and mask ``m`` (-1 if the row is not a
    consistent decision of the player to move)."""
    phase = decision_phase(o)
    pos = np.zeros((3, NUM_GEISHAS))
    position(o, phase, pos)
    if phase in (TOKEN_PHASE, SELECT_PHASE):
        tokens = np.zeros(NUM_TOKENS, dtype=np.int64)
        prefix = np.zeros(4, dtype=np.int64)
        n_prefix = 0
        if phase == TOKEN_PHASE:
            for t in range(NUM_TOKENS):
                tokens[t] = m[t]
        else:
            token = one_hot(o, O_TOKEN, NUM_TOKENS)
            if token < 0:
                return -1
            tokens[token] = 1
            n_prefix = cards(o, O_SEL, prefix)
            if n_prefix >= 4:
                return -1
        plan_token = np.zeros(MAX_PLANS, dtype=np.int64)
        plan_cards = np.zeros((MAX_PLANS, 4), dtype=np.int64)
        plan_score = np.zeros(MAX_PLANS)
        count = plans_row(o, pos, tokens, prefix, n_prefix, plan_token, plan_cards, plan_score)
        if count <= 0:
            return -1
        j = best_plan(plan_token, plan_score, count)
        return plan_token[j] if phase == TOKEN_PHASE else CARD_BASE + plan_cards[j, n_prefix]
    if phase == SPLIT_PHASE:
        return _split(o, pos, m)
    if phase == GIFT_PHASE:
        return _gift_answer(o, pos)
    if phase == COMP_PHASE:
        return _competition_answer(o, pos, m)
    return -1


@njit(cache=True, nogil=True)
def _heuristic_rows(obs, mask, out):
    for i in range(obs.shape[0]):  # rows are independent: the same results on any thread
        out[i] = heuristic_row(obs[i], mask[i])


PARALLEL_ROWS = 128
"""Batches with this many rows per thread are spread over numba's threads (smaller ones would
wait longer for the threads than they save)."""


def heuristic_actions(obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """The heuristic's action for every row of a batch (``[N, 109]`` observations, ``[N, 23]``
    masks, each the player to move's): one compiled call.  ``ValueError`` naming the row for a
    malformed batch."""
    obs, mask = check_batch(obs, mask)
    out = np.empty(obs.shape[0], dtype=np.int64)
    run_rows(_heuristic_rows, (obs, mask, out), min_rows=PARALLEL_ROWS)
    return checked_actions(out, mask, "heuristic")


def checked_actions(actions: np.ndarray, mask: np.ndarray, bot: str) -> np.ndarray:
    """``actions`` if every one is legal by its row of ``mask``; else ``ValueError`` naming the
    first row whose observation was not a consistent decision (the kernel could not play it)."""
    ok = (actions >= 0) & (actions < NUM_ACTIONS)
    ok[ok] = mask[np.flatnonzero(ok), actions[ok]] == 1
    if not ok.all():
        i = int(np.flatnonzero(~ok)[0])
        raise ValueError(
            f"row {i}: the observation is not a consistent decision of the player to move "
            f"(its mask allows {np.flatnonzero(mask[i]).tolist()}); {bot} cannot play it"
        )
    return actions


class HeuristicBot(Bot):
    """One-ply turn planner with a hand-written evaluation (see the module docstring)."""

    name = "heuristic"
    batched = True
    """``act_batch`` is one compiled call for the whole batch."""
    light = True

    def _act(self, vector: np.ndarray, mask: np.ndarray) -> int:
        return int(heuristic_actions(vector[None], mask[None])[0])

    def play_probabilities(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """Probability 1 on its move: the heuristic is a function of the observation."""
        return certain(self.act_batch(obs, mask))

    def act_batch(
        self,
        obs: np.ndarray,
        mask: np.ndarray,
        rngs: list[np.random.Generator] | None = None,
        states: list[tuple[int, ...]] | None = None,
    ) -> np.ndarray:
        return heuristic_actions(obs, mask)
