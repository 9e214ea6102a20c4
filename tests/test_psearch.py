"""PolicySearchBot: its playout values against exact values worked out from the rules, and its choice."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest
import torch
from helpers import ExactPosition, choice_positions, last_turn_positions

from hanamikoji_env import rules
from hanamikoji_env.actions import SECRET, TRADEOFF
from hanamikoji_env.bots.psearch import PolicySearchBot
from hanamikoji_env.nn import PolicyNet
from hanamikoji_env.observation import encode


@pytest.fixture
def tiny_policy() -> PolicyNet:
    torch.manual_seed(0)  # an untrained net: varied, far from uniform move probabilities
    net = PolicyNet(hidden=16, layers=1)
    with torch.no_grad():
        net.policy.weight.mul_(20.0)
    return net


def state_value(state: rules.State) -> float:
    """Seat 0's value of a scored round, written out from the rules' own state."""
    if state.winner is not None:
        return 0.0 if state.winner == rules.DRAW else (1.0 if state.winner == 0 else -1.0)
    points = [sum(v for v, m in zip(rules.VALUES, state.markers, strict=True) if m == p) for p in (0, 1)]
    geishas = [sum(m == p for m in state.markers) for p in (0, 1)]
    lead = (points[0] - points[1]) / 11.0 + (geishas[0] - geishas[1]) / 4.0
    return 0.5 * float(np.clip(lead, -1.0, 1.0))


def exact_values(position: ExactPosition) -> np.ndarray | None:
    """Each candidate's value for the player to move if it is the same whatever the opponent's
    Secret is, else None."""
    sign = 1.0 if position.state.to_move == 0 else -1.0
    values = [{sign * state_value(w) for w in position.finals[int(c)]} for c in position.candidates]
    return np.array([v.pop() for v in values]) if all(len(v) == 1 for v in values) else None


@pytest.mark.parametrize("round_limit", [None, 1])
@pytest.mark.parametrize("token", [SECRET, TRADEOFF])
def test_psearch_values_are_the_exact_values_of_last_turn_positions(tiny_policy, round_limit, token) -> None:
    """At the round's last turn the only hidden card that scores is the opponent's Secret; in
    positions where no Secret changes the outcome, every determinization must give the value
    worked out from the rules (after a Trade-off's first card the policy picks the second).  The
    hand holds just the last token's cards by then, so the candidates differ only in order."""
    seen = []
    for k, position in enumerate(last_turn_positions(7 + token, 60, token, round_limit)):
        exact = exact_values(position)
        if exact is None:
            continue
        bot = PolicySearchBot(tiny_policy, seed=k, samples=8, round_limit=round_limit)
        vector = encode(position.state, position.state.to_move)
        np.testing.assert_allclose(bot.q_values(vector, position.candidates), exact, rtol=0, atol=1e-12)
        seen += exact.tolist()
    # many positions, won, lost and drawn or led either way: a swapped seat or card would show
    assert len(seen) >= 20 and min(seen) < 0 < max(seen)
    assert len(set(seen)) >= (2 if round_limit else 3)  # a round limit ends the game: only +-1, 0


@pytest.mark.parametrize("round_limit", [None, 1])
def test_psearch_with_exact_deals_values_a_rounds_last_move_exactly(tiny_policy, round_limit) -> None:
    """At the round's last move (the Secret chosen last) only the opponent's Secret decides, and
    it is each unseen card with the same chance.  With ``exact=1`` the search takes every deal,
    so its values are that mean exactly, whatever its seed; drawn deals (``exact=0``) are not."""
    mixed = sampled_off = 0
    for k, position in enumerate(last_turn_positions(7, 40, SECRET, round_limit)):
        state = position.state
        opp = 1 - state.to_move
        hidden = [state.secrets[opp], state.removed, *rules.cards_of(state.tradeoffs[opp])]
        share = np.array([hidden.count(g) for g in sorted(set(hidden))]) / len(hidden)
        sign = 1.0 if state.to_move == 0 else -1.0
        outcomes = np.array(
            [[sign * state_value(w) for w in position.finals[int(c)]] for c in position.candidates]
        )
        expected = outcomes @ share
        vector = encode(state, state.to_move)
        for seed in (k, k + 100):
            bot = PolicySearchBot(tiny_policy, seed=seed, samples=24, exact=1, round_limit=round_limit)
            np.testing.assert_allclose(
                bot.q_values(vector, position.candidates), expected, rtol=0, atol=1e-12
            )
        drawn = PolicySearchBot(tiny_policy, seed=k, samples=24, round_limit=round_limit)
        sampled_off += int(not np.allclose(drawn.q_values(vector, position.candidates), expected))
        mixed += int((outcomes.max(axis=1) > outcomes.min(axis=1)).any())
    assert mixed >= 10 and sampled_off >= 5  # the Secret matters, and drawn deals miss its mean


def test_psearch_plays_the_best_score_among_the_policys_top_candidates(tiny_policy) -> None:
    """score = playout value + prior * log p over the `candidates` most likely legal actions."""
    differs = 0
    for k, (vector, mask) in enumerate(choice_positions(12, seed=11, rate=0.15)):
        legal = np.flatnonzero(mask)
        p = PolicySearchBot(tiny_policy).probs(vector[None], mask[None])[0]
        top = legal[np.argsort(-p[legal], kind="stable")][:2]
        for prior in (0.0, 0.05):
            bot = PolicySearchBot(tiny_policy, seed=k, samples=8, candidates=2, prior=prior)
            twin = PolicySearchBot(tiny_policy, seed=k, samples=8, candidates=2, prior=prior)
            score = twin.q_values(vector, top) + prior * np.log(p[top])
            chosen = bot.act({"observation": vector, "action_mask": mask})
            assert chosen in top and score[list(top).index(chosen)] == score.max()
        differs += int(top[np.argmax(score)] != top[0])
    assert differs > 0  # the search overrides the policy's favourite somewhere
    # a prior that outweighs any playout value plays the policy's most likely move
    for vector, mask in choice_positions(8, seed=12, rate=0.15):
        bot = PolicySearchBot(tiny_policy, samples=4, prior=1e6)
        p = bot.probs(vector[None], mask[None])[0]
        assert bot.act({"observation": vector, "action_mask": mask}) == int(np.argmax(p))


def test_psearch_with_one_candidate_plays_the_policy_without_searching(tiny_policy) -> None:
    bot = PolicySearchBot(tiny_policy, candidates=1)
    state = bot.rng.bit_generator.state
    for vector, mask in choice_positions(10, seed=5, rate=0.15):
        p = bot.probs(vector[None], mask[None])[0]
        assert bot.act({"observation": vector, "action_mask": mask}) == int(np.argmax(p))
    assert bot.rng.bit_generator.state == state  # no determinization was drawn


@pytest.mark.slow  # 120 games of the shipped policy's search: about 2.5 min on 2 cores
def test_psearch_over_the_shipped_policy_beats_the_policy_and_search() -> None:
    """Short strength checks with margins: the benchmark (benchmarks/agent_strength.py) measures
    about 0.60 against the policy and 0.73 against search over 450 games; here 60 games each."""
    from hanamikoji_env.bots.spec import parse_player
    from hanamikoji_env.tournament import run_tournament

    psearch = parse_player("psearch:ckpt=checkpoints/ppo_selfplay.pt")
    for opponent in ("ckpt:checkpoints/ppo_selfplay.pt", "search"):
        pair = run_tournament(
            [psearch, parse_player(opponent)], 60, seed=3, workers=2, progress=False, first_only=True
        )["pairs"][0]
        assert pair["win_rate"] > 0.5, (opponent, pair)


def test_psearch_never_tries_a_move_the_policy_rules_out(tiny_policy, monkeypatch) -> None:
    """A legal move at probability 0 (underflow) is not a candidate: log 0 would be -inf."""
    vector, mask = next((v, m) for v, m in choice_positions(20, seed=2, rate=0.15) if m.sum() >= 3)
    legal = np.flatnonzero(mask)
    p = np.zeros(len(mask))
    p[legal[:2]] = (0.3, 0.7)
    bot = PolicySearchBot(tiny_policy, candidates=4)
    tried = []
    monkeypatch.setattr(bot, "probs", lambda obs, m: p[None])
    monkeypatch.setattr(bot, "q_values", lambda v, c: tried.append(c.tolist()) or np.zeros(len(c)))
    assert bot.act({"observation": vector, "action_mask": mask}) == legal[1]
    assert tried == [[legal[1], legal[0]]]


def _load_benchmark(name: str) -> ModuleType:
    path = Path(__file__).resolve().parents[1] / "benchmarks" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("token", [SECRET, TRADEOFF])
def test_psearch_told_the_opponents_cards_values_the_true_position_exactly(tiny_policy, token) -> None:
    """benchmarks/belief_headroom.py's oracle deals the opponent's real Secret and Trade-off
    cards into every determinization, so at the round's last turn its values are the true
    position's exact values, also where the opponent's Secret decides the round."""
    oracle_bot = _load_benchmark("belief_headroom").OracleSearchBot
    decided_by_secret = 0
    for k, position in enumerate(last_turn_positions(11 + token, 40, token)):
        state, opp = position.state, 1 - position.state.to_move
        hidden = [state.secrets[opp], state.removed, *rules.cards_of(state.tradeoffs[opp])]
        true_world = sorted(set(hidden)).index(state.secrets[opp])
        sign = 1.0 if state.to_move == 0 else -1.0
        exact = [sign * state_value(position.finals[int(c)][true_world]) for c in position.candidates]
        decided_by_secret += exact_values(position) is None
        bot = oracle_bot(tiny_policy, seed=k, samples=4)
        bot.truth, bot.seat = state, state.to_move
        vector = encode(state, state.to_move)
        np.testing.assert_allclose(bot.q_values(vector, position.candidates), exact, rtol=0, atol=1e-12)
    assert decided_by_secret >= 5  # positions where uniform deals could not know the value
