"""EnumBot: every move of the turn, each met by the opponent's best reply, valued over the cards
the bot cannot see: all of their deals where few enough, a sample under a fixed budget above.

The classic way to program Hanamikoji is to enumerate, and this bot does that within
one turn.  At each decision that has a choice, it

1. lists **every** candidate: at a token decision every whole-turn plan (each legal token
   with each multiset of cards from the hand); at a split every split; at an answer every
   answer.  (SearchBot searches only the heuristic's best few plans.)
2. deals the cards it has not seen to the places it cannot see (the opponent's hand,
   Secret and Trade-off, the removed card, the draw pile;
   :func:`~hanamikoji_env.infoset.determinize_row`): **every** distinct deal when there are
   at most as many as its budget allows (:func:`~hanamikoji_env.infoset.deals`; late in a round there are a few
   dozen), else that many deals drawn at random;
3. in every deal plays each candidate and the rest of the turn **best-responded**: the
   opponent answers a Gift or a Competition with the answer worst for the bot, and the bot
   splits a Competition's four cards in the way whose worse answer is best;
4. values the position when the turn is over: exact where the round is scored in the turn,
   else one uniform random playout to the round's end (the same uniforms for every
   candidate in a deal), scored by :func:`~hanamikoji_env.simulate.row_value`;
5. plays the candidate with the best mean value (the first of the best in enumeration
   order: tokens in id order, card multisets in lexicographic order, actions in id order).

**Budget.**  ``samples`` is the most deals a decision looks at, ``budget`` the most
positions it values (leaves: a Secret or Trade-off plan is one, a Gift up to three
answers, a Competition up to three splits of two answers each).  A decision with ``L``
leaves per deal looks at ``min(samples, budget // L)`` deals (at least one), so no
decision values more than ``max(budget, MAX_LEAVES)`` positions: a bound on its time.  A
``budget`` below :data:`MAX_LEAVES` could not give every candidate one deal, and is refused.

One implementation plays: :func:`enum_actions`, a batch in one numba call over the
engine of record's kernels (the rows spread over numba's threads).
:mod:`hanamikoji_env.bots.enum_reference` is the same algorithm as readable Python on the
rules of record (:mod:`hanamikoji_env.rules`), for positions it values exactly (every deal,
the round scored within the turn); ``tests/test_enum.py`` proves the two identical there.
Randomness: a 64-bit key per decision (SplitMix64, as SearchBot), so a game plays the same
batched or alone.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from hanamikoji_env.actions import CARD_BASE, NUM_ACTIONS, NUM_TOKENS, TOKEN_SIZES
from hanamikoji_env.bots.base import Option
from hanamikoji_env.bots.heuristic import MAX_PLANS
from hanamikoji_env.bots.search import (
    ANSWER_NEEDED,
    PLAN_NEEDED,
    PlanningBot,
    candidate_plans,
    plan_sequence,
    plan_step,
    planned_actions,
    shuffled,
    uniform,
)
from hanamikoji_env.engine import (
    C_PHASE,
    C_TO_MOVE,
    COMP_PHASE,
    GAME_WIDTH,
    GIFT_PHASE,
    ROUND_OVER,
    SELECT_PHASE,
    SPLIT_PHASE,
    WIDTH,
    ZERO,
    apply_one,
    legal,
)
from hanamikoji_env.infoset import determinize_row, next_arrangement
from hanamikoji_env.observation import (
    O_UNSEEN,
    cards,
    decision_phase,
)
from hanamikoji_env.rules import NUM_CARDS
from hanamikoji_env.simulate import PLAYOUT_STEPS, apply_sequence_row, playout_row, row_value

LEAVES = np.array([1, 1, 3, 6], dtype=np.int64)
"""The most positions one deal of a whole-turn plan values, by token: Secret, Trade-off, Gift
(three answers), Competition (three splits, two answers each)."""
MAX_LEAVES = 7 * 1 + 21 * 1 + 35 * 3 + 35 * 6
"""The most leaves of one deal at any decision: every plan of a 7-card hand of 7 geishas."""
MAX_BUDGET = 1_000_000
DEFAULT_SAMPLES, DEFAULT_BUDGET = 400, 30_000
_SEQUENCE = 5  # a token and its 4 cards


@njit(cache=True)
def _deal_count(pool, n):
    """:func:`~hanamikoji_env.infoset.deals` of the sorted ``pool[:n]``, as a float (capped far above any budget)."""
    total = 1.0
    run = 0
    for j in range(n):
        run = run + 1 if j > 0 and pool[j] == pool[j - 1] else 1
        total = total * (j + 1) / run
    return min(total, 1e18)


@njit(cache=True)
def _leaf(s, u, round_limit, m):
    """The bot's value of row ``s`` once its turn is over: scored now, or after a playout."""
    if s[0, C_PHASE] < ROUND_OVER:
        playout_row(s, ZERO, u, round_limit, m)
    return row_value(s, ZERO)


@njit(cache=True)
def _answered(s, tmp, u, round_limit, m, mm):
    """The value of ``s`` where the opponent may answer an offer: its worst answer for the bot."""
    phase = s[0, C_PHASE]
    if phase in (GIFT_PHASE, COMP_PHASE) and s[0, C_TO_MOVE] == 1:
        legal(s, ZERO, mm)
        best = np.inf
        for a in range(NUM_ACTIONS):
            if mm[a]:
                for j in range(GAME_WIDTH):  # the position; the log is not simulated
                    tmp[0, j] = s[0, j]
                apply_one(tmp, ZERO, a, round_limit)
                best = min(best, _leaf(tmp, u, round_limit, m))
        return best
    return _leaf(s, u, round_limit, m)


@njit(cache=True)
def _turn_value(s, t1, t2, u, round_limit, m, m1, m2):
    """The value of ``s`` after the bot's move, the rest of the turn best-responded: the bot's
    own split (the best), then the opponent's answer (the worst for the bot)."""
    if s[0, C_PHASE] == SPLIT_PHASE and s[0, C_TO_MOVE] == 0:
        legal(s, ZERO, m1)
        best = -np.inf
        for a in range(NUM_ACTIONS):
            if m1[a]:
                for j in range(GAME_WIDTH):  # the position; the log is not simulated
                    t1[0, j] = s[0, j]
                apply_one(t1, ZERO, a, round_limit)
                best = max(best, _answered(t1, t2, u, round_limit, m, m2))
        return best
    return _answered(s, t1, u, round_limit, m, m2)


@njit(cache=True)
def _evaluate(o, sequences, lengths, k, leaves, samples, budget, rng, round_limit, values):
    """Mean value of each of the ``k`` candidates over the deals (module docstring, steps 2-4);
    False if ``o`` is not a consistent decision."""
    pool = np.zeros(NUM_CARDS, dtype=np.int64)
    n = cards(o, O_UNSEEN, pool)
    if n > NUM_CARDS:
        return False
    order = np.zeros(n, dtype=np.int64)
    for j in range(n):
        order[j] = pool[j]
    allowed = max(1, min(samples, budget // max(leaves, 1)))
    exact = _deal_count(order, n) <= allowed
    base = np.zeros((1, WIDTH), dtype=np.int32)
    work, t1, t2 = (
        np.zeros((1, WIDTH), np.int32),
        np.zeros((1, WIDTH), np.int32),
        np.zeros((1, WIDTH), np.int32),
    )
    u = np.zeros(PLAYOUT_STEPS)
    m = np.zeros(NUM_ACTIONS, dtype=np.int8)
    m1 = np.zeros(NUM_ACTIONS, dtype=np.int8)
    m2 = np.zeros(NUM_ACTIONS, dtype=np.int8)
    values[:k] = 0.0
    count = 0
    more = True
    while more:
        if not exact:
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
            values[c] += _turn_value(work, t1, t2, u, round_limit, m, m1, m2)
        count += 1
        more = next_arrangement(order) if exact else count < allowed
    for c in range(k):
        values[c] /= count
    return True


@njit(cache=True)
def _first_best(values, k):
    """The index of the first of the best of ``values[:k]`` (within 1e-12)."""
    top = -np.inf
    for c in range(k):
        top = max(top, values[c])
    for c in range(k):
        if values[c] >= top - 1e-12:
            return c
    return -1


@njit(cache=True)
def _plan_turn(o, tokens, prefix, n_prefix, select, samples, budget, rng, round_limit, plan):
    """Every whole-turn plan of the flagged ``tokens`` whose cards start with ``prefix``, valued;
    the best one's token and cards go to ``plan[2:]``; False if inconsistent."""
    plan_token = np.zeros(MAX_PLANS, dtype=np.int64)
    plan_cards = np.zeros((MAX_PLANS, 4), dtype=np.int64)
    plan_score = np.zeros(MAX_PLANS)
    count = candidate_plans(o, tokens, prefix, n_prefix, plan_token, plan_cards, plan_score)
    if count <= 0:
        return False
    chosen = 0
    if count > 1:
        sequences = np.zeros((count, _SEQUENCE), dtype=np.int64)
        lengths = np.zeros(count, dtype=np.int64)
        leaves = 0
        for c in range(count):
            lengths[c] = plan_sequence(plan_token[c], plan_cards[c], n_prefix, select, sequences[c])
            leaves += LEAVES[plan_token[c]]
        values = np.zeros(count)
        if not _evaluate(o, sequences, lengths, count, leaves, samples, budget, rng, round_limit, values):
            return False
        chosen = _first_best(values, count)
    plan[2] = plan_token[chosen]
    for x in range(4):
        plan[3 + x] = plan_cards[chosen, x]
    return True


@njit(cache=True)
def _best_action(o, legal_actions, phase, samples, budget, rng, round_limit):
    """At a split or an answer every legal action is a candidate: the best one."""
    k = len(legal_actions)
    sequences = np.zeros((k, 1), dtype=np.int64)
    lengths = np.ones(k, dtype=np.int64)
    for c in range(k):
        sequences[c, 0] = legal_actions[c]
    values = np.zeros(k)
    leaves = k * (2 if phase == SPLIT_PHASE else 1)
    if not _evaluate(o, sequences, lengths, k, leaves, samples, budget, rng, round_limit, values):
        return -1
    return legal_actions[_first_best(values, k)]


@njit(cache=True)
def enum_row(o, m, plan, key, samples, budget, round_limit):
    """EnumBot's action for observation row ``o`` and mask ``m`` (the module docstring), its
    game's plan in ``plan`` (read and updated); -1 if ``o`` is not a consistent decision."""
    step, n, k, tokens, prefix, legal_actions = plan_step(o, m, plan)
    if step != PLAN_NEEDED and step != ANSWER_NEEDED:
        return step
    rng = np.zeros(1, dtype=np.uint64)
    rng[0] = key
    phase = decision_phase(o)
    if step == ANSWER_NEEDED:
        return _best_action(o, legal_actions[:k], phase, samples, budget, rng, round_limit)
    select = phase == SELECT_PHASE
    if not _plan_turn(o, tokens, prefix, n, select, samples, budget, rng, round_limit, plan):
        return -1
    return CARD_BASE + plan[3 + n] if select else plan[2]


@njit(cache=True, nogil=True)
def _enum_rows(obs, mask, plans, keys, out, samples, budget, round_limit):
    for i in range(obs.shape[0]):  # rows are independent: the same results on any thread
        out[i] = enum_row(obs[i], mask[i], plans[i], keys[i], samples, budget, round_limit)


def enum_actions(
    obs: np.ndarray,
    mask: np.ndarray,
    plans: np.ndarray,
    keys: np.ndarray,
    samples: int = DEFAULT_SAMPLES,
    budget: int = DEFAULT_BUDGET,
    round_limit: int | None = None,
) -> np.ndarray:
    """EnumBot's action for every row of a batch in one compiled call: ``plans`` ``[N, 7]``
    (updated in place) and ``keys`` ``[N]`` (each decision's random key)."""
    EnumBot.check_option("samples", samples)
    EnumBot.check_option("budget", budget)
    return planned_actions(_enum_rows, "enum", obs, mask, plans, keys, samples, budget, round_limit or 0)


class EnumBot(PlanningBot):
    """Enumeration within the turn over the unseen cards' deals (see the module docstring)."""

    name = "enum"
    options = {"samples": Option(int, 1, 100_000), "budget": Option(int, MAX_LEAVES, MAX_BUDGET)}
    fast = False
    """A held-out opponent (:mod:`hanamikoji_env.heldout`): no training config plays it."""

    def __init__(
        self,
        seed: int | None = 0,
        samples: int = DEFAULT_SAMPLES,
        budget: int = DEFAULT_BUDGET,
        round_limit: int | None = None,
    ) -> None:
        super().__init__(seed, round_limit)
        self.check_option("samples", samples)
        self.check_option("budget", budget)
        self.samples, self.budget = samples, budget

    def _actions(self, obs: np.ndarray, mask: np.ndarray, plans: np.ndarray, keys: np.ndarray) -> np.ndarray:
        return enum_actions(obs, mask, plans, keys, self.samples, self.budget, self.round_limit)

    def __repr__(self) -> str:
        return f"EnumBot(seed={self._seed}, samples={self.samples}, budget={self.budget})"


assert max(TOKEN_SIZES) == 4 and LEAVES.shape == (NUM_TOKENS,)
