"""The compiled heuristic and search: the same decisions as the readable reference, batches that
play like single games, determinizations consistent with the observation, and bad batches refused."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from helpers import choice_positions

from hanamikoji_env.bots import HeuristicBot, PolicyBot, SearchBot
from hanamikoji_env.bots.heuristic import heuristic_actions
from hanamikoji_env.bots.heuristic_reference import HeuristicReference
from hanamikoji_env.bots.search import PLAN_WIDTH, search_actions
from hanamikoji_env.engine import C_HANDS, C_TRADEOFFS, state_from_row
from hanamikoji_env.infoset import deals, determinize, determinized_rows, every_deal
from hanamikoji_env.observation import O_UNSEEN, OBS_SIZE, encode
from hanamikoji_env.rules import NUM_CARDS, NUM_GEISHAS, Phase
from hanamikoji_env.vector import BatchEngine, random_actions

CHECKPOINT = Path(__file__).parents[1] / "checkpoints" / "ppo_selfplay.pt"


def varied_positions(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``n`` decisions of the player to move from games where each env's moves come from one of
    random, heuristic, search and the shipped policy (a fifth of them random anyway, to leave
    the bots' own lines): both seats, every phase."""
    envs = 256
    engine = BatchEngine(envs, seed=seed)
    obs, mask, _ = engine.reset()
    rng = np.random.default_rng(seed)
    style = np.arange(envs) % 4
    heuristic, search = HeuristicBot(seed), SearchBot(seed, samples=8, candidates=3)
    policy = PolicyBot(CHECKPOINT, seed=seed, greedy=False)
    kept_obs, kept_mask, total = [], [], 0
    while total < n:
        kept_obs.append(obs)
        kept_mask.append(mask)
        total += envs
        actions = random_actions(mask, rng)
        for kind, bot in ((1, heuristic), (2, search), (3, policy)):
            rows = np.flatnonzero((style == kind) & (rng.random(envs) > 0.2))
            if rows.size:
                actions[rows] = bot.act_batch(obs[rows], mask[rows])
        obs, mask, *_ = engine.step(actions)
    return np.concatenate(kept_obs)[:n], np.concatenate(kept_mask)[:n]


@pytest.mark.parametrize("n", [3_000, pytest.param(100_000, marks=pytest.mark.slow)])
def test_compiled_heuristic_makes_the_references_decisions(n: int) -> None:
    obs, mask = varied_positions(n, seed=n)
    phases = obs[:, :7].argmax(1)
    assert set(phases.tolist()) == {int(p) for p in Phase if p < Phase.ROUND_OVER}
    assert obs[:, 101].min() == 0 and obs[:, 101].max() == 1  # both seats: starter and not
    compiled = heuristic_actions(obs, mask)
    reference = HeuristicReference(0)
    expected = np.array(
        [reference.act({"observation": o, "action_mask": m}) for o, m in zip(obs, mask, strict=True)]
    )
    different = np.flatnonzero(compiled != expected)
    assert different.size == 0, (different[:5], compiled[different[:5]], expected[different[:5]])


def test_heuristic_bot_plays_its_batch_kernel_row_by_row() -> None:
    obs, mask = varied_positions(600, seed=4)
    bot = HeuristicBot(0)
    single = [bot.act({"observation": o, "action_mask": m}) for o, m in zip(obs, mask, strict=True)]
    assert single == bot.act_batch(obs, mask).tolist()


@pytest.mark.parametrize("rows", [0, 1, 255, 256, 1001])
def test_row_threads_cover_every_row_once_with_any_thread_count(rows: int) -> None:
    """``run_rows`` splits a batch over numba's threads: every row once, the result independent
    of the thread count (the bots' batches, in place of a parallel kernel to compile)."""
    import numba

    from hanamikoji_env.bots.base import run_rows

    @numba.njit(nogil=True)
    def double(x, out, add):
        for i in range(x.shape[0]):
            out[i] += 2 * x[i] + add

    x = np.arange(rows, dtype=np.int64)
    before = numba.get_num_threads()
    results = []
    try:
        for threads in sorted({1, numba.config.NUMBA_NUM_THREADS}):
            numba.set_num_threads(threads)
            out = np.zeros(rows, dtype=np.int64)
            run_rows(double, (x, out), 1, min_rows=128)
            results.append(out)
    finally:
        numba.set_num_threads(before)
    for out in results:
        assert out.tolist() == (2 * x + 1).tolist()


def test_search_batches_play_like_one_bot_per_game() -> None:
    """Rows with their own generator and plan give the moves a bot of their own gives."""
    obs, mask = varied_positions(120, seed=5)
    batch_bot = SearchBot(0, samples=16, candidates=4)
    rngs = [np.random.default_rng(100 + i) for i in range(len(obs))]
    states: list[tuple[int, ...]] = [()] * len(obs)
    batched = batch_bot.act_batch(obs, mask, rngs=rngs, states=states)
    for i in range(len(obs)):
        own = SearchBot(100 + i, samples=16, candidates=4)
        assert own.act({"observation": obs[i], "action_mask": mask[i]}) == batched[i]
        assert own.game_state() == states[i]
    token_rows = obs[:, 0] == 1
    assert any(states[i] for i in np.flatnonzero(token_rows)), "a token decision plans its turn"


def test_determinizations_are_consistent_with_the_observation() -> None:
    """Seat 0's observation of a determinized game is the observation it was made from; every
    card of the deck is somewhere; different draws deal the hidden cards differently."""
    obs, _ = varied_positions(400, seed=6)
    rng = np.random.default_rng(0)
    differs = 0
    for vector in obs:
        state = determinize(vector, rng)
        assert np.array_equal(encode(state, 0), vector)
        placed = sum(sum(state.placed[p]) + sum(state.hands[p]) + sum(state.tradeoffs[p]) for p in (0, 1))
        placed += sum(s >= 0 for s in state.secrets) + 1 + len(state.draw_pile) + len(state.offer)
        assert placed == NUM_CARDS  # the removed card is the 1; a selection is still in the hand
        rows = determinized_rows(vector, rng, 4)
        differs += int(not (rows == rows[0]).all())
    assert differs > 300


def test_every_deal_weighs_each_deal_as_a_shuffle_would() -> None:
    """Where the unseen cards have at most ``n`` distinct orders, ``every_deal`` gives each order
    ``n // count`` times, each consistent with the observation: a game then appears once per
    order that deals it (the orders of the opponent's hand and of its Trade-off deal the same
    game), as often as a uniform shuffle would deal it.  Above ``n``: None."""
    rng, exact = np.random.default_rng(1), 0
    orders = lambda counts: deals(np.asarray(counts))  # noqa: E731  (distinct orders of a multiset)
    for vector, _ in choice_positions(400, seed=3, rate=0.2):  # all through the round
        count = deals(np.rint(vector[O_UNSEEN : O_UNSEEN + NUM_GEISHAS]).astype(np.int64))
        rows = every_deal(vector, 60)
        assert (rows is None) == (count > 60)
        if rows is None:
            continue
        exact += 1
        assert len(rows) == count * (60 // count)
        distinct, times = np.unique(rows, axis=0, return_counts=True)
        for row, t in zip(distinct, times, strict=True):
            assert np.array_equal(encode(state_from_row(row, None, None), 0), vector)
            hand = row[C_HANDS + NUM_GEISHAS : C_HANDS + 2 * NUM_GEISHAS]
            trade = row[C_TRADEOFFS + NUM_GEISHAS : C_TRADEOFFS + 2 * NUM_GEISHAS]
            assert t == (60 // count) * orders(hand) * orders(trade)
        drawn = {tuple(r) for r in determinized_rows(vector, rng, 200)}
        assert drawn <= {tuple(r) for r in distinct}  # nothing a shuffle deals is missing
    assert exact > 40


def test_bad_batches_are_refused_naming_the_row() -> None:
    obs, mask = varied_positions(8, seed=7)
    plans, keys = np.full((8, PLAN_WIDTH), -1, dtype=np.int64), np.zeros(8, dtype=np.uint64)
    half, nan, no_phase, empty = obs.copy(), obs.copy(), obs.copy(), mask.copy()
    half[3, 8] = 0.5  # half a card
    nan[2, 8] = np.nan
    no_phase[4, :7] = 0
    empty[5] = 0
    for o, m, match in (
        (half, mask, "row 3 .* whole number"),
        (nan, mask, "row 2 .* whole number"),
        (no_phase, mask, "row 4 .* no decision phase"),
        (obs, empty, "row 5 .* legal move"),
    ):
        with pytest.raises(ValueError, match=match):
            heuristic_actions(o, m)
        with pytest.raises(ValueError, match=match):
            search_actions(o, m, plans.copy(), keys, 4, 2)
    unfillable = obs.copy()
    unfillable[1, 102:109] = 0  # no unseen cards: the places it cannot see cannot be dealt
    with pytest.raises(ValueError, match="row 1: the observation is not a consistent decision"):
        search_actions(unfillable, mask, plans.copy(), keys, 4, 2)
    with pytest.raises(ValueError, match=r"shape \[N, 109\]"):
        heuristic_actions(obs[:, :100], mask)
    with pytest.raises(ValueError, match="masks must have shape"):
        heuristic_actions(obs, mask[:4])
    with pytest.raises(ValueError, match="must be numbers"):
        heuristic_actions(obs.astype(str), mask)
    with pytest.raises(ValueError, match="plans must be int64"):
        search_actions(obs, mask, plans[:2], keys)
    with pytest.raises(ValueError, match="samples"):
        search_actions(obs, mask, plans, keys, samples=0)
    assert heuristic_actions(np.zeros((0, OBS_SIZE)), np.zeros((0, 23), np.int8)).shape == (0,)


def test_search_refuses_a_corrupt_plan_state() -> None:
    with pytest.raises(ValueError, match="round, turn, token"):
        SearchBot(0).set_game_state((1, 0, 2, 4, 4, 4, 4, 4))
