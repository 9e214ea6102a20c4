"""The batch engine: strict about input, seeded, auto-resetting (identical to the AEC env: test_differential.py)."""

from __future__ import annotations

import gymnasium
import gymnasium.wrappers.vector
import numpy as np
import pytest
from helpers import DECK_1, DECK_2, ROUND_2_SCRIPT, round_1_script

from hanamikoji_env import raw_env, rules
from hanamikoji_env.observation import OBS_SIZE
from hanamikoji_env.vector import BatchEngine, HanamikojiVectorEnv, random_actions


def test_scripted_game_outcome_matches_the_hand_worked_result() -> None:
    v = BatchEngine(2)
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
    v = BatchEngine(16, seed=5)
    obs, mask, to_play = v.reset()
    assert obs.shape == (16, OBS_SIZE) and obs.dtype == np.float32
    assert mask.shape == (16, 23) and mask.dtype == np.int8
    assert to_play.shape == (16,) and to_play.dtype == np.int8 and (to_play == 0).all()
    again = BatchEngine(16, seed=5).reset()
    assert all(np.array_equal(x, y) for x, y in zip((obs, mask, to_play), again, strict=True))
    other = BatchEngine(16, seed=6).reset()
    assert not np.array_equal(obs, other[0])


def test_trajectories_are_deterministic() -> None:
    def run(seed: int) -> list[np.ndarray]:
        v = BatchEngine(32, seed=seed)
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
    v = BatchEngine(4, seed=0)
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
    twin = BatchEngine(4, seed=0)
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
    v = BatchEngine(4, seed=0)
    v.reset()
    with pytest.raises(ValueError, match=message):
        v.step(actions)


def test_step_before_reset_and_bad_arguments() -> None:
    with pytest.raises(RuntimeError, match="reset"):
        BatchEngine(2).step(np.zeros(2, dtype=np.int64))
    for bad in (0, -3, 2.0, True):
        with pytest.raises(ValueError, match="num_envs"):
            BatchEngine(bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="round_limit"):
        BatchEngine(2, round_limit=0)
    with pytest.raises(ValueError, match="seed"):
        BatchEngine(2, seed=-1)


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
    v = BatchEngine(2, seed=4)
    v.reset()
    before = v.get_state()
    with pytest.raises(ValueError, match=message):
        v.reset(seed=9, decks=decks)
    after = v.get_state()  # a rejected reset changed nothing, the generator included
    assert after["rng"] == before["rng"] and np.array_equal(after["rows"], before["rows"])


def test_out_of_range_actions_are_reported_as_given() -> None:
    v = BatchEngine(2, seed=0)
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
    v = BatchEngine(2, seed=0)
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
    # rows with no legal action (finished games under autoreset=False) get 0, which the engine ignores
    assert list(random_actions(np.zeros((2, 23), dtype=np.int8), rng)) == [0, 0]


NEXT, SAME = gymnasium.vector.AutoresetMode.NEXT_STEP, gymnasium.vector.AutoresetMode.SAME_STEP


@pytest.mark.parametrize("mode", [NEXT, SAME])
def test_gymnasium_vector_adapter(mode) -> None:
    env = HanamikojiVectorEnv(8, seed=0, autoreset_mode=mode)
    assert env.metadata["autoreset_mode"] == mode
    obs, info = env.reset(seed=1)
    assert env.observation_space.contains(obs)
    assert env.single_action_space.n == 23
    rng = np.random.default_rng(0)
    finished, ended = 0, np.zeros(8, bool)
    for _ in range(400):
        acting = obs["to_play"]
        obs, rewards, terminated, truncated, info = env.step(random_actions(obs["action_mask"], rng))
        assert env.observation_space.contains(obs)
        assert rewards.shape == (8,) and not truncated.any()
        both = info["rewards"]
        assert both.shape == (8, 2) and (both.sum(axis=1) == 0).all()
        assert np.array_equal(info["acting_seat"], acting)
        assert np.array_equal(rewards, both[np.arange(8), acting])  # the reward of the seat that acted
        assert (rewards[~terminated] == 0).all() and (np.abs(rewards[terminated]) == 1).all()
        finished += int(terminated.sum())
        assert np.array_equal(info["_winner"], terminated)
        assert set(np.unique(info["winner"][terminated])) <= {-1, 0, 1}
        phases = obs["observation"][:, :7].argmax(1)
        if mode == NEXT:  # the final view now, a new game at the next step (reward 0, action ignored)
            assert (phases[terminated] == rules.Phase.GAME_OVER).all() and obs["action_mask"][
                terminated
            ].all()
            assert not (terminated & ended).any() and (rewards[ended] == 0).all()
            assert "final_obs" not in info
        else:  # a new game at once; the final view in final_obs
            assert (phases < rules.Phase.ROUND_OVER).all()
            assert np.array_equal(info.get("_final_obs", np.zeros(8, bool)), terminated)
            for i in np.flatnonzero(terminated):
                final = info["final_obs"][i]
                assert final["observation"][:7].argmax() == rules.Phase.GAME_OVER
                assert final["to_play"] == acting[i] and info["final_info"]["winner"][i] == info["winner"][i]
        ended = terminated
    assert finished > 20


def test_bad_autoreset_modes_are_refused() -> None:
    with pytest.raises(ValueError, match="autoreset_mode must be one of"):
        HanamikojiVectorEnv(2, autoreset_mode=gymnasium.vector.AutoresetMode.DISABLED)
    with pytest.raises(ValueError, match="autoreset_mode must be one of"):
        HanamikojiVectorEnv(2, autoreset_mode="sometimes")


def test_autoreset_modes_are_accepted_by_the_names_the_error_lists() -> None:
    for text in ("NEXT_STEP", "next_step", "NextStep"):
        assert HanamikojiVectorEnv(2, autoreset_mode=text).autoreset_mode == NEXT
    for text in ("SAME_STEP", "SameStep"):
        assert HanamikojiVectorEnv(2, autoreset_mode=text).autoreset_mode == SAME


def _random_masked_steps(env, steps: int, mask_of, rng: np.random.Generator) -> list[float]:
    """Random legal play through ``env`` (a wrapped HanamikojiVectorEnv, the masks read by
    ``mask_of(obs, info)``); the episode lengths RecordEpisodeStatistics reported."""
    obs, info = env.reset(seed=3)
    lengths = []
    for _ in range(steps):
        obs, rewards, terminated, _, info = env.step(random_actions(mask_of(obs, info), rng))
        assert np.isfinite(rewards).all()
        if "episode" in info:
            assert np.array_equal(info["_episode"], terminated)
            lengths += info["episode"]["l"][terminated].tolist()
    return lengths


OBSERVATION_WRAPPERS = {
    "NormalizeObservation": lambda e: gymnasium.wrappers.vector.NormalizeObservation(e),
    "FlattenObservation": lambda e: gymnasium.wrappers.vector.FlattenObservation(e),
    "RescaleObservation": lambda e: gymnasium.wrappers.vector.RescaleObservation(
        e, np.float32(0), np.float32(1)
    ),
    "DtypeObservation": lambda e: gymnasium.wrappers.vector.DtypeObservation(e, np.float32),
    "TransformObservation": lambda e: gymnasium.wrappers.vector.TransformObservation(e, np.sqrt),
    "FilterObservation": lambda e: gymnasium.wrappers.vector.FilterObservation(
        e, ["observation", "action_mask"]
    ),
}
OTHER_WRAPPERS = {
    "NormalizeReward": lambda e: gymnasium.wrappers.vector.NormalizeReward(e, gamma=1.0),
    "ClipReward": lambda e: gymnasium.wrappers.vector.ClipReward(e, -0.5, 0.5),
    "DictInfoToList": lambda e: gymnasium.wrappers.vector.DictInfoToList(e),
}
NEEDS_DICT = {"FilterObservation", "FlattenObservation"}
"""Wrappers of a dict observation (FlattenObservation of the flat Box would be a no-op)."""
NEEDS_BOX = {"NormalizeObservation", "RescaleObservation", "DtypeObservation", "TransformObservation"}
"""Wrappers of an array observation (TransformObservation: with an array function, as here)."""


def _mask_of(name: str, flat: bool):
    if flat:
        return lambda obs, info: info[0]["action_mask"] if isinstance(info, list) else info["action_mask"]
    if name == "FlattenObservation":  # the dict flattened, keys sorted: action_mask comes first
        return lambda obs, info: obs[:, :23].astype(np.int8)
    return lambda obs, info: obs["action_mask"]


@pytest.mark.parametrize(
    ("name", "flat"),
    [
        (n, flat)
        for n in sorted(OBSERVATION_WRAPPERS)
        for flat in (False, True)
        if n not in (NEEDS_DICT if flat else NEEDS_BOX)
    ],
)
def test_gymnasiums_observation_wrappers_run_in_next_step_mode(name: str, flat: bool) -> None:
    """Each on the observation it transforms: a dict (flat=False) or the flat Box (docs say which)."""
    base = HanamikojiVectorEnv(8, seed=0, autoreset_mode=NEXT, flat=flat)
    env = gymnasium.wrappers.vector.RecordEpisodeStatistics(OBSERVATION_WRAPPERS[name](base))
    lengths = _random_masked_steps(env, 300, _mask_of(name, flat), np.random.default_rng(0))
    # a game is about 66 decisions, and NEXT_STEP counts its restart step too
    assert len(lengths) > 20 and 30 < np.mean(lengths) < 150


@pytest.mark.parametrize("name", sorted(OTHER_WRAPPERS))
@pytest.mark.parametrize("flat", [False, True])
@pytest.mark.parametrize("mode", [NEXT, SAME])
def test_gymnasiums_reward_and_info_wrappers_run_in_both_modes(name: str, flat: bool, mode) -> None:
    base = HanamikojiVectorEnv(8, seed=0, autoreset_mode=mode, flat=flat)
    env = OTHER_WRAPPERS[name](gymnasium.wrappers.vector.RecordEpisodeStatistics(base))
    if name == "DictInfoToList":  # per-env info dicts: the episode stats move into each
        obs, infos = env.reset(seed=3)
        rng, seen = np.random.default_rng(0), 0
        for _ in range(300):
            mask = np.stack([i["action_mask"] for i in infos]) if flat else obs["action_mask"]
            obs, _, terminated, _, infos = env.step(random_actions(mask, rng))
            seen += sum("episode" in infos[i] for i in np.flatnonzero(terminated))
        assert seen > 20
        return
    lengths = _random_masked_steps(env, 300, _mask_of(name, flat), np.random.default_rng(0))
    assert len(lengths) > 20 and 30 < np.mean(lengths) < 150


@pytest.mark.parametrize("name", sorted(OBSERVATION_WRAPPERS))
def test_gymnasiums_observation_wrappers_refuse_same_step_mode(name: str) -> None:
    """Gymnasium's own rule, stated in the docs: observation wrappers need NEXT_STEP."""
    flat = name not in NEEDS_DICT
    with pytest.raises(AssertionError):
        OBSERVATION_WRAPPERS[name](HanamikojiVectorEnv(2, autoreset_mode=SAME, flat=flat))


def _in_play(
    num_envs: int, seed: int, steps: int, rng: np.random.Generator, observation_version: int = 1
) -> tuple[BatchEngine, np.ndarray]:
    """An engine after ``steps`` random steps from its reset, and its mask."""
    engine = BatchEngine(num_envs, seed=seed, observation_version=observation_version)
    _, mask, _ = engine.reset()
    for _ in range(steps):
        _, mask, *_ = engine.step(random_actions(mask, rng))
    return engine, mask


def test_get_and_set_state_continue_identically() -> None:
    rng = np.random.default_rng(0)
    v, mask = _in_play(16, 4, 100, rng)
    saved = v.get_state()
    twin = BatchEngine(16, seed=999)
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
        BatchEngine(3).set_state(saved)


def test_the_engine_s_old_name_still_imports_with_a_deprecation_warning() -> None:
    import hanamikoji_env
    from hanamikoji_env import vector

    for module in (hanamikoji_env, vector):
        with pytest.warns(DeprecationWarning, match="VectorHanamikoji is now BatchEngine"):
            assert module.VectorHanamikoji is BatchEngine


def test_returned_observations_belong_to_the_caller() -> None:
    """The engine hands out a new observation array each call (no copy of its own): one the caller
    keeps is never written again, and writing into it changes nothing in the engine."""
    engine = BatchEngine(8, seed=0, observation_version=2)
    obs, mask, _ = engine.reset()
    kept = obs.copy()
    obs[:] = -1.0  # the caller scribbles on its array
    again, _ = engine.observe(engine.to_play())
    assert (again == kept).all()
    rng = np.random.default_rng(0)
    obs2, mask2, *_ = engine.step(random_actions(mask, rng))
    assert obs2 is not obs and (obs == -1.0).all()  # the step wrote a new array
    before = obs2.copy()
    engine.step(random_actions(mask2, rng))
    assert (obs2 == before).all()


def test_a_state_saved_before_rows_kept_a_log_resumes() -> None:
    """Training checkpoints hold the engine's rows; one written before the log existed (its rows
    only the position's columns) continues the same games, with an empty log: version 2 recalls
    nothing of the rounds in flight, and every round dealt after is recalled."""
    from hanamikoji_env.engine import GAME_WIDTH

    rng = np.random.default_rng(0)
    engine, mask = _in_play(16, 3, 30, rng, observation_version=2)
    state = engine.get_state()
    state["rows"] = state["rows"][:, :GAME_WIDTH]
    old = BatchEngine(16, observation_version=2)
    obs, mask2, _ = old.set_state(state)
    assert (mask2 == mask).all() and (obs[:, OBS_SIZE:] == 0).all()  # nothing recalled, nothing made up
    for _ in range(200):
        a = random_actions(mask2, rng)
        obs, mask2, *_ = old.step(a)
    assert obs[:, OBS_SIZE].sum() > 0  # rounds dealt since are recalled


@pytest.mark.parametrize(
    ("column", "value", "message"),
    [
        ("phase", 9, "outside \\[0, 6\\]"),
        ("hands", -1, "outside \\[0, 5\\]"),
        ("pile", 7, "outside \\[0, 6\\]"),
        ("log", 7 << 12, "a log entry no game writes"),  # a selected card 7: past a round table's end
        ("log", -1, "a log entry no game writes"),
    ],
)
def test_a_saved_state_whose_rows_no_game_makes_is_refused(column: str, value: int, message: str) -> None:
    """A training checkpoint's rows go straight into the kernels, which index arrays with them
    unchecked: a crafted one is refused in one line before any kernel runs."""
    from hanamikoji_env import engine as e

    engine, _ = _in_play(8, 1, 100, np.random.default_rng(0), observation_version=2)
    state = engine.get_state()
    BatchEngine(8).set_state(state)  # a real state passes
    at = {"phase": e.C_PHASE, "hands": e.C_HANDS + 3, "pile": e.C_PILE + 2, "log": e.C_LOG + 5}[column]
    state["rows"][3, at] = value
    with pytest.raises(ValueError, match=message):
        BatchEngine(8).set_state(state)
