"""SearchBot as it was written in Python before it was compiled: the reference of its strength.

:class:`SearchReference` is the algorithm of :mod:`hanamikoji_env.bots.search`
one decision at a time in numpy (its own random streams, and ties broken by
the bot's generator), over the heuristic's readable reference.  It is no
player of its own (no spec names it): ``benchmarks/bot_strength.py`` and the
slow tests play the compiled SearchBot against it to show the two equally
strong.

At each decision that has a choice, the bot

1. lists candidates: at a token decision, the ``candidates`` best whole-turn
   plans (token and cards) of :class:`~hanamikoji_env.bots.heuristic.HeuristicBot`'s
   evaluation; at a split or an answer, every legal action;
2. samples ``samples`` determinizations: the cards it has not seen are dealt at
   random to the places it cannot see (the opponent's hand, Secret and
   Trade-off, the removed card, the draw pile), consistent with everything in
   its observation and nothing else;
3. plays every candidate in every determinization to the end of the round
   (a playout, :mod:`hanamikoji_env.simulate`, on the engine's compiled kernels),
   uniform random moves after the candidate, using the same determinizations
   and random numbers for every candidate;
4. picks the candidate with the best mean outcome
   (:func:`~hanamikoji_env.simulate.round_values`: +1 / -1 for a game won or
   lost at that scoring, otherwise half the lead in charm points and geishas
   the markers give), plus a small share of the heuristic's own score as a prior.

``samples`` is the budget: more is stronger and slower.  Card selections
continue the plan chosen at the token decision.
"""

from __future__ import annotations

import numpy as np

from hanamikoji_env.actions import CARD_BASE
from hanamikoji_env.bots.base import Bot
from hanamikoji_env.bots.heuristic_reference import HeuristicReference, Position
from hanamikoji_env.bots.search import PRIOR, SearchBot
from hanamikoji_env.excerpt import short
from hanamikoji_env.infoset import determinized_rows
from hanamikoji_env.observation import InfoSet, decode
from hanamikoji_env.rules import Phase, cards_of
from hanamikoji_env.simulate import PLAYOUT_STEPS, apply_sequences, playout, round_values


class SearchReference(Bot):
    """Information-set Monte Carlo search, one decision at a time in numpy."""

    name = "search-reference"

    def __init__(
        self, seed: int | None = 0, samples: int = 400, candidates: int = 10, round_limit: int | None = None
    ) -> None:
        super().__init__(seed)
        SearchBot.check_option("samples", samples)
        SearchBot.check_option("candidates", candidates)
        self.samples = samples
        self.candidates = candidates
        self.round_limit = round_limit
        self._heuristic = HeuristicReference(seed)
        self.plan: tuple[tuple[int, int, int], tuple[int, ...]] | None = None
        """``((round, turn, token), cards)``: the plan chosen at this turn's token decision
        (the bot's game state)."""

    def seed(self, seed: int) -> None:
        super().seed(seed)
        self._heuristic.seed(seed)

    def game_state(self) -> tuple[int, ...]:
        """``(round, turn, token, *cards)`` of the plan for the turn in progress, or ``()``."""
        return () if self.plan is None else (*self.plan[0], *self.plan[1])

    def set_game_state(self, state: tuple[int, ...]) -> None:
        if state and len(state) < 4:
            raise ValueError(f"a SearchBot game state is (round, turn, token, *cards), got {short(state)}")
        self.plan = (tuple(int(x) for x in state[:3]), tuple(int(x) for x in state[3:])) if state else None  # type: ignore[assignment]

    def _act(self, vector: np.ndarray, mask: np.ndarray) -> int:
        legal = np.flatnonzero(mask)
        info = decode(vector)
        turn = (info.round, sum(info.spent_me) + sum(info.spent_opp))
        if info.phase == Phase.SELECT:
            chosen = cards_of(info.selection)
            plan = self.plan
            if plan is None or plan[0] != (*turn, info.token) or plan[1][: len(chosen)] != chosen:
                # no plan for this very turn (e.g. handed a position mid-turn): plan from here
                token, cards = self._search_plans(vector, info, [info.token], prefix=chosen)
                self.plan = ((*turn, token), cards)
            return CARD_BASE + self.plan[1][len(chosen)]
        if len(legal) == 1:
            return int(legal[0])
        if info.phase == Phase.TOKEN:
            token, cards = self._search_plans(vector, info, [int(t) for t in legal if t < 4])
            self.plan = ((*turn, token), cards)
            return token
        # split or answer: every legal action is a candidate
        values = self._evaluate(vector, [[int(a)] for a in legal])
        return int(legal[self._argmax(values, tol=1e-12)])

    def _search_plans(
        self, vector: np.ndarray, info: InfoSet, tokens: list[int], prefix: tuple[int, ...] = ()
    ) -> tuple[int, tuple[int, ...]]:
        pos = Position(info)
        scored = []
        for token in tokens:
            options, scores = self._heuristic.scored_plans(pos, token, prefix)
            scored += [(float(v), token, c) for v, c in zip(scores, options, strict=True)]
        scored.sort(key=lambda x: -x[0])
        top = scored[: self.candidates]
        if len(top) == 1:
            return top[0][1], top[0][2]
        # at a token decision the plan starts with the token; while selecting, with the next card
        head = [] if info.phase == Phase.SELECT else None
        sequences = [
            (head if head is not None else [token]) + [CARD_BASE + g for g in cards[len(prefix) :]]
            for _, token, cards in top
        ]
        values = self._evaluate(vector, sequences) + PRIOR * np.array([v for v, _, _ in top])
        _, token, cards = top[self._argmax(values, tol=1e-12)]
        return token, cards

    def _evaluate(self, vector: np.ndarray, sequences: list[list[int]]) -> np.ndarray:
        """Mean outcome of each action sequence over the same determinizations and playouts."""
        base = determinized_rows(vector, self.rng, self.samples)
        k = len(sequences)
        rows = np.tile(base, (k, 1))
        longest = max(len(q) for q in sequences)
        actions = np.zeros((k * self.samples, longest), dtype=np.int64)
        lengths = np.zeros(k * self.samples, dtype=np.int64)
        for j, q in enumerate(sequences):
            actions[j * self.samples : (j + 1) * self.samples, : len(q)] = q
            lengths[j * self.samples : (j + 1) * self.samples] = len(q)
        apply_sequences(rows, actions, lengths, self.round_limit)
        # common random numbers: every candidate sees the same playout randomness
        u = np.tile(self.rng.random((self.samples, PLAYOUT_STEPS)), (k, 1))
        playout(rows, u, self.round_limit)
        return round_values(rows).reshape(k, self.samples).mean(axis=1)
