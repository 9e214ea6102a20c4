"""The belief over the opponent's hidden hand: the weighted deal, the model, its file."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from hanamikoji_env import belief
from hanamikoji_env.aec import raw_env
from hanamikoji_env.bots.psearch import PolicySearchBot
from hanamikoji_env.bots.spec import parse_player
from hanamikoji_env.engine import C_HANDS
from hanamikoji_env.games import play_env
from hanamikoji_env.infoset import determinized_rows
from hanamikoji_env.nn import CheckpointError, load_policy
from hanamikoji_env.observation import OFFSETS
from hanamikoji_env.pretrained import pretrained_checkpoint
from hanamikoji_env.rules import NUM_GEISHAS


def _an_observation(seed: int = 2) -> np.ndarray:
    """Player 0's observation a few moves into a game (the opponent holds a full hand)."""
    env = raw_env()
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(6):
        mask = env.observe(env.agent_selection)["action_mask"]
        env.step(int(rng.choice(np.flatnonzero(mask))))
    return env.observe(env.agent_selection)["observation"]


def _opponent_hands(rows: np.ndarray) -> np.ndarray:
    return rows[:, C_HANDS + NUM_GEISHAS : C_HANDS + 2 * NUM_GEISHAS]


def test_a_belief_deals_the_opponents_hand_by_its_weights() -> None:
    vector = _an_observation()
    unseen = np.rint(vector[OFFSETS["unseen"]]).astype(int)
    hand = int(vector[OFFSETS["sizes"].start + 1])
    favoured = int(np.argmax(unseen))
    odds = np.full(NUM_GEISHAS, 1e-3)
    odds[favoured] = 1e3
    dealt = _opponent_hands(determinized_rows(vector, np.random.default_rng(0), 200, hand_odds=odds))
    assert (dealt.sum(axis=1) == hand).all()  # every deal is a whole, consistent hand
    assert (dealt[:, favoured] == min(unseen[favoured], hand)).mean() > 0.95  # nearly always all she can
    # even odds deal as the uniform shuffle does: each geisha's mean count in the hand agrees
    even = _opponent_hands(determinized_rows(vector, np.random.default_rng(1), 3000, hand_odds=np.ones(7)))
    uniform = _opponent_hands(determinized_rows(vector, np.random.default_rng(2), 3000))
    assert np.abs(even.mean(axis=0) - uniform.mean(axis=0)).max() < 0.08
    assert np.abs(uniform.mean(axis=0) - unseen * hand / unseen.sum()).max() < 0.08
    with pytest.raises(ValueError, match="finite positive"):
        determinized_rows(vector, np.random.default_rng(0), 1, hand_odds=np.zeros(7))


def test_a_belief_trained_on_self_play_predicts_hands_better_than_a_uniform_deal(tmp_path: Path) -> None:
    policy = load_policy("pretrained")
    obs, hand = belief.collect(policy, 20_000, seed=0, progress=False)
    test_obs, test_hand = belief.collect(policy, 5_000, seed=1, progress=False)
    opponent = obs[:, OFFSETS["sizes"].start + 1]
    assert (hand.sum(axis=1) == opponent).all()  # the label is the opponent's real hand
    assert (hand <= obs[:, OFFSETS["unseen"]]).all()  # among the cards the mover has not seen
    net = belief.train(obs, hand, epochs=2, seed=0)
    learned = belief.nll(belief.hand_chances(net, test_obs), test_obs, test_hand)
    uniform = belief.nll(belief.uniform_chances(test_obs), test_obs, test_hand)
    assert learned < uniform - 0.01, (learned, uniform)
    bins = belief.calibration(belief.hand_chances(net, test_obs), test_obs, test_hand)
    weight = sum(n for _, _, n in bins)
    assert sum(n * abs(p - f) for p, f, n in bins) / weight < 0.05  # calibrated within 5 points
    path = tmp_path / "belief.pt"
    belief.save_belief(net, path)
    again = belief.load_belief(path)
    assert np.array_equal(belief.hand_chances(again, test_obs[:50]), belief.hand_chances(net, test_obs[:50]))


def test_a_belief_learns_from_games_against_other_players_too() -> None:
    """``opponents``: game rows shared among players; a bot's rows are played by the bot in its
    seat (each row with its own generator and game memory, forgotten when a game ends), and
    both players' decisions are kept."""
    policy = load_policy("pretrained")
    bots = [parse_player("heuristic").make(0), parse_player("search:samples=4").make(0)]
    asked = []
    for bot in bots:
        real = bot.act_batch

        def spy(obs, mask, rngs=None, states=None, real=real):
            assert rngs is not None and states is not None and len(rngs) == len(states) == len(obs)
            asked.append(len(obs))
            return real(obs, mask, rngs, states)

        bot.act_batch = spy  # type: ignore[method-assign]
    obs, hand = belief.collect(policy, 12 * 60, seed=3, num_envs=12, progress=False, opponents=[None, *bots])
    # a third of the rows self-play, two thirds meet a bot that makes about half of their moves
    assert 0.2 < sum(asked) / len(obs) < 0.45, sum(asked) / len(obs)
    assert (hand.sum(axis=1) == obs[:, OFFSETS["sizes"].start + 1]).all()
    assert (hand <= obs[:, OFFSETS["unseen"]]).all()
    again = belief.collect(policy, 12 * 60, seed=3, num_envs=12, progress=False, opponents=[None, *bots])
    assert np.array_equal(again[0], obs)  # the same seed, the same games
    alone = belief.collect(policy, 12 * 60, seed=3, num_envs=12, progress=False)
    assert not np.array_equal(alone[0], obs)  # the bots played their rows
    with pytest.raises(ValueError, match="at least one"):
        belief.collect(policy, 10, opponents=[])


def test_a_bad_belief_file_is_refused_in_one_line(tmp_path: Path) -> None:
    net = belief.BeliefNet(8)
    nan = tmp_path / "nan.pt"
    state = net.state_dict()
    state["body.0.weight"][0, 0] = float("nan")
    torch.save({"kind": belief.KIND, "hidden": 8, "state_dict": state}, nan)
    with pytest.raises(ValueError, match=r"body\.0\.weight holds NaN"):
        belief.load_belief(nan)
    with pytest.raises(ValueError, match="is not a belief model"):
        belief.load_belief(pretrained_checkpoint())  # a policy, not a belief
    junk = tmp_path / "junk.pt"
    junk.write_bytes(b"hello, not a checkpoint")
    with pytest.raises(CheckpointError, match="not a PyTorch checkpoint"):
        belief.load_belief(junk)


def test_policy_search_with_a_belief_plays_legal_games(tmp_path: Path) -> None:
    path = tmp_path / "belief.pt"
    belief.save_belief(belief.BeliefNet(16), path)
    bot = parse_player(f"psearch:ckpt=pretrained,samples=4,candidates=2,belief={path}").make(seed=0)
    assert isinstance(bot, PolicySearchBot) and bot.belief is not None
    history = play_env((bot, parse_player("random").make(seed=1)), 3, None).history()
    assert history.over and history.illegal is None
