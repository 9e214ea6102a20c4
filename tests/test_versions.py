"""Versions: version 2 plugs in as one layout, one kernel and one registry line, and runs wherever
version 1 does; checkpoints load by observation version and layout hash, whatever the package
version; records carry the rules version."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from hanamikoji_env import aec, observation, raw_env, records
from hanamikoji_env.bots.heuristic import HeuristicBot
from hanamikoji_env.bots.policy import PolicyBot
from hanamikoji_env.games import play_game
from hanamikoji_env.nn import CheckpointError, PolicyNet, load_checkpoint, save_checkpoint
from hanamikoji_env.observation import OBS_SIZE
from hanamikoji_env.rules import RULES_VERSION, shuffled_deck
from hanamikoji_env.vector import BatchEngine, random_actions

V2 = observation.VERSIONS[2]


def test_a_new_version_runs_in_the_env_and_the_batch_engine_alike() -> None:
    e = raw_env(observation_version=2)
    assert e.observation_space("player_0")["observation"].shape == (V2.size,)
    rng = np.random.default_rng(0)
    decks = [shuffled_deck(rng) for _ in range(20)]
    e.reset(seed=3, options={"decks": decks})
    venv = BatchEngine(1, seed=0, observation_version=2)
    venv.reset(decks=[decks])
    for _ in range(60):
        obs = e.observe(e.agent_selection)
        v_obs, v_mask = venv.observe(np.array([aec.AGENTS.index(e.agent_selection)]))
        assert (obs["observation"] == v_obs[0]).all() and (obs["action_mask"] == v_mask[0]).all()
        assert obs["observation"][OBS_SIZE] == 1  # this round is recalled
        assert (obs["observation"][:OBS_SIZE] == e.observe(e.agent_selection, 1)["observation"]).all()
        a = int(random_actions(obs["action_mask"][None], rng)[0])
        e.step(a)
        venv.step(np.array([a]))


def test_version_3_is_version_2_without_the_past_rounds() -> None:
    """Version 3 is version 2's first 249 entries (version 1, this round's table) at every decision
    of whole games, in the env and the batch engine alike; what it leaves out is past rounds only."""
    v3 = observation.VERSIONS[3]
    assert v3.size == OBS_SIZE + observation.ROUND_SIZE == 249
    rng = np.random.default_rng(5)
    decks = [shuffled_deck(rng) for _ in range(20)]
    e = raw_env(observation_version=2)
    e.reset(seed=3, options={"decks": decks})
    venv = BatchEngine(1, seed=0, observation_version=3)
    venv.reset(decks=[decks])
    rounds, steps = set(), 0
    while not all(e.terminations.values()):
        agent = e.agent_selection
        two, three = e.observe(agent)["observation"], e.observe(agent, 3)["observation"]
        v_obs, _ = venv.observe(np.array([aec.AGENTS.index(agent)]))
        assert three.shape == (249,) and (three == two[:249]).all() and (v_obs[0] == three).all()
        rounds.add(int(two[observation.OFFSETS["round"].start]))
        a = int(random_actions(e.observe(agent)["action_mask"][None], rng)[0])
        e.step(a)
        venv.step(np.array([a]))
        steps += 1
    assert len(rounds) >= 2 and steps > 40  # past rounds were there to leave out


def test_a_checkpoint_records_its_version_and_plays_in_any_env(tmp_path) -> None:
    torch.manual_seed(0)
    save_checkpoint(tmp_path / "v2.pt", PolicyNet(16, 1, observation_version=2))
    data = load_checkpoint(tmp_path / "v2.pt")
    assert data["observation_version"] == 2 and data["layout_hash"] == V2.layout_hash
    bot = PolicyBot(tmp_path / "v2.pt")
    assert bot.observation_version == 2
    # the same game in a version-1 env and a version-2 env, against a version-1 bot: each bot is
    # given its own version, so both envs play the same moves to the same end
    games = []
    for env_version in (1, 2):
        e = raw_env(observation_version=env_version)
        e.reset(seed=1)
        seats, moves, final = {"player_0": bot, "player_1": HeuristicBot()}, [], {}
        for agent in e.agent_iter():
            _, final[agent], term, trunc, _ = e.last(observe=False)
            player = seats[agent]
            obs = e.observe(agent, player.observation_version)
            assert obs["observation"].shape == (V2.size if player is bot else OBS_SIZE,)
            moves.append(None if term or trunc else player.act(obs))
            e.step(moves[-1])
        games.append((moves, final["player_0"]))
    assert games[0] == games[1] and len(games[0][0]) > 20
    assert play_game((bot, HeuristicBot()), deal_seed=1, round_limit=None)[0] == games[0][1]


def test_a_checkpoint_of_an_unknown_version_is_refused(tmp_path, monkeypatch) -> None:
    save_checkpoint(tmp_path / "v2.pt", PolicyNet(16, 1, observation_version=2))
    monkeypatch.delitem(observation.VERSIONS, 2)
    with pytest.raises(CheckpointError, match=r"reads observation version 2; .* knows versions \[1, 3\]"):
        load_checkpoint(tmp_path / "v2.pt")


def test_checkpoints_load_whatever_the_package_version(tmp_path) -> None:
    """Only the observation version and its layout hash decide: another package version loads,
    and so does a file from before versions were recorded (as version 1, like the stage-7 agent)."""
    save_checkpoint(tmp_path / "a.pt", PolicyNet(16, 1))
    data = torch.load(tmp_path / "a.pt", weights_only=True)
    data["env_version"] = "9.9.0"
    del data["observation_version"]
    torch.save(data, tmp_path / "a.pt")
    assert PolicyBot(tmp_path / "a.pt").observation_version == 1
    legacy = "checkpoints/stages/stage7.pt"  # the agent shipped before observation versions
    assert "observation_version" not in torch.load(legacy, weights_only=True)
    assert PolicyBot(legacy).observation_version == 1


def test_unknown_observation_versions_are_refused_everywhere() -> None:
    for make in (
        lambda: raw_env(observation_version=4),
        lambda: BatchEngine(2, observation_version=4),
        lambda: PolicyNet(16, 1, observation_version=4),
        lambda: observation.observation_space(True),
    ):
        with pytest.raises(ValueError, match=r"observation_version must be one of \[1, 2, 3\]"):
            make()


def test_records_carry_the_rules_version_and_verify_checks_it() -> None:
    e = raw_env()
    e.reset(seed=2)
    rng = np.random.default_rng(0)
    for _agent in e.agent_iter():
        obs, _, term, trunc, _ = e.last()
        e.step(None if term or trunc else int(random_actions(obs["action_mask"][None], rng)[0]))
    d = records.from_env(e, ("a", "b")).to_dict()
    assert d["rules_version"] == RULES_VERSION == 1
    records.verify(records.parse_record(d))
    old = {k: v for k, v in d.items() if k != "rules_version"}  # written before it was recorded
    assert records.parse_record(old).rules_version == 1
    records.verify(records.parse_record(old))
    with pytest.raises(
        records.RecordError, match="played under rules version 2; this package plays version 1"
    ):
        records.verify(records.parse_record(json.loads(json.dumps({**d, "rules_version": 2}))))
    with pytest.raises(records.RecordError, match="rules_version must be an int"):
        records.parse_record({**d, "rules_version": "1"})


def test_training_opponents_each_read_their_own_version() -> None:
    """In one step a bot that reads version 2 and a snapshot of a version-1 learner both play:
    re-encoding for the bot must not hand the snapshot version-2 views."""
    from hanamikoji_env.training.selfplay import Opponents

    engine = BatchEngine(64, seed=1)
    obs, mask, _ = engine.reset()
    opponents = Opponents(64, 2, 0.5, {"random": 0.5}, 0, None)
    opponents.pool.add(PolicyNet(16, 1))
    opponents.new_games(np.arange(64), np.random.default_rng(0))
    opponents.bots["random"].observation_version = 2
    seen = []  # the observation width each call of the snapshots gets
    logits = opponents.pool.logits

    def spy(slots, o, m):
        seen.append(o.shape[1])
        return logits(slots, o, m)

    opponents.pool.logits = spy
    rows = np.flatnonzero(opponents.code != -1)
    moves = opponents.moves(
        rows, obs, mask, rng=np.random.default_rng(0), sample=lambda lg: lg.argmax(1).numpy(), engine=engine
    )
    assert seen == [OBS_SIZE] and mask[rows, moves].all()
    assert set(opponents.code[rows]) >= {0, opponents.schedule.bot_code("random")}
