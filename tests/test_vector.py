"""The batch engine: strict about input, seeded, auto-resetting (identical to the AEC env: test_differential.py)."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import DECK_1, DECK_2, ROUND_2_SCRIPT, round_1_script

from hanamikoji_env import raw_env
from hanamikoji_env.observation import OBS_SIZE
from hanamikoji_env.vector import HanamikojiVectorEnv, VectorHanamikoji, random_actions


def test_scripted_game_outcome_matches_the_hand_worked_result() -> None:
    v = VectorHanamikoji(2)
    script = round_1_script() + ROUND_2_SCRIPT
    _obs, mask, to_play = v.reset(decks=[[DECK_1, DECK_2], [DECK_1, DECK_2]])
    for k, a in enumerate(script):
        _obs, mask, to_play, rewards, done, info = v.step(np.array([a, a]))
        if k < len(script) - 1:
            assert not done.any()
    assert done.all()
    assert rewards.tolist() == [[-1.0, 1.0], [-1.0, 1.0]]
    assert info["winner"].tolist() == [1, 1] and info["rounds"].tolist() == [2, 2]
    # the next game has started on its own: round 1, player_0 to move, tokens available
    assert to_play.tolist() == [0, 0] and mask[:, :4].all()


def test_reset_shapes_and_seeding() -> None:
    v = VectorHanamikoji(16, seed=5)
    obs, mask, to_play = v.reset()
    assert obs.shape == (16, OBS_SIZE) and obs.dtype == np.float32
    assert mask.shape == (16, 23) and mask.dtype == np.int8
    assert to_play.shape == (16,) and to_play.dtype == np.int8 and (to_play == 0).all()
    again = VectorHanamikoji(16, seed=5).reset()
    assert all(np.array_equal(x, y) for x, y in zip((obs, mask, to_play), again, strict=True))
    other = VectorHanamikoji(16, seed=6).reset()
    assert not np.array_equal(obs, other[0])


def test_trajectories_are_deterministic() -> None:
    def run(seed: int) -> list[np.ndarray]:
        v = VectorHanamikoji(32, seed=seed)
        rng = np.random.default_rng(0)
        obs, mask, _ = v.reset()
        out = []
        for _ in range(300):
            obs, mask, _, rewards, _done, _ = v.step(random_actions(mask, rng))
            out += [obs, rewards]
        return out

    a, b = run(9), run(9)
    assert all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))


def test_illegal_actions_name_the_envs_and_step_nothing() -> None:
    v = VectorHanamikoji(4, seed=0)
    _obs, mask, _ = v.reset()
    actions = random_actions(mask, np.random.default_rng(0))
    bad = actions.copy()
    bad[1] = 22
    bad[3] = 99
    with pytest.raises(
        ValueError,
        match=r"illegal actions in 2 envs, nothing was stepped: env 1: action 22.*env 3: action 99",
    ):
        v.step(bad)
    obs2, *_ = v.step(actions)  # the same legal step still works: nothing had moved
    twin = VectorHanamikoji(4, seed=0)
    twin.reset()
    assert np.array_equal(obs2, twin.step(actions)[0])


@pytest.mark.parametrize(
    ("actions", "message"),
    [
        (np.zeros(3, dtype=np.int64), r"shape \(4,\)"),
        (np.zeros(4, dtype=np.float32), "int array"),
        ([[0, 0, 0, 0]], r"shape \(4,\)"),
    ],
)
def test_bad_action_arrays(actions, message) -> None:
    v = VectorHanamikoji(4, seed=0)
    v.reset()
    with pytest.raises(ValueError, match=message):
        v.step(actions)


def test_step_before_reset_and_bad_arguments() -> None:
    with pytest.raises(RuntimeError, match="reset"):
        VectorHanamikoji(2).step(np.zeros(2, dtype=np.int64))
    for bad in (0, -3, 2.0, True):
        with pytest.raises(ValueError, match="num_envs"):
            VectorHanamikoji(bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="round_limit"):
        VectorHanamikoji(2, round_limit=0)
    with pytest.raises(ValueError, match="seed"):
        VectorHanamikoji(2, seed=-1)


@pytest.mark.parametrize(
    ("decks", "message"),
    [
        ([[DECK_1]], r"one list of decks per env \(2\), got 1"),
        ([[DECK_1], [DECK_1[:-1]]], r"decks\[1\]\[0\] \(round 1\): a deck must hold 21 cards, got 20"),
        ([[DECK_1], [[*DECK_1[:-1], 7]]], r"decks\[1\]\[0\] \(round 1\): deck\[20\] = 7 is not a geisha id"),
        ([[DECK_1], [DECK_1, [0] * 21]], r"decks\[1\]\[1\] \(round 2\).*got counts"),
        ("abc", "list of 2 lists of decks"),
        ([[DECK_1], 5], r"decks\[1\] must be a list of decks \(each 21 geisha ids\), got int"),
        ([None, [DECK_1]], r"decks\[0\] must be a list of decks \(each 21 geisha ids\), got NoneType"),
        (
            [[DECK_1], [DECK_1, DECK_1[:-1]]],
            r"decks\[1\]\[1\] \(round 2\): a deck must hold 21 cards, got 20",
        ),
        (
            [[DECK_1], np.array([DECK_1], dtype=np.float64)],
            r"decks\[1\]\[0\] \(round 1\): deck\[0\] = .* not a geisha id",
        ),
        (
            [[DECK_1], [5]],
            r"decks\[1\]\[0\] \(round 1\): a deck must be a sequence of 21 geisha ids, got int",
        ),
    ],
)
def test_bad_decks(decks, message) -> None:
    v = VectorHanamikoji(2, seed=4)
    v.reset()
    before = v.get_state()
    with pytest.raises(ValueError, match=message):
        v.reset(seed=9, decks=decks)
    after = v.get_state()  # a rejected reset changed nothing, the generator included
    assert after["rng"] == before["rng"] and np.array_equal(after["rows"], before["rows"])


def test_out_of_range_actions_are_reported_as_given() -> None:
    v = VectorHanamikoji(2, seed=0)
    _, mask, _ = v.reset()
    actions = random_actions(mask, np.random.default_rng(0)).astype(np.uint64)
    actions[1] = np.uint64(2**63)
    with pytest.raises(
        ValueError, match=r"illegal actions in 1 envs, nothing was stepped: env 1: action 9223372036854775808"
    ):
        v.step(actions)


def test_scripted_decks_apply_to_the_first_game_only_and_ragged_lists_work() -> None:
    e = raw_env()
    e.reset(options={"decks": [DECK_1]})
    first_obs = e.observe("player_0")["observation"]
    v = VectorHanamikoji(2, seed=0)
    obs, mask, _ = v.reset(decks=[[DECK_1, DECK_2], []])
    assert np.array_equal(obs[0], first_obs)
    assert not np.array_equal(obs[1], first_obs)  # env 1 has no script: shuffled
    rng = np.random.default_rng(0)
    for a in round_1_script() + ROUND_2_SCRIPT:
        actions = random_actions(mask, rng)
        actions[0] = a
        obs, mask, _, _, done, _ = v.step(actions)
    assert done[0]
    # env 0's next game is shuffled from the seed, not DECK_1 again
    assert obs[0][0] == 1 and obs[0][100] == 1  # token phase of round 1
    assert not np.array_equal(obs[0], first_obs)


def test_random_actions_are_legal_and_uniform() -> None:
    rng = np.random.default_rng(0)
    mask = np.zeros((20000, 23), dtype=np.int8)
    mask[:, [2, 5, 11]] = 1
    picks = random_actions(mask, rng)
    assert set(np.unique(picks)) == {2, 5, 11}
    counts = np.bincount(picks, minlength=23)[[2, 5, 11]]
    assert np.all(np.abs(counts / 20000 - 1 / 3) < 0.02)
    with pytest.raises(ValueError, match="no legal action"):
        random_actions(np.zeros((2, 23), dtype=np.int8), rng)


def test_gymnasium_vector_adapter() -> None:
    env = HanamikojiVectorEnv(8, seed=0)
    obs, info = env.reset(seed=1)
    assert env.observation_space.contains(obs)
    assert env.single_action_space.n == 23
    rng = np.random.default_rng(0)
    finished = 0
    for _ in range(400):
        acting = obs["to_play"]
        obs, rewards, terminated, truncated, info = env.step(random_actions(obs["action_mask"], rng))
        assert rewards.shape == (8,) and not truncated.any()
        both = info["rewards"]
        assert both.shape == (8, 2) and (both.sum(axis=1) == 0).all()
        assert np.array_equal(info["acting_seat"], acting)
        assert np.array_equal(rewards, both[np.arange(8), acting])  # the reward of the seat that acted
        assert (rewards[~terminated] == 0).all() and (np.abs(rewards[terminated]) == 1).all()
        finished += int(terminated.sum())
        assert np.array_equal(info["_winner"], terminated)
        assert set(np.unique(info["winner"][terminated])) <= {-1, 0, 1}
    assert finished > 20


def test_gymnasium_vector_adapter_runs_under_the_standard_vector_wrappers() -> None:
    from gymnasium.wrappers.vector import NormalizeReward, RecordEpisodeStatistics

    env = NormalizeReward(RecordEpisodeStatistics(HanamikojiVectorEnv(8, seed=0)), gamma=1.0)
    obs, _ = env.reset(seed=3)
    rng = np.random.default_rng(0)
    episodes = []
    for _ in range(300):
        obs, rewards, terminated, _, info = env.step(random_actions(obs["action_mask"], rng))
        assert rewards.shape == (8,) and np.isfinite(rewards).all()
        if "episode" in info:
            ended = info["_episode"]
            assert np.array_equal(ended, terminated)
            episodes += info["episode"]["l"][ended].tolist()
    # a game is about 66 decisions: the recorded lengths are whole games
    assert len(episodes) > 20 and 30 < np.mean(episodes) < 150


def test_get_and_set_state_continue_identically() -> None:
    rng = np.random.default_rng(0)
    v = VectorHanamikoji(16, seed=4)
    _, mask, _ = v.reset()
    for _ in range(100):
        _, mask, *_ = v.step(random_actions(mask, rng))
    saved = v.get_state()
    twin = VectorHanamikoji(16, seed=999)
    _, mask_t, _ = twin.set_state(saved)
    assert np.array_equal(mask_t, mask)
    a, b = [], []
    r1, r2 = np.random.default_rng(5), np.random.default_rng(5)
    m1, m2 = mask, mask_t
    for _ in range(300):  # past several game ends: the deck generator was restored too
        o1, m1, *_ = v.step(random_actions(m1, r1))
        o2, m2, *_ = twin.step(random_actions(m2, r2))
        a.append(o1)
        b.append(o2)
    assert all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))
    with pytest.raises(ValueError, match="shape"):
        VectorHanamikoji(3).set_state(saved)
