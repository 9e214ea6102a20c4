"""SingleAgentEnv: env checkers, the learner's reward, opponents, and a MaskablePPO run."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env as gym_check_env

from hanamikoji_env import raw_env
from hanamikoji_env.bots import HeuristicBot, RandomBot, parse_player
from hanamikoji_env.nn import PolicyNet, save_checkpoint
from hanamikoji_env.stats import wilson
from hanamikoji_env.vector import BatchEngine, random_actions
from hanamikoji_env.wrappers import OpponentError, SingleAgentEnv


@pytest.mark.parametrize("seat", ["random", 0, 1])
@pytest.mark.filterwarnings("ignore:illegal action")  # the checkers step unmasked random actions
def test_env_checkers_pass(seat) -> None:
    from stable_baselines3.common.env_checker import check_env as sb3_check_env

    gym_check_env(SingleAgentEnv("random", learner_seat=seat), skip_render_check=True)
    sb3_check_env(SingleAgentEnv("heuristic", learner_seat=seat))


def play_episode(env: SingleAgentEnv, rng: np.random.Generator, seed: int) -> tuple[float, dict]:
    obs, info = env.reset(seed=seed)
    total = 0.0
    while True:
        mask = env.action_masks()
        assert mask.any() and np.array_equal(mask, info["action_mask"])
        assert env.observation_space.contains(obs)
        obs, reward, terminated, truncated, info = env.step(int(rng.choice(np.flatnonzero(mask))))
        total += reward
        assert not truncated
        if terminated:
            return total, info


class CountingBot(RandomBot):
    """A RandomBot that counts its moves."""

    moves = 0

    def act(self, obs):
        self.moves += 1
        return super().act(obs)


@pytest.mark.parametrize("seat", [0, 1])
def test_learner_reward_is_the_game_outcome(seat: int) -> None:
    """Over many random games, for both seats, including games the opponent's move ends."""
    opponent = CountingBot(5)
    env = SingleAgentEnv(opponent, learner_seat=seat)
    rng = np.random.default_rng(seat)
    ended_by_opponent = 0
    for game in range(150):
        env.reset(seed=game)
        total, terminated = 0.0, False
        while not terminated:
            mask = env.action_masks()
            assert mask.any()
            before = opponent.moves
            _, reward, terminated, _, info = env.step(int(rng.choice(np.flatnonzero(mask))))
            total += reward
        ended_by_opponent += opponent.moves > before  # the opponent moved after the learner's last move
        winner = env.env.game.winner
        assert total == (1.0 if winner == seat else -1.0), (game, total, winner)
        assert info["learner_seat"] == f"player_{seat}"
        # over: any action may be sampled (a vector env's autoreset step ignores it)
        assert env.action_masks().all() and info["action_mask"].all()
    assert 15 < ended_by_opponent < 135  # both happen often


def test_round_limit_draws_give_zero() -> None:
    env = SingleAgentEnv("random", round_limit=1)
    rng = np.random.default_rng(0)
    outcomes = [play_episode(env, rng, seed=g)[0] for g in range(300)]
    assert set(outcomes) <= {-1.0, 0.0, 1.0} and 0.0 in outcomes


def test_seeded_resets_are_reproducible() -> None:
    a, b = SingleAgentEnv("heuristic"), SingleAgentEnv("heuristic")
    ra, rb = np.random.default_rng(1), np.random.default_rng(1)

    def runs(env: SingleAgentEnv, rng: np.random.Generator) -> list:
        out = []
        for s in range(5):
            total, info = play_episode(env, rng, seed=s)
            out.append((total, info["learner_seat"], info.get("round_summary")))
        return out

    assert runs(a, ra) == runs(b, rb)


def opponent_decisions(env: SingleAgentEnv) -> tuple[list[dict[str, np.ndarray]], list[int]]:
    """The episode just played, replayed from its history: the opponent's observation (in the
    version it reads) at each of its decisions, and the move it made there."""
    history = env.env.history()
    replay = raw_env()
    replay.reset(seed=0, options={"decks": history.decks})
    seen, moves = [], []
    for seat, action in history.actions:
        agent = f"player_{seat}"
        if agent != env.learner:
            view = replay.observe(agent, env._opponent_version)
            seen.append({key: value.copy() for key, value in view.items()})
            moves.append(action)
        replay.step(action)
    return seen, moves


def test_every_kind_of_opponent(tmp_path) -> None:
    """Each kind of opponent plays its own moves: replayed, every one of them is the move a fresh
    opponent of the same kind, seeded as the env seeded it, makes at the same observation (so an
    opponent spec that silently became another player fails here)."""
    ckpt = tmp_path / "p.pt"
    save_checkpoint(ckpt, PolicyNet(hidden=8, layers=1))
    first_legal = lambda obs: int(np.flatnonzero(obs["action_mask"])[0])  # noqa: E731
    rng = np.random.default_rng(0)
    kinds = {
        "heuristic object": (HeuristicBot(0), lambda: HeuristicBot(0)),
        "callable": (first_legal, lambda: first_legal),
        "search spec": ("search:samples=8", lambda: parse_player("search:samples=8").make(seed=0)),
        "checkpoint spec": (f"ckpt:{ckpt}", lambda: parse_player(f"ckpt:{ckpt}").make(seed=0)),
        "random spec": ("random", lambda: parse_player("random").make(seed=0)),
    }
    for kind, (opponent, fresh) in kinds.items():
        env = SingleAgentEnv(opponent)
        seeds = []
        reset = env._reset_opponent
        env._reset_opponent = lambda seed, reset=reset, seeds=seeds: (seeds.append(seed), reset(seed))
        total, _ = play_episode(env, rng, seed=1)
        assert total in (-1.0, 1.0)
        seen, moves = opponent_decisions(env)
        reference = fresh()
        if hasattr(reference, "reset"):
            reference.reset(seed=seeds[-1])
        act = reference.act if hasattr(reference, "act") else reference
        assert [act(view) for view in seen] == moves, kind
    with pytest.raises(ValueError, match="opponent must be"):
        SingleAgentEnv(42)
    with pytest.raises(ValueError, match="unknown player"):
        SingleAgentEnv("alphazero")


def test_illegal_and_bad_actions() -> None:
    env = SingleAgentEnv("random", learner_seat=0)
    env.reset(seed=0)
    illegal = int(np.flatnonzero(~env.action_masks())[0])
    with pytest.warns(UserWarning, match=f"illegal action {illegal} ended the game with -1.*MaskablePPO"):
        _, reward, terminated, _, info = env.step(illegal)
    assert reward == -1.0 and terminated and info["illegal_action"]
    env.reset(seed=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # once per env: a training run is not flooded
        _, reward, _, _, info = env.step(int(np.flatnonzero(~env.action_masks())[0]))
    assert reward == -1.0 and info["illegal_action"]
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)
    strict = SingleAgentEnv("random", illegal_action="raise")
    strict.reset(seed=0)
    with pytest.raises(ValueError, match="illegal action"):
        strict.step(int(np.flatnonzero(~strict.action_masks())[0]))
    with pytest.raises(ValueError, match=r"illegal action 99 .*out of range"):
        strict.step(99)
    for bad in (1.0, True, np.array([1, 2])):  # as raw_env: the one action check
        with pytest.raises(TypeError, match="must be an int"):
            strict.step(bad)
    strict.step(np.array(int(np.flatnonzero(strict.action_masks())[0])))  # 0-d integer arrays are fine
    for seat in (2, True, False, 0.0, 1.0, "0", None):
        with pytest.raises(ValueError, match="learner_seat"):
            SingleAgentEnv("random", learner_seat=seat)
    SingleAgentEnv("random", learner_seat=np.int64(1)).reset(seed=0)


def test_an_opponent_that_fails_is_an_error_not_a_learner_loss() -> None:
    calls = []

    def flaky(obs: dict) -> int:
        calls.append(1)
        if len(calls) == 3:
            raise KeyError("boom")
        return int(np.flatnonzero(obs["action_mask"])[0])

    env = SingleAgentEnv(flaky, learner_seat=0)
    env.reset(seed=0)
    with pytest.raises(OpponentError, match=r"the opponent .* failed \(KeyError: 'boom'\).*call reset\(\)"):
        while True:
            env.step(int(np.flatnonzero(env.action_masks())[0]))
    # the learner is not scored for it: the episode is over until reset, not lost
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)
    env.reset(seed=1)
    assert env.action_masks().any()
    cheater = SingleAgentEnv(lambda obs: int(np.flatnonzero(obs["action_mask"] == 0)[0]), learner_seat=1)
    with pytest.raises(OpponentError, match="illegal action"):
        cheater.reset(seed=0)  # the opponent moves first and picks an illegal move


def test_render_shows_the_learners_view() -> None:
    env = SingleAgentEnv("random", learner_seat=1, render_mode="ansi")
    env.reset(seed=0)
    assert "private to player_1" in env.render()


@pytest.mark.slow(25)
def test_maskable_ppo_beats_random_after_a_short_run(tmp_path) -> None:
    """Budget: 30,000 timesteps of MaskablePPO against RandomBot (about 40 s on 2 cores).
    Margin: over 300 evaluation episodes the win rate's Wilson lower bound is above 0.55."""
    from sb3_contrib import MaskablePPO
    from sb3_contrib.common.maskable.evaluation import evaluate_policy
    from stable_baselines3.common.monitor import Monitor
    from stable_baselines3.common.vec_env import DummyVecEnv

    venv = DummyVecEnv([lambda: SingleAgentEnv("random") for _ in range(4)])
    venv.seed(0)
    model = MaskablePPO(
        "MlpPolicy", venv, n_steps=256, batch_size=256, n_epochs=4, learning_rate=1e-3, gamma=1.0,
        ent_coef=0.01, policy_kwargs={"net_arch": [64, 64]}, seed=0, verbose=0,
    )  # fmt: skip
    model.learn(30_000)
    env = Monitor(SingleAgentEnv("random"))
    env.reset(seed=123)
    rewards, _ = evaluate_policy(model, env, n_eval_episodes=300, return_episode_rewards=True)
    wins = int((np.array(rewards) > 0).sum())
    assert wilson(wins, 300)[0] > 0.55, wins
    # the saved zip plays through the tournament's ckpt: spec (loaded without unpickling code)
    model.save(tmp_path / "m.zip")
    from hanamikoji_env.bots.spec import parse_player

    bot = parse_player(f"ckpt:{tmp_path / 'm.zip'}").make(seed=0)
    total, _ = play_episode(SingleAgentEnv(bot), np.random.default_rng(0), seed=3)
    assert total in (-1.0, 1.0)


@pytest.mark.slow
def test_train_sb3_script_end_to_end(tmp_path) -> None:
    import json

    from hanamikoji_env.training.train_sb3 import main

    summary = main(
        ["--config", "configs/sb3_maskable_ppo.yaml", "--no-progress", f"runs_dir={tmp_path}", "run_name=t",
         "total_timesteps=1024", "n_envs=2", "n_steps=128", "batch_size=64", "snapshot_every=512",
         "eval_episodes=4", "eval_games=4", "opponents={random: 0.5, self: 0.5}"]
    )  # fmt: skip
    run = tmp_path / "t"
    assert (run / "final.zip").is_file() and sorted(p.name for p in (run / "snapshots").iterdir()) == [
        "step_1024.zip",
        "step_512.zip",
    ]
    assert json.loads((run / "summary.json").read_text())["timesteps"] == summary["timesteps"] >= 1024
    assert (run / "eval" / "results.json").is_file()
    assert 0 <= summary["evaluate_policy_vs_random"] <= 1


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("learning_rate=.nan", r"learning_rate must be a finite number in \(0, 1\], got nan"),
        ("ent_coef=.inf", "ent_coef must be a finite number"),
        (f"seed={2**64}", "seed must be a finite number"),
        ("net_arch=[100000000]", "net_arch must be"),
        ("opponents={random: .nan}", r"opponents: shares in \[0, 1\]"),
        ("eval_bots=[&a random, *a]", "aliases"),
    ],
)
def test_train_sb3_config_errors_are_usage_errors(override, message, capsys) -> None:
    from hanamikoji_env.training.train_sb3 import main

    with pytest.raises(SystemExit) as caught:
        main(["--config", "configs/sb3_maskable_ppo.yaml", override])
    assert caught.value.code == 2
    assert re.search(message, capsys.readouterr().err)


def test_gymnasium_make_builds_the_single_agent_env_by_its_id() -> None:
    import gymnasium

    from hanamikoji_env import GYMNASIUM_ID
    from hanamikoji_env.wrappers import SingleAgentEnv

    e = gymnasium.make(GYMNASIUM_ID, opponent="heuristic", learner_seat=1)
    assert isinstance(e.unwrapped, SingleAgentEnv) and e.unwrapped.learner_seat == 1
    e.reset(seed=0)
    _, _, terminated, truncated, info = e.step(int(np.flatnonzero(e.unwrapped.action_masks())[0]))
    assert not terminated and not truncated and "illegal_action" not in info
    e.close()


def test_random_actions_give_finished_rows_an_action_the_engine_ignores() -> None:
    """With ``autoreset=False`` finished games stay finished, their masks all zero; the package's
    own ``random_actions`` steps them as documented (their actions are ignored)."""
    engine = BatchEngine(4, seed=0, autoreset=False)
    _, mask, _ = engine.reset()
    rng = np.random.default_rng(0)
    finished = np.zeros(4, bool)
    for _ in range(2000):
        _, mask, _, _, done, _ = engine.step(random_actions(mask, rng))
        finished |= done
        if finished.all():
            break
    assert finished.all() and not mask.any()
    assert (random_actions(mask, rng) == 0).all()
