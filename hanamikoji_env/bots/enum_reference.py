"""EnumBot's algorithm as readable Python on the rules of record: the executable specification
of :mod:`hanamikoji_env.bots.enum`.

:func:`values` is every candidate's mean value at one decision, step by step as the
module docstring of :mod:`hanamikoji_env.bots.enum` states it, on
:mod:`hanamikoji_env.rules` instead of the compiled engine, and with the same random
numbers (the decision's key expanded by SplitMix64: the shuffles of sampled deals, then
each deal's playout uniforms); :func:`action` is the move the compiled bot must play.
``tests/test_enum.py`` checks the two identical at every kind of decision.  Where every
deal fits the budget and the round is scored within the turn no random number matters,
and :func:`exact_values` says so.  It is no player of its own (about a thousand times
slower than the compiled bot).
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from hanamikoji_env import rules
from hanamikoji_env.actions import (
    CARD_BASE,
    COMPETITION,
    GIFT,
    NUM_TOKENS,
    SECRET,
    SPLITS,
    TOKEN_SIZES,
    TRADEOFF,
)
from hanamikoji_env.bots.enum import DEFAULT_BUDGET, DEFAULT_SAMPLES
from hanamikoji_env.engine import state_from_row
from hanamikoji_env.infoset import deals, determinized_rows
from hanamikoji_env.observation import decode, turns_played
from hanamikoji_env.rules import DRAW, NUM_GEISHAS, VALUES, Phase, State
from hanamikoji_env.simulate import PLAYOUT_STEPS


def candidates(vector: np.ndarray, mask: np.ndarray) -> list[tuple[int, ...]]:
    """Every move the bot weighs, as action sequences, in its enumeration order: at a token
    decision each legal token (id order) with each multiset of its size from the hand
    (lexicographic); at a card selection the token's cards still to choose, each multiset that
    continues the selection in order; elsewhere each legal action (id order)."""
    info = decode(vector)
    if info.phase == Phase.SELECT:
        chosen = rules.cards_of(info.selection)
        rest = tuple(h - c for h, c in zip(info.hand, info.selection, strict=True))
        size = TOKEN_SIZES[info.token] - len(chosen)
        start = chosen[-1] if chosen else 0
        return [tuple(CARD_BASE + g for g in cards) for cards in _multisets(rest, size, start)]
    if info.phase != Phase.TOKEN:
        return [(a,) for a in range(len(mask)) if mask[a]]
    out = []
    for token in range(NUM_TOKENS):
        if mask[token]:
            out += [
                (token, *(CARD_BASE + g for g in cards))
                for cards in _multisets(info.hand, TOKEN_SIZES[token])
            ]
    return out


def _multisets(hand: tuple[int, ...], size: int, start: int = 0) -> Iterator[tuple[int, ...]]:
    """The sorted ``size``-card multisets of ``hand`` (counts per geisha), lexicographically."""
    if size == 0:
        yield ()
        return
    for g in range(start, NUM_GEISHAS):
        if hand[g]:
            rest = list(hand)
            rest[g] -= 1
            for tail in _multisets(tuple(rest), size - 1, g):
                yield (g, *tail)


def all_deals(unseen: tuple[int, ...]) -> Iterator[list[int]]:
    """Every distinct order of the unseen cards, lexicographically: each deal once."""

    def extend(counts: list[int], prefix: list[int]) -> Iterator[list[int]]:
        if not any(counts):
            yield prefix
        for g in range(NUM_GEISHAS):
            if counts[g]:
                counts[g] -= 1
                yield from extend(counts, [*prefix, g])
                counts[g] += 1

    yield from extend(list(unseen), [])


def value(state: State) -> float:
    """The bot's (seat 0's) value of a scored round: +1 / -1 for the game won or lost, 0 for a
    drawn game, else half the markers' lead."""
    if state.winner is not None:
        return 0.0 if state.winner == DRAW else (1.0 if state.winner == 0 else -1.0)
    points = sum(VALUES[g] * (1 if m == 0 else -1) for g, m in enumerate(state.markers) if m in (0, 1))
    geishas = sum(1 if m == 0 else -1 for m in state.markers if m in (0, 1))
    return 0.5 * min(max(rules.lead(points, geishas), -1.0), 1.0)


def turn_value(state: State, uniforms: list[float]) -> float:
    """The value after the bot's move with the rest of the turn best-responded (the bot's split
    the best for it, the opponent's answer the worst for it), then played out with
    ``uniforms`` if the round goes on."""
    if state.phase in (Phase.GIFT_ANSWER, Phase.COMP_ANSWER, Phase.SPLIT):
        answers = [turn_value(rules.apply(state, a), uniforms) for a in rules.legal_actions(state)]
        return max(answers) if state.to_move == 0 else min(answers)
    return value(playout(state, uniforms))


MASK64 = (1 << 64) - 1
_GOLDEN, _MIX1, _MIX2 = 0x9E3779B97F4A7C15, 0xBF58476D1CE4E5B9, 0x94D049BB133111EB


class SplitMix64:
    """The compiled bots' random stream: a 64-bit key, uniforms in [0, 1) with 53 bits."""

    def __init__(self, key: int) -> None:
        self.state = key & MASK64

    def uniform(self) -> float:
        self.state = (self.state + _GOLDEN) & MASK64
        z = self.state
        z = ((z ^ (z >> 30)) * _MIX1) & MASK64
        z = ((z ^ (z >> 27)) * _MIX2) & MASK64
        z ^= z >> 31
        return (z >> 11) * (1.0 / 9007199254740992.0)


def playout(state: State, uniforms: list[float]) -> State:
    """The round played to its scoring: at the k-th decision the legal action at ``uniforms[k]``
    (the ``int(u * count)``-th in id order, as the engine's ``pick``)."""
    k = 0
    while state.phase < Phase.ROUND_OVER:
        legal = rules.legal_actions(state)
        state = rules.apply(state, legal[int(uniforms[k] * len(legal))])
        k += 1
    return state


LEAVES_OF = {SECRET: 1, TRADEOFF: 1, GIFT: TOKEN_SIZES[GIFT], COMPETITION: len(SPLITS) * 2}
"""The most positions a plan of each token values in one deal: the turn ends, or each of the
three Gift answers, or each split with each of the two Competition answers."""


def leaves_per_deal(vector: np.ndarray, moves: list[tuple[int, ...]]) -> int:
    """How many positions one deal values: by token for plans, two per split, one per answer."""
    info = decode(vector)
    if info.phase == Phase.TOKEN:
        return sum(LEAVES_OF[m[0]] for m in moves)
    if info.phase == Phase.SELECT:
        return len(moves) * LEAVES_OF[info.token]
    return len(moves) * (2 if info.phase == Phase.SPLIT else 1)


def values(vector: np.ndarray, mask: np.ndarray, key: int, samples: int = DEFAULT_SAMPLES,
           budget: int = DEFAULT_BUDGET) -> list[float]:  # fmt: skip
    """Each candidate's mean value (the compiled bot's steps 2 to 4) with the random stream
    of ``key``: every deal where they fit, else ``min(samples, budget // leaves)`` drawn ones."""
    moves = candidates(vector, mask)
    info = decode(vector)
    allowed = max(1, min(samples, budget // leaves_per_deal(vector, moves)))
    stream = SplitMix64(key)
    pool = list(rules.cards_of(info.unseen))
    if deals(np.array(info.unseen)) <= allowed:
        orders: Iterator[list[int]] = all_deals(info.unseen)
    else:
        orders = (_shuffled(pool, stream) for _ in range(allowed))
    totals = [0.0] * len(moves)
    count = 0
    for order in orders:
        row = determinized_rows(vector, np.random.default_rng(0), 1, known=order)[0]  # every card placed
        state = state_from_row(row, None, None)
        uniforms = [stream.uniform() for _ in range(PLAYOUT_STEPS)]
        for c, move in enumerate(moves):
            after = state
            for a in move:
                after = rules.apply(after, a)
            totals[c] += turn_value(after, uniforms)
        count += 1
    return [t / count for t in totals]


def _shuffled(pool: list[int], stream: SplitMix64) -> list[int]:
    """``pool`` (sorted) shuffled by Fisher-Yates from the end, with ``stream``."""
    order = list(pool)
    for j in range(len(order) - 1, 0, -1):
        r = int(stream.uniform() * (j + 1))
        order[j], order[r] = order[r], order[j]
    return order


def action(vector: np.ndarray, mask: np.ndarray, key: int, samples: int = DEFAULT_SAMPLES,
           budget: int = DEFAULT_BUDGET) -> tuple[int, ...]:  # fmt: skip
    """The candidate the compiled bot plays (the first of the best within 1e-12; the only one
    when there is one, valued or not): its actions, of which it plays the first now."""
    moves = candidates(vector, mask)
    if len(moves) == 1:
        return moves[0]
    got = values(vector, mask, key, samples, budget)
    top = max(got)
    return next(m for m, v in zip(moves, got, strict=True) if v >= top - 1e-12)


def exact_values(vector: np.ndarray, mask: np.ndarray, samples: int = DEFAULT_SAMPLES,
                 budget: int = DEFAULT_BUDGET) -> list[float] | None:  # fmt: skip
    """:func:`values` where no random number matters (every deal fits the budget and the turn
    is the round's last), else None."""
    info = decode(vector)
    moves = candidates(vector, mask)
    if deals(np.array(info.unseen)) > max(1, min(samples, budget // leaves_per_deal(vector, moves))):
        return None
    if turns_played(np.asarray(vector, dtype=np.float32)) != rules.TURNS_PER_ROUND - 1:
        return None  # the round goes on after this turn: its playouts draw random numbers
    return values(vector, mask, 0, samples, budget)
