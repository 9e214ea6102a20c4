"""RolloutBot: its action values against a plain reference, and when it overrides its policy."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from helpers import choice_positions

from hanamikoji_env.bots.policy import PolicyBot
from hanamikoji_env.bots.rollout import FUTURE_DECKS, OPPONENT_UNIFORMS, RolloutBot
from hanamikoji_env.engine import rows_from_states
from hanamikoji_env.infoset import determinize
from hanamikoji_env.nn import PolicyNet, save_checkpoint
from hanamikoji_env.rules import FULL_DECK
from hanamikoji_env.vector import VectorHanamikoji, uniform_actions


@pytest.fixture
def tiny_policy(tmp_path):
    torch.manual_seed(0)
    path = tmp_path / "tiny.pt"
    save_checkpoint(path, PolicyNet(hidden=16, layers=1))
    return path


def reference_q(bot: RolloutBot, vector: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """RolloutBot's values the plain way: every game in one engine until all have ended,
    each counted at its first end (same random draws as RolloutBot.q_values)."""
    legal = np.flatnonzero(mask)
    n, k = bot.samples, len(legal)
    base = rows_from_states([determinize(vector, bot.rng, bot.round_limit) for _ in range(n)])
    decks = np.asarray(FULL_DECK, np.int8)[np.argsort(bot.rng.random((n, FUTURE_DECKS, 21)), axis=2)]
    uniforms = bot.rng.random((n, OPPONENT_UNIFORMS))
    engine = VectorHanamikoji(k * n, round_limit=bot.round_limit)
    engine.set_state({"rows": np.tile(base, (k, 1)), "decks": np.tile(decks, (k, 1, 1)),
                      "n_decks": np.full(k * n, FUTURE_DECKS), "reset_done": True,
                      "rng": np.random.default_rng(bot.rng.integers(2**63)).bit_generator.state})  # fmt: skip
    obs, m, to_play, rewards, done, _ = engine.step(np.repeat(legal, n))
    value = np.full(k * n, np.nan)
    moves = np.zeros(k * n, np.int64)
    while True:
        first = done & np.isnan(value)
        value[first] = rewards[first, 0]
        if not np.isnan(value).any():
            break
        mine = to_play == 0
        actions = uniform_actions(
            m, uniforms[np.tile(np.arange(n), k), np.minimum(moves, OPPONENT_UNIFORMS - 1)]
        )
        actions[mine] = bot.greedy(obs[mine], m[mine])
        moves += ~mine
        obs, m, to_play, rewards, done, _ = engine.step(actions)
    q = np.full(23, np.nan)
    q[legal] = value.reshape(k, n).mean(axis=1)
    return q


@pytest.mark.parametrize("round_limit", [None, 1])
def test_rollout_values_match_a_plain_reference(tiny_policy, round_limit) -> None:
    """Dropping finished games as they end (RolloutBot) changes no value."""
    for i, (vector, mask) in enumerate(choice_positions(6, seed=2)):
        q = RolloutBot(tiny_policy, seed=i, samples=6, round_limit=round_limit).q_values(vector, mask)
        ref = reference_q(RolloutBot(tiny_policy, seed=i, samples=6, round_limit=round_limit), vector, mask)
        assert np.array_equal(np.isnan(q), mask == 0)
        np.testing.assert_array_equal(q, ref)
        assert np.nanmax(np.abs(q)) <= 1


@pytest.mark.slow
def test_rollout_bot_plays_the_policy_unless_the_search_beats_it_by_the_margin(tiny_policy) -> None:
    bot, sure = RolloutBot(tiny_policy, seed=0, samples=8), RolloutBot(tiny_policy, seed=0, margin=2.0)
    policy = PolicyBot(tiny_policy)
    changed = 0
    for vector, mask in choice_positions(16, seed=4):
        obs = {"observation": vector, "action_mask": mask}
        assert sure.act(obs) == policy.act(obs)  # no value gap exceeds 2
        bot.rng = np.random.default_rng(1)
        q = bot.q_values(vector, mask)
        bot.rng = np.random.default_rng(1)
        a = bot.act(obs)
        own = policy.act(obs)
        assert q[a] == np.nanmax(q) and (a == own or q[a] > q[own])  # ties keep the policy's move
        changed += a != own
    assert changed > 0
    with pytest.raises(ValueError, match="samples"):
        RolloutBot(tiny_policy, samples=0)
    with pytest.raises(ValueError, match="no legal action"):
        bot.q_values(vector, np.zeros(23, np.int8))
