"""PolicySearchBot: its playout values against exact values worked out from the rules, and its choice."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType, SimpleNamespace

import numpy as np
import pytest
import torch
from helpers import ExactPosition, choice_positions, last_turn_positions

from hanamikoji_env import rules
from hanamikoji_env.actions import SECRET, TRADEOFF
from hanamikoji_env.bots import psearch
from hanamikoji_env.bots.psearch import PolicySearchBot, continuation_values
from hanamikoji_env.bots.rollout import RolloutBot
from hanamikoji_env.bots.spec import parse_player
from hanamikoji_env.engine import C_MARKERS, C_PHASE, C_ROUND, C_STARTER, ROUND_OVER
from hanamikoji_env.infoset import determinized_rows
from hanamikoji_env.nn import PolicyNet, save_checkpoint
from hanamikoji_env.observation import O_HAND, O_ROUND, O_STARTED, encode
from hanamikoji_env.simulate import PLAYOUT_STEPS, playout, round_values


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


@pytest.mark.slow(15)
def test_psearch_over_the_shipped_policy_beats_random() -> None:
    """A smoke test of its strength: it wins about 0.98 against random (``benchmarks/
    agent_strength.py`` measures it against the policy and search, about 0.60 and 0.68
    over 400 games, where 60 games here once took 2.5 minutes of the suite)."""
    from hanamikoji_env.bots.spec import parse_player
    from hanamikoji_env.tournament import run_tournament

    psearch = parse_player("psearch:ckpt=checkpoints/ppo_selfplay.pt")
    pair = run_tournament([psearch, parse_player("random")], 20, seed=3, workers=1, progress=False)["pairs"][
        0
    ]
    assert pair["win_rate"] >= 0.8, pair


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
        bot.env = SimpleNamespace(game=state)  # the game it plays in, as far as it reads it
        vector = encode(state, state.to_move)
        np.testing.assert_allclose(bot.q_values(vector, position.candidates), exact, rtol=0, atol=1e-12)
    assert decided_by_secret >= 5  # positions where uniform deals could not know the value


def scored_rows(n: int, seed: int) -> np.ndarray:
    """Engine rows just scored: random positions' determinizations played to their round's end
    by uniform moves; some end the game there, most go on."""
    rng = np.random.default_rng(seed)
    rows = np.concatenate([determinized_rows(v, rng, 4) for v, _ in choice_positions(n // 4, seed=seed)])
    playout(rows, rng.random((len(rows), PLAYOUT_STEPS)), None)
    return rows


def test_value_leaves_add_the_value_heads_estimate_to_the_markers_potential(monkeypatch) -> None:
    """With ``value=1`` a round that leaves the game going is worth the markers' lead potential
    (``shaping * lead / 2``, unclipped, as training paid it) plus half the difference of the two
    seats' value heads at the next round's start (a bias both share cancels); a game over keeps
    its result.  The head here: 0.5 from the view of the next round's starter, 0.1 from the
    other's."""
    monkeypatch.setattr(psearch, "policy_values", lambda model, obs, mask: 0.1 + 0.4 * obs[:, O_STARTED])
    rows = scored_rows(240, seed=3)
    markers = rows[:, C_MARKERS : C_MARKERS + rules.NUM_GEISHAS]
    values = np.array(rules.VALUES)
    points = ((markers == 0) * values).sum(1) - ((markers == 1) * values).sum(1)
    geishas = (markers == 0).sum(1) - (markers == 1).sum(1)
    potential = 4.0 * 0.5 * (points / 11.0 + geishas / 4.0)
    next_starter = 1 - rows[:, C_STARTER]  # the starting player alternates every round
    going = rows[:, C_PHASE] == ROUND_OVER
    expected = np.where(
        going,
        np.clip(np.where(next_starter == 0, 0.2, -0.2) + potential, -1.0, 1.0),
        round_values(rows.copy()),
    )
    got = continuation_values(rows.copy(), PolicyNet(hidden=16, layers=1), 4.0, np.random.default_rng(0))
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-6)
    assert going.sum() >= 100 and (~going).sum() >= 1  # games going on and games over
    assert set(next_starter[going]) == {0, 1} and (np.abs(potential[going]) > 1.2).any()  # signs, clip
    assert set(got[~going]) <= {-1.0, 0.0, 1.0}


def test_value_leaves_read_the_next_rounds_first_decision(monkeypatch) -> None:
    """The value heads see the next round's first decision from both seats: a fresh hand of
    seven for its starter (six dealt, one drawn) with every token to choose, six for the other
    (not on move), the round number one on."""
    rows = scored_rows(80, seed=5)
    going = rows[:, C_PHASE] == ROUND_OVER
    seen = []

    def spy(model, obs, mask):
        seen.append((obs.copy(), mask.copy()))
        return np.zeros(len(obs))

    monkeypatch.setattr(psearch, "policy_values", spy)
    continuation_values(rows.copy(), PolicyNet(hidden=16, layers=1), 1.0, np.random.default_rng(0))
    ((obs, mask),) = seen
    n = going.sum()
    assert len(obs) == 2 * n
    starter = np.concatenate([1 - rows[going, C_STARTER] == 0, 1 - rows[going, C_STARTER] == 1])
    assert (obs[:, O_STARTED] == starter).all()  # seat 0's views, then seat 1's
    hand = obs[:, O_HAND : O_HAND + rules.NUM_GEISHAS].sum(1)
    assert (hand == np.where(starter, 7, 6)).all()
    assert (obs[:, O_ROUND] == np.tile(rows[going, C_ROUND] + 1, 2)).all()
    assert (mask[starter, :4] == 1).all() and (mask[starter, 4:] == 0).all() and (mask[~starter] == 0).all()


def test_psearch_value_leaves_change_its_values(tiny_policy) -> None:
    """The same search with ``value=1`` values candidates by the whole game, so where rounds go
    on its values differ from the markers' alone (the option is used)."""
    shifted = 0
    for k, (vector, mask) in enumerate(choice_positions(6, seed=21, rate=0.2)):
        candidates = np.flatnonzero(mask)[:3]
        plain = PolicySearchBot(tiny_policy, seed=k, samples=8).q_values(vector, candidates)
        leaves = PolicySearchBot(tiny_policy, seed=k, samples=8, value=1, shaping=1.0).q_values(
            vector, candidates
        )
        shifted += int(not np.allclose(plain, leaves))
    assert shifted >= 4


def test_psearch_value_leaves_read_the_shaping_from_the_checkpoint(tmp_path) -> None:
    """``value=1`` needs the shaping the value head learned with: a checkpoint records it; a
    value head that is not the game's result to go, or a bare network, is a one-line error."""
    net = PolicyNet(hidden=16, layers=1)
    good = {"critic": "policy", "gamma": 1.0, "shaping": 0.5}
    save_checkpoint(tmp_path / "good.pt", net, config=good)
    bot = parse_player(f"psearch:ckpt={tmp_path / 'good.pt'},value=1").make(0)
    assert bot.shaping == 0.5 and "value=1" in repr(bot)
    assert PolicySearchBot(tmp_path / "good.pt").shaping is None  # value=0: markers only
    for name, config, message in [
        ("oracle", good | {"critic": "oracle"}, "critic 'oracle'"),
        ("discounted", good | {"gamma": 0.99}, "gamma 0.99"),
        ("odd", good | {"shaping": "lots"}, "shaping must be a number"),
        ("bare", None, "checkpoint records; it has none"),
    ]:
        extra = {} if config is None else {"config": config}
        save_checkpoint(tmp_path / f"{name}.pt", net, **extra)
        with pytest.raises(ValueError, match=message) as e:
            PolicySearchBot(tmp_path / f"{name}.pt", value=1)
        assert "\n" not in str(e.value)
    for shaping in (None, -1.0, float("nan"), True):
        with pytest.raises(ValueError, match="needs shaping=S"):
            PolicySearchBot(net, value=1, shaping=shaping)
    assert PolicySearchBot(net, value=1, shaping=0.5).shaping == 0.5


@pytest.mark.parametrize("bot", [PolicySearchBot, RolloutBot])
def test_policy_search_bots_refuse_a_policy_of_another_observation_version(bot) -> None:
    """Their playouts encode version 1 on the engine's kernels: a version-2 network is refused
    when the bot is made, not at its first move."""
    with pytest.raises(ValueError, match="searches with observation version 1; this policy reads version 2"):
        bot(PolicyNet(hidden=16, layers=1, observation_version=2))


def test_value_calibration_reads_each_round_start_from_its_movers_side(tmp_path) -> None:
    """benchmarks/value_calibration.py: at a game's first decision the potential is 0, so the
    own-head estimate is the head's constant and the two heads cancel; every result is the
    game's, seen from that round's mover (so it flips with the mover within a game)."""
    net = PolicyNet(hidden=16, layers=1)
    with torch.no_grad():
        net.value.weight.zero_()
        net.value.bias.fill_(0.3)
    save_checkpoint(tmp_path / "p.pt", net, config={"critic": "policy", "gamma": 1.0, "shaping": 1.0})
    starts = _load_benchmark("value_calibration").round_starts(str(tmp_path / "p.pt"), 48, seed=2)
    first = starts["round"] == 1
    assert first.sum() == 48 and (starts["round"] >= 2).sum() >= 20
    np.testing.assert_allclose(starts["own head"][first], 0.3, atol=1e-6)
    np.testing.assert_allclose(starts["both heads"][first], 0.0, atol=1e-6)
    seat0 = starts["final"] * np.where(starts["mover"] == 0, 1, -1)
    for game in range(48):
        assert len(set(seat0[starts["game"] == game])) == 1  # one result per game, from seat 0
    assert set(starts["final"]) <= {-1.0, 0.0, 1.0} and len(set(seat0)) >= 2
    later = ~first
    assert (starts["markers"][later] != 0).any()  # the markers move after a round
