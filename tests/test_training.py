"""PPO self-play: config handling, credit assignment, end to end, resume, learning."""

from __future__ import annotations

import json
import os
import re
from dataclasses import asdict
from pathlib import Path

import numpy as np
import pytest
import torch

from hanamikoji_env.bots.policy import PolicyBot
from hanamikoji_env.nn import PolicyNet, load_checkpoint, save_checkpoint
from hanamikoji_env.stats import wilson
from hanamikoji_env.training.config import Config, load_config
from hanamikoji_env.training.curriculum import load_curriculum
from hanamikoji_env.training.ppo import CHECKPOINT, POLICY, Trainer, TrainingDivergedError, gae, train
from hanamikoji_env.training.selfplay import Opponents
from hanamikoji_env.training.train import main as train_main
from hanamikoji_env.vector import BatchEngine, random_actions

TINY = {
    "num_envs": 16, "rollout_steps": 32, "hidden": 32, "layers": 1, "num_minibatches": 4, "update_epochs": 2,
    "total_decisions": 10_000_000, "eval_every": 0, "eval_games": 20, "checkpoint_every": 1, "snapshot_every": 1,
    "pool_share": 0.3, "bot_shares": {"random": 0.1, "heuristic": 0.1}, "shaping": 1.0, "torch_threads": 1,
}  # fmt: skip


def test_config_from_yaml_with_overrides(tmp_path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("num_envs: 8\nbot_shares: {random: 0.2}\nlearning_rate: 1\n")
    cfg = load_config(path, ["rollout_steps=16", "target_kl=0.02", "run_name=x"])
    assert (cfg.num_envs, cfg.rollout_steps, cfg.target_kl, cfg.learning_rate) == (8, 16, 0.02, 1.0)
    assert cfg.bot_shares == {"random": 0.2} and cfg.run_name == "x"


@pytest.mark.parametrize(
    ("text", "overrides", "message"),
    [
        ("num_env: 8\n", [], "unknown keys \\['num_env'\\]"),
        ("num_envs: eight\n", [], "num_envs must be int"),
        ("num_envs: 0\n", [], r"num_envs must be a finite number in \[1, 65536\], got 0"),
        ("gamma: 1.5\n", [], r"gamma must be a finite number in \[0, 1\]"),
        ("ent_coef: .inf\n", [], r"ent_coef must be a finite number in \[0, 1\], got inf"),
        ("learning_rate: .nan\n", [], r"learning_rate must be a finite number in \(0, 1\], got nan"),
        ("learning_rate: 0\n", [], r"learning_rate must be a finite number in \(0, 1\]"),
        ("target_kl: -1\n", [], r"target_kl must be a finite number in \(0, 10\], got -1"),
        (f"seed: {2**64 + 5}\n", [], r"seed must be a finite number in \[0, 4.29497e\+09\]"),
        ("max_grad_norm: .inf\n", [], "max_grad_norm must be a finite number"),
        ("hidden: 100000000\n", [], r"hidden must be a finite number in \[1, 4096\]"),
        ("num_envs: 65536\nrollout_steps: 4096\n", [], "num_envs \\* rollout_steps must be at most"),
        ("bot_shares: {random: .nan}\n", [], r"bot_shares and exploiter_share must be in \[0, 1\]"),
        ("", ["shaping=-1"], "shaping must be a finite number"),
        ("", ["round_limit=0"], "round_limit must be a finite number"),
        ("bot_shares: {alphazero: 0.1}\n", [], "bot_shares: bad bot 'alphazero'"),
        ("bot_shares: {'search:samples=0': 0.1}\n", [], r"samples of search must be an int in \[1, 20000\]"),
        (
            "bot_shares: {'search:samples=99999999999999999999': 0.1}\n",
            [],
            "samples of search must be an int",
        ),
        (
            "bot_shares: {'ckpt:/no/such.pt': 0.1}\n",
            [],
            r"bot_shares: bad bot 'ckpt:/no/such.pt'.*does not exist",
        ),
        ("bot_shares: {'sampled:ckpt=/no/such.pt': 0.1}\n", [], "bad bot 'sampled:ckpt=/no/such.pt'"),
        (
            "eval_bots: ['rollout:ckpt=checkpoints/ppo_selfplay.pt']\n",
            [],
            "only random, heuristic, search and",
        ),
        (
            "bot_shares: {'psearch:ckpt=checkpoints/ppo_selfplay.pt': 0.5}\n",
            [],
            "only random, heuristic, search and",
        ),
        ("eval_bots: [random, minimax]\n", [], "eval_bots: bad bot 'minimax'"),
        ("pool_share: 0.8\nbot_shares: {random: 0.3}\n", [], "add up to at most 1"),
        ("- a list\n", [], "mapping"),
        ("a: [unclosed\n", [], "not valid YAML"),
        ("", ["num_envs"], "key=value"),
        ("", ["anneal_lr=maybe"], "anneal_lr must be bool"),
        ("", ["critic=omniscient"], "critic must be 'policy' or 'oracle'"),
        ("", ["run_name=a/b"], "plain folder name"),
        ("", ["init_from=/no/such.pt"], "init_from: /no/such.pt does not exist"),
    ],
)
def test_config_errors(tmp_path, text, overrides, message) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(text)
    with pytest.raises(ValueError, match=message):
        load_config(path, overrides)


ALIAS_BOMB = (
    "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
    + "".join(
        f"{c}: &{c} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]\n"
        for p, c in zip("abcdefgh", "bcdefghi", strict=True)
    )
    + "bot_shares: {*i: 0.1}\n"
)


@pytest.mark.parametrize(
    ("text", "overrides", "message"),
    [
        (ALIAS_BOMB, [], r"not valid YAML: aliases \(\*name\) are not allowed"),
        ("", ["eval_bots=[&a random, *a]"], "aliases"),
        ("eval_bots: [" + ", ".join(["random"] * 40) + "]\n", [], "eval_bots may hold at most 32 entries"),
        ("bot_shares: {" + ", ".join(f"b{i}: 0.01" for i in range(40)) + "}\n", [], "at most 32 entries"),
        ("run_name: [" + ", ".join(["x" * 100] * 30) + "]\n", [], "run_name must be"),
    ],
)
def test_hostile_configs_are_refused_quickly_with_short_messages(tmp_path, text, overrides, message) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(text)
    with pytest.raises(ValueError, match=message) as caught:
        load_config(path, overrides)
    assert len(str(caught.value)) < 1000


def test_oversized_config_files_are_refused_unread(tmp_path) -> None:
    path = tmp_path / "big.yaml"
    path.write_text("# padding\n" * 200_000)
    with pytest.raises(ValueError, match=r"more than a config file may be \(1 MiB\): refused unread"):
        load_config(path)


def test_shipped_configs_load() -> None:
    assert load_config("configs/quick.yaml").run_name == "quick"
    cfg = load_config("configs/quick.yaml", ["bot_shares={'search:samples=50': 0.1}", "eval_bots=[search]"])
    assert cfg.bot_shares == {"search:samples=50": 0.1} and cfg.eval_bots == ["search"]


def test_the_previous_agents_curriculum_is_one_file_of_ten_chained_stages() -> None:
    stages = load_curriculum("configs/ppo_selfplay.yaml")
    assert [s.name for s in stages] == [f"stage{n}" for n in range(1, 11)]
    assert [s.updates for s in stages] == [890, 710, 280, 130, None, None, None, 410, None, None]
    by = {n: s.cfg for n, s in enumerate(stages, 1)}
    assert by[1].init_from is None and by[1].learning_rate == 0.001
    for n in range(2, 11):  # each stage starts from the previous stage's policy
        assert by[n].init_from == f"runs/ppo_selfplay/stage{n - 1}/policy.pt"
        assert by[n].runs_dir == "runs/ppo_selfplay" and by[n].run_name == f"stage{n}"
    assert by[2].bot_shares == {"heuristic": 0.25, "random": 0.05}
    assert by[5].bot_shares == {"heuristic": 0.15, "random": 0.3, "search:samples=50,candidates=6": 0.4}
    assert by[6].bot_shares == by[5].bot_shares and (by[5].hidden, by[6].hidden) == (256, 512)
    assert by[7].bot_shares == {"heuristic": 0.1, "random": 0.2, "search:samples=50,candidates=6": 0.6}
    fine_tuning = {"heuristic": 0.25, "random": 0.05, "search:samples=50,candidates=6": 0.5}
    assert all(by[n].bot_shares == fine_tuning and by[n].hidden == 512 for n in (8, 9, 10))
    assert [by[n].seed for n in (8, 9, 10)] == [3, 4, 5]  # the runs in docs/previous_agents.md
    assert [by[n].learning_rate for n in (8, 9, 10)] == [0.0002, 0.00016, 0.00012]
    assert [by[n].total_decisions for n in (3, 4, 5, 6, 7, 8, 9, 10)] == [
        45_000_000,
        10_000_000,
        8_000_000,
        15_000_000,
        2_500_000,
        36_000_000,
        20_000_000,
        22_000_000,
    ]
    assert all(s.cfg.num_envs == 512 and s.cfg.shaping == 1.0 for s in stages)
    assert load_curriculum("configs/ppo_selfplay.yaml", ["num_envs=64"])[6].cfg.num_envs == 64


def test_the_shipped_agents_recipe_is_a_2_hour_stage_a_wider_2_hour_stage_then_a_league() -> None:
    first, second = load_curriculum("from_scratch")
    assert (first.name, second.name) == ("stage1", "stage2") and first.updates is None is second.updates
    assert first.run_dir == Path("runs/from_scratch/stage1") and first.cfg.init_from is None
    assert (first.cfg.teacher, first.cfg.imitation_decisions, first.cfg.hidden) == (
        "heuristic",
        4_000_000,
        256,
    )
    assert (first.cfg.total_decisions, first.cfg.learning_rate) == (80_000_000, 0.001)
    assert second.cfg.init_from == "runs/from_scratch/stage1/policy.pt"
    assert (second.cfg.teacher, second.cfg.imitation_decisions, second.cfg.hidden) == (None, 0, 512)
    assert (second.cfg.total_decisions, second.cfg.learning_rate) == (50_000_000, 0.0002)
    mix = {"heuristic": 0.25, "search:samples=50,candidates=6": 0.45, "random": 0.05}
    for stage in (first, second):
        assert stage.cfg.bot_shares == mix and stage.cfg.pool_share == 0.15 and stage.cfg.torch_threads == 2
        assert stage.cfg.anneal_lr and (stage.cfg.num_envs, stage.cfg.seed) == (512, 0)
    league = load_config("league")
    assert league.init_from == "checkpoints/stages/from_scratch.pt"
    for file, stage in (
        ("checkpoints/stages/from_scratch.pt", second.cfg),
        ("checkpoints/ppo_selfplay.pt", league),
    ):
        trained = load_checkpoint(file)
        assert trained["model_config"] == {"hidden": 512, "layers": 2}
        saved = {**asdict(Config()), **trained["config"]}  # keys added since it was saved: their defaults
        assert {k: v for k, v in saved.items() if k not in ("runs_dir", "init_from")} == {
            k: v for k, v in asdict(stage).items() if k not in ("runs_dir", "init_from")
        }, file  # each file is its stage, trained in another folder


def tiny_curriculum(tmp_path: Path) -> Path:
    base = {k: v for k, v in TINY.items()} | {"runs_dir": str(tmp_path / "runs")}
    path = tmp_path / "c.yaml"
    path.write_text(
        json.dumps({"run_name": "cur", "base": base, "stages": [
            {"name": "a", "updates": 2}, {"name": "b", "updates": 1, "hidden": 48, "learning_rate": 1e-4}]})
    )  # fmt: skip
    return path


@pytest.mark.slow
def test_a_curriculum_runs_its_stages_in_order_and_a_rerun_continues(tmp_path, capsys) -> None:
    path = tiny_curriculum(tmp_path)
    train_main(["--config", str(path), "--no-progress"])
    a, b = tmp_path / "runs" / "cur" / "a", tmp_path / "runs" / "cur" / "b"
    first, second = load_checkpoint(a / CHECKPOINT), load_checkpoint(b / CHECKPOINT)
    assert first["update"] == 2 and second["update"] == 1
    assert second["config"]["init_from"] == str(a / POLICY) and second["model_config"]["hidden"] == 48
    assert "curriculum done" in capsys.readouterr().out
    stamp = (b / CHECKPOINT).stat().st_mtime_ns
    train_main(["--config", str(path), "--no-progress"])  # again: nothing left to do
    out = capsys.readouterr().out
    assert "stage 1/2 a: already finished" in out and "stage 2/2 b: already finished" in out
    assert (b / CHECKPOINT).stat().st_mtime_ns == stamp


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda c: c["stages"][1].update(init_from="x.pt"), "init_from are set by the curriculum"),
        (lambda c: c["stages"][1].update(name="a"), "must be a new plain folder name"),
        (lambda c: c["stages"][0].update(updates=0), r"updates must be an int in \[1, 10000000\]"),
        (lambda c: c["stages"][0].update(num_env=3), "unknown keys"),
        (lambda c: c.update(extra=1), "a curriculum has run_name, base"),
        (lambda c: c.update(stages=[]), "stages must hold 1..32 stages"),
    ],
)
def test_curriculum_errors(tmp_path, edit, message) -> None:
    path = tiny_curriculum(tmp_path)
    data = json.loads(path.read_text())
    edit(data)
    path.write_text(json.dumps(data))
    with pytest.raises(ValueError, match=message):
        load_curriculum(path)


def test_a_run_name_override_names_the_curriculums_folder(tmp_path) -> None:
    path = tiny_curriculum(tmp_path)
    a, b = load_curriculum(path, ["run_name=seed1", "seed=1"])
    assert a.run_dir == tmp_path / "runs" / "seed1" / "a" and b.cfg.init_from == str(a.run_dir / POLICY)
    assert a.cfg.seed == b.cfg.seed == 1
    with pytest.raises(ValueError, match="run_name must be a plain folder name"):
        load_curriculum(path, ["run_name=x/y"])


def test_gae_per_seat_trajectories() -> None:
    """Seat 0 moves at 0, 2, 3 and ends the game (+1 / -1); seat 1 moved at 1 and still gets -1."""
    steps = 6
    buf = {
        "seat": np.array([[0], [1], [0], [0], [1], [0]]),
        "learner": np.ones((steps, 1), bool),
        "value": np.zeros((steps, 1), np.float32),
        "reward": np.zeros((steps, 1, 2), np.float32),
        "done": np.zeros((steps, 1), bool),
    }
    buf["reward"][3, 0] = [1, -1]
    buf["done"][3, 0] = True
    buf["reward"][1, 0] = [0.2, -0.2]  # a scoring (shaping) right after seat 1's move
    adv, _ = gae(buf, np.array([[0.5, 0.7]], np.float32), gamma=1.0, lam=1.0)
    # the next game (steps 4, 5) bootstraps from each seat's own value, not from the old game
    assert adv[:, 0].tolist() == pytest.approx([1.2, -1.2, 1.0, 1.0, 0.7, 0.5])
    # with lambda = 0 each decision looks one of its own decisions ahead
    buf["value"][:, 0] = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6]
    adv, _ = gae(buf, np.array([[0.5, 0.7]], np.float32), gamma=1.0, lam=0.0)
    assert adv[:, 0].tolist() == pytest.approx(
        [0.2 + 0.3 - 0.1, -1.2 - 0.2, 0.4 - 0.3, 1 - 0.4, 0.7 - 0.5, 0.5 - 0.6]
    )
    # decisions of a bot or snapshot opponent are not trained on and do not move the learner's chain
    buf["learner"][1, 0] = False
    adv, _ = gae(buf, np.array([[0.5, 0.7]], np.float32), gamma=1.0, lam=0.0)
    assert adv[1, 0] == 0


def test_tiny_run_end_to_end(tmp_path) -> None:
    cfg = Config.from_dict({**TINY, "runs_dir": str(tmp_path), "run_name": "tiny"})
    trainer = train(cfg, tmp_path / "tiny", progress=False, stop_after=3)
    assert trainer.update == 3 and trainer.decisions > 0
    stats = trainer.learn(trainer.collect())
    assert all(np.isfinite(v) for k, v in stats.items() if k != "explained_variance")
    data = load_checkpoint(tmp_path / "tiny" / CHECKPOINT)
    assert data["update"] == 3 and data["config"] == cfg.to_dict() and len(data["pool"]) == 3
    assert json.loads((tmp_path / "tiny" / "config.json").read_text()) == cfg.to_dict()
    assert list((tmp_path / "tiny" / "tb").iterdir())
    bot = PolicyBot(tmp_path / "tiny" / POLICY)
    from hanamikoji_env import env

    e = env()
    e.reset(seed=0)
    for _agent in e.agent_iter():
        obs, _, term, _, _ = e.last()
        a = None if term else bot.act(obs)
        assert a is None or obs["action_mask"][a]
        e.step(a)
    win_rate = trainer.evaluate("random", 20)
    assert win_rate == trainer.evaluate("random", 20) and (win_rate * 40).is_integer()  # 20 games, draws half


def test_the_periodic_evaluation_counts_wins_for_the_policy_not_its_opponent() -> None:
    """The shipped agent wins nearly every game against random; a random network loses most games
    against the heuristic: an evaluation that counted the other seat's wins would say otherwise."""
    from hanamikoji_env.nn import load_policy
    from hanamikoji_env.training.monitor import win_rate

    assert win_rate(load_policy("pretrained"), "random", 100, 1, 2, None) > 0.85
    torch.manual_seed(0)
    assert win_rate(PolicyNet(32, 1), "heuristic", 100, 1, 2, None) < 0.25


@pytest.mark.parametrize(
    ("bots", "critic"),
    [
        (TINY["bot_shares"], "policy"),
        pytest.param({"search:samples=8,candidates=3": 0.5}, "policy", marks=pytest.mark.slow),
        pytest.param(TINY["bot_shares"], "oracle", marks=pytest.mark.slow),
    ],
)
def test_resume_gives_identical_weights(tmp_path, bots, critic) -> None:
    """Also with a SearchBot opponent, whose plans for turns in progress must survive the resume,
    and with an oracle critic, whose weights and optimizer must."""
    cfg = Config.from_dict({**TINY, "runs_dir": str(tmp_path), "bot_shares": bots, "critic": critic})
    straight = train(cfg, tmp_path / "a", progress=False, stop_after=4)
    interrupted = train(cfg, tmp_path / "b", progress=False, stop_after=2)  # stopped after 2 updates
    reloaded = Trainer(cfg, tmp_path / "b")
    reloaded.restore()
    reloaded_states = reloaded.collector.opponents.bot_states
    assert reloaded_states == interrupted.collector.opponents.bot_states
    assert any(reloaded_states.values()) == ("random" not in bots)  # SearchBot plans survive
    resumed = train(cfg, tmp_path / "b", resume=True, progress=False, stop_after=2)
    assert resumed.update == straight.update == 4 and resumed.decisions == straight.decisions
    for (name, x), (_, y) in zip(
        straight.model.state_dict().items(), resumed.model.state_dict().items(), strict=True
    ):
        assert torch.equal(x, y), name
    assert np.array_equal(straight.collector.obs, resumed.collector.obs)
    if critic == "oracle":
        for (name, x), (_, y) in zip(
            straight.values.critic.state_dict().items(),
            resumed.values.critic.state_dict().items(),
            strict=True,
        ):
            assert torch.equal(x, y), name


def test_mmd_pulls_the_policy_to_a_magnet_that_follows_it_and_resumes_exactly(tmp_path) -> None:
    """magnet_coef > 0 is magnetic mirror descent: the reverse KL to the magnet is in the loss
    (a larger weight leaves the policy nearer the magnet), the magnet moves ``magnet_rate`` of
    the way to the policy after each update, and a resumed run ends with the same weights and
    magnet as one run straight."""
    base = {**TINY, "runs_dir": str(tmp_path), "magnet_rate": 0.25}
    kls = []
    for coef in (0.5, 50.0):
        cfg = Config.from_dict({**base, "magnet_coef": coef})
        trainer = Trainer(cfg, tmp_path / f"k{coef}")
        magnet = [p.clone() for p in trainer.magnet.parameters()]
        assert all(torch.equal(m, p) for m, p in zip(magnet, trainer.model.parameters(), strict=True))
        stats = trainer.learn(trainer.collect())
        for before, m, p in zip(magnet, trainer.magnet.parameters(), trainer.model.parameters(), strict=True):
            assert torch.allclose(m, before + 0.25 * (p - before), atol=1e-6)  # a quarter of the way
        kls.append(stats["magnet_kl"])
    assert 0 < kls[1] < kls[0]  # pulled harder, the policy stays nearer its magnet
    assert Trainer(Config.from_dict(TINY), tmp_path / "plain").magnet is None  # 0: plain PPO
    cfg = Config.from_dict({**base, "magnet_coef": 1.0})
    straight = train(cfg, tmp_path / "a", progress=False, stop_after=4)
    train(cfg, tmp_path / "b", progress=False, stop_after=2)
    resumed = train(cfg, tmp_path / "b", resume=True, progress=False, stop_after=2)
    for net in ("model", "magnet"):
        for x, y in zip(getattr(straight, net).parameters(), getattr(resumed, net).parameters(), strict=True):
            assert torch.equal(x, y), net


def test_oracle_critic_warmup_and_what_ships(tmp_path) -> None:
    """During critic_warmup only the value functions learn; then the policy does.  The critic
    reads the opponent's own observation, and policy.pt (what plays) does not contain it."""
    cfg = Config.from_dict({**TINY, "runs_dir": str(tmp_path), "critic": "oracle", "critic_warmup": 2})
    trainer = Trainer(cfg, tmp_path / "o")
    policy0 = {k: v.clone() for k, v in trainer.model.state_dict().items() if not k.startswith("value")}
    critic0 = {k: v.clone() for k, v in trainer.values.critic.state_dict().items()}
    collector = trainer.collector
    expected = collector.engine.observe(1 - collector.to_play.astype(np.int64))[0]  # the opponent's own view
    buf = trainer.collect()
    assert np.array_equal(buf["other"][0], expected) and not np.array_equal(buf["other"][0], buf["obs"][0])
    for _ in range(2):
        trainer.learn(buf)
        trainer.update += 1
    after = trainer.model.state_dict()
    assert all(torch.equal(policy0[k], after[k]) for k in policy0)
    assert not all(torch.equal(critic0[k], v) for k, v in trainer.values.critic.state_dict().items())
    trainer.learn(trainer.collect())
    assert not all(torch.equal(policy0[k], trainer.model.state_dict()[k]) for k in policy0)
    trainer.save()
    assert "critic" not in load_checkpoint(tmp_path / "o" / POLICY)
    assert "critic" in load_checkpoint(tmp_path / "o" / CHECKPOINT)


def test_resume_refuses_another_config(tmp_path) -> None:
    cfg = Config.from_dict({**TINY, "runs_dir": str(tmp_path)})
    train(cfg, tmp_path / "r", progress=False, stop_after=1)
    other = Config.from_dict({**TINY, "runs_dir": str(tmp_path), "learning_rate": 0.1})
    with pytest.raises(ValueError, match="another config"):
        Trainer(other, tmp_path / "r").restore()


def test_cli_errors(tmp_path, capsys) -> None:
    with pytest.raises(SystemExit):
        train_main(["--resume", str(tmp_path / "nothing")])
    assert "no checkpoint.pt" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        train_main(["--config", str(tmp_path / "missing.yaml")])
    assert "does not exist" in capsys.readouterr().err
    shipped = "init_from=checkpoints/ppo_selfplay.pt"  # 512 units: the default 256 cannot hold it
    with pytest.raises(SystemExit):
        train_main([shipped, f"runs_dir={tmp_path}", "hidden=256"])
    assert "has network {'hidden': 512, 'layers': 2}" in capsys.readouterr().err
    (tmp_path / "junk.pt").write_bytes(b"not a checkpoint")
    with pytest.raises(SystemExit):
        train_main([f"init_from={tmp_path / 'junk.pt'}", f"runs_dir={tmp_path}"])
    assert "junk.pt is not a PyTorch checkpoint" in capsys.readouterr().err


def test_a_diverging_run_stops_with_a_clear_error_and_keeps_its_last_good_checkpoint(
    tmp_path, monkeypatch
) -> None:
    cfg = Config.from_dict({**TINY, "runs_dir": str(tmp_path)})
    collect = Trainer.collect
    calls = []

    def poisoned(self):
        buf = collect(self)
        calls.append(1)
        if len(calls) == 3:  # the third update's advantages are NaN
            buf["advantage"][:] = np.nan
        return buf

    monkeypatch.setattr(Trainer, "collect", poisoned)
    with pytest.raises(
        TrainingDivergedError,
        match=r"the loss became nan at update 3; stopped without saving it\. "
        r"The last good checkpoint is .*checkpoint.pt \(update 2\)",
    ):
        train(cfg, tmp_path / "d", progress=False, stop_after=5)
    data = load_checkpoint(tmp_path / "d" / CHECKPOINT)
    assert data["update"] == 2 and all(torch.isfinite(v).all() for v in data["state_dict"].values())
    assert load_checkpoint(tmp_path / "d" / POLICY)["update"] == 2


def test_the_cli_reports_a_diverged_run_in_one_line(tmp_path, monkeypatch, capsys) -> None:
    collect = Trainer.collect

    def nan_collect(self):
        buf = collect(self)
        buf["advantage"][:] = np.nan
        return buf

    monkeypatch.setattr(Trainer, "collect", nan_collect)
    args = [f"{k}={v}" for k, v in TINY.items() if k != "bot_shares"]
    with pytest.raises(SystemExit) as caught:
        train_main(["--no-progress", f"runs_dir={tmp_path}", *args])
    err = capsys.readouterr().err
    assert caught.value.code == 1 and "Traceback" not in err
    started, error = err.strip().splitlines()  # the line that says where it trains, then one error
    assert started.startswith(f"training into {tmp_path}")
    assert error.startswith("error: the loss became nan at update 1") and "(none was saved yet)" in error


def test_stale_temporary_files_of_a_killed_save_are_cleaned_on_start_and_resume(tmp_path) -> None:
    cfg = Config.from_dict({**TINY, "runs_dir": str(tmp_path)})
    run = tmp_path / "t"
    run.mkdir()
    mine = [run / ".checkpoint.pt.1a2b3c4d5e6f7a8b.tmp", run / ".policy.pt.ab.tmp"]
    other = [run / "notes.tmp", run / ".results.json.1a2b.tmp", run / ".checkpoint.pt.notes"]
    for p in mine + other:
        p.write_bytes(b"x" * 100)
    train(cfg, run, progress=False, stop_after=1)
    assert not any(p.exists() for p in mine) and all(p.exists() for p in other)
    (run / ".checkpoint.pt.0.tmp").write_bytes(b"half a checkpoint")
    train(cfg, run, resume=True, progress=False, stop_after=1)
    assert not (run / ".checkpoint.pt.0.tmp").exists()


def test_a_finished_run_says_so_on_resume_and_trains_on_to_a_larger_budget(tmp_path, capsys) -> None:
    small = {**TINY, "total_decisions": 600, "eval_games": 2, "bot_shares": {"random": 0.1}}
    run = tmp_path / "r"
    train_main(
        [f"runs_dir={tmp_path}", "run_name=r", "--no-progress", *[f"{k}={v}" for k, v in small.items()]]
    )
    capsys.readouterr()
    train_main(["--resume", str(run), "--no-progress"])
    err = capsys.readouterr().err
    assert f"{run} finished at" in err and "nothing to train" in err and "total_decisions=MORE" in err
    train_main(["--resume", str(run), "total_decisions=1200", "--no-progress"])
    out = capsys.readouterr().out
    trained = int(re.search(r"trained ([\d,]+) decisions", out).group(1).replace(",", ""))
    assert trained >= 1200 and json.loads((run / "config.json").read_text())["total_decisions"] == 1200
    train_main(["--resume", str(run), "--no-progress"])  # the new budget is the run's now: finished again
    assert "nothing to train" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        train_main(["--resume", str(run), "learning_rate=0.1"])  # the budget, not the recipe
    assert "and the budget total_decisions" in capsys.readouterr().err


def test_resume_errors_are_one_line_usage_errors(tmp_path, capsys) -> None:
    cfg = Config.from_dict({**TINY, "runs_dir": str(tmp_path), "run_name": "r"})
    run = tmp_path / "r"
    train(cfg, run, progress=False, stop_after=1)
    (run / "config.json").write_text((run / "config.json").read_text().replace('"seed": 0', '"seed": 5'))
    with pytest.raises(SystemExit) as caught:
        train_main(["--resume", str(run)])
    err = capsys.readouterr().err
    assert caught.value.code == 2 and "Traceback" not in err
    assert "was written with another config" in err and "differs in ['seed']" in err and "edited" in err
    (run / "config.json").write_text("{not json")
    with pytest.raises(SystemExit):
        train_main(["--resume", str(run)])
    assert f"{run / 'config.json'} is not valid JSON" in capsys.readouterr().err
    (run / "config.json").write_text(json.dumps(cfg.to_dict()))
    blob = (run / CHECKPOINT).read_bytes()
    (run / CHECKPOINT).write_bytes(blob[: len(blob) // 2])
    with pytest.raises(SystemExit):
        train_main(["--resume", str(run)])
    assert "is not a readable checkpoint" in capsys.readouterr().err


@pytest.mark.slow(20)
def test_learning_beats_random() -> None:
    """Budget: 400,000 learner decisions against RandomBot (about 30 s on one core: one torch
    thread, as the suite's workers run beside each other; two threads took ten times as long
    under load).  Margin: the greedy policy wins 400 games against RandomBot with a Wilson lower
    bound above 0.60 (0.68 measured)."""
    cfg = Config.from_dict({
        "num_envs": 128, "rollout_steps": 64, "hidden": 128, "layers": 2, "learning_rate": 0.002,
        "num_minibatches": 16, "update_epochs": 4, "total_decisions": 400_000, "pool_share": 0.0,
        "bot_shares": {"random": 1.0}, "eval_every": 0, "checkpoint_every": 1000, "torch_threads": 1, "seed": 1,
    })  # fmt: skip
    trainer = Trainer(cfg, "/nonexistent")
    while trainer.decisions < cfg.total_decisions:
        trainer.learn(trainer.collect())
    rate = trainer.evaluate("random", 400)
    assert wilson(rate * 400, 400)[0] > 0.60, rate


@pytest.mark.slow
def test_main_job_end_to_end(tmp_path, monkeypatch, capsys) -> None:
    from hanamikoji_env.training.main_job import main as main_job

    config = tmp_path / "tiny.yaml"
    config.write_text(
        "".join(f"{k}: {json.dumps(v)}\n" for k, v in {**TINY, "total_decisions": 2000}.items())
    )
    monkeypatch.chdir(tmp_path)
    main_job(["--config", str(config), "--games", "2"])
    out, err = capsys.readouterr()
    assert "Bradley-Terry ratings" in out and "ckpt:runs/tiny/" in out
    (run,) = Path("runs/tiny").iterdir()
    assert (run / "policy.pt").is_file() and (run / "eval" / "results.json").is_file()
    first, estimate = out.splitlines()[:2]  # what, where and how long, before any work
    assert (
        first.startswith("main job: train PPO self-play for 2,000 decisions")
        and f"writing to {run}/" in first
    )
    assert re.fullmatch(r"about \d+ min on this machine at its current load \(\d+ cores\)", estimate)
    assert err.lstrip().startswith(f"training into {run} (TensorBoard: tensorboard --logdir {run / 'tb'})")


def test_main_job_says_what_an_interruption_kept(tmp_path, monkeypatch, capsys) -> None:
    from hanamikoji_env.training import main_job

    config = tmp_path / "tiny.yaml"
    config.write_text("".join(f"{k}: {json.dumps(v)}\n" for k, v in TINY.items()))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(main_job, "estimate_seconds", lambda cfg, games: 60.0)

    def interrupted(cfg, run_dir, **kwargs):
        if kwargs.get("stop_after") is None:
            train(cfg, run_dir, progress=False, stop_after=1)  # one update saved, then Ctrl-C
        raise KeyboardInterrupt

    monkeypatch.setattr(main_job, "train", interrupted)
    with pytest.raises(SystemExit) as stop:
        main_job.main(["--config", str(config), "--games", "2"])
    assert stop.value.code == 130
    err = [
        line for line in capsys.readouterr().err.splitlines() if line and not line.startswith("training into")
    ]
    assert len(err) == 1 and "interrupted while training: kept runs/tiny/" in err[0]
    assert "at update 1: resume with hanamikoji-train --resume runs/tiny/" in err[0]


def test_init_from_a_policy_checkpoint(tmp_path) -> None:
    cfg = Config.from_dict({**TINY, "runs_dir": str(tmp_path)})
    first = train(cfg, tmp_path / "first", progress=False, stop_after=1)
    warm = Trainer(Config.from_dict({**TINY, "init_from": str(tmp_path / "first" / POLICY)}), tmp_path / "w")
    for (name, x), (_, y) in zip(
        first.model.state_dict().items(), warm.model.state_dict().items(), strict=True
    ):
        assert torch.equal(x, y), name
    for shape in ({"hidden": 16}, {"layers": 2}):
        with pytest.raises(ValueError, match="has network"):
            Trainer(
                Config.from_dict({**TINY, **shape, "init_from": str(tmp_path / "first" / POLICY)}),
                tmp_path / "x",
            )


def test_init_from_a_narrower_policy_widens_it_without_changing_its_play(tmp_path) -> None:
    first = train(Config.from_dict(TINY), tmp_path / "first", progress=False, stop_after=1)
    wide = Trainer(
        Config.from_dict({**TINY, "hidden": 48, "init_from": str(tmp_path / "first" / POLICY)}), tmp_path
    )
    assert wide.model.config == {"hidden": 48, "layers": 1}
    engine, rng = BatchEngine(64, seed=5), np.random.default_rng(5)
    obs, mask, _ = engine.reset()
    for _ in range(12):  # the first turns of 64 games, every kind of decision
        (narrow_logits, narrow_value), (wide_logits, wide_value) = (
            m(torch.as_tensor(obs), torch.as_tensor(mask)) for m in (first.model, wide.model)
        )
        legal = torch.as_tensor(mask) == 1
        assert torch.allclose(narrow_logits[legal], wide_logits[legal], atol=1e-5)
        assert torch.allclose(narrow_value, wide_value, atol=1e-5)
        obs, mask = engine.step(random_actions(mask, rng))[:2]
    stats = wide.learn(wide.collect())  # the new units train
    assert np.isfinite(list(stats.values())).all()
    assert wide.model.policy.weight[:, 32:].abs().sum() > 0


def test_opponent_schedule_draws_the_configured_shares() -> None:
    from hanamikoji_env.training.selfplay import SELF, OpponentSchedule

    sched = OpponentSchedule(0.3, {"heuristic": 0.1, "random": 0.05, "search": 0.0})
    assert sched.bots == ["heuristic", "random"]
    codes = sched.draw(np.random.default_rng(0), 100_000, pool_len=5)
    assert np.mean((codes >= 0) & (codes < 5)) == pytest.approx(0.3, abs=0.01)
    assert np.mean(codes == sched.bot_code("heuristic")) == pytest.approx(0.1, abs=0.01)
    assert np.mean(codes == sched.bot_code("random")) == pytest.approx(0.05, abs=0.01)
    assert np.mean(codes == SELF) == pytest.approx(0.55, abs=0.01)
    # before the first snapshot, pool games are self-play
    empty = sched.draw(np.random.default_rng(0), 100_000, pool_len=0)
    assert np.mean(empty == SELF) == pytest.approx(0.85, abs=0.01) and not (empty >= 0).any()


def test_the_snapshot_pool_plays_each_row_with_its_own_snapshot_in_one_batched_call(monkeypatch) -> None:
    from hanamikoji_env.training.selfplay import OpponentPool

    products = []  # every batched matrix product, by the shape of its weights
    real = torch.baddbmm
    monkeypatch.setattr(torch, "baddbmm", lambda b, x, w: products.append(tuple(w.shape)) or real(b, x, w))
    torch.manual_seed(0)
    pool = OpponentPool(size=3)
    nets = [PolicyNet(32, 2) for _ in range(4)]
    engine = BatchEngine(40, seed=1)
    obs, mask, _ = engine.reset()
    for _ in range(7):  # positions with several decision kinds
        obs, mask, *_ = engine.step(random_actions(mask, np.random.default_rng(2)))
    for added, net in enumerate(nets, start=1):
        pool.add(net)  # the stack is rebuilt whenever the pool changes; the oldest leaves past 3
        kept = nets[max(0, added - 3) : added]
        slots = np.random.default_rng(added).integers(0, len(kept), len(obs))
        slots[:2] = 0  # one snapshot may play many rows, another none
        products.clear()
        forwards: list[str] = []
        hooks = [net.register_forward_hook(lambda *_, seen=forwards: seen.append("forward")) for net in kept]
        got = pool.logits(slots, obs, mask)
        for hook in hooks:
            hook.remove()
        # one product a layer for every snapshot at once, and no snapshot's own forward pass
        assert products == [(len(kept), 109, 32), (len(kept), 32, 32), (len(kept), 32, 23)], products
        assert forwards == []
        for slot, net in enumerate(kept):
            rows = slots == slot
            if rows.any():
                want, _ = net(torch.as_tensor(obs[rows]), torch.as_tensor(mask[rows]))
                assert torch.allclose(got[torch.as_tensor(rows)], want, atol=1e-5), (added, slot)
        assert (got[torch.as_tensor(mask == 0)] == -1e9).all()


def test_a_frozen_checkpoint_opponent_plays_its_policy_in_one_batch(tmp_path) -> None:
    """``ckpt:`` opponents in training play greedy, as in the tournament; ``sampled:ckpt=`` ones
    sample from the run's generator (so a run stays deterministic)."""
    torch.manual_seed(0)
    net = PolicyNet(16, 1)
    save_checkpoint(tmp_path / "frozen.pt", net)
    engine = BatchEngine(64, seed=1)
    obs, mask, _ = engine.reset()
    greedy = net(torch.as_tensor(obs), torch.as_tensor(mask))[0].argmax(1).numpy()

    def play(spec: str, seed: int) -> np.ndarray:
        opponents = Opponents(64, 1, 0.0, {spec: 1.0}, 0, None)
        opponents.new_games(np.arange(64), np.random.default_rng(0))
        rng = np.random.default_rng(seed)
        actions = opponents.moves(np.arange(64), obs, mask, rng=rng, sample=lambda *a: None, engine=engine)
        assert mask[np.arange(64), actions].all()
        return actions

    assert (play(f"ckpt:{tmp_path / 'frozen.pt'}", 2) == greedy).all()
    sampled = play(f"sampled:ckpt={tmp_path / 'frozen.pt'}", 2)
    assert (sampled != greedy).any() and (play(f"sampled:ckpt={tmp_path / 'frozen.pt'}", 2) == sampled).all()


@pytest.mark.slow
def test_exploit_trains_a_best_response_and_measures_it(tmp_path, capsys) -> None:
    from hanamikoji_env.training.exploit import main as exploit

    save_checkpoint(tmp_path / "target.pt", PolicyNet(16, 1))
    args = ["--target", f"ckpt:{tmp_path / 'target.pt'}", "--decisions", "2000", "--games", "8", "--no-progress",
            "num_envs=16", "rollout_steps=16", "num_minibatches=2", "eval_games=4", f"runs_dir={tmp_path}"]  # fmt: skip
    exploit(args)
    out = capsys.readouterr().out
    assert "exploiter vs ckpt:" in out and "over 8 mirrored games" in out
    run = tmp_path / "target-target-s0"
    cfg = json.loads((run / "config.json").read_text())
    assert cfg["bot_shares"] == {f"ckpt:{tmp_path / 'target.pt'}": 1.0} and cfg["pool_share"] == 0.0
    assert cfg["init_from"] == str(tmp_path / "target.pt") and (run / "eval" / "results.json").is_file()
    assert any((run / "tb").iterdir())
    for bad, message in [
        (["--target", "random", "--from", "target"], "needs a hanamikoji-env checkpoint"),
        (["--target", "heuristic", "--sampled"], "--sampled is for a checkpoint target"),
        (["--target", f"ckpt:{tmp_path / 'target.pt'}", "--variant", "mini"], "trained on the full game"),
        (["--target", "random", "--out", "x.json"], "--out is for --method exact and lbr"),
        (["--target", f"ckpt:{tmp_path / 'nope.pt'}"], "does not exist"),
        (["--target", f"ckpt:{tmp_path / 'target.pt'}", "--games", "3"], "even"),
    ]:
        with pytest.raises(SystemExit) as exit_:
            exploit(bad)
        assert exit_.value.code == 2 and message in capsys.readouterr().err


def test_exploit_trains_against_any_bot_and_on_the_mini_variant(tmp_path, capsys) -> None:
    from hanamikoji_env.training.exploit import main as exploit

    args = ["--target", "heuristic", "--variant", "mini", "--decisions", "3000", "--games", "40", "--no-progress",
            "num_envs=16", "rollout_steps=16", "num_minibatches=2", "eval_every=0", "hidden=16", "layers=1",
            f"runs_dir={tmp_path}"]  # fmt: skip
    exploit(args)
    run = tmp_path / "heuristic-scratch-mini-s0"
    cfg = json.loads((run / "config.json").read_text())
    assert cfg["variant"] == "mini" and cfg["init_from"] is None and cfg["bot_shares"] == {"heuristic": 1.0}
    report = json.loads((run / "eval" / "result.json").read_text())
    assert report["method"] == "rl" and report["games"] == 40 and report["decisions"] >= 3000
    low, high = report["ci95"]
    assert 0 <= low <= report["br_score"] <= high <= 1
    assert f"score {report['br_score']:.3f} [{low:.3f}, {high:.3f}] over 40 games" in capsys.readouterr().out


def test_an_exploiter_may_measure_a_held_out_player_and_nothing_else_held_out() -> None:
    """A held-out player is never trained against, except by the run that measures it (the
    exploiter's policy is a measurement, never an agent): that player only, as its only opponent."""
    from hanamikoji_env.training.exploit import exploit_config

    stage7, stage10 = "ckpt:checkpoints/stages/stage7.pt", "ckpt:checkpoints/stages/stage10.pt"
    cfg = exploit_config(stage7, 1000, None, False, 0, [])
    assert cfg.measures == stage7 and cfg.bot_shares == {stage7: 1.0} and cfg.init_from == stage7[5:]
    for data, message in [
        ({"bot_shares": {stage7: 1.0}}, "held-out opponent"),  # no measure, no exception
        ({"bot_shares": {stage7: 1.0}, "measures": stage7, "eval_bots": [stage10]}, "held-out opponent"),
        ({"bot_shares": {stage7: 0.5}, "measures": stage7, "init_from": stage10[5:]}, "held-out opponent"),
        ({"bot_shares": {stage7: 0.5, "random": 0.5}, "measures": stage7}, "measures must be the run's only"),
        ({"bot_shares": {"random": 1.0}, "measures": 7}, "measures must be str"),
    ]:
        with pytest.raises(ValueError, match=message):
            Config.from_dict({**TINY, **data})


def test_an_exploiter_trains_against_a_player_too_slow_for_an_agent(tmp_path, capsys) -> None:
    """psearch (and enum) are too slow to train an agent against, but ``--method rl`` measures any
    player: the run that measures one trains against it and plays its measurement games; a
    config that merely names one is still refused."""
    from hanamikoji_env.training.exploit import main as exploit

    psearch = "psearch:ckpt=pretrained,samples=2,candidates=2"
    args = ["--target", psearch, "--decisions", "256", "--games", "2", "--no-progress", "num_envs=8", "rollout_steps=16",
            "num_minibatches=2", "eval_every=0", "eval_games=2", "hidden=16", "layers=1", f"runs_dir={tmp_path}"]  # fmt: skip
    exploit(args)
    assert f"exploiter vs {psearch}: win rate" in capsys.readouterr().out
    cfg = json.loads(
        (tmp_path / "psearch_ckpt_pretrained_samples_2_candidates_2-scratch-s0" / "config.json").read_text()
    )
    assert cfg["bot_shares"] == {psearch: 1.0} and cfg["measures"] == psearch
    for data in ({"bot_shares": {psearch: 1.0}}, {"eval_bots": [psearch]}):
        with pytest.raises(ValueError, match="only random, heuristic, search and checkpoints play here"):
            Config.from_dict({**TINY, **data})
    from hanamikoji_env.training.exploit import exploit_config

    assert exploit_config("enum", 1000, None, False, 0, []).bot_shares == {"enum": 1.0}  # held out, and slow


def test_a_variant_trains_only_against_players_of_that_variant(tmp_path) -> None:
    save_checkpoint(tmp_path / "full.pt", PolicyNet(16, 1))
    for data, message in [
        (
            {"variant": "mini", "eval_bots": ["search"]},
            "trains against random, heuristic, ckpt, sampled only",
        ),
        ({"variant": "mini", "bot_shares": {f"ckpt:{tmp_path / 'full.pt'}": 0.5}}, "not trained on the mini"),
        ({"variant": "mini", "round_limit": 2}, "mini variant plays 1 round"),
        ({"variant": "tiny"}, "unknown variant 'tiny'"),
    ]:
        with pytest.raises(ValueError, match=message):
            Config.from_dict({**TINY, **data})
    cfg = Config.from_dict({**TINY, "variant": "mini", "init_from": str(tmp_path / "full.pt"), "hidden": 16})
    with pytest.raises(ValueError, match="was trained on the full game; the config trains variant mini"):
        train(cfg, tmp_path / "run", progress=False)


def test_auto_threads_follow_the_faster_count_and_recheck_it() -> None:
    """ThreadChooser with measured speeds: it tries both counts (after a warm-up update), runs the
    faster, re-measures the other after 8, 16, ... updates, and switches when the machine changes."""
    from hanamikoji_env.training.threads import ThreadChooser

    chooser = ThreadChooser(cores=2)
    speed = {1: 100.0, 2: 300.0}  # an idle machine: 2 threads are faster
    used = []
    for update in range(120):
        if update == 60:
            speed = {1: 100.0, 2: 20.0}  # the machine became shared: 2 threads collapse
        count = chooser.threads()
        assert torch.get_num_threads() == count
        used.append(count)
        chooser.record(count, int(speed[count]), 1.0)
    idle, shared = used[:60], used[60:]
    assert idle[:3] == [1, 1, 2] and idle[3:].count(1) <= 4  # warm-up, both measured, then mostly 2
    assert shared.count(2) <= 10 and shared[-20:].count(2) <= 1  # noticed, and rechecked rarely
    assert ThreadChooser(cores=1).options == (1,)


def test_auto_threads_train_the_same_weights_as_one_thread(tmp_path) -> None:
    """The thread count changes the speed, not the numbers: auto and 1 thread give the same policy."""
    digests = []
    for threads in ("auto", 1):
        cfg = Config.from_dict(
            {
                "num_envs": 32,
                "rollout_steps": 16,
                "hidden": 32,
                "torch_threads": threads,
                "total_decisions": 10**9,
            }
        )
        trainer = Trainer(cfg, tmp_path / str(threads))
        counts = set()
        for _ in range(4):
            counts.add(trainer.step()["torch_threads"])
        digests.append([v.clone() for v in trainer.model.state_dict().values()])
        if threads == "auto" and (os.cpu_count() or 1) > 1:
            assert len(counts) == 2  # both counts ran
    assert all(torch.equal(a, b) for a, b in zip(*digests, strict=True))
    with pytest.raises(ValueError, match="torch_threads must be auto or an int"):
        Config.from_dict({"torch_threads": "many"}).validate()


def test_configs_are_found_by_name_or_path(tmp_path, monkeypatch) -> None:
    from hanamikoji_env.training.config import bundled_configs, config_path

    monkeypatch.chdir(tmp_path)  # anywhere: bundled configs do not depend on the directory
    assert set(bundled_configs()) >= {"quick", "ppo_selfplay", "exploit", "sb3_maskable_ppo"}
    assert config_path("quick") == config_path("quick.yaml") == bundled_configs()["quick"]
    assert load_config("quick").num_envs == 256
    own = tmp_path / "quick.yaml"  # a file at the path given wins; the bare name is the bundled one
    own.write_text("num_envs: 8\n")
    assert load_config("quick.yaml").num_envs == 8 and load_config("quick").num_envs == 256
    names = ", ".join(sorted(bundled_configs()))  # every bundled config is offered, in order
    with pytest.raises(
        ValueError, match=rf"no bundled config is named so \(did you mean 'quick'\?\) \(bundled: {names}\)"
    ):
        load_config("quik")
    assert "expert" in names  # training.expert's recipe ships too


def test_train_help_offers_exactly_the_bundled_configs_it_accepts(capsys) -> None:
    from hanamikoji_env.training.config import bundled_configs
    from hanamikoji_env.training.curriculum import load_curriculum
    from hanamikoji_env.training.train import build_parser

    accepted = []
    for name in bundled_configs():
        for load in (load_config, load_curriculum):
            try:
                load(name)
            except ValueError:
                continue
            accepted.append(name)
            break
    assert {"quick", "from_scratch", "ppo_selfplay"} <= set(accepted)
    assert "expert" not in accepted and "sb3_maskable_ppo" not in accepted  # their own trainers' configs
    usage = " ".join(build_parser().format_help().split())
    assert f"a bundled config: {', '.join(accepted)} (default" in usage
    assert "the run goes to runs_dir/run_name" in usage
    with pytest.raises(SystemExit):  # its error offers the same list: one list everywhere
        train_main(["--config", "sb3_maskable_ppo"])
    assert f"(bundled: {', '.join(accepted)})" in capsys.readouterr().err


def test_pretrained_names_the_shipped_agent_everywhere(tmp_path, monkeypatch) -> None:
    from hanamikoji_env.bots.spec import parse_player
    from hanamikoji_env.pretrained import pretrained_checkpoint

    monkeypatch.chdir(tmp_path)
    shipped = load_checkpoint(pretrained_checkpoint())
    assert load_checkpoint("pretrained")["state_dict"].keys() == shipped["state_dict"].keys()
    bot = parse_player("pretrained").make(seed=0)
    assert isinstance(bot, PolicyBot) and bot.model.config == shipped["model_config"]
    assert (
        parse_player("psearch:ckpt=pretrained,samples=2").make(seed=0).model.config == shipped["model_config"]
    )
    cfg = Config.from_dict({"init_from": "pretrained", **shipped["model_config"]}).validate()
    assert cfg.init_from == "pretrained"
    # a path under the repository's checkpoints/ names the shipped copy from any directory (an
    # installed wheel too): the league's config starts from the agent shipped before
    league = load_config("league")
    assert (
        league.init_from == "checkpoints/stages/from_scratch.pt"
        and league.validate().init_from == league.init_from
    )
    assert load_checkpoint(league.init_from)["model_config"] == shipped["model_config"]
    assert isinstance(parse_player("ckpt:checkpoints/stages/stage7.pt").make(seed=0), PolicyBot)
    (tmp_path / "checkpoints").mkdir()
    save_checkpoint(tmp_path / "checkpoints" / "own.pt", PolicyNet(16, 1))  # one of the user's own is theirs
    assert load_checkpoint("checkpoints/own.pt")["model_config"] == {"hidden": 16, "layers": 1}
    with pytest.raises(ValueError, match=r"checkpoints/stages/nope\.pt does not exist"):
        Config.from_dict({"init_from": "checkpoints/stages/nope.pt"}).validate()


def test_a_run_folder_takes_one_trainer_at_a_time(tmp_path) -> None:
    from hanamikoji_env.training.run_folder import lock_run

    cfg = Config.from_dict({**TINY, "runs_dir": str(tmp_path)})
    run_dir = tmp_path / "busy"
    run_dir.mkdir()
    held = lock_run(run_dir)  # as another process training into it would
    with pytest.raises(
        RuntimeError, match=rf"{run_dir} is in use: process {os.getpid()} is training into it"
    ):
        train(cfg, run_dir, progress=False, stop_after=1)
    assert not (run_dir / "config.json").exists()  # refused before writing anything
    held.close()
    train(cfg, run_dir, progress=False, stop_after=1)  # free again
    assert (run_dir / "config.json").is_file()


@pytest.mark.parametrize("name", ["..", ".", ".hidden", "a/b", "a\0b", "", "x" * 201])
def test_run_names_are_plain_folder_names(name: str) -> None:
    with pytest.raises(ValueError, match="run_name must be a plain folder name"):
        Config.from_dict({"run_name": name}).validate()


@pytest.mark.slow
@pytest.mark.parametrize(("signame", "said"), [("SIGINT", "Ctrl-C"), ("SIGTERM", "SIGTERM")])
def test_ctrl_c_or_sigterm_saves_the_update_in_progress_and_resume_continues_from_it(
    tmp_path, signame: str, said: str, delay: float = 2.0
) -> None:
    """A real SIGINT (a terminal's Ctrl-C) or SIGTERM (a scheduler's stop) ``delay`` seconds after
    training starts (before the first periodic save at update 50): the update in progress is
    saved, the command says so and exits 130; ``--resume`` says where it continues and does."""
    import signal
    import subprocess
    import sys
    import time

    def as_from_a_terminal() -> None:
        signal.signal(signal.SIGINT, signal.SIG_DFL)  # whatever the harness running pytest did

    command = [
        sys.executable,
        "-m",
        "training.train",
        "--config",
        "quick",
        f"runs_dir={tmp_path}",
        "--no-progress",
    ]
    err_file = tmp_path / "stderr.txt"
    with err_file.open("w") as sink:
        proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=sink, text=True,
                                preexec_fn=as_from_a_terminal)  # fmt: skip
    deadline = time.monotonic() + 120
    while "training into" not in err_file.read_text() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(delay)
    proc.send_signal(getattr(signal, signame))
    assert proc.wait(timeout=60) == 130, err_file.read_text()
    err = err_file.read_text()
    run_dir = tmp_path / "quick"
    saved = load_checkpoint(run_dir / CHECKPOINT)
    assert 1 <= saved["update"] < 50, err
    assert f"{said}: saving at the end of this update" in err and "Traceback" not in err, err
    assert f"interrupted: kept {run_dir} at update {saved['update']}: resume with" in err, err
    resumed = subprocess.run(
        [sys.executable, "-m", "training.train", "--resume", str(run_dir), "--stop-after", "1", "--no-progress"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert resumed.returncode == 0, resumed.stderr
    assert (
        f"resuming {run_dir} at update {saved['update']} ({saved['decisions']:,} decisions)" in resumed.stderr
    )
    assert load_checkpoint(run_dir / CHECKPOINT)["update"] == saved["update"] + 1


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("num_envs: 8\nnum_envs: 16\n", r"duplicate key 'num_envs' at line 2, column 1$"),
        (
            "seed: 1\n? [1, 2]\n: 3\n",
            r"a key must be a name, got \[1, 2\] at line 2, column 3$",
        ),  # was a TypeError
        ("bot_shares: {[random]: 0.5}\n", r"a key must be a name, got \['random'\] at line 1, column 14$"),
        ("seed: " + "9" * 5000 + "\n", r"'seed': an integer of 5,000 digits \(at most 30\)"),
        ("seed: 1:30:00\n", r"seed must be int, got '1:30:00'"),  # YAML 1.1 read 5400 here
    ],
)
def test_configs_are_read_strictly_and_as_yaml_1_2(tmp_path, text, message) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(text)
    with pytest.raises(ValueError, match=message) as caught:
        load_config(path)
    assert len(str(caught.value)) < 400 and "\n" not in str(caught.value)


def test_config_numbers_are_read_as_yaml_1_2(tmp_path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("seed: 010\ntotal_decisions: 80_000_000\nlearning_rate: 1e-3\nnum_envs: 0x10\n")
    cfg = load_config(path)
    assert (cfg.seed, cfg.total_decisions, cfg.learning_rate, cfg.num_envs) == (10, 80_000_000, 0.001, 16)
    with pytest.raises(ValueError, match=r"an integer of 40 digits") as caught:
        load_config(path, ["seed=" + "1" * 40])
    assert "seed=" in str(caught.value)  # the override is named


def test_a_minibatch_of_one_decision_trains_without_nan(tmp_path) -> None:
    """Tiny settings (a few learner decisions, many minibatches) give minibatches of one decision:
    their advantage has no spread, and normalizing it must not turn the loss into NaN."""
    cfg = Config.from_dict({"num_envs": 2, "rollout_steps": 4, "num_minibatches": 8, "hidden": 16, "layers": 1,
                            "pool_share": 0.0, "bot_shares": {}, "torch_threads": 1})  # fmt: skip
    trainer = Trainer(cfg, tmp_path / "r")
    for _ in range(3):
        stats = trainer.step()
        assert np.isfinite(stats["policy_loss"]), stats


def test_a_huge_file_is_not_hashed_to_tell_whether_it_is_held_out(tmp_path, monkeypatch) -> None:
    """A held-out checkpoint is told by its content's digest, but only a file of a held-out
    checkpoint's size is hashed: a 20 GiB sparse file named by init_from took 45 s to hash."""
    from hanamikoji_env import heldout

    sparse = tmp_path / "huge.pt"
    with sparse.open("wb") as f:
        f.truncate(20 * 2**30)
    calls: list[object] = []
    real = heldout._digest
    monkeypatch.setattr(heldout, "_digest", lambda path: calls.append(path) or real(path))
    assert heldout.heldout_match(f"ckpt:{sparse}") is None and not calls
    assert heldout.heldout_match("ckpt:checkpoints/stages/stage7.pt") == "ckpt:stages/stage7.pt"
    assert calls  # a file of a held-out size is hashed
