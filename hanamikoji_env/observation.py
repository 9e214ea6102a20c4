"""What one player knows: the observation encoder, its layout and a decoder.

The game logic lives in :mod:`hanamikoji_env.engine` (and its readable
specification :mod:`hanamikoji_env.rules`); this module only decides what a
seat may see of a game and lays it out as a float32 vector from that seat's
perspective ("me" and "opponent", not seat 0 and 1), so one policy can play
both seats.  There is one encoder, :func:`encode_row`, compiled over the
engine's rows: the AEC env, the batch engine and :func:`encode` (for a
:class:`~hanamikoji_env.rules.State`) all use it.  Everything is a count of
cards (or a 0/1 flag) except the sizes and the round number.

Visibility: the current selection and the chosen token belong to the turn
player alone while cards are being selected; once a Gift or Competition is
complete its cards are public (the 4 Competition cards while they are split,
then the two sets).  Secret and Trade-off cards are seen by their owner only,
until the Secrets are revealed at the scoring.  The removed card and the draw
pile are seen by nobody; ``unseen`` counts, per geisha, the cards this player
has not seen (opponent's hand, Secret and Trade-off, removed card, draw pile).

Observations are versioned, as PettingZoo names envs ``_v0``, ``_v1``: a
version is a layout and its encoder kernel, and never changes once released;
a new feature is a new version (:data:`VERSIONS`, one line each), so a
checkpoint trained on one version keeps loading and playing (it records its
version and layout hash).  Every env, the batch engine and the OpenSpiel game
take ``observation_version`` (default :data:`DEFAULT_VERSION`).

| version | size | what it adds |
|---|---|---|
| 1 | 109 | the layout below |
| 2 | 669 | perfect recall: version 1, then what I observed in each of the last 4 rounds |
| 3 | 249 | version 1, then what I observed in this round (version 2's first round table): all that the rest of the game depends on |

Observation vector of version 1 (``OBS_SIZE`` = 109):

| offset | length | name | meaning |
|---|---|---|---|
| 0 | 7 | phase | decision phase, one-hot: token, select, split, gift answer, competition answer, round over, game over |
| 7 | 1 | my_decision | 1 if the next decision is mine |
| 8 | 7 | hand | my hand, cards per geisha |
| 15 | 7 | secret | my Secret card (one-hot), until it is revealed |
| 22 | 7 | tradeoff | my Trade-off cards |
| 29 | 4 | token | token being played this turn, one-hot (while selecting: my turn only) |
| 33 | 7 | selection | cards I selected so far this turn (select phase, my turn only) |
| 40 | 7 | offer | cards on the table: the Gift's 3 or the Competition's 4 |
| 47 | 7 | set_a | Competition answer phase: the set holding the lowest card |
| 54 | 7 | set_b | Competition answer phase: the other set |
| 61 | 7 | placed_me | cards on my side of each geisha |
| 68 | 7 | placed_opp | cards on the opponent's side of each geisha |
| 75 | 7 | marker_me | 1 where the favor marker is on my side |
| 82 | 7 | marker_opp | 1 where the favor marker is on the opponent's side |
| 89 | 4 | spent_me | my tokens spent this round: Secret, Trade-off, Gift, Competition |
| 93 | 4 | spent_opp | the opponent's tokens spent this round |
| 97 | 3 | sizes | my hand size, the opponent's hand size, draw pile size |
| 100 | 1 | round | round number, from 1 (saturates at 255) |
| 101 | 1 | i_started | 1 if I started this round |
| 102 | 7 | unseen | cards I have not seen, per geisha |

Version 2 (``RECALL_SIZE`` = 669) has perfect recall.  It is version 1's 109 entries, then what
this player observed in each of the last :data:`RECALL_ROUNDS` = 4 rounds, this round first, read
from the log the engine keeps in each row.  Two histories that showed a player different views
(at any step) give it different vectors, and two that showed it the same views give it the same
vector (``tests/test_recall.py``, over tens of thousands of pairs of game prefixes).  The cap:
from the fifth round on, the oldest round drops out and the current round and the three before
it are recalled (the markers stay in version 1's entries); 0.4% of random
games (1% of the heuristic bot's against itself) last longer.  A
row made from a :class:`~hanamikoji_env.rules.State` has no log, so it recalls nothing.

| offset | length | name | meaning |
|---|---|---|---|
| 0 | 109 | (version 1) | as above |
| 109 | 140 | round_0 | this round (a round table) |
| 249 | 140 | round_1 | 1 round before this one |
| 389 | 140 | round_2 | 2 rounds before this one |
| 529 | 140 | round_3 | 3 rounds before this one |

A round table (140 entries; a player's turns alternate with the opponent's from the round's starter):

| offset | length | name | meaning |
|---|---|---|---|
| 0 | 1 | present | 1 if this block holds a round |
| 1 | 1 | i_started | 1 if I started that round |
| 2 | 1 | scored | 1 once that round is scored (the Secrets revealed) |
| 3 | 16 | my_tokens | the token of each of my turns in order, one-hot (4 a turn) |
| 19 | 16 | opp_tokens | the token of each of the opponent's turns in order, once its cards are chosen |
| 35 | 28 | my_draws | the card I drew at the start of each of my turns, one-hot (7 a turn; none at a round's first) |
| 63 | 7 | my_secret | my Secret card |
| 70 | 7 | my_tradeoff | my Trade-off cards |
| 77 | 7 | my_gift | the 3 cards of my Gift (so far, while I choose them) |
| 84 | 7 | my_comp | the 4 cards of my Competition (so far, while I choose them) |
| 91 | 7 | my_gift_taken | the card of my Gift the opponent took |
| 98 | 7 | my_comp_taken | the set of my Competition the opponent took |
| 105 | 7 | opp_secret | the opponent's Secret card, once scored |
| 112 | 7 | opp_gift | the 3 cards of the opponent's Gift |
| 119 | 7 | opp_comp | the 4 cards of the opponent's Competition |
| 126 | 7 | opp_gift_taken | the card of the opponent's Gift I took |
| 133 | 7 | opp_comp_taken | the set of the opponent's Competition I took |

The global ``state()`` vector (``STATE_SIZE`` = 185) is by seat, for
centralized critics only: it reveals everything.

| offset | length | name | meaning |
|---|---|---|---|
| 0 | 7 | phase | decision phase, one-hot (as above) |
| 7 | 2 | to_move | seat making the next decision, one-hot |
| 9 | 14 | hands | seat 0's hand, then seat 1's |
| 23 | 14 | secrets | each seat's Secret card (one-hot) |
| 37 | 14 | tradeoffs | each seat's Trade-off cards |
| 51 | 4 | token | token being played this turn, one-hot |
| 55 | 7 | selection | cards selected so far this turn |
| 62 | 7 | offer | cards on the table |
| 69 | 7 | set_a | Competition answer phase: the set holding the lowest card |
| 76 | 7 | set_b | Competition answer phase: the other set |
| 83 | 14 | placed | each seat's side of the geishas |
| 97 | 14 | markers | 1 where the marker is on seat 0's side, then seat 1's |
| 111 | 8 | spent | each seat's spent tokens |
| 119 | 7 | removed | the removed card, one-hot |
| 126 | 56 | draw_pile | the draw pile, top first, one-hot per card (7 per slot) |
| 182 | 1 | round | round number (saturates at 255) |
| 183 | 2 | starter | seat that started this round, one-hot |
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import gymnasium
import numpy as np
from numba import njit

from hanamikoji_env.actions import COMPETITION, GIFT, NUM_ACTIONS, NUM_TOKENS, SECRET, TOKEN_SIZES
from hanamikoji_env.engine import (
    C_CURRENT,
    C_HANDS,
    C_MARKERS,
    C_OFFER,
    C_OFFER_LEN,
    C_PHASE,
    C_PILE_POS,
    C_PLACED,
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
    C_VARIANT,
    COMP_PHASE,
    F_ANSWER,
    F_CARDS,
    F_COUNT,
    F_DRAW,
    F_TOKEN,
    LOG_ROUNDS,
    ROUND_OVER,
    SELECT_PHASE,
    SET_SIZE,
    V_TURNS,
    V_VALUES,
    legal,
    log_at,
    log_field,
    rows_from_states,
)
from hanamikoji_env.excerpt import short
from hanamikoji_env.rules import (
    CENTRE,
    DRAW_PILE_SIZE,
    EMPTY,
    NUM_GEISHAS,
    TURNS_PER_ROUND,
    VALUES,
    Counts,
    Phase,
    State,
    count_cards,
)

MAX_ROUND = 255
"""The round entry saturates here; real games end long before."""


class Field(NamedTuple):
    name: str
    offset: int
    length: int
    high: tuple[float, ...]
    meaning: str


def _build(spec: list[tuple[str, int, tuple[float, ...] | float, str]]) -> tuple[Field, ...]:
    fields, offset = [], 0
    for name, length, high, meaning in spec:
        highs = high if isinstance(high, tuple) else (float(high),) * length
        assert len(highs) == length, name
        fields.append(Field(name, offset, length, highs, meaning))
        offset += length
    return tuple(fields)


_V = tuple(float(v) for v in VALUES)
_MAX_HAND = float(6 + 1)

OBS_LAYOUT = _build(
    [
        (
            "phase",
            7,
            1.0,
            "decision phase, one-hot: token, select, split, gift answer, "
            "competition answer, round over, game over",
        ),
        ("my_decision", 1, 1.0, "1 if the next decision is mine"),
        ("hand", 7, _V, "my hand, cards per geisha"),
        ("secret", 7, 1.0, "my Secret card (one-hot), until it is revealed"),
        ("tradeoff", 7, _V, "my Trade-off cards"),
        ("token", 4, 1.0, "token being played this turn, one-hot (while selecting: my turn only)"),
        ("selection", 7, _V, "cards I selected so far this turn (select phase, my turn only)"),
        ("offer", 7, _V, "cards on the table: the Gift's 3 or the Competition's 4"),
        ("set_a", 7, _V, "Competition answer phase: the set holding the lowest card"),
        ("set_b", 7, _V, "Competition answer phase: the other set"),
        ("placed_me", 7, _V, "cards on my side of each geisha"),
        ("placed_opp", 7, _V, "cards on the opponent's side of each geisha"),
        ("marker_me", 7, 1.0, "1 where the favor marker is on my side"),
        ("marker_opp", 7, 1.0, "1 where the favor marker is on the opponent's side"),
        ("spent_me", 4, 1.0, "my tokens spent this round: Secret, Trade-off, Gift, Competition"),
        ("spent_opp", 4, 1.0, "the opponent's tokens spent this round"),
        (
            "sizes",
            3,
            (_MAX_HAND, _MAX_HAND, float(DRAW_PILE_SIZE)),
            "my hand size, the opponent's hand size, draw pile size",
        ),
        ("round", 1, float(MAX_ROUND), "round number, from 1 (saturates at 255)"),
        ("i_started", 1, 1.0, "1 if I started this round"),
        ("unseen", 7, _V, "cards I have not seen, per geisha"),
    ]
)

STATE_LAYOUT = _build(
    [
        ("phase", 7, 1.0, "decision phase, one-hot (as above)"),
        ("to_move", 2, 1.0, "seat making the next decision, one-hot"),
        ("hands", 14, _V * 2, "seat 0's hand, then seat 1's"),
        ("secrets", 14, 1.0, "each seat's Secret card (one-hot)"),
        ("tradeoffs", 14, _V * 2, "each seat's Trade-off cards"),
        ("token", 4, 1.0, "token being played this turn, one-hot"),
        ("selection", 7, _V, "cards selected so far this turn"),
        ("offer", 7, _V, "cards on the table"),
        ("set_a", 7, _V, "Competition answer phase: the set holding the lowest card"),
        ("set_b", 7, _V, "Competition answer phase: the other set"),
        ("placed", 14, _V * 2, "each seat's side of the geishas"),
        ("markers", 14, 1.0, "1 where the marker is on seat 0's side, then seat 1's"),
        ("spent", 8, 1.0, "each seat's spent tokens"),
        ("removed", 7, 1.0, "the removed card, one-hot"),
        ("draw_pile", 56, 1.0, "the draw pile, top first, one-hot per card (7 per slot)"),
        ("round", 1, float(MAX_ROUND), "round number (saturates at 255)"),
        ("starter", 2, 1.0, "seat that started this round, one-hot"),
    ]
)

OBS_SIZE = sum(f.length for f in OBS_LAYOUT)
STATE_SIZE = sum(f.length for f in STATE_LAYOUT)
OBS_HIGH = np.array([h for f in OBS_LAYOUT for h in f.high], dtype=np.float32)
STATE_HIGH = np.array([h for f in STATE_LAYOUT for h in f.high], dtype=np.float32)
OFFSETS = {f.name: slice(f.offset, f.offset + f.length) for f in OBS_LAYOUT}


def layout_table(layout: tuple[Field, ...] = OBS_LAYOUT) -> str:
    """The layout as the markdown table used in the docs."""
    rows = ["| offset | length | name | meaning |", "|---|---|---|---|"]
    rows += [f"| {f.offset} | {f.length} | {f.name} | {f.meaning} |" for f in layout]
    return "\n".join(rows)


# -------------------------------------------------------------- encoding ---

_PHASES = tuple(tuple(1 if i == p else 0 for i in range(7)) for p in range(7))
_ONE7 = tuple(tuple(1 if i == g else 0 for i in range(7)) for g in range(7))
_ONE4 = tuple(tuple(1 if i == t else 0 for i in range(4)) for t in range(4))
_NO4 = (0, 0, 0, 0)

# The field offsets the kernels read, as typed numbers (numba compiles a kernel once per literal
# argument, so plain ints here would compile ``cards(o, O_SEL, ...)`` once per field).
O_PHASE, O_MINE, O_HAND = (np.int64(OFFSETS[f].start) for f in ("phase", "my_decision", "hand"))
O_SECRET, O_TRADE, O_TOKEN = (np.int64(OFFSETS[f].start) for f in ("secret", "tradeoff", "token"))
O_SEL, O_OFFER = (np.int64(OFFSETS[f].start) for f in ("selection", "offer"))
O_SET_A, O_SET_B = (np.int64(OFFSETS[f].start) for f in ("set_a", "set_b"))
O_P_ME, O_P_OPP = (np.int64(OFFSETS[f].start) for f in ("placed_me", "placed_opp"))
O_M_ME, O_M_OPP = (np.int64(OFFSETS[f].start) for f in ("marker_me", "marker_opp"))
O_S_ME, O_S_OPP = (np.int64(OFFSETS[f].start) for f in ("spent_me", "spent_opp"))
O_SIZES, O_ROUND = (np.int64(OFFSETS[f].start) for f in ("sizes", "round"))
O_STARTED, O_UNSEEN = (np.int64(OFFSETS[f].start) for f in ("i_started", "unseen"))


@njit(cache=True)
def encode_row(s, i, seat, o, m):
    """Write ``seat``'s observation of row ``i`` into ``o`` (zeroed first) and its legal mask
    into ``m`` (all 0 unless ``seat`` is to move): exactly what that player may know."""
    o[:] = 0.0
    opp = 1 - seat
    phase = s[i, C_PHASE]
    v = s[i, C_VARIANT]
    if seat == s[i, C_TO_MOVE]:
        legal(s, i, m)
        if phase < ROUND_OVER:
            o[O_MINE] = 1.0
    else:
        m[:] = 0
    o[O_PHASE + phase] = 1.0
    my_turn = s[i, C_CURRENT] == seat
    sec = s[i, C_SECRETS + seat]
    if sec >= 0 and phase < ROUND_OVER:  # once scored, the Secret is on my side
        o[O_SECRET + sec] = 1.0
    token = s[i, C_TOKEN]
    if token >= 0 and (phase != SELECT_PHASE or my_turn):  # while selecting: the turn player's alone
        o[O_TOKEN + token] = 1.0
    if phase == SELECT_PHASE and my_turn:
        for k in range(s[i, C_SEL_LEN]):
            o[O_SEL + s[i, C_SELECTION + k]] += 1.0
    for k in range(s[i, C_OFFER_LEN]):
        o[O_OFFER + s[i, C_OFFER + k]] += 1.0
    if phase == COMP_PHASE:
        for k in range(SET_SIZE):
            o[O_SET_A + s[i, C_OFFER + k]] += 1.0
            o[O_SET_B + s[i, C_OFFER + SET_SIZE + k]] += 1.0
    size_me = 0
    size_opp = 0
    for g in range(NUM_GEISHAS):
        h = s[i, C_HANDS + NUM_GEISHAS * seat + g]
        size_me += h
        size_opp += s[i, C_HANDS + NUM_GEISHAS * opp + g]
        o[O_HAND + g] = h
        t = s[i, C_TRADEOFFS + NUM_GEISHAS * seat + g]
        o[O_TRADE + g] = t
        pm = s[i, C_PLACED + NUM_GEISHAS * seat + g]
        po = s[i, C_PLACED + NUM_GEISHAS * opp + g]
        o[O_P_ME + g] = pm
        o[O_P_OPP + g] = po
        owner = s[i, C_MARKERS + g]
        if owner == seat:
            o[O_M_ME + g] = 1.0
        elif owner == opp:
            o[O_M_OPP + g] = 1.0
        o[O_UNSEEN + g] = V_VALUES[v, g] - h - t - pm - po - o[O_SECRET + g] - o[O_OFFER + g]
    for t in range(NUM_TOKENS):
        o[O_S_ME + t] = s[i, C_SPENT + NUM_TOKENS * seat + t]
        o[O_S_OPP + t] = s[i, C_SPENT + NUM_TOKENS * opp + t]
    o[O_SIZES] = size_me
    o[O_SIZES + 1] = size_opp
    o[O_SIZES + 2] = V_TURNS[v] - s[i, C_PILE_POS]  # a variant's pile holds one card a turn
    o[O_ROUND] = min(s[i, C_ROUND], MAX_ROUND)
    if s[i, C_STARTER] == seat:
        o[O_STARTED] = 1.0


@njit(cache=True)
def encode_rows(s, seats, obs, mask):
    """:func:`encode_row` for every row ``i`` of ``s``, as ``seats[i]``."""
    for i in range(s.shape[0]):
        encode_row(s, i, seats[i], obs[i], mask[i])


# ------------------------------------------------ version 2: perfect recall ---

RECALL_ROUNDS = LOG_ROUNDS
"""Rounds version 2 recalls: the current one and the three before it (the engine's log)."""

_TURNS = TURNS_PER_ROUND // 2
"""Each player's turns in a round: one per token."""

ROUND_LAYOUT = _build(
    [
        ("present", 1, 1.0, "1 if this block holds a round"),
        ("i_started", 1, 1.0, "1 if I started that round"),
        ("scored", 1, 1.0, "1 once that round is scored (the Secrets revealed)"),
        ("my_tokens", 4 * _TURNS, 1.0, "the token of each of my turns in order, one-hot (4 a turn)"),
        (
            "opp_tokens",
            4 * _TURNS,
            1.0,
            "the token of each of the opponent's turns in order, once its cards are chosen",
        ),
        (
            "my_draws",
            NUM_GEISHAS * _TURNS,
            1.0,
            "the card I drew at the start of each of my turns, one-hot (7 a turn; none at a round's first)",
        ),
        ("my_secret", 7, 1.0, "my Secret card"),
        ("my_tradeoff", 7, _V, "my Trade-off cards"),
        ("my_gift", 7, _V, "the 3 cards of my Gift (so far, while I choose them)"),
        ("my_comp", 7, _V, "the 4 cards of my Competition (so far, while I choose them)"),
        ("my_gift_taken", 7, 1.0, "the card of my Gift the opponent took"),
        ("my_comp_taken", 7, _V, "the set of my Competition the opponent took"),
        ("opp_secret", 7, 1.0, "the opponent's Secret card, once scored"),
        ("opp_gift", 7, _V, "the 3 cards of the opponent's Gift"),
        ("opp_comp", 7, _V, "the 4 cards of the opponent's Competition"),
        ("opp_gift_taken", 7, 1.0, "the card of the opponent's Gift I took"),
        ("opp_comp_taken", 7, _V, "the set of the opponent's Competition I took"),
    ]
)
ROUND_SIZE = sum(f.length for f in ROUND_LAYOUT)
_ROUND_HIGH = tuple(h for f in ROUND_LAYOUT for h in f.high)


def _recall_layout(rounds: int) -> tuple[Field, ...]:
    """Version 1's layout, then one round table for each of the last ``rounds`` rounds."""
    return _build(
        [
            *((f.name, f.length, f.high, f.meaning) for f in OBS_LAYOUT),
            *(
                (
                    f"round_{j}",
                    ROUND_SIZE,
                    _ROUND_HIGH,
                    "this round (a round table)" if j == 0 else f"{j} round{'s' * (j > 1)} before this one",
                )
                for j in range(rounds)
            ),
        ]
    )


RECALL_LAYOUT = _recall_layout(RECALL_ROUNDS)
CURRENT_LAYOUT = _recall_layout(1)
"""Version 3's layout: version 1's, then this round's table alone."""
RECALL_SIZE = sum(f.length for f in RECALL_LAYOUT)

_R = {f.name: np.int64(f.offset) for f in ROUND_LAYOUT}
O_RECALL = np.int64(OBS_SIZE)
B_PRESENT, B_STARTED, B_SCORED, B_MY_TOKENS, B_OPP_TOKENS, B_MY_DRAWS = (
    _R[k] for k in ("present", "i_started", "scored", "my_tokens", "opp_tokens", "my_draws")
)
B_MY_CARDS = _R["my_secret"]
"""My cards by token: Secret, Trade-off, Gift, Competition, 7 entries each."""
assert [f.name for f in ROUND_LAYOUT[6:10]] == ["my_secret", "my_tradeoff", "my_gift", "my_comp"]
B_MY_GIFT_TAKEN, B_MY_COMP_TAKEN = _R["my_gift_taken"], _R["my_comp_taken"]
B_OPP_SECRET, B_OPP_GIFT, B_OPP_COMP = _R["opp_secret"], _R["opp_gift"], _R["opp_comp"]
B_OPP_GIFT_TAKEN, B_OPP_COMP_TAKEN = _R["opp_gift_taken"], _R["opp_comp_taken"]


@njit(cache=True)
def encode_row_v2(s, i, seat, o, m):
    """Version 2 of ``seat``'s observation of row ``i``: version 1's, then what it has observed
    in each of the last :data:`RECALL_ROUNDS` rounds, read from the engine's log."""
    encode_recall(s, i, seat, o, m, RECALL_ROUNDS)


@njit(cache=True)
def encode_row_v3(s, i, seat, o, m):
    """Version 3 of ``seat``'s observation of row ``i``: version 1's, then what it has observed
    in this round (version 2's first round table)."""
    encode_recall(s, i, seat, o, m, 1)


@njit(cache=True)
def encode_recall(s, i, seat, o, m, rounds):
    """Version 1's observation, then a round table for each of the last ``rounds`` rounds."""
    encode_row(s, i, seat, o, m)  # zeroes all of ``o``
    current = s[i, C_ROUND]
    phase = s[i, C_PHASE]
    for j in range(rounds):
        rnd = current - j
        if rnd < 1:
            break
        at = log_at(rnd)
        if s[i, at] == 0:  # a round never dealt here (a row made from a State): nothing to recall
            break
        base = O_RECALL + j * ROUND_SIZE
        starter = s[i, C_STARTER] if j % 2 == 0 else 1 - s[i, C_STARTER]
        scored = j > 0 or phase >= ROUND_OVER
        o[base + B_PRESENT] = 1.0
        if starter == seat:
            o[base + B_STARTED] = 1.0
        if scored:
            o[base + B_SCORED] = 1.0
        for k in range(TURNS_PER_ROUND):
            word = s[i, at + k]
            draw = log_field(word, F_DRAW) - 1
            if draw < 0:  # the turn has not begun
                break
            t = k // 2  # the turn player's own turn: each player plays every other turn
            mine = (starter == seat) == (k % 2 == 0)
            if mine and k > 0:  # the starter's first draw was in its hand when it first saw it
                o[base + B_MY_DRAWS + NUM_GEISHAS * t + draw] = 1.0
            token = log_field(word, F_TOKEN) - 1
            if token < 0:
                continue
            n = log_field(word, F_COUNT)
            answer = log_field(word, F_ANSWER) - 1
            if mine:
                o[base + B_MY_TOKENS + NUM_TOKENS * t + token] = 1.0
                cards_at = base + B_MY_CARDS + NUM_GEISHAS * token
                taken_at = base + (B_MY_GIFT_TAKEN if token == GIFT else B_MY_COMP_TAKEN)
            elif j == 0 and k == s[i, C_TURN] and phase == SELECT_PHASE:
                continue  # the opponent's token and cards while it chooses them
            else:
                o[base + B_OPP_TOKENS + NUM_TOKENS * t + token] = 1.0
                if token == SECRET:
                    cards_at = base + B_OPP_SECRET if scored else -1
                elif token == GIFT:
                    cards_at = base + B_OPP_GIFT
                elif token == COMPETITION:
                    cards_at = base + B_OPP_COMP
                else:
                    cards_at = -1  # a Trade-off never shows
                taken_at = base + (B_OPP_GIFT_TAKEN if token == GIFT else B_OPP_COMP_TAKEN)
            if cards_at >= 0:
                for c in range(n):
                    o[cards_at + log_field(word, F_CARDS + 3 * c)] += 1.0
            if answer >= 0 and token == GIFT:
                o[taken_at + answer] = 1.0
            elif answer >= 0:
                for c in range(SET_SIZE):
                    o[taken_at + log_field(word, F_CARDS + 3 * (answer * SET_SIZE + c))] += 1.0


@njit(cache=True)
def encode_rows_v2(s, seats, obs, mask):
    """:func:`encode_row_v2` for every row ``i`` of ``s``, as ``seats[i]``."""
    for i in range(s.shape[0]):
        encode_row_v2(s, i, seats[i], obs[i], mask[i])


@njit(cache=True)
def encode_rows_v3(s, seats, obs, mask):
    """:func:`encode_row_v3` for every row ``i`` of ``s``, as ``seats[i]``."""
    for i in range(s.shape[0]):
        encode_row_v3(s, i, seats[i], obs[i], mask[i])


# -------------------------------------------------------------- versions ---


@dataclass(frozen=True)
class ObservationVersion:
    """One observation version: its layout and its encoder kernels over engine rows."""

    number: int
    layout: tuple[Field, ...]
    encode_row: Any
    """``encode_row(s, i, seat, o, m)``: seat's observation of row ``i`` and its mask."""
    encode_rows: Any
    """``encode_rows(s, seats, obs, mask)``: :attr:`encode_row` for every row."""
    parts: tuple[tuple[Field, ...], ...] = ()
    """Layouts of repeated blocks inside :attr:`layout` (version 2's round and turn tables)."""
    size: int = field(init=False)
    high: np.ndarray = field(init=False, repr=False)
    """Upper bound of each entry (the lower bound is 0)."""
    layout_hash: str = field(init=False)
    """What a checkpoint records: the layout's table and the action count, hashed."""

    def __post_init__(self) -> None:
        tables = [layout_table(part) for part in (self.layout, *self.parts)]
        text = "|".join(tables) + f"|actions={NUM_ACTIONS}"
        object.__setattr__(self, "size", sum(f.length for f in self.layout))
        object.__setattr__(self, "high", np.array([h for f in self.layout for h in f.high], dtype=np.float32))
        object.__setattr__(self, "layout_hash", hashlib.sha256(text.encode()).hexdigest()[:16])

    def space(self, to_play: bool = False) -> gymnasium.spaces.Dict:
        """The observation space of one agent: ``observation`` and ``action_mask`` (and the
        seat to move, ``to_play``, for the two-player batch env)."""
        spaces = {
            "observation": gymnasium.spaces.Box(0.0, self.high, (self.size,), np.float32),
            "action_mask": gymnasium.spaces.Box(0, 1, (NUM_ACTIONS,), np.int8),
        }
        if to_play:
            spaces["to_play"] = gymnasium.spaces.Discrete(2)
        return gymnasium.spaces.Dict(spaces)


VERSIONS: dict[int, ObservationVersion] = {
    1: ObservationVersion(1, OBS_LAYOUT, encode_row, encode_rows),
    2: ObservationVersion(2, RECALL_LAYOUT, encode_row_v2, encode_rows_v2, (ROUND_LAYOUT,)),
    3: ObservationVersion(3, CURRENT_LAYOUT, encode_row_v3, encode_rows_v3, (ROUND_LAYOUT,)),
}
"""Every observation version by number; adding one is a layout, its kernels and a line here
(and its row in the versions table above)."""
DEFAULT_VERSION = 1


def get_version(number: object = DEFAULT_VERSION) -> ObservationVersion:
    """The version ``number``; ``ValueError`` naming the known ones otherwise."""
    if (
        isinstance(number, (bool, np.bool_))
        or not isinstance(number, (int, np.integer))
        or number not in VERSIONS
    ):
        raise ValueError(f"observation_version must be one of {sorted(VERSIONS)}, got {short(number)}")
    return VERSIONS[int(number)]


def observation_space(number: object = DEFAULT_VERSION, to_play: bool = False) -> gymnasium.spaces.Dict:
    """:meth:`ObservationVersion.space` of version ``number``."""
    return get_version(number).space(to_play)


# ------------------------------------------------- reading a row in kernels ---
# For compiled bots that read an observation row (:mod:`hanamikoji_env.bots.heuristic`,
# :mod:`hanamikoji_env.bots.search`, :func:`hanamikoji_env.infoset.determinize_row`).


@njit(cache=True)
def entry(o, k):
    """Entry ``k`` of observation row ``o`` as an int."""
    return int(o[k] + 0.5)


@njit(cache=True)
def one_hot(o, at, width):
    """The index of the 1 in ``o[at : at + width]``, -1 if none."""
    for k in range(width):
        if o[at + k] > 0.5:
            return k
    return -1


@njit(cache=True)
def decision_phase(o):
    """The phase of observation row ``o`` (its one-hot), -1 if it has none."""
    return one_hot(o, O_PHASE, 7)


@njit(cache=True)
def cards(o, at, out):
    """The sorted geisha ids of the counts ``o[at : at + 7]`` into ``out`` (as many as fit);
    returns how many there are."""
    n = 0
    for g in range(NUM_GEISHAS):
        for _ in range(entry(o, at + g)):
            if n < out.shape[0]:
                out[n] = g
            n += 1
    return n


@njit(cache=True)
def turns_played(o):
    """Turns played this round: the tokens both players have spent."""
    turn = 0
    for t in range(NUM_TOKENS):
        turn += entry(o, O_S_ME + t) + entry(o, O_S_OPP + t)
    return turn


def encode(state: State, seat: int) -> np.ndarray:
    """The observation vector of ``seat`` (0 or 1) in ``state``: exactly what it may know."""
    if seat not in (0, 1) or isinstance(seat, bool):
        raise ValueError(f"seat must be 0 or 1, got {short(seat)}")
    obs = np.zeros((1, OBS_SIZE), dtype=np.float32)
    mask = np.zeros((1, NUM_ACTIONS), dtype=np.int8)
    encode_rows(rows_from_states([state]), np.array([seat], dtype=np.int8), obs, mask)
    return obs[0]


def encode_state(state: State) -> np.ndarray:
    """The full-information global state vector (for centralized critics)."""
    pile = tuple(x for g in state.draw_pile for x in _ONE7[g])
    pile += (0,) * (7 * DRAW_PILE_SIZE - len(pile))
    set_a = set_b = EMPTY
    if state.phase == Phase.COMP_ANSWER:
        set_a, set_b = count_cards(state.offer[:2]), count_cards(state.offer[2:])
    vec = (
        _PHASES[state.phase]
        + ((1, 0) if state.to_move == 0 else (0, 1))
        + state.hands[0]
        + state.hands[1]
        + tuple(x for s in state.secrets for x in (_ONE7[s] if s >= 0 else EMPTY))
        + state.tradeoffs[0]
        + state.tradeoffs[1]
        + (_ONE4[state.token] if state.token >= 0 else _NO4)
        + count_cards(state.selection)
        + count_cards(state.offer)
        + set_a
        + set_b
        + state.placed[0]
        + state.placed[1]
        + tuple(1 if m == 0 else 0 for m in state.markers)
        + tuple(1 if m == 1 else 0 for m in state.markers)
        + state.spent[0]
        + state.spent[1]
        + (_ONE7[state.removed] if state.removed >= 0 else EMPTY)
        + pile
        + (min(state.round, MAX_ROUND),)
        + ((1, 0) if state.starter == 0 else (0, 1))
    )
    return np.array(vec, dtype=np.float32)


# -------------------------------------------------------------- decoding ---


class InfoSet(NamedTuple):
    """A readable view of one observation vector: what that player knows.

    Seats are relative: in ``markers`` 0 means mine, 1 the opponent's and -1
    the centre.  Counts are 7-tuples indexed by geisha.
    """

    phase: Phase
    my_decision: bool
    hand: Counts
    secret: int
    """Geisha of my Secret card, -1 if none (or already revealed)."""
    tradeoff: Counts
    token: int
    """Token being played this turn, -1 if none (or not visible to me)."""
    selection: Counts
    offer: Counts
    set_a: Counts
    set_b: Counts
    placed_me: Counts
    placed_opp: Counts
    markers: tuple[int, ...]
    spent_me: tuple[bool, bool, bool, bool]
    spent_opp: tuple[bool, bool, bool, bool]
    hand_size: int
    opp_hand_size: int
    draw_pile_size: int
    round: int
    i_started: bool
    unseen: Counts

    @property
    def cards_needed(self) -> int:
        """Cards still to select in the select phase (0 otherwise)."""
        if self.phase != Phase.SELECT or self.token < 0:
            return 0
        return TOKEN_SIZES[self.token] - sum(self.selection)


def decode(vector: np.ndarray) -> InfoSet:
    """Turn an observation vector back into an :class:`InfoSet`."""
    v = np.asarray(vector)
    if v.shape != (OBS_SIZE,):
        raise ValueError(f"an observation vector has shape ({OBS_SIZE},), got {v.shape}")
    ints = [round(float(x)) for x in v]

    def block(name: str) -> tuple[int, ...]:
        return tuple(ints[OFFSETS[name]])

    def index(name: str) -> int:
        b = block(name)
        return b.index(1) if 1 in b else -1

    mine, theirs = block("marker_me"), block("marker_opp")
    sizes = block("sizes")
    return InfoSet(
        phase=Phase(index("phase")),
        my_decision=bool(ints[OFFSETS["my_decision"].start]),
        hand=block("hand"),  # type: ignore[arg-type]
        secret=index("secret"),
        tradeoff=block("tradeoff"),  # type: ignore[arg-type]
        token=index("token"),
        selection=block("selection"),  # type: ignore[arg-type]
        offer=block("offer"),  # type: ignore[arg-type]
        set_a=block("set_a"),  # type: ignore[arg-type]
        set_b=block("set_b"),  # type: ignore[arg-type]
        placed_me=block("placed_me"),  # type: ignore[arg-type]
        placed_opp=block("placed_opp"),  # type: ignore[arg-type]
        markers=tuple(0 if m else 1 if t else CENTRE for m, t in zip(mine, theirs, strict=True)),
        spent_me=tuple(bool(x) for x in block("spent_me")),  # type: ignore[arg-type]
        spent_opp=tuple(bool(x) for x in block("spent_opp")),  # type: ignore[arg-type]
        hand_size=sizes[0],
        opp_hand_size=sizes[1],
        draw_pile_size=sizes[2],
        round=ints[OFFSETS["round"].start],
        i_started=bool(ints[OFFSETS["i_started"].start]),
        unseen=block("unseen"),  # type: ignore[arg-type]
    )
