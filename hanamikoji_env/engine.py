"""The compiled engine: the engine of record of every game played with this package.

A game is one row of int32 numbers (the layout below); numba-compiled kernels
deal a round, list the legal moves, apply a move and score a round, on one row
(the AEC env) or on many rows at once (the batch engine, the search bots'
simulations).  The observation encoder over the same rows lives in
:mod:`hanamikoji_env.observation`.

:mod:`hanamikoji_env.rules` is the readable executable specification of the
same rules.  This module offers its API on :class:`~hanamikoji_env.rules.State`
too (:func:`new_game`, :func:`next_round`, :func:`apply`, :func:`legal_mask`,
:func:`legal_actions`),
so every hand-worked rule test runs against both (``tests/test_rules.py``), and
:func:`hanamikoji_env.differential.compare_with_spec` proves them identical over
many random games, state by state.  Every number of the rules comes from
:mod:`hanamikoji_env.rules` and :mod:`hanamikoji_env.actions`.

Rule -> kernel: deal and the automatic draw -> :func:`deal`, :func:`start_turn`;
legal moves -> :func:`legal`; tokens, Gift and Competition answers ->
:func:`apply_one`; scoring, markers and the winner -> :func:`end_turn`; the
final rewards -> :func:`final_returns`.

After the position's columns, each row keeps a log of its last :data:`LOG_ROUNDS` rounds (each
turn's draw, token, cards and answer, one packed number a turn), written by the same kernels:
what the perfect-recall observation (version 2) reads.  A row made from a
:class:`~hanamikoji_env.rules.State` (:func:`rows_from_states`) has an empty log: a State holds
the position, not how it came about.

Where a round's deck comes from is one driver, :class:`Dealer` (scripted decks,
else shuffled from the game's generator), used by the AEC env and the batch
engine; the OpenSpiel game deals card by card as chance outcomes through
:func:`deal`, :func:`unset_draw` and :func:`set_draw`.
"""

from __future__ import annotations

from collections.abc import Sequence

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
    check_action,
)
from hanamikoji_env.excerpt import short
from hanamikoji_env.rules import (
    CENTRE,
    DRAW,
    DRAW_PILE_SIZE,
    FULL,
    NUM_GEISHAS,
    RETURNS,
    TURNS_PER_ROUND,
    VARIANTS,
    Phase,
    RoundSummary,
    State,
    Variant,
    check_variant,
    score,
    validate_deck,
    variant_round_limit,
)

# ------------------------------------------------------------ the row ---

MAX_SELECTION = max(TOKEN_SIZES)
"""Cards a token can use at most (Competition's 4): the width of the selection and offer columns."""


def _columns(spec: list[tuple[str, int]]) -> dict[str, int]:
    offsets, at = {}, 0
    for name, width in spec:
        offsets[name] = at
        at += width
    offsets["WIDTH"] = at
    return offsets


_C = _columns(
    [
        ("ROUND", 1), ("STARTER", 1), ("TURN", 1), ("CURRENT", 1), ("TO_MOVE", 1), ("PHASE", 1),
        ("TOKEN", 1), ("SEL_LEN", 1), ("OFFER_LEN", 1), ("PILE_POS", 1), ("REMOVED", 1),
        ("WINNER", 1), ("SECRETS", 2), ("HANDS", 2 * NUM_GEISHAS), ("TRADEOFFS", 2 * NUM_GEISHAS),
        ("PLACED", 2 * NUM_GEISHAS), ("MARKERS", NUM_GEISHAS), ("SPENT", 2 * NUM_TOKENS),
        ("SELECTION", MAX_SELECTION), ("OFFER", MAX_SELECTION), ("PILE", DRAW_PILE_SIZE), ("VARIANT", 1),
    ]
)  # fmt: skip
C_ROUND, C_STARTER, C_TURN, C_CURRENT, C_TO_MOVE = (
    _C["ROUND"],
    _C["STARTER"],
    _C["TURN"],
    _C["CURRENT"],
    _C["TO_MOVE"],
)
C_PHASE, C_TOKEN, C_SEL_LEN, C_OFFER_LEN = _C["PHASE"], _C["TOKEN"], _C["SEL_LEN"], _C["OFFER_LEN"]
C_PILE_POS, C_REMOVED, C_WINNER = _C["PILE_POS"], _C["REMOVED"], _C["WINNER"]
C_SECRETS = _C["SECRETS"]
"""Each seat's Secret card (-1 none); kept through the scoring (the observation hides it then)."""
C_HANDS, C_TRADEOFFS, C_PLACED = _C["HANDS"], _C["TRADEOFFS"], _C["PLACED"]
"""Cards per geisha, seat 0's 7 then seat 1's."""
C_MARKERS = _C["MARKERS"]
"""Owner of each geisha's marker: 0, 1 or CENTRE."""
C_SPENT = _C["SPENT"]
"""Each seat's spent tokens, 0/1, seat 0's 4 then seat 1's."""
C_SELECTION, C_OFFER, C_PILE = _C["SELECTION"], _C["OFFER"], _C["PILE"]
C_VARIANT = _C["VARIANT"]
"""The game's :class:`~hanamikoji_env.rules.Variant` (its ``index``): the kernels read the variant's
numbers from the tables below; 0, the full game, in a row from before variants."""
GAME_WIDTH = _C["WIDTH"]
"""The columns of the position (what a :class:`~hanamikoji_env.rules.State` holds): all a
simulation needs, so the search bots copy only these."""

# The log: what happened in each of the last LOG_ROUNDS rounds, for the perfect-recall
# observation (version 2); the kernels write it and no rule reads it.  Round r's turns, in the
# order played, are the TURNS_PER_ROUND columns from C_LOG + ((r - 1) % LOG_ROUNDS) *
# TURNS_PER_ROUND, one number a turn (0 until the turn begins), 3-bit fields at these shifts:
# the card drawn + 1, the token + 1, how many cards are selected, the answer + 1 (the card a
# Gift's answerer took; 0 or 1 + 1 for a Competition's set A or B), then the cards in the order
# selected (a Competition's as set A then set B once split).
LOG_ROUNDS = 4
"""Rounds the log keeps (the current one and the three before it); older rounds are overwritten."""
F_DRAW, F_TOKEN, F_COUNT, F_ANSWER, F_CARDS = 0, 3, 6, 9, 12
"""Shifts of a turn's fields in its log number (card ``k`` of the selection at ``F_CARDS + 3k``)."""
C_LOG = GAME_WIDTH
WIDTH = C_LOG + LOG_ROUNDS * TURNS_PER_ROUND

NO_WINNER = -2
"""``C_WINNER`` while the game goes on (:data:`~hanamikoji_env.rules.DRAW` is -1)."""

TOKEN_PHASE, SELECT_PHASE, SPLIT_PHASE = int(Phase.TOKEN), int(Phase.SELECT), int(Phase.SPLIT)
GIFT_PHASE, COMP_PHASE = int(Phase.GIFT_ANSWER), int(Phase.COMP_ANSWER)
ROUND_OVER, GAME_OVER = int(Phase.ROUND_OVER), int(Phase.GAME_OVER)

_SIZES = np.array(TOKEN_SIZES, dtype=np.int32)
VARIANT_LIST: tuple[Variant, ...] = tuple(VARIANTS.values())
"""The variants by their row id (``C_VARIANT``)."""
V_VALUES = np.array([v.values for v in VARIANT_LIST], dtype=np.int32)
"""Per variant (row), each geisha's charm value and card count (0: not in play)."""
V_HAND = np.array([v.hand_size for v in VARIANT_LIST], dtype=np.int32)
V_TURNS = np.array([v.turns_per_round for v in VARIANT_LIST], dtype=np.int32)
"""Per variant, the turns of a round, which is also the size of its draw pile."""
V_WIN_POINTS = np.array([v.win_points for v in VARIANT_LIST], dtype=np.int32)
V_WIN_GEISHAS = np.array([v.win_geishas for v in VARIANT_LIST], dtype=np.int32)
V_SPENT = np.array([v.spent_at_deal() for v in VARIANT_LIST], dtype=np.int32)
"""Per variant, each token's spent flag at the deal (the tokens not in play stay spent)."""
_SPLITS = np.array(SPLITS, dtype=np.int32)
NUM_SPLITS = len(SPLITS)
GIFT_SIZE = TOKEN_SIZES[GIFT]
COMP_SIZE = TOKEN_SIZES[COMPETITION]
SET_SIZE = COMP_SIZE // 2
_RETURNS = np.array([RETURNS[DRAW], RETURNS[0], RETURNS[1]], dtype=np.float32)
""":data:`~hanamikoji_env.rules.RETURNS` indexed by winner + 1, for the kernels."""

# ------------------------------------------------------------- kernels ---


ZERO = np.int64(0)
"""Zero as a typed argument for compiled callers: numba compiles a separate copy of a kernel for each
literal it is called with (``legal(s, 0, m)`` and ``legal(s, i, m)`` are two compilations), so a
constant argument to a kernel is passed as this, never as ``0``.  Halves the first run's compile."""


@njit(cache=True)
def log_at(rnd):
    """The column of round ``rnd``'s first turn in the log."""
    return C_LOG + ((rnd - 1) % LOG_ROUNDS) * TURNS_PER_ROUND


@njit(cache=True)
def log_field(word, shift):
    """A field of a turn's log number (stored + 1 where -1 means none: subtract 1)."""
    return (word >> shift) & 7


@njit(cache=True)
def _log(s, i, shift, value):
    """Set a field of the log number of row ``i``'s turn being played."""
    c = log_at(s[i, C_ROUND]) + s[i, C_TURN]
    s[i, c] = (s[i, c] & ~(7 << shift)) | (value << shift)


@njit(cache=True)
def deal(s, i, deck, new_game):
    """Deal a round (or the first round of a new game) from ``deck`` into row ``i``."""
    if new_game:
        s[i, C_ROUND] = 0
        s[i, C_STARTER] = 1  # so that seat 0 starts the first round
        s[i, C_WINNER] = NO_WINNER
        for g in range(NUM_GEISHAS):
            s[i, C_MARKERS + g] = CENTRE
    v = s[i, C_VARIANT]
    hand = V_HAND[v]
    s[i, C_ROUND] += 1
    starter = 1 - s[i, C_STARTER]
    s[i, C_STARTER] = starter
    s[i, C_TURN] = 0
    s[i, C_TOKEN] = -1
    s[i, C_SEL_LEN] = 0
    s[i, C_OFFER_LEN] = 0
    s[i, C_SECRETS] = -1
    s[i, C_SECRETS + 1] = -1
    for k in range(2 * NUM_GEISHAS):
        s[i, C_HANDS + k] = 0
        s[i, C_TRADEOFFS + k] = 0
        s[i, C_PLACED + k] = 0
    for k in range(NUM_TOKENS):
        s[i, C_SPENT + k] = V_SPENT[v, k]
        s[i, C_SPENT + NUM_TOKENS + k] = V_SPENT[v, k]
    s[i, C_REMOVED] = deck[0]
    for k in range(hand):
        s[i, C_HANDS + deck[1 + k]] += 1
        s[i, C_HANDS + NUM_GEISHAS + deck[1 + hand + k]] += 1
    at = log_at(s[i, C_ROUND])
    for t in range(TURNS_PER_ROUND):
        s[i, at + t] = 0
    for k in range(DRAW_PILE_SIZE):
        s[i, C_PILE + k] = deck[1 + 2 * hand + k] if k < V_TURNS[v] else 0
    s[i, C_PILE_POS] = 0
    start_turn(s, i, starter)


def blank_row(variant: Variant = FULL) -> np.ndarray:
    """One row (``[1, WIDTH]``) of ``variant`` before the first deal of a game: what :func:`deal`
    with ``new_game`` starts from (as :func:`hanamikoji_env.rules.new_game` starts)."""
    row = np.zeros((1, WIDTH), dtype=np.int32)
    row[0, C_VARIANT] = variant.index
    row[0, C_PHASE] = ROUND_OVER
    row[0, C_STARTER] = 1
    row[0, C_WINNER] = NO_WINNER
    row[0, C_MARKERS : C_MARKERS + NUM_GEISHAS] = CENTRE
    return row


@njit(cache=True)
def unset_draw(s, i):
    """Take back the card the current player drew at the start of this turn (its pile slot
    stays used): for a caller whose chance decides that card later (:func:`set_draw`)."""
    seat = s[i, C_CURRENT]
    s[i, C_HANDS + NUM_GEISHAS * seat + s[i, C_PILE + s[i, C_PILE_POS] - 1]] -= 1
    _log(s, i, F_DRAW, 0)


@njit(cache=True)
def set_draw(s, i, card):
    """Make ``card`` the current player's draw of this turn (after :func:`unset_draw`)."""
    s[i, C_HANDS + NUM_GEISHAS * s[i, C_CURRENT] + card] += 1
    s[i, C_PILE + s[i, C_PILE_POS] - 1] = card
    _log(s, i, F_DRAW, card + 1)


@njit(cache=True)
def final_returns(s, i, out):
    """The final rewards by seat of row ``i``'s finished game into ``out`` (``[2]``)."""
    w = s[i, C_WINNER]
    out[0] = _RETURNS[w + 1, 0]
    out[1] = _RETURNS[w + 1, 1]


def final_returns_of(rows: np.ndarray) -> np.ndarray:
    """:func:`final_returns` of many finished rows at once (``[N, 2]`` float32)."""
    return _RETURNS[rows[:, C_WINNER] + 1]


@njit(cache=True)
def start_turn(s, i, seat):
    """``seat`` draws the top card of the pile, then chooses a token."""
    top = s[i, C_PILE + s[i, C_PILE_POS]]
    s[i, C_PILE_POS] += 1
    s[i, C_HANDS + NUM_GEISHAS * seat + top] += 1
    _log(s, i, F_DRAW, top + 1)
    s[i, C_CURRENT] = seat
    s[i, C_TO_MOVE] = seat
    s[i, C_PHASE] = TOKEN_PHASE


@njit(cache=True)
def _split_key(s, i, k):
    """The unordered pair of sets of split ``k`` as one comparable int."""
    a0 = s[i, C_OFFER + _SPLITS[k, 0]]
    a1 = s[i, C_OFFER + _SPLITS[k, 1]]
    b0 = s[i, C_OFFER + _SPLITS[k, 2]]
    b1 = s[i, C_OFFER + _SPLITS[k, 3]]
    a = a0 * NUM_GEISHAS + a1
    b = b0 * NUM_GEISHAS + b1
    return a * NUM_GEISHAS**2 + b if a <= b else b * NUM_GEISHAS**2 + a


@njit(cache=True)
def legal(s, i, m):
    """Write row ``i``'s legal mask into ``m`` (length NUM_ACTIONS); all 0 when nobody moves."""
    for a in range(NUM_ACTIONS):
        m[a] = 0
    phase = s[i, C_PHASE]
    cur = s[i, C_CURRENT]
    if phase == TOKEN_PHASE:
        for t in range(NUM_TOKENS):
            if s[i, C_SPENT + NUM_TOKENS * cur + t] == 0:
                m[t] = 1
    elif phase == SELECT_PHASE:
        # cards come in non-decreasing geisha order; allow those from which the selection can be completed
        n = s[i, C_SEL_LEN]
        need = _SIZES[s[i, C_TOKEN]] - n
        lo = s[i, C_SELECTION + n - 1] if n > 0 else 0
        suffix = 0
        for g in range(NUM_GEISHAS - 1, lo - 1, -1):
            avail = s[i, C_HANDS + NUM_GEISHAS * cur + g]
            for k in range(n):
                if s[i, C_SELECTION + k] == g:
                    avail -= 1
            suffix += avail
            if avail > 0 and suffix >= need:
                m[CARD_BASE + g] = 1
    elif phase == SPLIT_PHASE:
        # a split that makes the same two sets as a lower id is masked out
        for k in range(NUM_SPLITS):
            key = _split_key(s, i, k)
            new = True
            for j in range(k):
                if _split_key(s, i, j) == key:
                    new = False
            if new:
                m[SPLIT_BASE + k] = 1
    elif phase == GIFT_PHASE:
        for k in range(GIFT_SIZE):
            m[GIFT_TAKE_BASE + s[i, C_OFFER + k]] = 1
    elif phase == COMP_PHASE:
        m[COMP_TAKE_A] = 1
        for k in range(SET_SIZE):
            if s[i, C_OFFER + k] != s[i, C_OFFER + SET_SIZE + k]:
                m[COMP_TAKE_B] = 1  # the sets differ


@njit(cache=True)
def end_turn(s, i, seat, round_limit):
    """Spend the token; the next turn, or the scoring after the last one: Secrets revealed onto
    their sides, Trade-offs never counted, markers move on strict majorities, then the winner."""
    s[i, C_SPENT + NUM_TOKENS * seat + s[i, C_TOKEN]] = 1
    s[i, C_TOKEN] = -1
    s[i, C_SEL_LEN] = 0
    s[i, C_OFFER_LEN] = 0
    s[i, C_TURN] += 1
    v = s[i, C_VARIANT]
    if s[i, C_TURN] < V_TURNS[v]:
        start_turn(s, i, 1 - seat)
        return
    for p in range(2):
        s[i, C_PLACED + NUM_GEISHAS * p + s[i, C_SECRETS + p]] += 1
    points0 = points1 = gei0 = gei1 = 0
    for g in range(NUM_GEISHAS):
        c0 = s[i, C_PLACED + g]
        c1 = s[i, C_PLACED + NUM_GEISHAS + g]
        if c0 > c1:
            s[i, C_MARKERS + g] = 0
        elif c1 > c0:
            s[i, C_MARKERS + g] = 1
        owner = s[i, C_MARKERS + g]  # a tie leaves the marker where it was
        if owner == 0:
            points0 += V_VALUES[v, g]
            gei0 += 1
        elif owner == 1:
            points1 += V_VALUES[v, g]
            gei1 += 1
    w = NO_WINNER
    if points0 >= V_WIN_POINTS[v]:  # both cannot: more than half the points in all
        w = 0
    elif points1 >= V_WIN_POINTS[v]:
        w = 1
    elif gei0 >= V_WIN_GEISHAS[v]:  # both cannot: more than half the geishas
        w = 0
    elif gei1 >= V_WIN_GEISHAS[v]:
        w = 1
    elif round_limit > 0 and s[i, C_ROUND] >= round_limit:
        if points0 != points1:
            w = 0 if points0 > points1 else 1
        elif gei0 != gei1:
            w = 0 if gei0 > gei1 else 1
        else:
            w = DRAW
    s[i, C_WINNER] = w
    s[i, C_PHASE] = ROUND_OVER if w == NO_WINNER else GAME_OVER


@njit(cache=True)
def apply_one(s, i, a, round_limit):
    """Apply the legal action ``a`` to row ``i``; returns the new phase."""
    phase = s[i, C_PHASE]
    seat = s[i, C_CURRENT]
    if phase == TOKEN_PHASE:
        s[i, C_TOKEN] = a
        s[i, C_SEL_LEN] = 0
        s[i, C_PHASE] = SELECT_PHASE
        _log(s, i, F_TOKEN, a + 1)
    elif phase == SELECT_PHASE:
        n = s[i, C_SEL_LEN]
        s[i, C_SELECTION + n] = a - CARD_BASE
        _log(s, i, F_CARDS + 3 * n, a - CARD_BASE)
        _log(s, i, F_COUNT, n + 1)
        n += 1
        s[i, C_SEL_LEN] = n
        token = s[i, C_TOKEN]
        if n == _SIZES[token]:  # the selection is complete: play the token
            for k in range(n):
                s[i, C_HANDS + NUM_GEISHAS * seat + s[i, C_SELECTION + k]] -= 1
            s[i, C_SEL_LEN] = 0
            if token == SECRET:
                s[i, C_SECRETS + seat] = s[i, C_SELECTION]
                end_turn(s, i, seat, round_limit)
            elif token == TRADEOFF:
                for k in range(n):
                    s[i, C_TRADEOFFS + NUM_GEISHAS * seat + s[i, C_SELECTION + k]] += 1
                end_turn(s, i, seat, round_limit)
            else:
                for k in range(n):
                    s[i, C_OFFER + k] = s[i, C_SELECTION + k]
                s[i, C_OFFER_LEN] = n
                if token == GIFT:
                    s[i, C_PHASE] = GIFT_PHASE
                    s[i, C_TO_MOVE] = 1 - seat
                else:
                    s[i, C_PHASE] = SPLIT_PHASE
    elif phase == SPLIT_PHASE:
        k = a - SPLIT_BASE
        c0 = s[i, C_OFFER + _SPLITS[k, 0]]
        c1 = s[i, C_OFFER + _SPLITS[k, 1]]
        c2 = s[i, C_OFFER + _SPLITS[k, 2]]
        c3 = s[i, C_OFFER + _SPLITS[k, 3]]
        s[i, C_OFFER] = c0  # set A (it holds c0), then set B
        s[i, C_OFFER + 1] = c1
        s[i, C_OFFER + 2] = c2
        s[i, C_OFFER + 3] = c3
        for k in range(COMP_SIZE):
            _log(s, i, F_CARDS + 3 * k, s[i, C_OFFER + k])
        s[i, C_PHASE] = COMP_PHASE
        s[i, C_TO_MOVE] = 1 - seat
    elif phase == GIFT_PHASE:
        taken = a - GIFT_TAKE_BASE
        _log(s, i, F_ANSWER, taken + 1)
        gave = False
        for k in range(GIFT_SIZE):
            g = s[i, C_OFFER + k]
            if g == taken and not gave:  # the answerer's one card goes to its side
                s[i, C_PLACED + NUM_GEISHAS * (1 - seat) + g] += 1
                gave = True
            else:
                s[i, C_PLACED + NUM_GEISHAS * seat + g] += 1
        end_turn(s, i, seat, round_limit)
    else:  # Competition answer: the answerer's set to its side, the other to the turn player's
        take_a = a == COMP_TAKE_A
        _log(s, i, F_ANSWER, 1 if take_a else 2)
        for k in range(COMP_SIZE):
            to_answerer = (k < SET_SIZE) == take_a
            side = 1 - seat if to_answerer else seat
            s[i, C_PLACED + NUM_GEISHAS * side + s[i, C_OFFER + k]] += 1
        end_turn(s, i, seat, round_limit)
    return s[i, C_PHASE]


@njit(cache=True)
def play(s, a, round_limit, m):
    """The AEC env's move on its row ``s[0]``: ``-1`` if ``a`` is not legal by the mask ``m``
    (nothing changes); else apply it, refresh ``m`` and return ``(phase << 1) | seat to move``."""
    if m[a] == 0:
        return -1
    phase = apply_one(s, ZERO, a, round_limit)
    legal(s, ZERO, m)
    return (phase << 1) | s[0, C_TO_MOVE]


@njit(cache=True)
def pick(m, u):
    """The legal action of mask row ``m`` at uniform ``u`` in [0, 1) (-1 if none is legal)."""
    count = 0
    for a in range(m.shape[0]):
        count += m[a]
    choice = int(u * count)
    for a in range(m.shape[0]):
        if m[a]:
            if choice == 0:
                return a
            choice -= 1
    return -1


# ------------------------------------------------------------ the deals ---


@njit(cache=True)
def _deal_rows(s, rows, decks, new_game):
    for j in range(rows.shape[0]):
        deal(s, rows[j], decks[j], new_game[j])


class Dealer:
    """Where every round's deck comes from, for ``num_games`` games (rows): each game's scripted
    decks (round 1, 2, ...), then decks shuffled from ``rng``.

    ``shuffle`` is how a seed becomes decks: ``"permutation"`` (one
    ``rng.permutation`` per deck: the AEC env's) or ``"sort"`` (one batch of sort keys
    for all the rows dealt at once: the batch engine's).  Both are kept so that a
    seeded game stays the game it was.  Every game it deals is of one ``variant`` (its decks
    are the variant's cards; a new game's row is marked with it)."""

    def __init__(
        self, num_games: int, rng: np.random.Generator, shuffle: str, variant: Variant = FULL
    ) -> None:
        if shuffle not in ("permutation", "sort"):
            raise ValueError(f"shuffle must be 'permutation' or 'sort', got {short(shuffle)}")
        self.rng = rng
        self.shuffle = shuffle
        self.variant = check_variant(variant)
        self._deck = np.array(self.variant.full_deck, dtype=np.int8)
        self.decks = np.zeros((num_games, 0, self.variant.num_cards), dtype=np.int8)
        """Scripted decks per game, ``[num_games, rounds, cards]``."""
        self.n_decks = np.zeros(num_games, dtype=np.int64)
        """How many of each game's scripted decks are in use (0 for a game ended)."""

    def script(self, decks: list[list[tuple[int, ...]]]) -> None:
        """Script the next games' rounds: ``decks[i]`` for game ``i`` (already validated; may
        be ragged or empty)."""
        counts = np.array([len(d) for d in decks], dtype=np.int64)
        out = np.zeros((len(decks), int(counts.max(initial=0)), self.variant.num_cards), dtype=np.int8)
        for i, game in enumerate(decks):
            if game:
                out[i, : len(game)] = game
        self.decks, self.n_decks = out, counts

    def deal(self, s: np.ndarray, rows: np.ndarray, new_game: np.ndarray) -> np.ndarray:
        """Deal the next round (a new game's first where ``new_game``) into ``rows`` of ``s``;
        returns the decks dealt (``[len(rows), cards]`` int8)."""
        next_round = np.where(new_game, 1, s[rows, C_ROUND] + 1)
        scripted = next_round <= self.n_decks[rows]
        n = self.variant.num_cards
        decks = np.empty((rows.size, n), dtype=np.int8)
        if scripted.any():
            decks[scripted] = self.decks[rows[scripted], next_round[scripted] - 1]
        k = int((~scripted).sum())
        if k and self.shuffle == "sort":
            decks[~scripted] = self._deck[np.argsort(self.rng.random((k, n)), axis=1)]
        elif k:
            decks[~scripted] = [self.rng.permutation(self._deck) for _ in range(k)]
        s[rows[new_game], C_VARIANT] = self.variant.index
        _deal_rows(s, rows.astype(np.int64), decks, new_game.astype(np.bool_))
        return decks

    def game_ended(self, done: np.ndarray) -> None:
        """Scripted decks belong to the game that just ended in the rows ``done``."""
        self.n_decks[done] = 0


# ------------------------------------------------- the State-level API ---
# The same functions as hanamikoji_env.rules, computed by the kernels: for the rule tests,
# the differential check and tools.  The envs work on rows directly.


def new_game(deck: Sequence[int], round_limit: int | None = None, variant: Variant = FULL) -> State:
    """:func:`hanamikoji_env.rules.new_game`, by the kernels."""
    variant = check_variant(variant)
    round_limit = variant_round_limit(round_limit, variant)
    row = blank_row(variant)
    deal(row, 0, np.asarray(validate_deck(deck, variant), dtype=np.int32), True)
    return state_from_row(row[0], round_limit, None)


def next_round(state: State, deck: Sequence[int]) -> State:
    """:func:`hanamikoji_env.rules.next_round`, by the kernels."""
    if state.phase != Phase.ROUND_OVER:
        raise ValueError(f"next_round needs a state whose round is over, not phase {state.phase.name}")
    row = rows_from_states([state])
    deal(row, 0, np.asarray(validate_deck(deck, state.variant), dtype=np.int32), False)
    return state_from_row(row[0], state.round_limit, state.last_round)


def legal_mask(state: State) -> tuple[int, ...]:
    """:func:`hanamikoji_env.rules.legal_mask`, by the kernels."""
    return _row_mask(rows_from_states([state]))


def legal_actions(state: State) -> list[int]:
    """:func:`hanamikoji_env.rules.legal_actions`, by the kernels."""
    return [a for a, ok in enumerate(legal_mask(state)) if ok]


def apply(state: State, action: int) -> State:
    """:func:`hanamikoji_env.rules.apply`, by the kernels (same errors)."""
    action = check_action(action, f"seat {state.to_move}")
    row = rows_from_states([state])
    mask = _row_mask(row)
    if not mask[action]:
        raise ValueError(
            f"illegal action {action} in phase {state.phase.name} for seat {state.to_move}; "
            f"legal: {[a for a, ok in enumerate(mask) if ok]}"
        )
    phase = apply_one(row, 0, action, state.round_limit or 0)
    summary = round_summary(row[0]) if phase >= ROUND_OVER else state.last_round
    return state_from_row(row[0], state.round_limit, summary)


def _row_mask(row: np.ndarray) -> tuple[int, ...]:
    m = np.zeros(NUM_ACTIONS, dtype=np.int8)
    legal(row, 0, m)
    return tuple(int(x) for x in m)


# ---------------------------------------------------- rows and States ---


_RANGES = (  # (first column, width, lowest, highest): every value a kernel may index with
    (C_ROUND, 1, 0, 2**20), (C_STARTER, 1, 0, 1), (C_TURN, 1, 0, TURNS_PER_ROUND),
    (C_CURRENT, 1, 0, 1), (C_TO_MOVE, 1, 0, 1), (C_PHASE, 1, 0, GAME_OVER), (C_TOKEN, 1, -1, NUM_TOKENS - 1),
    (C_SEL_LEN, 1, 0, MAX_SELECTION), (C_OFFER_LEN, 1, 0, MAX_SELECTION), (C_PILE_POS, 1, 0, DRAW_PILE_SIZE),
    (C_REMOVED, 1, 0, NUM_GEISHAS - 1), (C_WINNER, 1, NO_WINNER, 1), (C_SECRETS, 2, -1, NUM_GEISHAS - 1),
    (C_HANDS, 6 * NUM_GEISHAS, 0, int(V_VALUES.max())), (C_MARKERS, NUM_GEISHAS, CENTRE, 1), (C_SPENT, 2 * NUM_TOKENS, 0, 1),
    (C_SELECTION, 2 * MAX_SELECTION + DRAW_PILE_SIZE, 0, NUM_GEISHAS - 1),
    (C_VARIANT, 1, 0, len(VARIANT_LIST) - 1),
)  # fmt: skip
"""Hands, Trade-offs and placed cards are contiguous (``C_HANDS`` on), as are the selection, the
offer and the pile (``C_SELECTION`` on)."""


def check_rows(rows: np.ndarray) -> None:
    """``ValueError`` in one line unless every value of ``rows`` (``[N, WIDTH]``, from a file) is
    one the kernels can index with: a row from elsewhere must not make them write out of bounds."""
    if rows.ndim != 2 or rows.shape[1] != WIDTH:
        raise ValueError(f"engine rows must have shape [N, {WIDTH}], got {list(rows.shape)}")
    for at, width, low, high in _RANGES:
        block = rows[:, at : at + width]
        if ((block < low) | (block > high)).any():
            raise ValueError(
                f"engine rows hold a value outside [{low}, {high}] in columns {at}..{at + width - 1}"
            )
    log = rows[:, C_LOG:].astype(np.int64)
    fields = [(log >> shift) & 7 for shift in (F_DRAW, F_TOKEN, F_COUNT, F_ANSWER)]
    cards = [(log >> (F_CARDS + 3 * k)) & 7 for k in range(MAX_SELECTION)]
    if (
        (log < 0).any() or (log >> (F_CARDS + 3 * MAX_SELECTION)).any()
        or (fields[1] > NUM_TOKENS).any() or (fields[2] > MAX_SELECTION).any()
        or any((c > NUM_GEISHAS - 1).any() for c in cards)
    ):  # fmt: skip
        raise ValueError("engine rows hold a log entry no game writes")


def rows_from_states(states: Sequence[State]) -> np.ndarray:
    """The rows of engine states (``[len(states), WIDTH]`` int32)."""
    rows = np.zeros((len(states), WIDTH), dtype=np.int32)
    # the log stays empty (0): a State does not say how it came about
    for i, st in enumerate(states):
        r = rows[i]
        r[C_ROUND], r[C_STARTER], r[C_TURN], r[C_CURRENT], r[C_TO_MOVE] = (
            st.round, st.starter, st.turn, st.current, st.to_move,
        )  # fmt: skip
        r[C_PHASE], r[C_TOKEN] = int(st.phase), st.token
        r[C_SEL_LEN], r[C_OFFER_LEN] = len(st.selection), len(st.offer)
        r[C_VARIANT] = st.variant.index
        r[C_PILE_POS] = st.variant.draw_pile_size - len(st.draw_pile)
        r[C_REMOVED] = st.removed
        r[C_WINNER] = NO_WINNER if st.winner is None else st.winner
        r[C_SECRETS : C_SECRETS + 2] = st.secrets
        r[C_HANDS : C_HANDS + 2 * NUM_GEISHAS] = st.hands[0] + st.hands[1]
        r[C_TRADEOFFS : C_TRADEOFFS + 2 * NUM_GEISHAS] = st.tradeoffs[0] + st.tradeoffs[1]
        r[C_PLACED : C_PLACED + 2 * NUM_GEISHAS] = st.placed[0] + st.placed[1]
        r[C_MARKERS : C_MARKERS + NUM_GEISHAS] = st.markers
        r[C_SPENT : C_SPENT + 2 * NUM_TOKENS] = st.spent[0] + st.spent[1]
        r[C_SELECTION : C_SELECTION + len(st.selection)] = st.selection
        r[C_OFFER : C_OFFER + len(st.offer)] = st.offer
        r[C_PILE + r[C_PILE_POS] : C_PILE + st.variant.draw_pile_size] = st.draw_pile
    return rows


def state_from_row(row: np.ndarray, round_limit: int | None, last_round: RoundSummary | None) -> State:
    """The :class:`~hanamikoji_env.rules.State` of one row (``round_limit`` and the latest
    scoring's summary are not part of a row)."""
    r = row.tolist()
    phase = Phase(r[C_PHASE])

    def pair(at: int, width: int) -> tuple:
        return tuple(r[at : at + width]), tuple(r[at + width : at + 2 * width])

    scored = phase >= Phase.ROUND_OVER  # the Secrets are on the sides now
    winner = r[C_WINNER]
    variant = VARIANT_LIST[r[C_VARIANT]]
    spent = pair(C_SPENT, NUM_TOKENS)
    return State(
        round=r[C_ROUND],
        starter=r[C_STARTER],
        turn=r[C_TURN],
        current=r[C_CURRENT],
        to_move=r[C_TO_MOVE],
        phase=phase,
        hands=pair(C_HANDS, NUM_GEISHAS),  # type: ignore[arg-type]
        secrets=(-1, -1) if scored else (r[C_SECRETS], r[C_SECRETS + 1]),
        tradeoffs=pair(C_TRADEOFFS, NUM_GEISHAS),  # type: ignore[arg-type]
        placed=pair(C_PLACED, NUM_GEISHAS),  # type: ignore[arg-type]
        markers=tuple(r[C_MARKERS : C_MARKERS + NUM_GEISHAS]),
        spent=(tuple(bool(x) for x in spent[0]), tuple(bool(x) for x in spent[1])),  # type: ignore[arg-type]
        token=r[C_TOKEN],
        selection=tuple(r[C_SELECTION : C_SELECTION + r[C_SEL_LEN]]),
        offer=tuple(r[C_OFFER : C_OFFER + r[C_OFFER_LEN]]),
        draw_pile=tuple(r[C_PILE + r[C_PILE_POS] : C_PILE + variant.draw_pile_size]),
        removed=r[C_REMOVED],
        winner=None if winner == NO_WINNER else winner,
        round_limit=round_limit,
        last_round=last_round,
        variant=variant,
    )


def round_summary(row: np.ndarray) -> RoundSummary:
    """The public result of the scoring a row has just had (its Secrets are still recorded)."""
    r = row.tolist()
    markers = tuple(r[C_MARKERS : C_MARKERS + NUM_GEISHAS])
    points, geishas = score(markers, VARIANT_LIST[r[C_VARIANT]])
    return RoundSummary(
        round=r[C_ROUND],
        markers=markers,
        points=points,
        geishas=geishas,
        secrets=(r[C_SECRETS], r[C_SECRETS + 1]),
        placed=(
            tuple(r[C_PLACED : C_PLACED + NUM_GEISHAS]),  # type: ignore[arg-type]
            tuple(r[C_PLACED + NUM_GEISHAS : C_PLACED + 2 * NUM_GEISHAS]),  # type: ignore[arg-type]
        ),
    )
