"""The Hanamikoji rules as readable Python: the executable specification of the game.

Pure Python, no RL library.  A game is an immutable :class:`State`; the
functions here generate legal moves, apply them and score rounds.  Chance is
explicit, as in OpenSpiel: :func:`new_game` and :func:`next_round` take the
shuffled deck of the round, so the rules never draw a random number
(:func:`shuffled_deck` makes one from a caller's ``np.random.Generator``).

The games themselves are played by the compiled engine of record,
:mod:`hanamikoji_env.engine`, which offers this module's API on the same
:class:`State`: every hand-worked rule test runs against both, and
:func:`hanamikoji_env.differential.compare_with_spec` proves them identical
state by state over many random games.  Bots and renders read States.

A deck is 21 geisha ids in this order:
``[removed, player 0's 6 cards, player 1's 6 cards, draw pile top first (8)]``
(a :class:`Variant` deals fewer: ``[removed, hand 0, hand 1, pile]`` of its sizes).

Rules (stated in docs/rules.md, ``hanamikoji-docs rules``) and where they live:

- deal: one card removed unseen, 6 each, 8 in the draw pile -> :func:`new_game`,
  :func:`next_round`;
- automatic draw at the start of every turn -> :func:`_start_turn`;
- the four tokens, each once per round -> :func:`legal_mask`, :func:`apply`;
- Gift and Competition answered by the opponent -> :func:`_answer_gift`,
  :func:`_answer_competition`;
- Secret revealed and scored, Trade-off never scored, ties leave the marker
  where it is, markers persist across rounds -> :func:`_score_round`;
- 11+ charm points wins (and beats 4+ geishas), else 4+ geishas wins, optional
  round limit with its tie-break -> :func:`_winner`;
- the starting player alternates every round, full reshuffle ->
  :func:`next_round` (the caller passes a fresh deck);
- the mini variant (three geishas, Secret and Gift, one round) and every other size of the game
  -> :class:`Variant`, :data:`VARIANTS` (data the functions above read from ``State.variant``);
- +1 / -1 for the winner and loser, 0 / 0 for a draw -> :data:`RETURNS`;
- the lead that markers give a seat (search values, training's shaping) ->
  :func:`lead`.

:data:`RULES_VERSION` names these rules: it changes only when a game played
from the same decks and moves could end differently (records carry it).
The checks of every public entry point's arguments live here too
(:func:`check_round_limit`, :func:`check_seed`, :func:`validate_deck`), so
every env, the batch engine and the OpenSpiel game accept and refuse the
same inputs with the same messages.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import IntEnum
from typing import NamedTuple

import numpy as np

from hanamikoji_env.actions import (
    CARD_BASE,
    COMP_TAKE_A,
    COMP_TAKE_B,
    COMPETITION,
    GIFT,
    GIFT_TAKE_BASE,
    NUM_ACTIONS,
    SECRET,
    SPLIT_BASE,
    SPLITS,
    TOKEN_SIZES,
    TRADEOFF,
    check_action,
)
from hanamikoji_env.excerpt import short

RULES_VERSION = 1
"""The version of the rules this module specifies (see the module docstring)."""

VALUES = (2, 2, 2, 3, 3, 4, 5)
"""Charm value of each geisha, which is also the number of her item cards."""
NUM_GEISHAS = 7
NUM_CARDS = 21
HAND_SIZE = 6
DRAW_PILE_SIZE = 8
NUM_REMOVED = NUM_CARDS - 2 * HAND_SIZE - DRAW_PILE_SIZE
"""Cards removed unseen at each deal (1)."""
TURNS_PER_ROUND = 8
WIN_POINTS = 11
WIN_GEISHAS = 4
CENTRE = -1
DRAW = -1
"""``State.winner`` of a drawn game (only possible with a round limit)."""
RETURNS: dict[int, tuple[float, float]] = {0: (1.0, -1.0), 1: (-1.0, 1.0), DRAW: (0.0, 0.0)}
"""Final rewards by seat for each ``State.winner``."""
MAX_ROUND_LIMIT = 1000
"""The largest ``round_limit`` any entry point accepts (real games end within a dozen rounds)."""

Counts = tuple[int, int, int, int, int, int, int]
"""Cards per geisha, a 7-tuple of counts."""

EMPTY: Counts = (0, 0, 0, 0, 0, 0, 0)
FULL_DECK: tuple[int, ...] = tuple(g for g in range(NUM_GEISHAS) for _ in range(VALUES[g]))


# -------------------------------------------------------------- variants ---


class Variant(NamedTuple):
    """A size of the game, as data: which geishas and tokens are in play, the goals, the round cap.

    Every variant keeps the full game's geisha ids, action ids and array widths: a geisha not in
    play has value 0 (no cards, her marker never moves) and a token not in play starts every
    round spent.  The deal follows from the tokens: each player draws once a turn and uses
    every card (hand = the tokens' cards - the turns), the pile holds both players' draws, and
    the rest of the cards are removed unseen.
    """

    name: str
    values: Counts
    """Charm value (= item cards) of each of the 7 geishas; 0 for a geisha not in play."""
    tokens: tuple[int, ...]
    """The action tokens in play, ascending token ids."""
    win_points: int
    win_geishas: int
    round_limit: int | None
    """The variant's own round cap (None: play until somebody wins); it overrides the option."""
    index: int
    """The variant's id in the engine's rows (:data:`VARIANTS` order)."""

    @property
    def num_cards(self) -> int:
        return sum(self.values)

    @property
    def turns_per_round(self) -> int:
        return 2 * len(self.tokens)

    @property
    def hand_size(self) -> int:
        return sum(TOKEN_SIZES[t] for t in self.tokens) - len(self.tokens)

    @property
    def draw_pile_size(self) -> int:
        return self.turns_per_round

    @property
    def num_removed(self) -> int:
        return self.num_cards - 2 * self.hand_size - self.draw_pile_size

    @property
    def full_deck(self) -> tuple[int, ...]:
        return tuple(g for g in range(NUM_GEISHAS) for _ in range(self.values[g]))

    @property
    def geishas(self) -> tuple[int, ...]:
        """The ids of the geishas in play."""
        return tuple(g for g in range(NUM_GEISHAS) if self.values[g])

    def spent_at_deal(self) -> tuple[bool, bool, bool, bool]:
        """Each token's spent flag when a round is dealt: the tokens not in play stay spent."""
        return tuple(t not in self.tokens for t in range(len(TOKEN_SIZES)))  # type: ignore[return-value]


FULL = Variant("full", VALUES, (SECRET, TRADEOFF, GIFT, COMPETITION), WIN_POINTS, WIN_GEISHAS, None, 0)
"""The official game: the default everywhere."""
MINI = Variant("mini", (2, 0, 0, 3, 0, 4, 0), (SECRET, GIFT), 5, 2, 1, 1)
"""A variant small enough to solve exactly: three geishas of the full game (ids 0, 3, 5: values
2, 3, 4, so 9 cards), Secret and Gift only, one round.  One card removed unseen, 2 dealt to each
player, 4 in the pile; 4 turns.  5 charm points or 2 geishas win, else more points, then more
geishas, else a draw."""
VARIANTS: dict[str, Variant] = {v.name: v for v in (FULL, MINI)}
"""Every variant by name, in :attr:`Variant.index` order."""
assert [v.index for v in VARIANTS.values()] == list(range(len(VARIANTS)))
assert all(v.num_removed == 1 and v.draw_pile_size <= DRAW_PILE_SIZE for v in VARIANTS.values())


def check_variant(variant: object) -> Variant:
    """``variant`` (a name or a :class:`Variant`) as a :class:`Variant`; ``ValueError`` naming the
    known ones otherwise."""
    if isinstance(variant, Variant) and VARIANTS.get(variant.name) == variant:
        return variant
    if isinstance(variant, str) and variant in VARIANTS:
        return VARIANTS[variant]
    shown = variant if isinstance(variant, str) and len(variant) <= 40 else type(variant).__name__
    raise ValueError(f"unknown variant {short(shown)}: expected one of {', '.join(VARIANTS)}")


class Phase(IntEnum):
    """Whose decision it is and what kind; ROUND_OVER is a chance node (deal next)."""

    TOKEN = 0
    SELECT = 1
    SPLIT = 2
    GIFT_ANSWER = 3
    COMP_ANSWER = 4
    ROUND_OVER = 5
    GAME_OVER = 6


class RoundSummary(NamedTuple):
    """Public result of one scoring, indexed by seat."""

    round: int
    markers: tuple[int, ...]
    """Owner of each geisha's favor marker after the scoring: 0, 1 or -1 (centre)."""
    points: tuple[int, int]
    geishas: tuple[int, int]
    secrets: tuple[int, int]
    """The geisha of each player's revealed Secret card."""
    placed: tuple[Counts, Counts]
    """Cards on each side after the Secrets were added."""

    def as_dict(self) -> dict[str, object]:
        return {
            "round": self.round,
            "markers": list(self.markers),
            "points": list(self.points),
            "geishas": list(self.geishas),
            "secrets": list(self.secrets),
            "placed": [list(p) for p in self.placed],
        }


class State(NamedTuple):
    """The full game state.  Immutable: every move returns a new one.

    Seats are 0 and 1; per-player fields are pairs indexed by seat.
    """

    round: int
    """Round number, from 1."""
    starter: int
    """Seat that started this round."""
    turn: int
    """Turns completed this round, 0..8."""
    current: int
    """Seat whose turn it is."""
    to_move: int
    """Seat that makes the next decision (the opponent answers Gift/Competition)."""
    phase: Phase
    hands: tuple[Counts, Counts]
    """Cards in each hand (a card being selected is still in the hand)."""
    secrets: tuple[int, int]
    """Geisha under each Secret token, -1 if none."""
    tradeoffs: tuple[Counts, Counts]
    placed: tuple[Counts, Counts]
    """Cards on each player's side of the geishas."""
    markers: tuple[int, ...]
    """Favor marker owner per geisha: 0, 1 or -1 (centre)."""
    spent: tuple[tuple[bool, bool, bool, bool], tuple[bool, bool, bool, bool]]
    token: int
    """Token being played this turn, -1 in the token phase."""
    selection: tuple[int, ...]
    """Geishas selected so far (non-decreasing) in the select phase."""
    offer: tuple[int, ...]
    """Cards on the table: the 3 Gift cards; the 4 sorted Competition cards
    (split phase); or set A then set B (Competition answer phase)."""
    draw_pile: tuple[int, ...]
    """Top first."""
    removed: int
    winner: int | None
    """Winning seat, :data:`DRAW`, or None while the game goes on."""
    round_limit: int | None
    last_round: RoundSummary | None
    variant: Variant = FULL
    """The size of the game (:data:`FULL` unless a variant was asked for)."""


# ---------------------------------------------------------------- decks ---


def shuffled_deck(rng: np.random.Generator, variant: Variant = FULL) -> tuple[int, ...]:
    """A uniformly shuffled deck of ``variant`` drawn from ``rng``."""
    return tuple(int(g) for g in rng.permutation(variant.full_deck))


def validate_deck(deck: object, variant: Variant = FULL) -> tuple[int, ...]:
    """Return ``deck`` as a tuple of ints, or raise ``ValueError`` saying what is wrong."""
    n = variant.num_cards
    if isinstance(deck, (str, bytes)) or not isinstance(deck, (Sequence, np.ndarray)):
        raise ValueError(f"a deck must be a sequence of {n} geisha ids, got {type(deck).__name__}")
    if len(deck) != n:
        raise ValueError(f"a deck must hold {n} cards, got {len(deck)}")
    cards = []
    for i, g in enumerate(deck):
        if isinstance(g, bool) or not isinstance(g, (int, np.integer)) or not 0 <= g < NUM_GEISHAS:
            raise ValueError(f"deck[{i}] = {short(g)} is not a geisha id (an int in 0..6)")
        cards.append(int(g))
    counts = tuple(cards.count(g) for g in range(NUM_GEISHAS))
    if counts != variant.values:
        raise ValueError(
            f"a deck must hold {list(variant.values)} cards of geishas 0..6, got counts {list(counts)}"
        )
    return tuple(cards)


def check_round_limit(round_limit: object) -> int | None:
    """``round_limit`` as an int (or None, the official game); ``ValueError`` unless it is None
    or an int (numpy's too) in [1, :data:`MAX_ROUND_LIMIT`]."""
    if round_limit is None:
        return None
    if isinstance(round_limit, (bool, np.bool_)) or not isinstance(round_limit, (int, np.integer)):
        raise ValueError(
            f"round_limit must be None or an int in [1, {MAX_ROUND_LIMIT}], got {short(round_limit)}"
        )
    if not 1 <= round_limit <= MAX_ROUND_LIMIT:
        raise ValueError(
            f"round_limit must be None or an int in [1, {MAX_ROUND_LIMIT}], got {short(round_limit)}"
        )
    return int(round_limit)


def check_seed(seed: object) -> int | None:
    """``seed`` as an int (or None: fresh entropy); ``ValueError`` unless it is None or a
    non-negative int (numpy's too)."""
    if seed is None:
        return None
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be None or a non-negative int, got {short(seed)}")
    return int(seed)


# ---------------------------------------------------------------- setup ---


def variant_round_limit(round_limit: object, variant: Variant) -> int | None:
    """The round limit a game of ``variant`` plays under: the option, checked, unless the variant
    has its own (then the option must be None or the same)."""
    round_limit = check_round_limit(round_limit)
    if variant.round_limit is None or round_limit in (None, variant.round_limit):
        return variant.round_limit if variant.round_limit is not None else round_limit
    raise ValueError(
        f"the {variant.name} variant plays {variant.round_limit} round(s); round_limit={round_limit} "
        "cannot change it (leave it None)"
    )


def new_game(deck: Sequence[int], round_limit: int | None = None, variant: Variant = FULL) -> State:
    """The first round of a game of ``variant``, dealt from ``deck``; seat 0 starts."""
    variant = check_variant(variant)
    round_limit = variant_round_limit(round_limit, variant)
    blank = State(
        round=0,
        starter=1,
        turn=0,
        current=0,
        to_move=0,
        phase=Phase.ROUND_OVER,
        hands=(EMPTY, EMPTY),
        secrets=(-1, -1),
        tradeoffs=(EMPTY, EMPTY),
        placed=(EMPTY, EMPTY),
        markers=(CENTRE,) * NUM_GEISHAS,
        spent=((False,) * 4, (False,) * 4),  # type: ignore[arg-type]
        token=-1,
        selection=(),
        offer=(),
        draw_pile=(),
        removed=-1,
        winner=None,
        round_limit=round_limit,
        last_round=None,
        variant=variant,
    )
    return next_round(blank, deck)


def next_round(state: State, deck: Sequence[int]) -> State:
    """Deal the next round from ``deck``: markers stay, the other player starts."""
    if state.phase != Phase.ROUND_OVER:
        raise ValueError(f"next_round needs a state whose round is over, not phase {state.phase.name}")
    v = state.variant
    deck = validate_deck(deck, v)
    starter = 1 - state.starter
    hand = v.hand_size
    dealt = state._replace(
        round=state.round + 1,
        starter=starter,
        turn=0,
        hands=(count_cards(deck[1 : 1 + hand]), count_cards(deck[1 + hand : 1 + 2 * hand])),
        secrets=(-1, -1),
        tradeoffs=(EMPTY, EMPTY),
        placed=(EMPTY, EMPTY),
        spent=(v.spent_at_deal(), v.spent_at_deal()),
        token=-1,
        selection=(),
        offer=(),
        draw_pile=deck[1 + 2 * hand :],
        removed=deck[0],
    )
    return _start_turn(dealt, starter)


def count_cards(cards: Sequence[int]) -> Counts:
    """Cards per geisha of a list of geisha ids."""
    c = [0] * NUM_GEISHAS
    for g in cards:
        c[g] += 1
    return tuple(c)  # type: ignore[return-value]


def cards_of(counts: Sequence[int]) -> tuple[int, ...]:
    """The sorted geisha ids of a 7-vector of counts (the inverse of :func:`count_cards`)."""
    return tuple(g for g in range(NUM_GEISHAS) for _ in range(counts[g]))


def _add(counts: Counts, cards: Sequence[int], sign: int = 1) -> Counts:
    c = list(counts)
    for g in cards:
        c[g] += sign
    return tuple(c)  # type: ignore[return-value]


def _set(pair: tuple, seat: int, value: object) -> tuple:
    return (value, pair[1]) if seat == 0 else (pair[0], value)


def _start_turn(state: State, seat: int) -> State:
    """Draw the top card for ``seat``, then it chooses a token."""
    top = state.draw_pile[0]
    return state._replace(
        current=seat,
        to_move=seat,
        phase=Phase.TOKEN,
        hands=_set(state.hands, seat, _add(state.hands[seat], (top,))),
        draw_pile=state.draw_pile[1:],
    )


# ----------------------------------------------------------- legal moves ---


def legal_mask(state: State) -> tuple[int, ...]:
    """A 23-tuple of 0/1: which action ids are legal now (all 0 when nobody moves)."""
    m = [0] * NUM_ACTIONS
    phase = state.phase
    if phase == Phase.TOKEN:
        for t, used in enumerate(state.spent[state.current]):
            if not used:
                m[t] = 1
    elif phase == Phase.SELECT:
        sel = state.selection
        avail = list(state.hands[state.current])
        for g in sel:
            avail[g] -= 1
        need = TOKEN_SIZES[state.token] - len(sel)
        suffix = 0
        lo = sel[-1] if sel else 0
        for g in range(NUM_GEISHAS - 1, lo - 1, -1):
            suffix += avail[g]
            if avail[g] and suffix >= need:
                m[CARD_BASE + g] = 1
    elif phase == Phase.SPLIT:
        seen = []
        for i, key in enumerate(_split_keys(state.offer)):
            if key not in seen:
                seen.append(key)
                m[SPLIT_BASE + i] = 1
    elif phase == Phase.GIFT_ANSWER:
        for g in state.offer:
            m[GIFT_TAKE_BASE + g] = 1
    elif phase == Phase.COMP_ANSWER:
        m[COMP_TAKE_A] = 1
        if state.offer[:2] != state.offer[2:]:
            m[COMP_TAKE_B] = 1
    return tuple(m)


def legal_actions(state: State) -> list[int]:
    """The legal action ids, ascending."""
    return [a for a, ok in enumerate(legal_mask(state)) if ok]


def _split_keys(cards: tuple[int, ...]) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """For each split, the unordered pair of sets it makes (as a sorted pair)."""
    keys = []
    for i0, i1, i2, i3 in SPLITS:
        a = (cards[i0], cards[i1])
        b = (cards[i2], cards[i3])
        keys.append((a, b) if a <= b else (b, a))
    return keys


# ----------------------------------------------------------------- apply ---


def apply(state: State, action: int) -> State:
    """The state after ``action``.  Raises ``ValueError`` if it is not legal."""
    action = check_action(action, f"seat {state.to_move}")
    if not legal_mask(state)[action]:
        raise ValueError(
            f"illegal action {action} in phase {state.phase.name} for seat {state.to_move}; "
            f"legal: {legal_actions(state)}"
        )
    return apply_unchecked(state, action)


def apply_unchecked(state: State, action: int) -> State:
    """:func:`apply` for a caller that already checked ``legal_mask(state)[action]``."""
    phase = state.phase
    seat = state.current
    if phase == Phase.TOKEN:
        return state._replace(phase=Phase.SELECT, token=action, selection=())
    if phase == Phase.SELECT:
        sel = state.selection + (action - CARD_BASE,)
        if len(sel) < TOKEN_SIZES[state.token]:
            return state._replace(selection=sel)
        return _play_token(state, seat, sel)
    if phase == Phase.SPLIT:
        c = state.offer
        i0, i1, i2, i3 = SPLITS[action - SPLIT_BASE]
        return state._replace(phase=Phase.COMP_ANSWER, to_move=1 - seat, offer=(c[i0], c[i1], c[i2], c[i3]))
    if phase == Phase.GIFT_ANSWER:
        return _answer_gift(state, seat, action - GIFT_TAKE_BASE)
    return _answer_competition(state, seat, take_a=action == COMP_TAKE_A)


def _play_token(state: State, seat: int, sel: tuple[int, ...]) -> State:
    hands = _set(state.hands, seat, _add(state.hands[seat], sel, -1))
    token = state.token
    if token == SECRET:
        state = state._replace(hands=hands, secrets=_set(state.secrets, seat, sel[0]))
        return _end_turn(state, seat)
    if token == TRADEOFF:
        tradeoffs = _set(state.tradeoffs, seat, _add(state.tradeoffs[seat], sel))
        return _end_turn(state._replace(hands=hands, tradeoffs=tradeoffs), seat)
    if token == GIFT:
        return state._replace(phase=Phase.GIFT_ANSWER, to_move=1 - seat, hands=hands, selection=(), offer=sel)
    assert token == COMPETITION
    return state._replace(phase=Phase.SPLIT, hands=hands, selection=(), offer=sel)


def _answer_gift(state: State, seat: int, taken: int) -> State:
    rest = list(state.offer)
    rest.remove(taken)
    return _end_turn(_place(state, seat, own=rest, other=(taken,)), seat)


def _answer_competition(state: State, seat: int, take_a: bool) -> State:
    a, b = state.offer[:2], state.offer[2:]
    own, other = (b, a) if take_a else (a, b)
    return _end_turn(_place(state, seat, own=own, other=other), seat)


def _place(state: State, seat: int, own: Sequence[int], other: Sequence[int]) -> State:
    """Put ``own`` on ``seat``'s side and ``other`` on the opponent's side."""
    placed = list(state.placed)
    placed[seat] = _add(placed[seat], own)
    placed[1 - seat] = _add(placed[1 - seat], other)
    return state._replace(placed=tuple(placed))


def _end_turn(state: State, seat: int) -> State:
    spent = list(state.spent[seat])
    spent[state.token] = True
    state = state._replace(
        spent=_set(state.spent, seat, tuple(spent)),
        token=-1,
        selection=(),
        offer=(),
        turn=state.turn + 1,
    )
    if state.turn == state.variant.turns_per_round:
        return _score_round(state)
    return _start_turn(state, 1 - seat)


# --------------------------------------------------------------- scoring ---


def _score_round(state: State) -> State:
    """Reveal the Secrets, move markers on strict majorities, check for a winner."""
    placed = tuple(
        _add(state.placed[s], (state.secrets[s],)) for s in (0, 1)
    )  # Trade-off cards are never added
    markers = tuple(
        0 if placed[0][g] > placed[1][g] else 1 if placed[1][g] > placed[0][g] else owner
        for g, owner in enumerate(state.markers)
    )
    points, geishas = score(markers, state.variant)
    summary = RoundSummary(state.round, markers, points, geishas, state.secrets, placed)  # type: ignore[arg-type]
    winner = _winner(points, geishas, state.round, state.round_limit, state.variant)
    return state._replace(
        phase=Phase.ROUND_OVER if winner is None else Phase.GAME_OVER,
        placed=placed,
        secrets=(-1, -1),
        markers=markers,
        winner=winner,
        last_round=summary,
    )


def score(markers: Sequence[int], variant: Variant = FULL) -> tuple[tuple[int, int], tuple[int, int]]:
    """Charm points and geisha counts of seats 0 and 1 for the given markers."""
    points = [0, 0]
    geishas = [0, 0]
    for g, owner in enumerate(markers):
        if owner != CENTRE:
            points[owner] += variant.values[g]
            geishas[owner] += 1
    return (points[0], points[1]), (geishas[0], geishas[1])


def _winner(
    points: tuple[int, int], geishas: tuple[int, int], rnd: int, round_limit: int | None, variant: Variant
) -> int | None:
    for s in (0, 1):
        if points[s] >= variant.win_points:  # both cannot: more than half the points in all
            return s
    for s in (0, 1):
        if geishas[s] >= variant.win_geishas:  # both cannot: more than half the geishas
            return s
    if round_limit is not None and rnd >= round_limit:
        if points[0] != points[1]:
            return 0 if points[0] > points[1] else 1
        if geishas[0] != geishas[1]:
            return 0 if geishas[0] > geishas[1] else 1
        return DRAW
    return None


# --------------------------------------------------------------- helpers ---


def is_terminal(state: State) -> bool:
    return state.phase == Phase.GAME_OVER


def returns(state: State) -> tuple[float, float]:
    """Final rewards by seat: +1 / -1 for a win, 0 / 0 for a draw or an unfinished game."""
    return (0.0, 0.0) if state.winner is None else RETURNS[state.winner]


def lead(points: float, geishas: float) -> float:
    """How far ahead the markers put a seat: its charm-point lead over the opponent as a share
    of :data:`WIN_POINTS`, plus its geisha lead as a share of :data:`WIN_GEISHAS` (numbers or
    numpy arrays; numba compiles it for the search kernels)."""
    return points / WIN_POINTS + geishas / WIN_GEISHAS


def card_totals(state: State) -> Counts:
    """Every card of the round, wherever it is, per geisha (always the variant's values)."""
    total = _add(EMPTY, state.draw_pile)
    if state.removed >= 0:
        total = _add(total, (state.removed,))
    total = _add(total, state.offer)
    for s in (0, 1):
        for counts in (state.hands[s], state.tradeoffs[s], state.placed[s]):
            total = tuple(t + c for t, c in zip(total, counts, strict=True))  # type: ignore[assignment]
        if state.secrets[s] >= 0:
            total = _add(total, (state.secrets[s],))
    return total
