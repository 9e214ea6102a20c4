"""benchmarks/algorithms.py: every row of the algorithm table runs end to end (for seconds, so none
rots), and bad input is one line."""

from __future__ import annotations

import csv
import dataclasses
import importlib.util
import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import extra

from hanamikoji_env.nn import load_checkpoint

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "algorithms.py"
ALGOS = [
    "ppo-v1",
    "ppo-v2",
    "ppo-v3",
    "ppo-v1-warm",
    "ppo-v2-warm",
    "ppo-study-v1",
    "mmd-study-v1",
    "sb3-maskable-ppo",
    "rllib-ppo",
    "tianshou-dqn",
    "tianshou-ppo",
    "cleanrl-ppo",
    "os-nfsp",
    "os-escher",
    "os-deep-cfr",
]


def run(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args], capture_output=True, text=True, cwd=cwd, timeout=600,
        env=None if env is None else {**os.environ, **env},
    )  # fmt: skip


SMALLER = {"os-escher": ["--set", "regret_traversals=16", "--set", "value_traversals=8"]}
"""Rows whose one unit of work is long at their own settings, run smaller (an ESCHER iteration of
the example's 1,536 traversals of the full game takes minutes)."""


SAME_TRAINER = {
    "ppo-v2": "ppo-v1",
    "ppo-v3": "ppo-v1",
    "ppo-v2-warm": "ppo-v1-warm",
    "ppo-study-v1": "mmd-study-v1",
}
"""Rows whose training runs the code of another row run below (our PPO trainer at another
observation version, or without the magnet): their settings are checked to make a valid
training config instead (test_the_rows_sharing_a_trainer_make_valid_configs)."""


@pytest.mark.slow(15)
@pytest.mark.parametrize("algo", [a for a in ALGOS if a not in SAME_TRAINER])
def test_every_row_trains_its_decisions_keeps_snapshots_and_scores_them(algo: str, tmp_path) -> None:
    changes = SMALLER.get(algo, [])
    (tmp_path / "tmp").mkdir()  # SB3's own temporary folders would go here (Ray's sockets cannot: too deep)
    env = {"TMPDIR": str(tmp_path / "tmp")} if algo == "sb3-maskable-ppo" else None
    out = run("--algo", algo, "--decisions", "3000", "--out", "rows", "--games", "2", "--curve-games", "2",
              "--points", "2", *changes, cwd=tmp_path, env=env)  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert not list((tmp_path / "tmp").glob("SB3-*"))  # no log folder left behind a learn() call
    folder = next((tmp_path / "rows").iterdir())
    result = json.loads((folder / "result.json").read_text())
    assert result["algo"] == algo and result["snapshots"] >= 1 and result["budget_decisions"] == 3000
    assert result["decisions"] >= 3000  # the budget was spent, not skipped
    assert set(result["scores"]) == {"random", "heuristic", "search", "pretrained"}
    assert all(s["games"] == 2 for s in result["scores"].values())
    # scored as its learner defines its policy: an average policy sampled, the others greedy as shipped
    assert result["player"].startswith("sampled:ckpt=" if algo.startswith("os-") else "ckpt:"), result[
        "player"
    ]
    assert result["trained_cpu_seconds"] > 0 and result["trained_seconds"] > 0  # reported beside
    with (folder / "curve.csv").open() as f:
        curve = list(csv.DictReader(f))
    assert len(curve) == result["snapshots"] and int(curve[-1]["decisions"]) == result["decisions"]
    assert [int(r["decisions"]) for r in curve] == sorted(int(r["decisions"]) for r in curve)
    table = run("--table", "rows", cwd=tmp_path).stdout
    name = f"{algo} (regret_traversals=16, value_traversals=8)" if changes else algo
    assert f"| {name} | 3,000 decisions | 0 | {result['decisions']:,} |" in table
    words = " ".join(changes)
    assert (
        f"`python benchmarks/algorithms.py --algo {algo} --decisions 3000 {words + ' ' if words else ''}--out rows --games 2 "
        "--curve-games 2`" in table  # as it ran: a rerun as printed scores its curve alike
    )
    assert result["curve_games"] == 2


def test_the_rows_sharing_a_trainer_make_valid_configs(tmp_path) -> None:
    """Each row that the test above leaves to another's run: its settings, as its ``train`` sets
    them, make a training config (a renamed or mistyped key would fail here), and they differ
    from that row's in what the row is for."""
    from hanamikoji_env.training.config import Config

    algorithms = harness()
    for name, like in SAME_TRAINER.items():
        settings = algorithms.ALGOS[name].settings
        assert isinstance(settings, dict) and settings != algorithms.ALGOS[like].settings
        fixed = {
            "seed": 0,
            "run_name": name,
            "runs_dir": str(tmp_path),
            "variant": "full",
            "total_decisions": 10**6,
        }
        cfg = Config.from_dict({**settings, **fixed})
        assert cfg.observation_version == settings["observation_version"]
    assert algorithms.ALGOS["ppo-v3"].settings["observation_version"] == 3
    assert "magnet_coef" not in algorithms.ALGOS["ppo-study-v1"].settings


@pytest.mark.slow(5)
def test_a_row_may_still_be_budgeted_in_minutes(tmp_path) -> None:
    out = run("--algo", "ppo-v1", "--minutes", "0.1", "--out", "rows", "--games", "2", "--curve-games", "2",
              "--points", "2", cwd=tmp_path)  # fmt: skip
    assert out.returncode == 0, out.stderr
    result = json.loads((tmp_path / "rows" / "ppo-v1" / "result.json").read_text())
    assert result["trained_seconds"] >= 6 and result["budget_decisions"] is None  # the time was spent
    assert result["core_speed"] > 0  # the core it was spent on was timed
    table = run("--table", "rows", cwd=tmp_path).stdout
    budget = f"0.1 min{harness().core_note(result['core_speed'])}"  # " (core 0.43x)" on a slow core
    assert f"| ppo-v1 | {budget} | 0 | {result['decisions']:,} |" in table


def harness():
    sys.path.insert(0, str(SCRIPT.parent))
    try:
        import algorithms
    finally:
        sys.path.remove(str(SCRIPT.parent))
    return algorithms


def test_the_rows_are_the_documented_ones() -> None:
    algorithms = harness()
    assert sorted(algorithms.ALGOS) == sorted(ALGOS)
    page = (SCRIPT.parents[1] / "docs" / "benchmark.md").read_text()
    settings = page.split("## The rows and their settings", 1)[1]
    first_cells = [line.split("|")[1] for line in settings.splitlines() if line.startswith("| `")]
    documented = {name for cell in first_cells for name in re.findall(r"`([a-z0-9-]+)`", cell)}
    assert documented == set(ALGOS)  # every row's settings are on the page, and no other


def test_no_row_records_a_setting_that_its_command_sets() -> None:
    """A result's settings are what the row learned with: the seed, the game and the budget come
    from the command (``--seed``, ``--variant``, ``--decisions``), so a settings block that held
    its default (``variant: full`` in a mini row) would say the wrong thing."""
    algorithms = harness()
    for name, algo in algorithms.ALGOS.items():
        if algo.extra == "openspiel" and importlib.util.find_spec("pyspiel") is None:
            continue  # OpenSpiel's learners read their settings from the extra
        settings = algo.settings() if callable(algo.settings) else algo.settings
        assert not {"seed", "variant", "updates", "total_decisions"} & settings.keys(), (name, settings)


def test_a_row_whose_extra_is_missing_says_what_to_install(tmp_path, monkeypatch) -> None:
    algorithms = harness()
    monkeypatch.setitem(sys.modules, "sb3_contrib", None)  # as if the sb3 extra were not installed
    with pytest.raises(ValueError, match=r"needs the 'sb3' extra: pip install 'hanamikoji-env\[sb3\]'"):
        algorithms.run_row("sb3-maskable-ppo", tmp_path, 2, 2, 1, 0, decisions=1000)
    assert not (tmp_path / "sb3-maskable-ppo").exists()  # no half row is left to refuse a rerun


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--algo", "ppo-v1", "--minutes", "0"], "--minutes must be positive"),
        (["--algo", "ppo-v1", "--decisions", "0"], "--decisions must be in [1, 10,000,000,000]"),
        (["--algo", "ppo-v1", "--decisions", "-5"], "--decisions must be in"),
        (["--algo", "ppo-v1", "--decisions", str(10**13)], "--decisions must be in"),
        (["--algo", "ppo-v1", "--decisions", "9", "--minutes", "1"], "not allowed with argument"),
        (["--algo", "ppo-v1"], "give the budget: --decisions N"),
        (["--algo", "ppo-v1", "--decisions", "9", "--games", "3"], "--games must be an even number"),
        (["--algo", "nope"], "invalid choice: 'nope'"),
        ([], "give --algo NAME"),
    ],
)
def test_bad_input_is_one_line(args: list[str], message: str, tmp_path, monkeypatch, capsys) -> None:
    assert message in refused(args, tmp_path, monkeypatch, capsys)
    assert not (tmp_path / "runs").exists()


def refused(
    args: list[str], cwd: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> str:
    """The script's ``main(args)`` run in this process from ``cwd`` (no interpreter to start: the
    errors come before anything trains), which must exit with status 2; its last line of stderr."""
    algorithms = harness()
    monkeypatch.chdir(cwd)
    with pytest.raises(SystemExit) as exit_:
        algorithms.main(args)
    assert exit_.value.code == 2
    return capsys.readouterr().err.strip().splitlines()[-1]


def test_a_row_already_run_is_not_overwritten(tmp_path) -> None:
    (tmp_path / "rows" / "ppo-v1").mkdir(parents=True)
    (tmp_path / "rows" / "ppo-v1" / "result.json").write_text("{}")
    for resume in ([], ["--resume"]):
        out = run("--algo", "ppo-v1", "--minutes", "0.01", "--out", "rows", *resume, cwd=tmp_path)
        assert out.returncode == 2 and "holds a finished row" in out.stderr
    assert (tmp_path / "rows" / "ppo-v1" / "result.json").read_text() == "{}"


@pytest.mark.slow(5)
def test_a_stopped_row_goes_on_from_its_last_snapshot(tmp_path) -> None:
    args = ["--algo", "ppo-v1", "--out", "rows", "--games", "2", "--curve-games", "2", "--points", "2"]
    assert run(*args, "--decisions", "120000", cwd=tmp_path).returncode == 0  # the most of the 140,000
    folder = tmp_path / "rows" / "ppo-v1"
    first = json.loads((folder / "result.json").read_text())
    (folder / "result.json").unlink()  # as if stopped before its scores
    before = sorted(p.name for p in (folder / "snapshots").iterdir())
    refused = run(*args, "--decisions", "140000", cwd=tmp_path)
    assert refused.returncode == 2 and "holds a stopped row: --resume goes on with it" in refused.stderr
    out = run(*args, "--decisions", "140000", "--resume", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    result = json.loads((folder / "result.json").read_text())
    assert result["resumed_at"] == first["decisions"] and result["decisions"] >= 140000
    # the CPU seconds go on from the stopped run's at its last snapshot, as the wall seconds do (the
    # resumed part alone, a fifth of the decisions, would be less than the stopped run's)
    stopped = json.loads((folder / "cpu_seconds.json").read_text())[str(first["decisions"])]
    assert 0 < stopped <= first["trained_cpu_seconds"] < result["trained_cpu_seconds"]
    after = sorted(p.name for p in (folder / "snapshots").iterdir())
    assert after[: len(before)] == before and len(after) > len(before)  # kept, then more
    with (folder / "curve.csv").open() as f:
        decisions = [int(r["decisions"]) for r in csv.DictReader(f)]
    assert decisions[: first["snapshots"]] == [int(n.split("s_")[1].split(".")[0]) for n in before]
    assert decisions == sorted(decisions) and len(set(decisions)) == len(decisions)


@pytest.mark.slow(10)
def test_a_row_stopped_by_sigterm_saves_and_says_how_to_go_on(tmp_path) -> None:
    """A scheduler's SIGTERM mid-training: the trainer saves, its policy there becomes the row's last
    snapshot (so --resume counts the time up to the stop), and the script ends in one line naming
    ``--resume`` (status 130), not a traceback."""
    args = ["--algo", "ppo-v1", "--out", "rows", "--decisions", "20000000", "--points", "2"]
    proc = subprocess.Popen(
        [sys.executable, str(SCRIPT), *args], cwd=tmp_path, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL,
        text=True,
    )  # fmt: skip
    try:
        assert proc.stderr is not None
        while "training into" not in (line := proc.stderr.readline()):  # from here SIGTERM saves
            assert line, "the row ended before it trained"
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=300)
    finally:
        proc.kill()
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    assert err.strip().splitlines()[-1] == (
        "stopped: rows/ppo-v1 holds the stopped row; the same command with --resume goes on from its last snapshot"
    )
    folder = tmp_path / "rows" / "ppo-v1"
    saved = load_checkpoint(folder / "run" / "policy.pt")["decisions"]
    snapshots = sorted(folder.glob("snapshots/*.pt"))  # the stop point is the last, with its time
    assert saved > 0 and snapshots and snapshots[-1].name.endswith(f"s_{saved}.pt")
    assert snapshots[-1].read_bytes() == (folder / "run" / "policy.pt").read_bytes()


@pytest.mark.parametrize(
    ("algo", "message"),
    [
        ("sb3-maskable-ppo", "sb3-maskable-ppo cannot go on from a stopped run"),
        ("ppo-v1", "holds no snapshot of a stopped run"),
    ],
)
def test_a_row_that_cannot_go_on_says_so_and_keeps_its_folder(algo: str, message: str, tmp_path) -> None:
    (tmp_path / "rows" / algo / "snapshots").mkdir(parents=True)
    out = run("--algo", algo, "--decisions", "3000", "--out", "rows", "--resume", cwd=tmp_path)
    assert out.returncode == 2 and message in out.stderr
    assert (tmp_path / "rows" / algo / "snapshots").is_dir()


def test_the_table_shows_whether_a_row_was_still_climbing(tmp_path) -> None:
    """The curve's score against the heuristic at the snapshot nearest half the training time,
    then at the last one."""
    curve = tmp_path / "curve.csv"
    rows = [(60, 0.2), (800, 0.31), (1000, 0.35), (1790, 0.5)]
    curve.write_text("seconds,vs_heuristic\n" + "".join(f"{s},{h}\n" for s, h in rows))
    assert harness().climb(curve, 1900.0) == (0.35, 0.50)
    assert harness().climb(curve, 1600.0) == (0.31, 0.50)


def test_a_row_is_still_rising_where_its_rise_is_three_standard_errors_of_its_games() -> None:
    rising = harness().rising
    assert rising([(0.3, 0.5)], [200])  # 0.20 over a standard error of 0.048
    assert not rising([(0.3, 0.35)], [200])  # 0.05: one standard error
    assert not rising([(0.3, 0.35)] * 3, [200] * 3)  # three seeds: 0.027, still under 3
    assert rising([(0.3, 0.35)] * 3, [2000] * 3)  # ten times the games: 0.0085
    assert not rising([(0.4, 0.3)], [200]) and not rising([(0.0, 0.0)], [200])  # falling; flat


def test_a_snapshot_is_due_every_interval_and_at_the_end_of_the_budget() -> None:
    timed = harness().Budget(every=30.0, deadline=100.0)
    assert not timed.due(now=29.0, last=0.0, done=10**9, last_done=0)  # time alone counts
    assert timed.due(now=30.0, last=0.0, done=0, last_done=0)
    assert timed.due(now=100.0, last=90.0, done=0, last_done=0)  # the deadline, however recent the last
    assert not timed.due(now=99.0, last=90.0, done=0, last_done=0)
    counted = harness().Budget(every=300.0, decisions=1000)
    assert not counted.due(now=10**6, last=0.0, done=299, last_done=0)  # decisions alone count
    assert counted.due(now=0.0, last=0.0, done=300, last_done=0)
    assert counted.due(now=0.0, last=0.0, done=1000, last_done=950) and counted.spent(0.0, 1000)
    assert not counted.spent(10**6, 999)
    # a chunk of work reaches the next snapshot: 300 decisions at 64 a unit are 5 units (4, 256
    # decisions, would leave a chunk of one unit for a snapshot 64 decisions later), at least 1
    assert counted.chunks(0.0, 0, per_decisions=64, per_seconds=1.0) == 5
    assert counted.chunks(0.0, 0, per_decisions=60, per_seconds=1.0) == 5  # exactly 300: no sixth
    assert counted.chunks(0.0, 990, per_decisions=64, per_seconds=1.0) == 1
    assert timed.chunks(90.0, 0, per_decisions=64, per_seconds=2.0) == 5  # 10 s left


def test_the_table_lists_a_row_run_again_for_longer_on_a_line_of_its_own(tmp_path) -> None:
    algorithms = harness()
    score = {"win_rate": 0.5, "ci95": [0.4, 0.6]}
    for folder, minutes, decisions in [("long", 90, 3000), ("rows", 30, 1000), ("rows2", 30, 2000)]:
        row = tmp_path / folder / ("ppo-v2" if folder != "rows2" else "ppo-v1")
        row.mkdir(parents=True)
        (row / "curve.csv").write_text("seconds,vs_heuristic\n10,0.1\n20,0.2\n")
        result = {"algo": row.name, "minutes": minutes, "decisions": decisions, "trained_seconds": 20.0}
        (row / "result.json").write_text(
            json.dumps(result | {"scores": dict.fromkeys(algorithms.OPPONENTS, score)})
        )
    lines = algorithms.table(tmp_path / "rows", tmp_path / "long", tmp_path / "rows2").splitlines()[2:]
    assert [line.split(" | ")[:4] for line in lines] == [
        ["| ppo-v1", "30 min", "0", "2,000"],
        ["| ppo-v2", "30 min", "0", "1,000"],
        ["| ppo-v2", "90 min", "0", "3,000"],
    ]
    assert (
        f"`python benchmarks/algorithms.py --algo ppo-v2 --minutes 90 --out {tmp_path / 'long'}`" in lines[2]
    )


def test_the_table_command_reruns_the_row_into_its_own_folder(tmp_path, monkeypatch) -> None:
    """A row in the default folder reads ``--algo A --minutes M``; one found elsewhere, or run
    with other games or seed, says so, so every row can be run again as printed."""
    algorithms = harness()
    monkeypatch.chdir(tmp_path)
    score = {"win_rate": 0.5, "ci95": [0.4, 0.6]}
    for out, algo, options in [("runs/algorithms", "ppo-v1", {}), ("runs/algorithms_long", "ppo-v2", {}),
                             ("runs/algorithms", "ppo-v2", {"games": 400, "seed": 3})]:  # fmt: skip
        row = Path(out) / algo
        row.mkdir(parents=True, exist_ok=True)
        (row / "curve.csv").write_text("seconds,vs_heuristic\n10,0.1\n")
        result = {
            "algo": algo,
            "minutes": 30,
            "decisions": 1,
            "trained_seconds": 10.0,
            "games": 1000,
            "seed": 0,
        }
        result |= options | {"scores": dict.fromkeys(algorithms.OPPONENTS, score)}
        (row / "result.json").write_text(json.dumps(result))
    commands = [
        line.split(" | ")[-1]
        for line in algorithms.table(Path("runs/algorithms"), Path("runs/algorithms_long")).splitlines()[2:]
    ]
    assert commands == [
        "`python benchmarks/algorithms.py --algo ppo-v1 --minutes 30` |",
        "`python benchmarks/algorithms.py --algo ppo-v2 --minutes 30 --games 400 --seed 3` |",
        "`python benchmarks/algorithms.py --algo ppo-v2 --minutes 30 --out runs/algorithms_long` |",
    ]


SEEDED_ELSEWHERE = ["tianshou-ppo", "tianshou-dqn"]
"""Rows whose learner draws from numpy's global generator (Tianshou's minibatches, exploration and
replay samples), which the row must seed itself."""


@pytest.mark.slow(20)
@pytest.mark.parametrize("algo", SEEDED_ELSEWHERE)
def test_a_row_run_again_with_its_seed_trains_the_same_network(algo: str, tmp_path) -> None:
    """A row's printed command reruns it exactly: two runs of one seed end in the same weights
    (Tianshou's PPO differed run to run until its numpy was seeded), and another seed does not."""
    weights = [trained(algo, tmp_path / name, seed) for name, seed in (("a", 0), ("b", 0), ("c", 1))]
    assert same(weights[0], weights[1])
    assert not same(weights[0], weights[2])


@pytest.mark.slow(10)
def test_the_dqn_row_trains_the_network_it_trains_with_tianshous_own_buffer(tmp_path, monkeypatch) -> None:
    """The DQN row's buffer checks only new entries for NaN (Tianshou's scans the whole buffer
    after every collect, most of the row's time); the weights trained are the same."""
    extra("tianshou")
    from tianshou.data import VectorReplayBuffer

    from hanamikoji_env.examples import tianshou_dqn

    ours = trained("tianshou-dqn", tmp_path / "ours", 0)
    monkeypatch.setattr(tianshou_dqn, "NewEntriesCheckedBuffer", VectorReplayBuffer)
    assert same(ours, trained("tianshou-dqn", tmp_path / "tianshou", 0))


def trained(algo: str, folder: Path, seed: int) -> list:
    """The tensors of the last snapshot of ``algo``'s row trained for 3,000 decisions of the mini
    variant (a ``.mlp`` learner's)."""
    from hanamikoji_env.bots.mlp import load_mlp

    algorithms = harness()
    snapshots = algorithms.ALGOS[algo].train(
        folder, algorithms.Budget(every=3000, decisions=3000), seed,
        lambda seconds, decisions: folder / f"{decisions}", "mini", {},
    )  # fmt: skip
    seats = load_mlp(snapshots[-1].spec.removeprefix("ckpt:"))["seats"]
    return [t for seat in seats for layer in seat for t in layer]


def same(a: list, b: list) -> bool:
    import torch

    return all(torch.equal(x, y) for x, y in zip(a, b, strict=True))


def test_kept_rows_make_the_table_of_their_runs_with_the_commands_they_ran(tmp_path, monkeypatch) -> None:
    """``--keep``: a finished row's numbers (not its snapshots) go to the same path in the
    committed record; the table over the record is the table over the runs, each command naming
    the folder it ran in; keeping it again copies nothing; another run's file is refused, not
    overwritten, and nothing of that call is copied; a folder outside runs/ is refused."""
    algorithms = harness()
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(algorithms, "RESULTS", tmp_path / "record")
    score = {"win_rate": 0.5, "ci95": [0.4, 0.6]}
    for seed in (0, 1):
        row = Path(f"runs/t/seed{seed}/ppo-v1")
        (row / "snapshots").mkdir(parents=True)
        (row / "snapshots" / "000010s_2000.pt").write_bytes(b"weights")
        (row / "curve.csv").write_text("seconds,decisions,vs_heuristic\n10,1000,0.1\n20,2000,0.2\n")
        (row / "exploit-rl.json").write_text(json.dumps({"br_score": 0.9 + seed / 100, "ci95": [0.8, 0.95],
                                                         "decisions": 2_000_000}))  # fmt: skip
        result = {"algo": "ppo-v1", "budget_decisions": 2000, "decisions": 2000, "trained_seconds": 20.0,
                  "games": 1000, "seed": seed, "scores": dict.fromkeys(algorithms.OPPONENTS, score)}  # fmt: skip
        (row / "result.json").write_text(json.dumps(result))
    outs = [Path("runs/t/seed0"), Path("runs/t/seed1")]
    copied = algorithms.keep(*outs)
    assert sorted(p.relative_to(tmp_path / "record").as_posix() for p in copied) == [
        f"t/seed{s}/ppo-v1/{f}" for s in (0, 1) for f in ("curve.csv", "exploit-rl.json", "result.json")
    ]
    assert not (tmp_path / "record/t/seed0/ppo-v1/snapshots").exists()
    kept = algorithms.table(tmp_path / "record/t/seed0", tmp_path / "record/t/seed1")
    assert kept == algorithms.table(*outs)
    assert "0.905 (0.900-0.910)" in kept and "--out runs/t/seed1 --seed 1`" in kept
    assert algorithms.keep(*outs) == []  # kept as it is: nothing to do
    (outs[1] / "ppo-v1" / "result.json").write_text(json.dumps(result | {"decisions": 2001}))
    (outs[0] / "ppo-v2").mkdir()
    (outs[0] / "ppo-v2" / "result.json").write_text(json.dumps(result | {"algo": "ppo-v2"}))
    with pytest.raises(ValueError, match=r"holds another run's result\.json: remove it"):
        algorithms.keep(*outs)
    assert not (tmp_path / "record/t/seed0/ppo-v2").exists()  # checked before anything was copied
    assert json.loads((tmp_path / "record/t/seed1/ppo-v1/result.json").read_text())["decisions"] == 2000
    with pytest.raises(ValueError, match="--keep takes folders of rows under runs/"):
        algorithms.keep(tmp_path / "record/t/seed0")
    Path("runs/empty").mkdir()
    with pytest.raises(ValueError, match="holds no finished row"):
        algorithms.keep(Path("runs/empty"))


def test_every_line_of_the_record_is_on_the_page_as_table_prints_it() -> None:
    """docs/benchmark.md's lines are generated, not typed: each line ``--table`` prints over the
    committed record (each table's seed folders together) is on the page character for
    character."""
    algorithms = harness()
    page = set((SCRIPT.parents[1] / "docs" / "benchmark.md").read_text().splitlines())
    tables = sorted(d for d in algorithms.RESULTS.iterdir() if d.is_dir())
    assert tables, "the record is empty"
    for folder in tables:
        lines = algorithms.table(*sorted(folder.glob("seed*"))).splitlines()
        rows = [line for line in lines if line.startswith("| ") and not line.startswith("| algorithm")]
        assert rows, folder
        missing = [row.split(" | ")[:3] for row in rows if row not in page]
        assert not missing, f"{folder.name}: not on the page as --table prints them: {missing}"


MINI_ROWS = ["ppo-v1", "sb3-maskable-ppo"]
"""Our trainer's checkpoints and SB3's zips, sampled; OpenSpiel's networks in the sweep test below,
the other learners' mini envs where they are built (test_cleanrl.py, test_clients.py,
test_distributed.py)."""


@pytest.mark.slow(10)
@pytest.mark.parametrize("algo", MINI_ROWS)
def test_a_row_on_the_mini_variant_is_measured_exactly(algo: str, tmp_path, monkeypatch) -> None:
    """``--variant mini``: the row learns the mini variant and every snapshot is measured exactly
    there, as its learner defines its policy (sampled): its NashConv and its
    expected scores against random and the heuristic, the numbers :mod:`hanamikoji_env.exact`
    gives the same player; the table puts the row in the mini table, its command says
    ``--variant mini``; the exploitability curve is drawn."""
    if algo.startswith("os-"):
        extra("pyspiel", reason="the openspiel extra is not installed")
    from hanamikoji_env import exact
    from hanamikoji_env.bots.spec import parse_player

    out = run("--algo", algo, "--decisions", "3000", "--variant", "mini", "--out", "rows", "--points", "2",
              cwd=tmp_path)  # fmt: skip
    assert out.returncode == 0, out.stderr
    folder = tmp_path / "rows" / algo
    result = json.loads((folder / "result.json").read_text())
    assert result["variant"] == "mini" and "scores" not in result and result["games"] is None
    assert result["player"].startswith("sampled:ckpt=")
    monkeypatch.chdir(tmp_path)  # the row names its snapshots from where it ran
    player = parse_player(result["player"]).make(0, None)
    assert player.greedy is False
    assert result["exact"]["nash_conv"] == pytest.approx(exact.exploitability(player).nash_conv, abs=1e-9)
    heuristic = parse_player("heuristic").make(0, None)
    assert result["exact"]["vs_heuristic"] == pytest.approx(exact.head_to_head(player, heuristic), abs=1e-9)
    with (folder / "curve.csv").open() as f:
        curve = list(csv.DictReader(f))
    assert float(curve[-1]["nash_conv"]) == pytest.approx(result["exact"]["nash_conv"], abs=1e-5)
    table = run("--table", "rows", cwd=tmp_path).stdout
    assert "| algorithm (mini variant) |" in table and "| algorithm | budget |" not in table
    assert (
        f"`python benchmarks/algorithms.py --algo {algo} --decisions 3000 --variant mini --out rows`" in table
    )
    drawn = run(
        "--table", "rows", "--plot", "x.png", "--metric", "nash_conv", "--variant", "mini", cwd=tmp_path
    )
    assert drawn.returncode == 0 and "drawn: x.png (1 panel)" in drawn.stdout, drawn.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--algo", "sb3-maskable-ppo", "--set", "n_steps=8"], "sb3-maskable-ppo takes no --set"),
        (["--algo", "ppo-v1", "--set", "lerning_rate=0.1"], "unknown keys ['lerning_rate']"),
        (["--algo", "os-nfsp", "--set", "anticipatory=0.2"], "nfsp has no setting 'anticipatory'"),
        (  # too few traversals of the short mini game to fill one batch: found while training
            [
                "--algo",
                "os-escher",
                "--variant",
                "mini",
                "--set",
                "regret_traversals=16",
                "--set",
                "value_traversals=8",
            ],
            "escher: an iteration gathered fewer samples than a batch (value_batch_size 256, "
            "regret_batch_size 256): raise value_traversals (8) and regret_traversals (16)",
        ),
    ],
)
def test_a_bad_setting_is_one_line_and_leaves_no_row(
    args: list[str], message: str, tmp_path, monkeypatch, capsys
) -> None:
    if "os-" in args[1]:
        extra("pyspiel", reason="the openspiel extra is not installed")
    assert message in refused([*args, "--decisions", "3000", "--out", "rows"], tmp_path, monkeypatch, capsys)
    assert not any((tmp_path / "rows").glob("*/result.json")) and not any((tmp_path / "rows").glob("*/*"))


def test_settings_are_read_and_checked_before_anything_trains(tmp_path) -> None:
    """``--set`` words: JSON values, else strings; a word without ``=``, a key a row sets itself, a
    learner's unknown key or a value of another type than the default are one-line errors."""
    algorithms = harness()
    from hanamikoji_env.training.openspiel_learners import check_settings, learner_settings

    assert algorithms.parse_changes(["a=0.2", "b=[32,32]", "c=true", "d=adam"]) == {
        "a": 0.2, "b": [32, 32], "c": True, "d": "adam"
    }  # fmt: skip
    with pytest.raises(ValueError, match="--set takes KEY=VALUE, got 'learning_rate'"):
        algorithms.parse_changes(["learning_rate"])
    with pytest.raises(ValueError, match="--set cannot change seed: the row sets it"):
        algorithms.ALGOS["ppo-v1"].train(tmp_path, algorithms.Budget(1, 1), 0, None, "full", {"seed": 3})
    nfsp = {"source": "x", "anticipatory_param": 0.1, "hidden_layers_sizes": [128]}
    check_settings({"anticipatory_param": 1, "hidden_layers_sizes": [32]}, nfsp, "nfsp")  # an int for a float
    for changes, message in [
        ({"anticipatory_param": "high"}, "nfsp's anticipatory_param is a float (default 0.1), got 'high'"),
        ({"source": "me"}, "nfsp has no setting 'source'"),
        ({"hidden_layers_sizes": 64}, "hidden_layers_sizes is a list"),
    ]:
        with pytest.raises(ValueError, match=re.escape(message)):
            check_settings(changes, nfsp, "nfsp")
    if importlib.util.find_spec("open_spiel") is not None:
        assert learner_settings("escher")["regret_traversals"] == 1024  # escher.Config()'s own


@pytest.mark.slow(5)
def test_changed_settings_make_rows_of_their_own_that_say_their_source(tmp_path) -> None:
    """A sweep: each ``--set`` of a learner is a folder and a line of its own, the settings it
    ran with (the source's, changed) in its result, the command to run it again in the table."""
    extra("pyspiel", reason="the openspiel extra is not installed")
    args = ["--algo", "os-nfsp", "--decisions", "500", "--variant", "mini", "--out", "rows", "--points", "1"]
    for changes in ([], ["--set", "anticipatory_param=0.2", "--set", "hidden_layers_sizes=[32,32]"]):
        out = run(*args, *changes, cwd=tmp_path)
        assert out.returncode == 0, out.stderr
    folders = sorted(p.name for p in (tmp_path / "rows").iterdir())
    changed = "os-nfsp--anticipatory_param=0.2--hidden_layers_sizes=_32_32_"
    assert folders == ["os-nfsp", changed]
    results = {f: json.loads((tmp_path / "rows" / f / "result.json").read_text()) for f in folders}
    assert results["os-nfsp"]["settings"]["source"].startswith("OpenSpiel's examples/leduc_nfsp.py")
    assert results["os-nfsp"]["settings"]["hidden_layers_sizes"] == [128]  # the example's
    assert results[changed]["settings"]["hidden_layers_sizes"] == [32, 32]
    assert results[changed]["changes"] == {"anticipatory_param": 0.2, "hidden_layers_sizes": [32, 32]}
    # measured exactly, the average policy sampled, as exact.exploitability measures the same player
    from hanamikoji_env import exact
    from hanamikoji_env.bots.spec import parse_player

    base = results["os-nfsp"]
    assert base["player"].startswith("sampled:ckpt=") and base["games"] is None
    player = parse_player(base["player"].replace("ckpt=", f"ckpt={tmp_path}/", 1)).make(0, None)
    assert player.greedy is False and player.variant == "mini"
    assert base["exact"]["nash_conv"] == pytest.approx(exact.exploitability(player).nash_conv, abs=1e-9)
    table = run("--table", "rows", cwd=tmp_path).stdout
    assert "| os-nfsp | 500 decisions |" in table
    assert "| os-nfsp (anticipatory_param=0.2, hidden_layers_sizes=[32, 32]) | 500 decisions |" in table
    assert (
        "--set anticipatory_param=0.2 --set 'hidden_layers_sizes=[32,32]' --out rows`" in table
    )  # shell-quoted


def test_a_row_that_learns_the_full_game_only_refuses_the_mini_variant(tmp_path, monkeypatch) -> None:
    """Every row learns both games; one that could not (a learner limited to the full game) is
    refused in one line before anything runs."""
    algorithms = harness()
    full_only = dataclasses.replace(algorithms.ALGOS["ppo-v1"], variants=(algorithms.FULL,))
    monkeypatch.setitem(algorithms.ALGOS, "ppo-v1", full_only)
    with pytest.raises(ValueError, match="ppo-v1 learns the full game only, not --variant mini"):
        algorithms.run_row("ppo-v1", tmp_path, 2, 2, 1, 0, decisions=1000, variant="mini")
    assert not (tmp_path / "ppo-v1").exists()
    assert all(a.variants == algorithms.BOTH for a in harness().ALGOS.values() if a is not full_only)


def test_the_seeds_of_a_row_make_one_line_their_mean_and_range(tmp_path) -> None:
    """Three seeds of a row at 2M decisions, each in a folder of its own, are one line: each
    score their mean with the seeds' range, the decisions their mean, every seed's command; the
    same row at another budget is a line of its own."""
    algorithms = harness()
    for seed, rate, budget in [
        (0, 0.5, 2_000_000),
        (1, 0.6, 2_000_000),
        (2, 0.7, 2_000_000),
        (0, 0.9, 20_000_000),
    ]:
        out = tmp_path / f"seed{seed}" if budget == 2_000_000 else tmp_path / "long"
        row = out / "ppo-v1"
        row.mkdir(parents=True)
        (row / "curve.csv").write_text(
            f"seconds,decisions,vs_heuristic\n1,{budget // 2},{rate - 0.1}\n2,{budget},{rate}\n"
        )
        score = {"win_rate": rate, "ci95": [rate - 0.03, rate + 0.03]}
        result = {"algo": "ppo-v1", "budget_decisions": budget, "minutes": None, "decisions": budget + seed,
                  "trained_seconds": 9.0, "seed": seed, "games": 1000}  # fmt: skip
        (row / "result.json").write_text(
            json.dumps(result | {"scores": dict.fromkeys(algorithms.OPPONENTS, score)})
        )
    lines = algorithms.table(*(tmp_path / f"seed{s}" for s in range(3)), tmp_path / "long").splitlines()[2:]
    assert len(lines) == 2
    cells = lines[0].split(" | ")
    assert cells[:4] == ["| ppo-v1", "2,000,000 decisions", "0, 1, 2", "2,000,001"]
    # every seed's curve rose 0.1 over 200 games a point: 3.5 standard errors
    assert cells[4] == "0.600 (0.500-0.700)" and cells[-2] == "0.50 → 0.60 (rising)"
    assert all(f"--decisions 2000000 --out {tmp_path / f'seed{s}'}" in lines[0] for s in range(3))
    assert "--seed 2" in lines[0]
    assert lines[1].split(" | ")[:3] == ["| ppo-v1", "20,000,000 decisions", "0"]
    assert "0.900 [0.870, 0.930]" in lines[1]  # one seed: its own interval


def test_a_budget_spent_on_a_core_of_another_speed_says_how_fast(tmp_path) -> None:
    """Equal minutes are equal compute only on equal cores: a row whose core ran at 0.4x the
    table's says so in its budget cell; one within 15%, or run before cores were timed, does not."""
    algorithms = harness()
    reference = algorithms.REFERENCE_CORE
    assert algorithms.core_note(None) == ""
    assert algorithms.core_note(reference * 1.1) == algorithms.core_note(reference * 0.9) == ""
    assert algorithms.core_note(reference * 0.4) == " (core 0.40x)"
    assert algorithms.core_note(reference * 1.5) == " (core 1.50x)"
    score = {"win_rate": 0.5, "ci95": [0.4, 0.6]}
    row = tmp_path / "long" / "rllib-ppo"
    row.mkdir(parents=True)
    (row / "curve.csv").write_text("seconds,vs_heuristic\n10,0.1\n")
    result = {"algo": "rllib-ppo", "minutes": 90, "decisions": 5, "trained_seconds": 10.0}
    result |= {"core_speed": round(reference * 0.4), "scores": dict.fromkeys(algorithms.OPPONENTS, score)}
    (row / "result.json").write_text(json.dumps(result))
    assert (
        algorithms.table(tmp_path / "long")
        .splitlines()[2]
        .startswith("| rllib-ppo | 90 min (core 0.40x) | 0 | 5 |")
    )


def test_the_core_is_timed_on_the_batch_engine() -> None:
    """A positive rate of the fixed workload, in the range a CPU core reaches (0.1M-100M/s)."""
    assert 1e5 < harness().core_speed(seconds=0.2, repeats=1) < 1e8


def test_the_plot_draws_decision_rows_seeds_as_bands_eight_a_panel(tmp_path) -> None:
    """``--table ... --plot``: one curve a row budgeted in decisions (its seeds' mean, their range
    a band), at most eight a panel, the x axis in decisions; a wall-time row is left out; no
    decision row at all, or --plot without --table, is one line."""
    algorithms = harness()
    score = {"win_rate": 0.5, "ci95": [0.4, 0.6]}
    for k in range(9):
        for seed in (0, 1):
            row = tmp_path / f"seed{seed}" / f"algo{k}"
            row.mkdir(parents=True)
            (row / "curve.csv").write_text(
                "seconds,update,decisions,phase,vs_random,vs_heuristic\n"
                f"1,1,1000,x,0.5,{0.1 + seed / 10}\n2,2,2000,x,0.6,{0.2 + k / 100}\n"
            )
            result = {"algo": f"algo{k}", "budget_decisions": 2000, "minutes": None, "decisions": 2000,
                      "trained_seconds": 2.0, "seed": seed, "scores": dict.fromkeys(algorithms.OPPONENTS, score)}  # fmt: skip
            (row / "result.json").write_text(json.dumps(result))
    png = tmp_path / "curves.png"
    assert algorithms.plot(png, "vs_heuristic", "full", tmp_path / "seed0", tmp_path / "seed1") == 2  # 8 + 1
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    out = run("--table", "seed0", "seed1", "--plot", "c.png", "--metric", "vs_random", cwd=tmp_path)
    assert out.returncode == 0 and "drawn: c.png (2 panels)" in out.stdout, out.stderr
    (tmp_path / "minutes" / "ppo-v1").mkdir(parents=True)
    (tmp_path / "minutes" / "ppo-v1" / "result.json").write_text(json.dumps({"minutes": 30}))
    with pytest.raises(ValueError, match="no full row budgeted in decisions"):
        algorithms.plot(png, "vs_heuristic", "full", tmp_path / "minutes")
    with pytest.raises(ValueError, match="no mini row budgeted in decisions"):  # the full rows are not drawn
        algorithms.plot(png, "nash_conv", "mini", tmp_path / "seed0")
    out = run("--table", "seed0", "--plot", "c.png", "--metric", "nash_conv", cwd=tmp_path)
    assert (
        out.returncode == 2
        and "NashConv is measured on the mini variant's rows: give --variant mini" in out.stderr
    )
    out = run("--plot", "c.png", cwd=tmp_path)
    assert out.returncode == 2 and "--plot draws the rows --table reads" in out.stderr
