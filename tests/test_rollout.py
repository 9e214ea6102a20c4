"""RolloutBot: its action values against exact rewards worked out from the rules, and when it overrides its policy."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from helpers import ExactPosition, choice_positions, last_turn_positions

from hanamikoji_env import rules
from hanamikoji_env.actions import SECRET
from hanamikoji_env.bots.policy import PolicyBot
from hanamikoji_env.bots.rollout import RolloutBot
from hanamikoji_env.nn import PolicyNet, save_checkpoint
from hanamikoji_env.observation import encode


@pytest.fixture
def tiny_policy(tmp_path):
    torch.manual_seed(0)
    path = tmp_path / "tiny.pt"
    save_checkpoint(path, PolicyNet(hidden=16, layers=1))
    return path


def exact_rewards(position: ExactPosition) -> np.ndarray | None:
    """Seat-to-move's final reward of each candidate if the game ends at this scoring with the same
    winner whatever the opponent's Secret is, else None (written from the rules' own states)."""
    mover = position.state.to_move
    out = []
    for c in position.candidates:
        winners = {w.winner for w in position.finals[int(c)]}
        if len(winners) != 1 or None in winners:
            return None
        winner = winners.pop()
        out.append(0.0 if winner == rules.DRAW else (1.0 if winner == mover else -1.0))
    return np.array(out)


@pytest.mark.parametrize("round_limit", [None, 1])
def test_rollout_values_are_the_exact_rewards_of_deciding_positions(tiny_policy, round_limit) -> None:
    """Last-turn Secret choices whose scoring ends the game with the same winner whatever the
    opponent's Secret is: every rollout must return that reward."""
    seen = []
    for i, position in enumerate(last_turn_positions(5, 80, SECRET, round_limit)):
        exact = exact_rewards(position)
        if exact is None:
            continue
        mask = np.array(rules.legal_mask(position.state), dtype=np.int8)
        q = RolloutBot(tiny_policy, seed=i, samples=6, round_limit=round_limit).q_values(
            encode(position.state, position.state.to_move), mask
        )
        assert np.array_equal(np.isnan(q), mask == 0)
        np.testing.assert_array_equal(q[position.candidates], exact)
        seen += exact.tolist()
    assert len(seen) >= 10 and -1.0 in seen and 1.0 in seen  # won and lost: a swapped seat would show


@pytest.mark.parametrize("round_limit", [None, 1])
def test_rollout_values_are_mean_final_rewards(tiny_policy, round_limit) -> None:
    """Anywhere in a game: one value per legal action, each a mean of final rewards in [-1, 1]."""
    for i, (vector, mask) in enumerate(choice_positions(6, seed=2)):
        q = RolloutBot(tiny_policy, seed=i, samples=6, round_limit=round_limit).q_values(vector, mask)
        assert np.array_equal(np.isnan(q), mask == 0)
        assert np.nanmax(np.abs(q)) <= 1
        assert np.all(np.isin(np.round(q[mask == 1] * 6), np.arange(-6, 7)))  # sixths: 6 games each


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
