"""The differential checks: the engine against the specification, the batch driver against the AEC env."""

from __future__ import annotations

import pytest

from hanamikoji_env import engine
from hanamikoji_env.differential import MismatchError, compare_engines, compare_with_spec


@pytest.mark.parametrize(
    ("games", "limit", "seed"),
    [
        (300, None, 1),
        (300, 1, 2),
        pytest.param(3000, None, 11, marks=pytest.mark.slow),
        pytest.param(1000, 1, 12, marks=pytest.mark.slow),
        pytest.param(1000, 3, 13, marks=pytest.mark.slow),
    ],
)
def test_the_engine_plays_the_specifications_game_state_by_state(games, limit, seed) -> None:
    stats = compare_with_spec(games, seed=seed, round_limit=limit)
    assert stats["games"] == games and stats["decisions"] > 30 * games
    if limit is None:
        assert stats["rounds"] > 1.5 * games  # many games go past round 1
    else:
        assert stats["rounds"] <= limit * games


def test_a_difference_from_the_specification_is_caught(monkeypatch) -> None:
    apply_one = engine.apply_one

    def tie_moves_the_marker(s, i, a, round_limit):  # a wrong rule, after the kernel's right one
        phase = apply_one(s, i, a, round_limit)
        if phase >= engine.ROUND_OVER:
            s[i, engine.C_MARKERS] = 0
        return phase

    monkeypatch.setattr(engine, "apply_one", tie_moves_the_marker)
    with pytest.raises(MismatchError, match=r"engine .* != specification|engine scoring"):
        compare_with_spec(50, seed=0)


@pytest.mark.parametrize(
    ("games", "limit", "seed"),
    [
        (200, None, 1),
        pytest.param(2500, None, 1, marks=pytest.mark.slow),
        pytest.param(700, 1, 2, marks=pytest.mark.slow),
        pytest.param(700, 3, 3, marks=pytest.mark.slow),
    ],
)
def test_the_batch_engine_is_identical_to_the_aec_env(games: int, limit: int | None, seed: int) -> None:
    stats = compare_engines(games, num_envs=256, seed=seed, round_limit=limit)
    assert stats["games"] == games
    assert stats["decisions"] > 30 * games
    if limit is None:
        assert stats["rounds"] > 1.5 * games
    else:
        assert stats["rounds"] <= limit * games
