"""The search bots' simulator (hanamikoji_env.simulate) against the rules' specification."""

from __future__ import annotations

import numpy as np
import pytest

from hanamikoji_env import engine, rules
from hanamikoji_env.simulate import PLAYOUT_STEPS, apply_sequences, playout, row_outcomes


def random_positions(rng: np.random.Generator, n: int) -> list[rules.State]:
    """Positions of every phase from random games of the specification, some with a round limit."""
    states = []
    while len(states) < n:
        limit = int(rng.integers(1, 3)) if rng.random() < 0.3 else None
        state = rules.new_game(rules.shuffled_deck(rng), round_limit=limit)
        for _ in range(int(rng.integers(0, 40))):
            legal = rules.legal_actions(state)
            state = rules.apply(state, legal[int(rng.integers(len(legal)))])
            if state.phase >= rules.Phase.ROUND_OVER:
                break
        if state.phase < rules.Phase.ROUND_OVER:
            states.append(state)
    return states


@pytest.mark.slow
def test_playouts_match_the_specification_with_the_same_choices() -> None:
    rng = np.random.default_rng(21)
    states = random_positions(rng, 400)
    rows = engine.rows_from_states(states)
    u = rng.random((len(states), PLAYOUT_STEPS))
    for limit in {st.round_limit for st in states}:
        idx = [i for i, st in enumerate(states) if st.round_limit == limit]
        part = rows[idx]
        playout(part, u[idx], limit)
        winners, points, geishas = row_outcomes(part)
        for j, i in enumerate(idx):
            st, k = states[i], 0
            while st.phase < rules.Phase.ROUND_OVER:
                legal = rules.legal_actions(st)
                st = rules.apply(st, legal[int(u[i, k] * len(legal))])
                k += 1
            assert engine.state_from_row(part[j], limit, st.last_round) == st
            assert winners[j] == (engine.NO_WINNER if st.winner is None else st.winner)
            assert (tuple(points[j]), tuple(geishas[j])) == rules.score(st.markers)


def test_action_sequences_apply_like_the_specification_and_refuse_illegal_ones() -> None:
    rng = np.random.default_rng(5)
    states = random_positions(rng, 100)
    rows = engine.rows_from_states(states)
    actions = np.zeros((len(states), 3), np.int64)
    expected = []
    for i, st in enumerate(states):
        applied = 0
        while applied < 3 and st.phase < rules.Phase.ROUND_OVER:
            legal = rules.legal_actions(st)
            actions[i, applied] = legal[int(rng.integers(len(legal)))]
            st = rules.apply(st, int(actions[i, applied]))
            applied += 1
        expected.append((st, applied))
    lengths = np.array([n for _, n in expected])
    for limit in {st.round_limit for st in states}:
        idx = [i for i, st in enumerate(states) if st.round_limit == limit]
        part = rows[idx]
        apply_sequences(part, actions[idx], lengths[idx], limit)
        rows[idx] = part
    for i, (st, _) in enumerate(expected):
        assert engine.state_from_row(rows[i], st.round_limit, st.last_round) == st
    bad = engine.rows_from_states(states[:1])
    with pytest.raises(ValueError, match="illegal action sequence"):
        apply_sequences(bad, np.array([[22, 22]]), np.array([2]), None)
