"""The heuristic as readable numpy: the test reference of :mod:`hanamikoji_env.bots.heuristic`.

:class:`~hanamikoji_env.bots.heuristic.HeuristicBot` plays through compiled
kernels; this module is the same strategy written for reading, like
:mod:`hanamikoji_env.rules` for the engine.  It is no player of its own (no
spec names it; its :class:`HeuristicVariant` is): ``tests/test_heuristic.py`` proves the kernels make its
decisions over 100,000 positions.

For every way to play its turn (token, cards, split) the bot scores the
position that results, assuming the opponent answers a Gift or Competition
with the choice that is worst for the bot.  A position is scored by
:func:`evaluate`: per geisha, an expected final margin from the cards already
placed, the bot's Secret, the cards left in its hand (weighted by how its
unspent tokens will distribute them), and the cards it has not seen (weighted
by the share of them the opponent holds or will draw, and how the opponent's
unspent tokens distribute them); a tie leans to the marker's owner.  The
margin becomes a probability of holding the geisha, weighted by charm plus a
bonus for the geisha count.  So it values majorities and charm points, hides
a card it needs with Secret, trades away cards that cannot matter, offers
Gifts and Competitions whose every answer is good for it, answers offers by
the value gained, and tracks the unseen cards.

:class:`HeuristicVariant` is this strategy with other evaluation weights: a player
(``heuristic-weights:bonus=B,sharpness=S``) of the held-out pool.
"""

from __future__ import annotations

import itertools
from functools import lru_cache

import numpy as np

from hanamikoji_env.actions import (
    CARD_BASE,
    COMP_TAKE_A,
    COMP_TAKE_B,
    COMPETITION,
    GIFT,
    GIFT_TAKE_BASE,
    SECRET,
    SPLIT_BASE,
    SPLITS,
    TOKEN_SIZES,
    TRADEOFF,
)
from hanamikoji_env.bots.base import Bot, Option
from hanamikoji_env.bots.heuristic import SHARPNESS, TIE_LEAN, TIE_TOL, WEIGHTS
from hanamikoji_env.observation import InfoSet, decode
from hanamikoji_env.rules import VALUES, Phase, cards_of


def net_share(tokens: list[int]) -> float:
    """Expected (to me - to the opponent) per card used by ``tokens``."""
    cards = sum(TOKEN_SIZES[t] for t in tokens)
    if not cards:
        return 0.0
    return ((SECRET in tokens) * 1.0 + (GIFT in tokens) * 1.0) / cards


class Position:
    """The constant parts of the evaluation for one decision."""

    def __init__(self, info: InfoSet, weights: np.ndarray = WEIGHTS, sharpness: float = SHARPNESS) -> None:
        self.info = info
        self.weights, self.sharpness = weights, sharpness
        """The evaluation's weights per geisha and how sharply a margin becomes a probability
        (the heuristic's, unless a :class:`HeuristicVariant` asks for others)."""
        unseen = np.array(info.unseen, dtype=np.float64)
        total = max(unseen.sum(), 1.0)
        opp_live = [t for t in range(4) if not info.spent_opp[t]]
        answering = info.phase in (Phase.GIFT_ANSWER, Phase.COMP_ANSWER)
        if answering:  # the opponent's current token is in play, not in the future
            opp_live = [
                t for t in opp_live if t != (GIFT if info.phase == Phase.GIFT_ANSWER else COMPETITION)
            ]
        # its hand and future draws are exactly the cards its unspent tokens will use
        opp_future_cards = min(sum(TOKEN_SIZES[t] for t in opp_live), total)
        # the opponent's expected share of each unseen geisha, and its placed (hidden) Secret
        opp_cards = unseen * (opp_future_cards / total)
        opp_secret = unseen / total if info.spent_opp[SECRET] else 0.0
        self.base = (
            np.array(info.placed_me, dtype=np.float64)
            - np.array(info.placed_opp, dtype=np.float64)
            - opp_cards * net_share(opp_live)
            - opp_secret
        )
        markers = np.array(info.markers)
        self.lean = np.where(markers == 0, TIE_LEAN, np.where(markers == 1, -TIE_LEAN, 0.0))
        if info.secret >= 0:
            self.base[info.secret] += 1.0
        self.hand = np.array(info.hand, dtype=np.float64)

    def value(
        self, to_me: np.ndarray, to_opp: np.ndarray, used: np.ndarray, my_live: list[int]
    ) -> np.ndarray:
        """Scores of ``K`` outcomes: cards placed on each side and taken from my hand (``[K, 7]``)."""
        hand = self.hand - used
        margin = self.base + to_me - to_opp + hand * net_share(my_live) + self.lean
        p = 1.0 / (1.0 + np.exp(-self.sharpness * margin))
        return (2.0 * p - 1.0) @ self.weights


@lru_cache(maxsize=4096)
def _multisets(hand: tuple[int, ...], k: int, prefix: tuple[int, ...]) -> tuple[tuple[int, ...], ...]:
    """Sorted k-card multisets from ``hand`` that start with ``prefix``."""
    cards = [g for g in range(7) for _ in range(hand[g])]
    out = sorted(set(itertools.combinations(cards, k)))
    return tuple(c for c in out if c[: len(prefix)] == prefix)


def _counts(cards: tuple[int, ...] | list[int]) -> np.ndarray:
    return np.bincount(np.asarray(cards, dtype=np.int64), minlength=7).astype(np.float64)


def _frozen(a: np.ndarray) -> np.ndarray:
    a.flags.writeable = False  # cached: shared by every call
    return a


@lru_cache(maxsize=4096)
def _option_counts(options: tuple[tuple[int, ...], ...]) -> np.ndarray:
    """``[K, 7]``: the cards of each option, per geisha."""
    return _frozen(np.array([_counts(c) for c in options]))


@lru_cache(maxsize=4096)
def _gift_outcomes(options: tuple[tuple[int, ...], ...]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every (option, card the opponent takes): cards to me, cards to the opponent, option index."""
    used = _option_counts(options)
    to_me, to_opp, groups = [], [], []
    for j, c in enumerate(options):
        for g in set(c):
            take = _counts([g])
            to_me.append(used[j] - take)
            to_opp.append(take)
            groups.append(j)
    return _frozen(np.array(to_me)), _frozen(np.array(to_opp)), _frozen(np.array(groups))


@lru_cache(maxsize=4096)
def _competition_sets(options: tuple[tuple[int, ...], ...]) -> tuple[tuple[np.ndarray, np.ndarray], ...]:
    """Per split of :data:`SPLITS`: the two sets of every option, per geisha (``[K, 7]`` each)."""
    return tuple(
        (
            _frozen(np.array([_counts((c[i0], c[i1])) for c in options])),
            _frozen(np.array([_counts((c[i2], c[i3])) for c in options])),
        )
        for i0, i1, i2, i3 in SPLITS
    )


class HeuristicReference(Bot):
    """One-ply turn planner with a hand-written evaluation (see the module docstring)."""

    name = "heuristic-reference"

    def _argmax(self, scores: np.ndarray, tol: float = TIE_TOL) -> int:
        """The first index within ``tol`` of the maximum (the heuristic's tie rule)."""
        return int(np.flatnonzero(scores >= scores.max() - tol)[0])

    def position(self, info: InfoSet) -> Position:
        """The evaluation's constant parts for one decision."""
        return Position(info)

    def _act(self, vector: np.ndarray, mask: np.ndarray) -> int:
        info = decode(vector)
        pos = self.position(info)
        phase = info.phase
        if phase == Phase.TOKEN:
            return self.plan(pos, [t for t in range(4) if mask[t]])[0]
        if phase == Phase.SELECT:
            plan = self.plan(pos, [info.token], prefix=cards_of(info.selection))
            return CARD_BASE + plan[1][sum(info.selection)]
        if phase == Phase.SPLIT:
            return self._split(pos, cards_of(info.offer), mask)
        my_live = [t for t in range(4) if not info.spent_me[t]]
        if phase == Phase.GIFT_ANSWER:
            offer = cards_of(info.offer)
            choices = sorted(set(offer))
            to_me = np.array([_counts([g]) for g in choices])
            to_opp = np.array([_counts(offer) - _counts([g]) for g in choices])
            scores = pos.value(to_me, to_opp, np.zeros((len(choices), 7)), my_live)
            return GIFT_TAKE_BASE + choices[self._argmax(scores)]
        a, b = np.array(info.set_a, dtype=np.float64), np.array(info.set_b, dtype=np.float64)
        scores = pos.value(np.array([a, b]), np.array([b, a]), np.zeros((2, 7)), my_live)
        if not mask[COMP_TAKE_B]:
            return COMP_TAKE_A
        return COMP_TAKE_A if scores[0] >= scores[1] - TIE_TOL else COMP_TAKE_B

    def plan(
        self, pos: Position, tokens: list[int], prefix: tuple[int, ...] = ()
    ) -> tuple[int, tuple[int, ...], float]:
        """The best (token, cards, score) among ``tokens``, with cards starting with ``prefix``."""
        best: tuple[int, tuple[int, ...], float] | None = None
        for token in tokens:
            options, scores = self.scored_plans(pos, token, prefix)
            i = self._argmax(scores)
            if best is None or scores[i] > best[2] + TIE_TOL:
                best = (token, options[i], float(scores[i]))
        assert best is not None
        return best

    def scored_plans(
        self, pos: Position, token: int, prefix: tuple[int, ...] = ()
    ) -> tuple[tuple[tuple[int, ...], ...], np.ndarray]:
        """Every card multiset ``token`` can play (starting with ``prefix``) and its score."""
        my_live = [t for t in range(4) if not pos.info.spent_me[t] and t != token]
        options = _multisets(pos.info.hand, TOKEN_SIZES[token], prefix)
        return options, self._score_token(pos, token, options, my_live)

    def _score_token(
        self, pos: Position, token: int, options: tuple[tuple[int, ...], ...], my_live: list[int]
    ) -> np.ndarray:
        used = _option_counts(options)
        zero = np.zeros_like(used)
        if token == SECRET:
            return pos.value(used, zero, used, my_live)
        if token == TRADEOFF:
            return pos.value(zero, zero, used, my_live)
        if token == GIFT:  # the opponent takes the card that is worst for me
            to_me, to_opp, groups = _gift_outcomes(options)
            v = pos.value(to_me, to_opp, used[groups], my_live)
            return _group_min(v, groups, len(options))
        # Competition: my best split, then the opponent's worst-for-me set
        scores = np.full(len(options), -np.inf)
        for a, b in _competition_sets(options):
            they_take_a = pos.value(b, a, used, my_live)
            they_take_b = pos.value(a, b, used, my_live)
            scores = np.maximum(scores, np.minimum(they_take_a, they_take_b))
        return scores

    def _split(self, pos: Position, cards: tuple[int, ...], mask: np.ndarray) -> int:
        info = pos.info
        my_live = [t for t in range(4) if not info.spent_me[t] and t != COMPETITION]
        best, best_score = -1, -np.inf
        zero = np.zeros((1, 7))
        for k, (i0, i1, i2, i3) in enumerate(SPLITS):
            if not mask[SPLIT_BASE + k]:
                continue
            a = _counts((cards[i0], cards[i1]))[None]
            b = _counts((cards[i2], cards[i3]))[None]
            score = min(pos.value(b, a, zero, my_live)[0], pos.value(a, b, zero, my_live)[0])
            if score > best_score + TIE_TOL:
                best, best_score = k, score
        return SPLIT_BASE + best


def _group_min(values: np.ndarray, groups: np.ndarray, n: int) -> np.ndarray:
    out = np.full(n, np.inf)
    np.minimum.at(out, groups, values)
    return out


class HeuristicVariant(HeuristicReference):
    """The heuristic with other evaluation weights: a geisha weighs its charm plus ``bonus``
    tenths (the heuristic: 15), a margin becomes a probability with ``sharpness`` tenths (the
    heuristic: 16).  A held-out opponent (:mod:`hanamikoji_env.heldout`): a player about as
    strong as the heuristic that values positions otherwise.  Readable numpy, one decision at
    a time (a few ms each); spec ``heuristic-weights:bonus=B,sharpness=S``."""

    name = "heuristic-weights"
    options = {"bonus": Option(int, 0, 100), "sharpness": Option(int, 1, 100)}
    fast = False
    """Held out: no training config plays it."""

    def __init__(self, seed: int | None = 0, bonus: int = 15, sharpness: int = 16) -> None:
        super().__init__(seed)
        self.check_option("bonus", bonus)
        self.check_option("sharpness", sharpness)
        self.bonus, self.sharpness = bonus, sharpness
        self._weights = np.array(VALUES, dtype=np.float64) + bonus / 10

    def position(self, info: InfoSet) -> Position:
        return Position(info, self._weights, self.sharpness / 10)

    def __repr__(self) -> str:
        return f"HeuristicVariant(seed={self._seed}, bonus={self.bonus}, sharpness={self.sharpness})"
