"""Properties over thousands of random legal games (engine and AEC env)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from helpers import random_action, random_game
from hypothesis import given, settings
from hypothesis import strategies as st

from hanamikoji_env import engine, env, rules
from hanamikoji_env.actions import NUM_ACTIONS
from hanamikoji_env.rules import Phase

ACTING = (Phase.TOKEN, Phase.SELECT, Phase.SPLIT, Phase.GIFT_ANSWER, Phase.COMP_ANSWER)


def check_game(rng: np.random.Generator, round_limit: int | None = None, impl: Any = rules) -> rules.State:
    """Play one random game of ``impl`` (``rules`` or ``engine``) and check every invariant at
    every state; return the last state."""
    tokens: dict[tuple[int, int], list[int]] = {}
    last = None
    for state, action in random_game(rng, round_limit, impl=impl):
        assert rules.card_totals(state) == rules.VALUES  # all 21 cards, every step
        mask = impl.legal_mask(state)
        assert len(mask) == NUM_ACTIONS
        if state.phase in ACTING:
            assert any(mask), state
            assert state.to_move == (state.current if state.phase < Phase.GIFT_ANSWER else 1 - state.current)
            assert (
                sum(state.hands[0])
                + sum(state.hands[1])
                + len(state.draw_pile)
                + len(state.offer)
                + sum(sum(t) for t in state.tradeoffs)
                + sum(sum(p) for p in state.placed)
                + sum(s >= 0 for s in state.secrets)
                == 20
            )
        else:
            assert not any(mask)
        if state.phase == Phase.TOKEN:
            # the turn player has just drawn: 8 - turns - 1 cards remain in the pile
            assert len(state.draw_pile) == rules.DRAW_PILE_SIZE - state.turn - 1
            assert state.current == (state.starter + state.turn) % 2
            tokens.setdefault((state.round, state.current), []).append(action)  # type: ignore[arg-type]
        last = state
    assert last is not None and last.phase == Phase.GAME_OVER
    for used in tokens.values():
        assert sorted(used) == [0, 1, 2, 3]  # each token exactly once per round
    assert len(tokens) == 2 * last.round
    # the end state: hands are empty, 8 cards on each side after the Secrets
    assert last.hands == (rules.EMPTY, rules.EMPTY) and not last.draw_pile
    assert sum(last.placed[0]) == sum(last.placed[1]) == 8
    assert last.winner in (0, 1, rules.DRAW)
    if round_limit is None:
        assert last.winner != rules.DRAW
        points, geishas = rules.score(last.markers)
        w = last.winner
        assert points[w] >= 11 or (geishas[w] >= 4 and points[1 - w] < 11)
    else:
        assert last.round <= round_limit
    return last


@pytest.mark.slow
def test_thousands_of_random_engine_games() -> None:
    """The engine of record (``hanamikoji_env.engine``), through its State-level API."""
    rng = np.random.default_rng(2026)
    rounds = [check_game(rng, impl=engine).round for _ in range(2000)]
    limited = [check_game(rng, round_limit=1 + i % 3, impl=engine) for i in range(600)]
    assert max(rounds) < 50 and np.mean(rounds) > 1.2
    assert any(s.winner == rules.DRAW for s in limited)  # draws do happen with a limit


@settings(max_examples=150, deadline=None)
@given(seed=st.integers(0, 2**63 - 1), limit=st.sampled_from([None, 1, 2, 5]))
def test_random_rules_games_from_any_seed(seed: int, limit: int | None) -> None:
    """The readable rules (the executable specification)."""
    check_game(np.random.default_rng(seed), limit)


@settings(max_examples=200, deadline=None)
@given(perm=st.permutations(rules.FULL_DECK), slot=st.integers(0, 20), g=st.integers(0, 6))
def test_any_shuffle_is_a_valid_deck_and_any_changed_card_is_not(perm, slot, g) -> None:
    assert rules.validate_deck(perm) == tuple(perm)
    changed = list(perm)
    if changed[slot] != g:
        changed[slot] = g
        try:
            rules.validate_deck(changed)
        except ValueError as e:
            assert "counts" in str(e)
        else:
            raise AssertionError("a deck with wrong card counts was accepted")


def test_random_games_through_the_env() -> None:
    e = env()
    e.reset(seed=99)
    space = e.observation_space("player_0")
    rng = np.random.default_rng(99)
    winners = {"player_0": 0, "player_1": 0}
    for _ in range(300):
        e.reset()
        for agent in e.agent_iter():
            obs, reward, term, trunc, _ = e.last()
            assert space.contains(obs)
            if term or trunc:
                if reward == 1:
                    winners[agent] += 1
                e.step(None)
            else:
                e.step(random_action(obs, rng))  # asserts the mask is not empty
    assert sum(winners.values()) == 300
    assert min(winners.values()) > 90  # both seats win random games
