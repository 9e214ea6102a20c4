"""SearchBot: determinized Monte Carlo search over whole-turn plans, as compiled kernels.

At each decision that has a choice, the bot

1. lists candidates: at a token decision, the ``candidates`` best whole-turn
   plans (token and cards) of the heuristic's evaluation
   (:func:`~hanamikoji_env.bots.heuristic.plans_row`, best first, ties in
   enumeration order); at a split or an answer, every legal action;
2. samples ``samples`` determinizations: the cards it has not seen are dealt at
   random to the places it cannot see (the opponent's hand, Secret and
   Trade-off, the removed card, the draw pile), consistent with everything in
   its observation and nothing else (:func:`~hanamikoji_env.infoset.determinize_row`);
3. plays every candidate in every determinization to the end of the round,
   uniform random moves after the candidate, using the same determinizations
   and random numbers for every candidate (common random numbers);
4. picks the candidate with the best mean outcome
   (:func:`~hanamikoji_env.simulate.row_value`: +1 / -1 for a game won or
   lost at that scoring, otherwise half the lead in charm points and geishas
   the markers give), plus :data:`PRIOR` times the heuristic's own score for a
   plan; values within 1e-12 of the best tie, broken at random.

``samples`` is the budget: more is stronger and slower.  Card selections
continue the plan chosen at the token decision (the bot's game state).

One implementation plays: :func:`search_actions` runs the whole algorithm for
a batch of decisions in one numba call, on the engine of record's kernels.
Randomness: each decision gets one 64-bit key drawn from the bot's own
``np.random.Generator`` (or from that game's generator in a batch), which the
kernel expands with SplitMix64 (numba kernels cannot hold a numpy Generator
per row), so a game plays the same batched or alone.
:mod:`hanamikoji_env.bots.search_reference` is the algorithm as it was
written in Python before, kept to show the compiled bot is as strong.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from hanamikoji_env.actions import CARD_BASE, NUM_ACTIONS, NUM_TOKENS
from hanamikoji_env.bots.base import Bot, Option, check_batch, run_rows
from hanamikoji_env.bots.heuristic import MAX_PLANS, checked_actions, plans_row, position
from hanamikoji_env.engine import GAME_WIDTH, SELECT_PHASE, TOKEN_PHASE, WIDTH, ZERO
from hanamikoji_env.excerpt import short
from hanamikoji_env.infoset import determinize_row
from hanamikoji_env.observation import (
    O_ROUND,
    O_SEL,
    O_TOKEN,
    O_UNSEEN,
    cards,
    decision_phase,
    entry,
    one_hot,
    turns_played,
)
from hanamikoji_env.rules import NUM_CARDS, NUM_GEISHAS
from hanamikoji_env.simulate import PLAYOUT_STEPS, apply_sequence_row, playout_row, row_value

PRIOR = 0.02
"""Weight of the heuristic score (about -25..25) added to a plan's mean outcome."""
PLAN_WIDTH = 7
"""A plan in a batch: round, turn, token, then its cards (-1 padded; all -1: no plan)."""
_MAX_SEQUENCE = 5  # a token and its 4 cards

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)


@njit(cache=True)
def uniform(state):
    """The next uniform in [0, 1) of the SplitMix64 stream ``state`` (a 1-element uint64 array)."""
    state[0] += _GOLDEN
    z = state[0]
    z = (z ^ (z >> np.uint64(30))) * _MIX1
    z = (z ^ (z >> np.uint64(27))) * _MIX2
    z = z ^ (z >> np.uint64(31))
    return float(z >> np.uint64(11)) * (1.0 / 9007199254740992.0)


@njit(cache=True)
def shuffled(pool, n, rng, order):
    """``pool[:n]`` into ``order`` in a uniformly random order (Fisher-Yates on ``rng``)."""
    for j in range(n):  # loops, not array slices: no shape-check code to compile
        order[j] = pool[j]
    for j in range(n - 1, 0, -1):
        r = int(uniform(rng) * (j + 1))
        order[j], order[r] = order[r], order[j]


PLAN_NEEDED = -2
""":func:`plan_step`: the bot must choose this turn's plan."""
ANSWER_NEEDED = -3
""":func:`plan_step`: the bot must choose among the legal actions (a split or an answer)."""


@njit(cache=True, inline="always")
def plan_step(o, m, plan):
    """What every planning bot does first at observation row ``o`` with mask ``m`` and its
    game's ``plan`` (:data:`PLAN_WIDTH`), as ``(step, n, k, tokens, prefix, legal)``: ``step``
    is the action to play at once (the plan's next card while selecting, or the only legal
    action), -1 if ``o`` is not a consistent decision, :data:`PLAN_NEEDED` (a whole-turn plan of
    the tokens flagged in ``tokens`` whose cards start with ``prefix[:n]``; ``plan``'s round and
    turn are set) or :data:`ANSWER_NEEDED` (one of ``legal[:k]``, at a split or an answer)."""
    tokens = np.zeros(NUM_TOKENS, dtype=np.int64)
    prefix = np.zeros(4, dtype=np.int64)
    legal = np.zeros(NUM_ACTIONS, dtype=np.int64)
    phase = decision_phase(o)
    turn = turns_played(o)
    rnd = entry(o, O_ROUND)
    n = ZERO
    k = ZERO
    if phase == SELECT_PHASE:
        token = one_hot(o, O_TOKEN, NUM_TOKENS)
        n = cards(o, O_SEL, prefix)
        if token < 0 or n >= 4:
            return -1, n, k, tokens, prefix, legal
        same = plan[0] == rnd and plan[1] == turn and plan[2] == token and plan[3 + n] >= 0
        for x in range(n):
            same = same and plan[3 + x] == prefix[x]
        if same:
            return CARD_BASE + plan[3 + n], n, k, tokens, prefix, legal
        tokens[token] = 1  # no plan for this very turn (handed a position mid-turn): plan from here
    else:
        for a in range(NUM_ACTIONS):
            if m[a]:
                legal[k] = a
                k += 1
        if k == 1:
            return legal[0], n, k, tokens, prefix, legal
        if phase != TOKEN_PHASE:
            return ANSWER_NEEDED, n, k, tokens, prefix, legal
        for t in range(NUM_TOKENS):
            tokens[t] = m[t]
    plan[0], plan[1] = rnd, turn
    return PLAN_NEEDED, n, k, tokens, prefix, legal


@njit(cache=True, inline="always")
def candidate_plans(o, tokens, prefix, n_prefix, plan_token, plan_cards, plan_score):
    """The heuristic's whole-turn plans of the flagged ``tokens`` whose cards start with
    ``prefix[:n_prefix]`` (:func:`~hanamikoji_env.bots.heuristic.plans_row`, filling the three
    arrays); how many, or a count <= 0 if ``o`` is inconsistent."""
    pos = np.zeros((3, NUM_GEISHAS))
    position(o, decision_phase(o), pos)
    return plans_row(o, pos, tokens, prefix, n_prefix, plan_token, plan_cards, plan_score)


@njit(cache=True, inline="always")
def plan_sequence(token, plan_cards, n_prefix, select, out):
    """A plan as the actions still to play, into ``out``: its token at a token decision (not
    while ``select``-ing its cards), then its cards after the first ``n_prefix``; how many."""
    n = 0
    if not select:
        out[0] = token
        n = 1
    for x in range(n_prefix, 4):
        if plan_cards[x] >= 0:
            out[n] = CARD_BASE + plan_cards[x]
            n += 1
    return n


@njit(cache=True)
def _evaluate(o, sequences, lengths, k, samples, rng, round_limit, values):
    """Mean round-end value of each of the ``k`` action sequences over the same ``samples``
    determinizations and playout uniforms; False if ``o`` is not a consistent decision."""
    pool = np.zeros(NUM_CARDS, dtype=np.int64)
    n = cards(o, O_UNSEEN, pool)
    if n > NUM_CARDS:
        return False
    order = np.zeros(n, dtype=np.int64)
    base = np.zeros((1, WIDTH), dtype=np.int32)
    work = np.zeros((1, WIDTH), dtype=np.int32)
    u = np.zeros(PLAYOUT_STEPS)
    m = np.zeros(NUM_ACTIONS, dtype=np.int8)
    values[:k] = 0.0
    for _ in range(samples):
        shuffled(pool, n, rng, order)
        if not determinize_row(o, order, base, ZERO):
            return False
        for t in range(PLAYOUT_STEPS):
            u[t] = uniform(rng)
        for c in range(k):
            for j in range(GAME_WIDTH):  # the position; the log is not simulated
                work[0, j] = base[0, j]
            if not apply_sequence_row(work, ZERO, sequences[c], lengths[c], round_limit, m):
                return False
            playout_row(work, ZERO, u, round_limit, m)
            values[c] += row_value(work, ZERO)
    for c in range(k):
        values[c] /= samples
    return True


@njit(cache=True)
def _best(values, k, rng):
    """The index of the best of ``values[:k]``; values within 1e-12 of the best tie, and the tie
    is broken uniformly at random from ``rng`` (as the bot's generator broke it before)."""
    top = -np.inf
    for c in range(k):
        top = max(top, values[c])
    ties = 0
    for c in range(k):
        ties += values[c] >= top - 1e-12
    choice = 0 if ties == 1 else int(uniform(rng) * ties)
    for c in range(k):
        if values[c] >= top - 1e-12:
            if choice == 0:
                return c
            choice -= 1
    return -1


@njit(cache=True, inline="always")
def _search_plans(o, tokens, prefix, n_prefix, select, samples, candidates, rng, round_limit, plan):
    """Search the heuristic's best plans (tokens flagged in ``tokens``, cards starting with
    ``prefix``); the chosen one's token and cards go to ``plan[2:]``; False if inconsistent."""
    plan_token = np.zeros(MAX_PLANS, dtype=np.int64)
    plan_cards = np.zeros((MAX_PLANS, 4), dtype=np.int64)
    plan_score = np.zeros(MAX_PLANS)
    count = candidate_plans(o, tokens, prefix, n_prefix, plan_token, plan_cards, plan_score)
    if count <= 0:
        return False
    order = np.zeros(count, dtype=np.int64)  # best first, ties in list order: an insertion sort
    for j in range(count):
        x = j
        while x > 0 and plan_score[order[x - 1]] < plan_score[j]:
            order[x] = order[x - 1]
            x -= 1
        order[x] = j
    k = min(candidates, count)
    chosen = order[0]
    if k > 1:
        sequences = np.zeros((k, _MAX_SEQUENCE), dtype=np.int64)
        lengths = np.zeros(k, dtype=np.int64)
        for c in range(k):
            j = order[c]
            lengths[c] = plan_sequence(plan_token[j], plan_cards[j], n_prefix, select, sequences[c])
        values = np.zeros(k)
        if not _evaluate(o, sequences, lengths, k, samples, rng, round_limit, values):
            return False
        for c in range(k):
            values[c] += PRIOR * plan_score[order[c]]
        chosen = order[_best(values, k, rng)]
    plan[2] = plan_token[chosen]
    for x in range(4):
        plan[3 + x] = plan_cards[chosen, x]
    return True


@njit(cache=True, inline="always")
def search_row(o, m, plan, key, samples, candidates, round_limit):
    """SearchBot's action for observation row ``o`` and mask ``m`` (see the module docstring),
    its game's plan in ``plan`` (read and updated); -1 if ``o`` is not a consistent decision."""
    step, n, k, tokens, prefix, legal = plan_step(o, m, plan)
    if step != PLAN_NEEDED and step != ANSWER_NEEDED:
        return step
    rng = np.zeros(1, dtype=np.uint64)
    rng[0] = key
    if step == ANSWER_NEEDED:
        return _search_answers(o, legal[:k], samples, rng, round_limit)
    select = decision_phase(o) == SELECT_PHASE  # typed, as ZERO: a literal compiles _search_plans twice
    if not _search_plans(o, tokens, prefix, n, select, samples, candidates, rng, round_limit, plan):
        return -1
    return CARD_BASE + plan[3 + n] if select else plan[2]


@njit(cache=True, inline="always")
def _search_answers(o, legal, samples, rng, round_limit):
    """At a split or an answer every legal action is a candidate: the best one."""
    k = len(legal)
    sequences = np.zeros((k, 1), dtype=np.int64)
    lengths = np.ones(k, dtype=np.int64)
    for c in range(k):
        sequences[c, 0] = legal[c]
    values = np.zeros(k)
    if not _evaluate(o, sequences, lengths, k, samples, rng, round_limit, values):
        return -1
    return legal[_best(values, k, rng)]


@njit(cache=True, nogil=True)
def _search_rows(obs, mask, plans, keys, out, samples, candidates, round_limit):
    for i in range(obs.shape[0]):  # rows are independent: the same results on any thread
        out[i] = search_row(obs[i], mask[i], plans[i], keys[i], samples, candidates, round_limit)


def search_actions(
    obs: np.ndarray,
    mask: np.ndarray,
    plans: np.ndarray,
    keys: np.ndarray,
    samples: int = 400,
    candidates: int = 10,
    round_limit: int | None = None,
) -> np.ndarray:
    """SearchBot's action for every row of a batch in one compiled call: ``plans`` ``[N, 7]``
    (:data:`PLAN_WIDTH`, updated in place) and ``keys`` ``[N]`` (each decision's random key).
    ``ValueError`` naming the row for a malformed batch."""
    SearchBot.check_option("samples", samples)
    SearchBot.check_option("candidates", candidates)
    return planned_actions(
        _search_rows, "search", obs, mask, plans, keys, samples, candidates, round_limit or 0
    )


def planned_actions(
    kernel: Any, bot: str, obs: np.ndarray, mask: np.ndarray, plans: np.ndarray, keys: np.ndarray, *args: int
) -> np.ndarray:
    """A planning bot's batch: ``kernel(obs, mask, plans, keys, out, *args)`` over numba's threads,
    after checking the rows, ``plans`` ``[N, 7]`` (:data:`PLAN_WIDTH`, updated in place) and
    ``keys`` ``[N]``; its actions checked legal (``ValueError`` naming the row otherwise)."""
    obs, mask = check_batch(obs, mask)
    n = obs.shape[0]
    if plans.shape != (n, PLAN_WIDTH) or plans.dtype != np.int64:
        raise ValueError(f"plans must be int64 [{n}, {PLAN_WIDTH}], got {plans.dtype} {plans.shape}")
    keys = np.asarray(keys).astype(np.uint64)
    if keys.shape != (n,):
        raise ValueError(f"keys must have shape ({n},), got {keys.shape}")
    out = np.empty(n, dtype=np.int64)
    run_rows(kernel, (obs, mask, plans, keys, out), *args, min_rows=1)
    return checked_actions(out, mask, bot)


class PlanningBot(Bot):
    """A bot that chooses a whole turn at its token decision and plays its cards from that plan
    (its game state); :meth:`_actions` is its compiled batch kernel.  SearchBot and EnumBot."""

    batched = True
    """``act_batch`` is one compiled call for the whole batch."""

    def __init__(self, seed: int | None = 0, round_limit: int | None = None) -> None:
        super().__init__(seed)
        self.round_limit = round_limit
        self.plan: tuple[tuple[int, int, int], tuple[int, ...]] | None = None
        """``((round, turn, token), cards)``: the plan chosen at this turn's token decision
        (the bot's game state)."""

    @classmethod
    def from_spec(cls, options: dict[str, Any], seed: int, round_limit: int | None, device: str) -> Bot:
        return cls(seed=seed, round_limit=round_limit, **options)

    def _actions(self, obs: np.ndarray, mask: np.ndarray, plans: np.ndarray, keys: np.ndarray) -> np.ndarray:
        """The batch's actions (``plans`` ``[N, 7]`` updated in place, ``keys`` one per row)."""
        raise NotImplementedError

    def game_state(self) -> tuple[int, ...]:
        """``(round, turn, token, *cards)`` of the plan for the turn in progress, or ``()``."""
        return () if self.plan is None else (*self.plan[0], *self.plan[1])

    def set_game_state(self, state: tuple[int, ...]) -> None:
        _check_plan(state)
        self.plan = (tuple(int(x) for x in state[:3]), tuple(int(x) for x in state[3:])) if state else None  # type: ignore[assignment]

    def _act(self, vector: np.ndarray, mask: np.ndarray) -> int:
        states = [self.game_state()]
        action = self.act_batch(vector[None], mask[None], [self.rng], states)
        self.set_game_state(states[0])
        return int(action[0])

    def act_batch(
        self,
        obs: np.ndarray,
        mask: np.ndarray,
        rngs: list[np.random.Generator] | None = None,
        states: list[tuple[int, ...]] | None = None,
    ) -> np.ndarray:
        n = len(obs)
        if rngs is None:
            keys = self.rng.integers(0, 2**63, size=n, dtype=np.int64)
        else:
            keys = np.array([g.integers(0, 2**63, dtype=np.int64) for g in rngs], dtype=np.int64)
        plans = np.full((n, PLAN_WIDTH), -1, dtype=np.int64)
        for i, state in enumerate(states or ()):
            _check_plan(state)
            plans[i, : len(state)] = state
        actions = self._actions(obs, mask, plans, keys)
        if states is not None:
            for i in range(n):
                size = int((plans[i, 3:] >= 0).sum())
                states[i] = tuple(int(x) for x in plans[i, : 3 + size]) if plans[i, 0] >= 0 else ()
        return actions


class SearchBot(PlanningBot):
    """Information-set Monte Carlo search (see the module docstring)."""

    name = "search"
    options = {"samples": Option(int, 1, 20_000), "candidates": Option(int, 1, 200)}

    def __init__(
        self, seed: int | None = 0, samples: int = 400, candidates: int = 10, round_limit: int | None = None
    ) -> None:
        super().__init__(seed, round_limit)
        self.check_option("samples", samples)
        self.check_option("candidates", candidates)
        self.samples = samples
        self.candidates = candidates

    def _actions(self, obs: np.ndarray, mask: np.ndarray, plans: np.ndarray, keys: np.ndarray) -> np.ndarray:
        return search_actions(obs, mask, plans, keys, self.samples, self.candidates, self.round_limit)

    def __repr__(self) -> str:
        return f"SearchBot(seed={self._seed}, samples={self.samples}, candidates={self.candidates})"


def _check_plan(state: tuple[int, ...]) -> None:
    """``ValueError`` unless ``state`` is ``()`` or a plan ``(round, turn, token, *cards)``."""
    if state and not 4 <= len(state) <= PLAN_WIDTH:
        raise ValueError(f"a SearchBot game state is (round, turn, token, *cards), got {short(state)}")
