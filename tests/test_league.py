"""The league (training/league.py) and the held-out pool (hanamikoji_env/heldout.py): exploiters
join the opponents, PFSP draws where the agent still loses, a run resumes with its pool, and no
training config may name a held-out opponent."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import torch

from hanamikoji_env.heldout import HELD_OUT, heldout_match, heldout_specs
from hanamikoji_env.nn import load_checkpoint
from hanamikoji_env.training.config import Config, bundled_configs, read_yaml
from hanamikoji_env.training.league import League, exploiter_config
from hanamikoji_env.training.ppo import CHECKPOINT, POLICY, Trainer, train
from hanamikoji_env.training.selfplay import SNAPSHOTS

TINY = {
    "num_envs": 16, "rollout_steps": 32, "hidden": 32, "layers": 1, "num_minibatches": 4, "update_epochs": 1,
    "total_decisions": 10_000_000, "eval_every": 0, "eval_games": 20, "checkpoint_every": 1, "snapshot_every": 1,
    "pool_share": 0.3, "bot_shares": {"random": 0.1, "heuristic": 0.1}, "torch_threads": 1,
    "exploiter_every": 200, "exploiter_decisions": 100, "exploiter_share": 0.2, "pfsp": 2.0,
}  # fmt: skip
STAGE7 = "checkpoints/stages/stage7.pt"


def strings(data: Any) -> list[str]:
    """Every string in a YAML document, keys included."""
    if isinstance(data, dict):
        return [s for k, v in data.items() for s in (*strings(k), *strings(v))]
    if isinstance(data, list):
        return [s for v in data for s in strings(v)]
    return [data] if isinstance(data, str) else []


def test_no_bundled_config_names_a_heldout_opponent() -> None:
    """Every string of every bundled config, read as a player spec and as a checkpoint path."""
    assert len(heldout_specs()) == len(HELD_OUT) >= 2
    named = []
    for name, path in bundled_configs().items():
        for text in strings(read_yaml(path)[0]):
            for spec in (text, f"ckpt:{text}"):
                try:
                    found = heldout_match(spec)
                except ValueError:  # not a player spec at all
                    continue
                if found:
                    named.append((name, text, found))
    assert named == []


@pytest.mark.parametrize("key", ["bot_shares", "eval_bots", "init_from", "teacher", "a copy"])
def test_a_config_naming_a_heldout_opponent_is_refused_in_one_line(tmp_path, key) -> None:
    copy = tmp_path / "renamed.pt"
    shutil.copyfile(STAGE7, copy)  # recognised by its content, not its name
    data = {
        "bot_shares": {"bot_shares": {f"ckpt:{STAGE7}": 0.1}},
        "eval_bots": {"eval_bots": [f"ckpt:{STAGE7}"]},
        "init_from": {"init_from": STAGE7, "hidden": 256},
        "teacher": {"teacher": f"ckpt:{STAGE7}", "imitation_decisions": 10},
        "a copy": {"bot_shares": {f"ckpt:{copy}": 0.1}},
    }[key]
    with pytest.raises(ValueError, match=r"is the held-out opponent ckpt:stages/stage7.pt") as caught:
        Config.from_dict(data)
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        ({"exploiter_decisions": 0}, r"exploiter_decisions must be a finite number in \[1,"),
        ({"exploiter_decisions": -5}, r"exploiter_decisions must be a finite number in \[1,"),
        ({"exploiter_every": -1}, r"exploiter_every must be a finite number in \[0,"),
        ({"exploiter_share": 0.0}, "exploiter_every needs exploiter_share > 0"),
        ({"exploiter_share": 0.6}, "add up to at most 1"),
        ({"pfsp": float("nan")}, "pfsp must be a finite number"),
        ({"backend": "ray"}, "a league .* trains with backend: local only"),
    ],
)
def test_league_config_errors(edit, message) -> None:
    with pytest.raises(ValueError, match=message):
        Config.from_dict({**TINY, **edit})


def test_pfsp_gives_more_games_to_the_opponents_that_still_beat_the_agent() -> None:
    cfg = Config.from_dict(TINY)
    league = League(cfg)
    assert league.shares() == pytest.approx(
        {SNAPSHOTS: 0.3, "random": 0.1, "heuristic": 0.1}
    )  # no results yet
    league.exploiters = ["ckpt:a.pt"]
    for _ in range(50):
        league.fold(
            {"random": (19.0, 20), "heuristic": (10.0, 20), SNAPSHOTS: (10.0, 20), "ckpt:a.pt": (2.0, 20)}
        )
    shares = league.shares()
    assert sum(shares.values()) == pytest.approx(0.7)  # the opponents' total stays the priors'
    assert league.win_rate("random") == pytest.approx(0.95, abs=0.01)
    # per unit of prior share: the exploiter (agent wins 0.1) > heuristic (0.5) > random (0.95)
    per_prior = {name: shares[name] / prior for name, prior in league.priors().items()}
    assert per_prior["ckpt:a.pt"] > per_prior["heuristic"] > per_prior["random"] > 0
    assert per_prior["heuristic"] == pytest.approx(per_prior[SNAPSHOTS])
    assert League(Config.from_dict({**TINY, "pfsp": 0.0})).shares()["random"] == 0.1


def test_training_games_count_the_learners_results_against_each_opponent(tmp_path) -> None:
    cfg = Config.from_dict({**TINY, "runs_dir": str(tmp_path), "exploiter_every": 0, "pool_share": 0.0,
                            "bot_shares": {"random": 0.5}})  # fmt: skip
    trainer = Trainer(cfg, tmp_path / "r")
    done = 0
    for _ in range(6):
        done += int(trainer.collect()["done"].sum())
    results = trainer.collector.opponents.take_results()
    assert set(results) == {"random"}
    won, games = results["random"]
    assert 5 <= games < done and 0 <= won <= games  # random's games, not the self-play ones
    assert trainer.collector.opponents.take_results() == {}


@pytest.mark.slow
def test_a_league_trains_exploiters_that_join_the_opponents_and_resumes_with_them(tmp_path) -> None:
    cfg = Config.from_dict({**TINY, "runs_dir": str(tmp_path)})
    straight = train(cfg, tmp_path / "a", progress=False, stop_after=3)
    league = straight.league
    assert league is not None and len(league.exploiters) >= 1 and league.pending == 0
    first = tmp_path / "a" / "exploiters" / "1"
    assert (first / POLICY).is_file() and (first / "target.pt").is_file()
    assert load_checkpoint(first / POLICY)["decisions"] >= 100
    assert league.exploiters[0] == f"ckpt:{first / POLICY}"
    assert straight.collector.opponents.schedule.bots[-len(league.exploiters) :] == league.exploiters
    assert 0 <= league.exploiter_rates[0] <= 1
    saved = load_checkpoint(tmp_path / "a" / CHECKPOINT)["league"]
    assert saved["exploiters"] == league.exploiters
    # interrupted after the first exploiter, resumed: the same weights as the straight run
    train(cfg, tmp_path / "b", progress=False, stop_after=2)
    resumed = train(cfg, tmp_path / "b", resume=True, progress=False, stop_after=1)
    assert resumed.league.exploiters == [s.replace("/a/", "/b/") for s in league.exploiters]
    for (name, x), (_, y) in zip(
        straight.model.state_dict().items(), resumed.model.state_dict().items(), strict=True
    ):
        assert torch.equal(x, y), name


@pytest.mark.slow
def test_a_run_stopped_during_an_exploiter_finishes_that_exploiter_first_on_resume(tmp_path, capsys) -> None:
    cfg = Config.from_dict({**TINY, "runs_dir": str(tmp_path), "exploiter_every": 10**9})
    trainer = train(cfg, tmp_path / "r", progress=False, stop_after=1)
    # what the disk holds when a run stops during exploiter 1: the agent saved with it pending
    trainer.league.pending = 1
    trainer.save()
    folder = tmp_path / "r" / "exploiters" / "1"
    folder.mkdir(parents=True)
    shutil.copyfile(tmp_path / "r" / POLICY, folder / "target.pt")
    resumed = train(cfg, tmp_path / "r", resume=True, progress=False, stop_after=1)
    assert "resuming exploiter 1" not in capsys.readouterr().err  # it had not saved yet: trained anew
    assert resumed.league.pending == 0 and resumed.league.exploiters == [f"ckpt:{folder / POLICY}"]
    assert resumed.update == 2
    assert exploiter_config(cfg, tmp_path / "r", 1).init_from == str(folder / "target.pt")


def test_a_heuristic_variant_with_the_heuristics_own_weights_plays_the_heuristics_moves() -> None:
    """The variant is the readable heuristic with its evaluation's weights as options: at the
    defaults (bonus 1.5, sharpness 1.6, in tenths) it is the heuristic; other weights change play."""
    from helpers import choice_positions

    from hanamikoji_env.bots import HeuristicBot
    from hanamikoji_env.bots.heuristic_reference import HeuristicVariant

    positions = choice_positions(300, seed=3)
    same, other, heuristic = HeuristicVariant(), HeuristicVariant(bonus=0, sharpness=16), HeuristicBot()
    differ = 0
    for vector, mask in positions:
        obs = {"observation": vector, "action_mask": mask}
        expected = heuristic.act(obs)
        assert same.act(obs) == expected
        differ += other.act(obs) != expected
    assert differ >= 10, differ


@pytest.mark.parametrize("spec", [h.spec for h in HELD_OUT])
def test_every_heldout_player_is_refused_as_a_training_opponent(spec) -> None:
    with pytest.raises(ValueError, match="held-out opponent"):
        Config.from_dict(
            {"bot_shares": {dict(zip((h.spec for h in HELD_OUT), heldout_specs(), strict=True))[spec]: 0.1}}
        )


@pytest.mark.parametrize("skip_search", [False, True])
def test_the_heldout_report_plays_the_agent_and_the_search_bot_on_the_same_deals(
    tmp_path, skip_search
) -> None:
    """benchmarks/heldout.py: a row per held-out opponent with the agent's score and the search
    bot's; ``--skip-search`` plays the agent only and says so rather than leave a number out
    silently."""
    script = Path(__file__).resolve().parents[1] / "benchmarks" / "heldout.py"
    args = [sys.executable, str(script), "--ckpt", STAGE7, "--games", "4", "--only", "ckpt:stages/stage10.pt"]
    args += ["--workers", "1", "--out", str(tmp_path)] + (["--skip-search"] if skip_search else [])
    out = subprocess.run(args, capture_output=True, text=True, timeout=300, cwd=Path(script).parents[1])
    assert out.returncode == 0, out.stderr
    (row,) = json.loads((tmp_path / "heldout.json").read_text())["rows"]
    assert row["opponent"] == "ckpt:stages/stage10.pt" and row["agent"]["games"] == 4
    if skip_search:
        assert row["search"] is None and "| not played | - |" in out.stdout
    else:
        assert row["search"]["games"] == 4 and "not played" not in out.stdout
