"""The imitation warm start (training/imitation.py): labels, learning, the switch to PPO, resume, errors."""

from __future__ import annotations

import csv

import numpy as np
import pytest
import torch

from hanamikoji_env.bots.heuristic import heuristic_actions
from hanamikoji_env.nn import PolicyNet, save_checkpoint
from hanamikoji_env.training.config import Config
from hanamikoji_env.training.ppo import Trainer, train
from hanamikoji_env.training.train import main as train_main

TINY = {
    "num_envs": 16, "rollout_steps": 32, "hidden": 32, "layers": 1, "num_minibatches": 4, "update_epochs": 2,
    "total_decisions": 10_000_000, "eval_every": 0, "eval_games": 20, "checkpoint_every": 1, "snapshot_every": 1,
    "pool_share": 0.3, "bot_shares": {"random": 0.1, "heuristic": 0.1}, "shaping": 1.0, "torch_threads": 1,
    "teacher": "heuristic", "imitation_decisions": 1_000_000,
}  # fmt: skip


def tiny(tmp_path, **changes) -> Config:
    return Config.from_dict({**TINY, "runs_dir": str(tmp_path), **changes})


def test_the_teacher_labels_every_learner_decision_the_student_reaches(tmp_path) -> None:
    trainer = Trainer(tiny(tmp_path), tmp_path / "run")
    buf = trainer.collect()
    learner = buf["learner"]
    assert learner.sum() > 100 and "target" in buf
    obs, mask, target = buf["obs"][learner], buf["mask"][learner], buf["target"][learner]
    assert np.array_equal(target.sum(1), np.ones(len(target)))  # one-hot: the heuristic's move
    assert np.array_equal(target.argmax(1), heuristic_actions(obs, mask))
    assert not buf["target"][~learner].any()  # an opponent's decision is nobody's lesson
    # the student plays its own moves (teacher_play 0): somewhere it differs from the teacher
    assert (buf["action"][learner] != target.argmax(1)).any()


def test_with_teacher_play_1_the_teacher_moves_for_the_student_and_the_share_falls_to_0(tmp_path) -> None:
    trainer = Trainer(tiny(tmp_path, teacher_play=1.0), tmp_path / "run")
    buf = trainer.collect()
    learner = buf["learner"]
    assert np.array_equal(buf["action"][learner], buf["target"][learner].argmax(1))
    from hanamikoji_env.training.imitation import teacher_share

    assert [teacher_share(0.8, d, 100) for d in (0, 50, 100, 150)] == [0.8, 0.4, 0.0, 0.0]


def test_a_checkpoint_teacher_gives_its_whole_distribution_as_soft_targets(tmp_path) -> None:
    torch.manual_seed(0)
    net = PolicyNet(32, 1)
    save_checkpoint(tmp_path / "t.pt", net)
    trainer = Trainer(tiny(tmp_path, teacher=f"ckpt:{tmp_path / 't.pt'}"), tmp_path / "run")
    buf = trainer.collect()
    learner = buf["learner"]
    obs, mask, target = buf["obs"][learner], buf["mask"][learner], buf["target"][learner]
    with torch.no_grad():
        expected = torch.softmax(net(torch.as_tensor(obs), torch.as_tensor(mask))[0], -1).numpy()
    assert np.allclose(target, expected, atol=1e-5)
    assert (target[mask == 0] == 0).all() and ((target > 0) & (target < 0.99)).any()


@pytest.mark.slow
def test_imitation_teaches_the_student_the_teachers_moves(tmp_path) -> None:
    """After a few hundred thousand labelled decisions the student's greedy move is the heuristic's
    at far more of the positions it reaches than at the start."""
    cfg = tiny(tmp_path, num_envs=64, rollout_steps=64, hidden=64, learning_rate=0.003, update_epochs=4)
    trainer = Trainer(cfg, tmp_path / "run")

    def agreement() -> float:
        buf = trainer.collector.collect(None)  # no labels: fresh positions of the student's games
        learner = buf["learner"] & (buf["mask"].sum(-1) > 1)  # decisions with a choice
        obs, mask = buf["obs"][learner], buf["mask"][learner]
        with torch.no_grad():
            greedy = trainer.model(torch.as_tensor(obs), torch.as_tensor(mask))[0].argmax(1).numpy()
        return float((greedy == heuristic_actions(obs, mask)).mean())

    before = agreement()
    for _ in range(40):
        stats = trainer.learn(trainer.collect())
        trainer.update += 1
    assert "imitation_loss" in stats and "approx_kl" not in stats
    assert agreement() > before + 0.25, before


def test_after_its_budget_the_run_goes_on_with_ppo_in_the_same_folder(tmp_path) -> None:
    cfg = tiny(tmp_path, imitation_decisions=1500, eval_every=1, eval_bots=["random"])
    trainer = train(cfg, tmp_path / "run", progress=False, stop_after=6)
    with open(tmp_path / "run" / "curve.csv") as f:
        rows = list(csv.DictReader(f))
    phases = [r["phase"] for r in rows]
    assert (
        phases[0] == "imitation" and phases[-1] == "ppo" and phases == sorted(phases)
    )  # imitation, then ppo
    assert [int(r["update"]) for r in rows] == list(range(1, 7))
    assert int(rows[-1]["decisions"]) == trainer.decisions and float(rows[-1]["seconds"]) > 0
    assert all(0 <= float(r["vs_random"]) <= 1 for r in rows)
    assert (tmp_path / "run" / "curve.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"  # its picture beside it
    before = [0] + [int(r["decisions"]) for r in rows[:-1]]  # each update's decisions when it began
    assert [r["phase"] for r in rows] == ["imitation" if d < 1500 else "ppo" for d in before]
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    acc = EventAccumulator(str(tmp_path / "run" / "tb"))
    acc.Reload()
    tags = set(acc.Tags()["scalars"])
    assert {"imitation/imitation_loss", "imitation/agreement", "train/policy_loss"} <= tags


@pytest.mark.parametrize(
    "teacher", ["heuristic", pytest.param("search:samples=8,candidates=3", marks=pytest.mark.slow)]
)
def test_an_interrupted_warm_start_resumes_where_it_stopped(tmp_path, teacher) -> None:
    """Mid-imitation, with a teacher whose plans for turns in progress must survive the resume too;
    the resumed run crosses into PPO and ends with the uninterrupted run's weights and curve."""
    cfg = tiny(tmp_path, teacher=teacher, imitation_decisions=2000, eval_every=1, eval_bots=["random"])
    straight = train(cfg, tmp_path / "a", progress=False, stop_after=5)
    interrupted = train(cfg, tmp_path / "b", progress=False, stop_after=2)
    assert interrupted.imitating
    if teacher != "heuristic":
        assert interrupted.collector.teacher.states  # type: ignore[union-attr]
    reloaded = Trainer(cfg, tmp_path / "b")
    reloaded.restore()
    assert reloaded.collector.teacher.states == interrupted.collector.teacher.states  # type: ignore[union-attr]
    resumed = train(cfg, tmp_path / "b", resume=True, progress=False, stop_after=3)
    assert not resumed.imitating and resumed.decisions == straight.decisions
    for (name, x), (_, y) in zip(
        straight.model.state_dict().items(), resumed.model.state_dict().items(), strict=True
    ):
        assert torch.equal(x, y), name
    curves = [(tmp_path / d / "curve.csv").read_text().splitlines() for d in "ab"]
    assert [r.split(",")[1:] for r in curves[0]] == [r.split(",")[1:] for r in curves[1]]  # but seconds


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (["teacher=nobody"], "teacher: bad player 'nobody': unknown player"),
        (["teacher=psearch:ckpt=pretrained"], "does not play batches"),
        (["teacher=ckpt:/no/such.pt"], "teacher: bad player"),
        (
            ["teacher=heuristic", "imitation_decisions=0"],
            "positive budget with a teacher, got 0 (to train without the warm start, set teacher=null)",
        ),
        (["teacher=heuristic", "imitation_decisions=-5"], "imitation_decisions must be a finite number"),
        (["imitation_decisions=1000"], "need a teacher"),
    ],
)
def test_bad_warm_starts_are_one_line_errors_before_anything_trains(
    tmp_path, capsys, overrides, message
) -> None:
    with pytest.raises(SystemExit) as e:
        train_main([f"runs_dir={tmp_path}", "total_decisions=1", *overrides])  # defaults: no teacher
    err = capsys.readouterr().err
    assert e.value.code == 2 and message in err, err
    assert [line for line in err.splitlines() if not line.startswith(("usage:", " "))] == [
        line for line in err.splitlines() if line.startswith("hanamikoji-train: error:")
    ]  # argparse's usage, then one line: the error
    assert not list(tmp_path.iterdir())


def test_a_warm_start_over_a_checkpoint_of_another_observation_version_is_refused(tmp_path, capsys) -> None:
    save_checkpoint(tmp_path / "v2.pt", PolicyNet(128, 2, observation_version=2))
    with pytest.raises(SystemExit) as e:
        train_main([f"runs_dir={tmp_path}", "teacher=heuristic", "imitation_decisions=1000", "hidden=128",
                    f"init_from={tmp_path / 'v2.pt'}"])  # fmt: skip
    assert e.value.code == 2 and "reads observation version 2" in capsys.readouterr().err


def test_a_run_that_would_end_in_its_warm_start_says_so_with_the_numbers(tmp_path, capsys) -> None:
    """``--config quick total_decisions=200000`` once trained 200,000 decisions of imitation and
    no PPO without a word; imitation alone stays allowed (an experiment of its own)."""
    cfg = tiny(tmp_path, imitation_decisions=1500, total_decisions=1000)
    train(cfg, tmp_path / "r", progress=False, stop_after=1)
    err = capsys.readouterr().err
    assert (
        "warning: this run is imitation only: its warm start (imitation_decisions 1,500) counts in "
        "total_decisions (1,000), so PPO never starts; for PPO set total_decisions above 1,500"
    ) in err
    train(
        tiny(tmp_path, imitation_decisions=500, total_decisions=1000),
        tmp_path / "s",
        progress=False,
        stop_after=1,
    )
    assert "imitation only" not in capsys.readouterr().err
