"""The evaluation tournament: statistics against known values, spec parsing, outputs."""

from __future__ import annotations

import csv
import json
import math
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from helpers import processes_with

from hanamikoji_env.bots import HeuristicBot
from hanamikoji_env.bots.spec import PlayerSpec, parse_player, usage
from hanamikoji_env.nn import PolicyNet, save_checkpoint
from hanamikoji_env.stats import bootstrap_elo, bradley_terry, wilson
from hanamikoji_env.tournament import SCHEMA, Task, main, run_tournament
from hanamikoji_env.tournament.schedule import _worker

CHECKPOINT = Path(__file__).parents[1] / "checkpoints" / "ppo_selfplay.pt"


@pytest.mark.parametrize(
    ("k", "n", "low", "high"),
    [
        (8, 10, 0.4902, 0.9433),
        (0, 10, 0.0, 0.2775),
        (10, 10, 0.7225, 1.0),
        (50, 100, 0.4038, 0.5962),
        (1, 3, 0.0615, 0.7923),
    ],
)
def test_wilson_known_values(k: int, n: int, low: float, high: float) -> None:
    lo, hi = wilson(k, n)
    assert lo == pytest.approx(low, abs=1e-4) and hi == pytest.approx(high, abs=1e-4)


def test_wilson_errors() -> None:
    with pytest.raises(ValueError):
        wilson(1, 0)
    with pytest.raises(ValueError):
        wilson(11, 10)


def test_bradley_terry_two_players_is_the_elo_formula() -> None:
    elo = bradley_terry(np.array([[0, 75], [25, 0]]), prior=0)
    assert elo[0] - elo[1] == pytest.approx(400 * math.log10(3), abs=1e-6)


def test_bradley_terry_recovers_consistent_strengths() -> None:
    strength = np.array([1.0, 2.0, 4.0])
    n = 300
    wins = n * strength[:, None] / (strength[:, None] + strength[None, :])
    np.fill_diagonal(wins, 0)
    elo = bradley_terry(wins, prior=0)
    assert elo[1] - elo[0] == pytest.approx(400 * math.log10(2), abs=1e-6)
    assert elo[2] - elo[1] == pytest.approx(400 * math.log10(2), abs=1e-6)
    assert elo.sum() == pytest.approx(0, abs=1e-9)


def test_bradley_terry_prior_keeps_unbeaten_players_finite() -> None:
    wins = np.array([[0, 10], [0, 0]])
    with pytest.raises(ValueError, match="needs a win"):
        bradley_terry(wins, prior=0)
    elo = bradley_terry(wins, prior=0.5)
    assert elo[0] - elo[1] == pytest.approx(400 * math.log10(10.5 / 0.5), abs=1e-6)


@pytest.mark.slow
def test_elo_intervals_cover_the_fit_and_narrow_with_more_games() -> None:
    """A bootstrap over games: the interval holds the fitted rating, the anchor's is [0, 0], and
    four times the games give about half the width (sampling error falls as 1/sqrt(n))."""
    widths = []
    for n in (100, 400):
        outcomes = [(0, 1, (n * 3 // 4, 0, n // 4)), (1, 2, (n // 2, n // 10, n * 4 // 10))]
        wins = np.zeros((3, 3))
        for i, j, (w, d, lo) in outcomes:
            wins[i, j], wins[j, i] = w + d / 2, lo + d / 2
        elo = bradley_terry(wins)
        elo -= elo[2]
        ci = bootstrap_elo(outcomes, 3, anchor=2, samples=400, seed=1)
        assert (ci[:, 0] <= elo + 1e-9).all() and (elo <= ci[:, 1] + 1e-9).all()
        assert ci[2].tolist() == [0.0, 0.0]
        widths.append(ci[0, 1] - ci[0, 0])
        assert (ci == bootstrap_elo(outcomes, 3, anchor=2, samples=400, seed=1)).all()  # seeded
    assert 0.35 < widths[1] / widths[0] < 0.65


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("alphazero", "unknown player 'alphazero'"),
        ("search:depth=3", "bad option 'depth=3'"),
        ("search:samples=many", r"must be an int in \[1, 20000\], got 'many'"),
        ("search:samples=0", r"samples of search must be an int in \[1, 20000\], got 0"),
        ("search:samples=99999999999999999999", r"must be an int in \[1, 20000\], got '9999"),
        ("search:samples=20001", r"in \[1, 20000\], got 20001"),
        ("search:candidates=201", r"candidates of search must be an int in \[1, 200\]"),
        ("search:samples=-3", "must be an int in"),
        ("search:samples=1e3", "must be an int in"),
        ("rollout:ckpt=x.pt,samples=5000", r"samples of rollout must be an int in \[1, 4096\]"),
        ("search:" + "x" * 5000, "at most 4096 characters"),
        ("os-ismcts:sims=0", r"sims of os-ismcts must be an int in \[1, 100000\]"),
        ("os-mcts:depth=3", "bad option 'depth=3' for os-mcts"),
        ("heuristic:samples=3", "options: none"),
        ("ckpt:", "needs a path"),
        ("ckpt:/no/such/file.pt", "does not exist"),
        ("rollout:samples=8", "needs a checkpoint"),
        ("rollout:ckpt=/no/such/file.pt", "does not exist"),
        ("sampled", "sampled needs a checkpoint: sampled:ckpt=PATH"),
        ("sampled:ckpt=/no/such/file.pt", "does not exist"),
        (
            "psearch:samples=8",
            r"psearch needs a checkpoint: psearch:ckpt=PATH\[,samples=N,candidates=N,belief=PATH,exact=N,value=N\]",
        ),
        ("psearch:ckpt=pretrained,belief=nothing-here.pt", "nothing-here.pt does not exist"),
        ("psearch:ckpt=/no/such/file.pt", "does not exist"),
        ("psearch:ckpt=x.pt,candidates=24", r"candidates of psearch must be an int in \[1, 23\]"),
        ("psearch:ckpt=x.pt,prior=1", "bad option 'prior=1' for psearch"),
        ("", "non-empty"),
    ],
)
def test_bad_player_specs(spec: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_player(spec)


def test_bots_check_the_same_option_bounds_as_the_specs() -> None:
    from hanamikoji_env.bots import SearchBot

    for bad in ({"samples": 20_001}, {"candidates": 0}, {"samples": True}, {"samples": 2.5}):
        with pytest.raises(ValueError, match="must be an int in"):
            SearchBot(**bad)
    assert SearchBot(samples=20_000, candidates=200).samples == 20_000
    from hanamikoji_env.bots import PolicySearchBot

    net = PolicyNet(hidden=8, layers=1)
    for bad in ({"samples": 4097}, {"candidates": 24}, {"candidates": 0}):
        with pytest.raises(ValueError, match="must be an int in"):
            PolicySearchBot(net, **bad)
    for prior in (-0.1, float("nan"), float("inf"), True):
        with pytest.raises(ValueError, match="prior must be a finite number"):
            PolicySearchBot(net, prior=prior)


def test_good_player_specs(tmp_path) -> None:
    assert parse_player("search:samples=50,candidates=3").options == {"samples": 50, "candidates": 3}
    path = tmp_path / "p.pt"
    save_checkpoint(path, PolicyNet(hidden=8, layers=1))
    assert parse_player(f"ckpt:{path}").path == str(path)
    rollout = parse_player(f"rollout:ckpt={path},samples=4")
    assert rollout.options == {"ckpt": str(path), "samples": 4}
    bot = rollout.make(seed=3, round_limit=2)
    assert (bot.samples, bot.round_limit, bot.model.config) == (4, 2, {"hidden": 8, "layers": 1})
    psearch = parse_player(f"psearch:ckpt={path},samples=6,candidates=2").make(seed=3, round_limit=2)
    assert (psearch.samples, psearch.candidates, psearch.round_limit) == (6, 2, 2)
    assert psearch.model.config == {"hidden": 8, "layers": 1}
    sampled = parse_player(f"sampled:ckpt={path}").make(seed=3)
    assert sampled.greedy is False and sampled.model.config == {"hidden": 8, "layers": 1}
    bad = tmp_path / "bad.pt"
    bad.write_text("not a checkpoint")
    with pytest.raises(ValueError, match=r"bad\.pt is not a PyTorch checkpoint"):
        parse_player(f"ckpt:{bad}")


def test_every_deal_is_played_with_both_seatings() -> None:
    a, b = parse_player("random"), parse_player("heuristic")
    out = _worker(Task(0, a, b, [3, 4], 9, None))
    assert sorted((deal, seat) for _, deal, seat, _, _, _ in out) == [(3, 0), (3, 1), (4, 0), (4, 1)]
    # the same deals for another pair (same deal seeds), and deterministic
    again = _worker(Task(0, a, b, [3, 4], 9, None))
    assert again == out


@pytest.mark.slow
def test_batched_pairs_play_the_games_of_one_game_at_a_time(tmp_path) -> None:
    """Lockstep batches (every pair here: all four players batch) give the same results and the
    same game records, byte for byte, as playing each game alone with reset bots."""
    players = [parse_player(s) for s in ("random", "heuristic", "search:samples=12,candidates=3")]
    players.append(parse_player(f"sampled:ckpt={CHECKPOINT}"))
    out = {}
    for batch in (True, False):
        folder = tmp_path / str(batch)
        results = run_tournament(
            players, 8, seed=4, workers=1, progress=False, save_games=folder, batch=batch
        )
        out[batch] = (results, (folder / "games.jsonl").read_text())
    assert out[True] == out[False]
    assert out[True][1].count("\n") == 6 * 8


def test_a_pair_with_a_bot_that_cannot_batch_plays_one_game_at_a_time(monkeypatch) -> None:
    """Only pairs of batching players take the lockstep path."""
    import hanamikoji_env.tournament.schedule as tournament

    calls = []
    monkeypatch.setattr(tournament, "_play_lockstep", lambda *a: calls.append(a) or [])
    a, b = parse_player("random"), parse_player("heuristic")
    _worker(Task(0, a, b, [1], 9, None))
    assert len(calls) == 1
    monkeypatch.setattr(HeuristicBot, "batched", False)
    _worker(Task(1, a, b, [1], 9, None, batch=True))
    assert len(calls) == 1


def test_tournament_rejects_bad_arguments() -> None:
    r, h = parse_player("random"), parse_player("heuristic")
    with pytest.raises(ValueError, match="even"):
        run_tournament([r, h], 3, progress=False)
    with pytest.raises(ValueError, match="at least two"):
        run_tournament([r], 2, progress=False)
    with pytest.raises(ValueError, match="distinct"):
        run_tournament([r, r], 2, progress=False)


@pytest.mark.slow
def test_cli_end_to_end(tmp_path, capsys) -> None:
    ckpt = tmp_path / "tiny.pt"
    save_checkpoint(ckpt, PolicyNet(hidden=8, layers=1))
    out = tmp_path / "eval"
    main(
        [
            "--players",
            "random",
            "heuristic",
            f"ckpt:{ckpt}",
            "--games",
            "10",
            "--seed",
            "3",
            "--out",
            str(out),
            "--workers",
            "2",
            "--no-progress",
        ]
    )
    printed = capsys.readouterr().out
    assert "Bradley-Terry ratings" in printed and "heuristic" in printed
    data = json.loads((out / "results.json").read_text())
    assert data["schema"] == SCHEMA and data["games_per_pair"] == 10 and data["elo"]["random"] == 0.0
    assert len(data["pairs"]) == 3
    for pair in data["pairs"]:
        assert pair["wins"] + pair["draws"] + pair["losses"] == 10
        lo, hi = pair["ci95"]
        assert lo <= pair["win_rate"] <= hi
    m = data["win_rate_matrix"]
    assert m[0][1] + m[1][0] == pytest.approx(1.0) and m[0][0] is None
    with open(out / "pairs.csv") as f:
        rows = list(csv.DictReader(f))
    assert [r["a"] for r in rows] == [p["a"] for p in data["pairs"]]
    assert (out / "heatmap.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    for name, (lo, hi) in data["elo_ci95"].items():
        assert lo <= data["elo"][name] <= hi
    assert re.search(r"heuristic +-?\d+  \[-?\d+, -?\d+\]", printed)


@pytest.mark.slow
def test_heatmap_colours_read_without_red_green(tmp_path: Path) -> None:
    """The heatmap's scale is cividis (blue to yellow), not red-green: its colour at 0 and at 1
    differ in blue, not only in red and green, and they differ in lightness too."""
    from PIL import Image

    from hanamikoji_env.tournament import heatmap

    results = {"players": ["a", "b"], "games_per_pair": 2, "win_rate_matrix": [[None, 0.0], [1.0, None]]}
    heatmap(results, tmp_path / "h.png")
    image = np.asarray(Image.open(tmp_path / "h.png").convert("RGB")).astype(int)
    colours = {tuple(c) for c in image.reshape(-1, 3)}
    low, high = (0, 34, 78), (254, 232, 56)  # cividis at 0 and at 1
    for target in (low, high):
        assert min(sum(abs(a - b) for a, b in zip(c, target, strict=True)) for c in colours) < 20, target


def test_saved_games_are_readable_like_the_other_outputs(tmp_path: Path) -> None:
    run_tournament(
        [parse_player("random"), parse_player("heuristic")], 2, workers=1, progress=False, save_games=tmp_path
    )
    umask = os.umask(0)
    os.umask(umask)
    expected = 0o666 & ~umask
    assert (tmp_path / "games.jsonl").stat().st_mode & 0o777 == expected
    assert not list(tmp_path.glob(".*.tmp"))


def test_cli_errors_before_any_game(capsys) -> None:
    with pytest.raises(SystemExit) as e:
        main(["--players", "random", "nobody", "--games", "10"])
    assert e.value.code == 2 and "unknown player 'nobody'" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["--players", "random", "heuristic", "--games", "7"])


def test_first_only_plays_the_first_player_against_the_field() -> None:
    players = [parse_player(p) for p in ("heuristic", "random", "search:samples=8")]
    results = run_tournament(players, 4, seed=1, workers=1, progress=False, first_only=True)
    assert [(r["a"], r["b"]) for r in results["pairs"]] == [
        ("heuristic", "random"),
        ("heuristic", "search:samples=8"),
    ]
    assert results["win_rate_matrix"][1][2] is None and set(results["elo"]) == {p.text for p in players}


@pytest.mark.slow
def test_pool_workers_give_torch_and_numba_one_thread() -> None:
    """A worker's torch (imported after the pool initializer) runs one thread, and so do the bots'
    batches: workers are one per core."""
    after = (
        "from hanamikoji_env.pool import init_worker; init_worker(); "
        "import torch, numba; print(torch.get_num_threads(), numba.get_num_threads())"
    )
    out = subprocess.run([sys.executable, "-c", after], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "1 1"
    # torch imported first and set to three threads, numba told three: the initializer must bring
    # both to one on any machine (a one-core one too), and without it they stay at three
    before = (
        "import torch, numba; torch.set_num_threads(3); "
        "from hanamikoji_env.pool import init_worker; {init}"
        "print(torch.get_num_threads(), numba.get_num_threads())"
    )
    env = {**os.environ, "NUMBA_NUM_THREADS": "3"}
    for init, threads in (("", "3 3"), ("init_worker(); ", "1 1")):
        out = subprocess.run([sys.executable, "-c", before.format(init=init)], capture_output=True, text=True,
                             check=True, env=env)  # fmt: skip
        assert out.stdout.strip() == threads, (init, out.stdout)


@pytest.mark.slow
def test_pool_workers_give_torch_one_thread_when_the_main_script_imported_it(tmp_path) -> None:
    """A spawned worker imports the parent's main script first: torch and numba may be there before
    the initializer runs (torch was, in a benchmark, and four threads on two cores made games 7x
    slower; numba was, in another, and changing its thread count from the environment then broke
    the first parallel kernel, when the bots had one)."""
    script = tmp_path / "main_with_torch.py"
    script.write_text(
        "import os\n"
        "os.environ['OMP_NUM_THREADS'] = '3'  # the worker's torch starts with 3 threads on any machine\n"
        "import multiprocessing\n"
        "from concurrent.futures import ProcessPoolExecutor\n"
        "import torch\n"
        "from hanamikoji_env.pool import init_worker\n"
        "import numba\n"
        "import numpy as np\n"
        "from hanamikoji_env.vector import BatchEngine\n"
        "from hanamikoji_env.bots import HeuristicBot\n"
        "def threads():\n"
        "    obs, mask, _ = BatchEngine(300, seed=0).reset()  # a batch big enough to spread over threads\n"
        "    assert len(HeuristicBot(0).act_batch(obs, mask)) == 300\n"
        "    assert numba.njit(lambda x: x + 1)(1) == 2  # a compilation re-reads numba's settings\n"
        "    return torch.get_num_threads(), numba.get_num_threads()\n"
        "if __name__ == '__main__':\n"
        "    ctx = multiprocessing.get_context('spawn')\n"
        "    with ProcessPoolExecutor(1, ctx, init_worker) as pool:\n"
        "        print(*pool.submit(threads).result())\n"
    )
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "1 1"


@pytest.mark.parametrize("kind", ["file", "unwritable"])
def test_a_bad_out_folder_is_refused_before_the_first_game(tmp_path, capsys, monkeypatch, kind) -> None:
    import hanamikoji_env.tournament.cli as t

    out = tmp_path / "results"
    if kind == "file":
        out.write_text("I am a file")
        expected = "exists and is not a folder"
    else:
        out.mkdir()
        out.chmod(0o500)
        expected = "is not a writable folder"
        if os.access(out, os.W_OK):  # root ignores permission bits: a path under a file then
            out = tmp_path / "file" / "results"
            (tmp_path / "file").write_text("x")
            expected = "is not a writable folder"
    monkeypatch.setattr(t, "run_tournament", lambda *a, **k: pytest.fail("games were played"))
    with pytest.raises(SystemExit) as e:
        main(["--players", "random", "heuristic", "--games", "10", "--out", str(out)])
    assert e.value.code == 2 and expected in capsys.readouterr().err


def _as_from_a_terminal() -> None:
    """A terminal's foreground command starts with SIGINT at its default; a command started in the
    background by a script inherits it ignored (and Python then keeps it ignored), so the test
    sets the terminal's case whatever the harness running pytest did."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.slow
@pytest.mark.parametrize("delay", [0.0, 0.3, 1.0, 2.0, 4.0])
def test_ctrl_c_stops_the_tournament_within_seconds_and_leaves_no_workers(tmp_path, delay) -> None:
    """SIGINT to the whole process group, as a terminal's Ctrl-C sends it, ``delay`` seconds after
    the tournament starts (its progress bar appears just before the worker pool starts, so the
    small delays land in the pool's start-up, the larger ones in play): one line, exit 130,
    nothing written, no worker's traceback, every worker gone."""
    marker = f"hanamikoji-test-{os.getpid()}-{time.time_ns()}"
    out, err_file = tmp_path / "eval", tmp_path / "stderr.txt"
    with err_file.open("w") as err_sink:
        proc = subprocess.Popen(
            [sys.executable, "-m", "hanamikoji_env.tournament", "--players", "search:samples=400", "heuristic",
             "--games", "2000", "--workers", "2", "--out", str(out)],
            stdout=subprocess.DEVNULL, stderr=err_sink, text=True, start_new_session=True,
            preexec_fn=_as_from_a_terminal, env={**os.environ, "HANAMIKOJI_TEST_MARKER": marker},
        )  # fmt: skip
    deadline = time.monotonic() + 60
    while "%|" not in err_file.read_text() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    assert proc.poll() is None, "the tournament ended before it was interrupted"
    time.sleep(delay)
    if delay >= 4.0:
        assert len(processes_with(marker)) >= 3, "the workers did not start"
    start = time.monotonic()
    os.killpg(proc.pid, signal.SIGINT)
    proc.wait(timeout=30)
    took = time.monotonic() - start
    err = err_file.read_text()
    assert proc.returncode == 130 and took < 5, (proc.returncode, took, err)
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    lines = [line for line in err.splitlines() if line.strip() and "game/s" not in line and "%|" not in line]
    assert len(lines) == 1 and re.fullmatch(
        rf"interrupted: \d+ of 2000 games played; nothing was written to {re.escape(str(out))}", lines[0]
    ), err
    assert not (out / "results.json").exists()
    time.sleep(0.5)
    assert processes_with(marker) == []


class DyingSpec(PlayerSpec):
    """A player whose worker process dies as it builds the bot."""

    def make(self, seed: int, round_limit: int | None = None, device: str = "cpu"):
        os._exit(3)


@pytest.mark.slow
def test_a_worker_that_dies_is_an_error_not_a_hang() -> None:
    players = [DyingSpec("dying", "random"), parse_player("random")]
    start = time.monotonic()
    with pytest.raises(RuntimeError, match=r"a tournament worker process died .* 0 of 8 games had finished"):
        run_tournament(players, 8, workers=2, progress=False)
    assert time.monotonic() - start < 60


def test_the_cli_says_where_results_went_or_that_none_were_kept(tmp_path, capsys) -> None:
    main(["--players", "random", "heuristic", "--games", "4", "--workers", "1", "--no-progress"])
    assert "nothing was saved: pass --out DIR" in capsys.readouterr().out
    main(
        [
            "--players",
            "random",
            "heuristic",
            "--games",
            "4",
            "--workers",
            "1",
            "--no-progress",
            "--out",
            str(tmp_path),
        ]
    )
    out = capsys.readouterr().out
    assert f"wrote {tmp_path / 'results.json'}" in out and "nothing was saved" not in out


@pytest.mark.slow
def test_the_cli_lists_every_player_spec_in_its_help_without_importing_torch_to_run() -> None:
    code = (
        "import sys; from hanamikoji_env.tournament import build_parser; p = build_parser(); "
        "p.parse_args(['--players', 'random', 'heuristic']); assert 'torch' not in sys.modules, 'torch'; "
        "print(p.format_help())"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    for form in ("search[:samples=N,candidates=N]", "psearch:ckpt=PATH", "os-mcts[:sims=N]", "pretrained"):
        assert form in out.stdout.replace("\n", "").replace(" ", "")


def _no_space(*_args, **_kwargs) -> None:
    raise OSError(28, "No space left on device")


def test_a_full_disk_leaves_every_output_whole_or_as_it_was(tmp_path, monkeypatch, capsys) -> None:
    from hanamikoji_env.tournament import outputs

    out = tmp_path / "out"
    argv = [
        "--players",
        "random",
        "heuristic",
        "--games",
        "2",
        "--workers",
        "1",
        "--no-progress",
        "--out",
        str(out),
    ]
    main(argv)  # a first run's files
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    assert set(before) == {"results.json", "pairs.csv", "heatmap.png"}
    capsys.readouterr()

    def half_then_full(results, path) -> None:  # the csv half written when the disk fills
        path.write_text("a,b,ga")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(outputs, "_write_pairs", half_then_full)
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 1
    err = capsys.readouterr().err.strip()
    assert err == f"error: cannot write {out / 'pairs.csv'}: No space left on device; it is left as it was"
    assert (out / "pairs.csv").read_bytes() == before["pairs.csv"]  # not a 0-byte or half file
    assert sorted(p.name for p in out.iterdir()) == sorted(before)  # no temporary left behind


def test_a_full_disk_while_saving_records_or_a_checkpoint_is_one_line(tmp_path, monkeypatch) -> None:
    import shutil

    import torch

    from hanamikoji_env import records

    games = tmp_path / "games.jsonl"
    games.write_text("kept\n")
    monkeypatch.setattr(records.os, "replace", _no_space)
    with pytest.raises(OSError, match=rf"^cannot write {re.escape(str(games))}: No space left on device"):
        records.write_lines(games, ["{}"])
    assert games.read_text() == "kept\n" and [p.name for p in tmp_path.iterdir()] == ["games.jsonl"]
    monkeypatch.undo()

    ckpt = tmp_path / "policy.pt"
    save_checkpoint(ckpt, PolicyNet(hidden=8, layers=1))
    kept = ckpt.read_bytes()

    def torch_full(*_args, **_kwargs) -> None:  # what torch says when the disk fills mid-save
        raise RuntimeError("[enforce fail at inline_container.cc:672] . unexpected pos 1024 vs 980")

    monkeypatch.setattr(torch, "save", torch_full)
    monkeypatch.setattr(shutil, "disk_usage", lambda _: shutil._ntuple_diskusage(10**9, 10**9, 0))
    with pytest.raises(OSError, match=rf"^cannot write {re.escape(str(ckpt))}: no space left on the device"):
        save_checkpoint(ckpt, PolicyNet(hidden=8, layers=1))
    assert ckpt.read_bytes() == kept and sorted(p.name for p in tmp_path.iterdir()) == [
        "games.jsonl",
        "policy.pt",
    ]


@pytest.mark.slow
def test_pool_workers_end_with_a_parent_killed_outright(tmp_path) -> None:
    """A tournament or a server killed with SIGKILL leaves no worker behind (a worker would
    otherwise wait for ever on a queue no one feeds)."""
    script = tmp_path / "parent.py"
    script.write_text(
        "import os, time\n"
        "from hanamikoji_env.pool import new_pool\n"
        "if __name__ == '__main__':\n"
        "    pool = new_pool(1)\n"
        "    print(pool.submit(os.getpid).result(), flush=True)\n"
        "    time.sleep(600)\n"
    )
    parent = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    worker = int(parent.stdout.readline())
    parent.kill()
    parent.wait(10)
    for _ in range(100):
        status = Path(f"/proc/{worker}/status")
        if not status.exists() or "zombie" in status.read_text():
            break
        time.sleep(0.1)
    else:
        os.kill(worker, signal.SIGKILL)
        raise AssertionError("the worker outlived its killed parent by 10 s")


def test_a_ctrl_c_while_a_pool_is_made_leaves_no_semaphore_behind(tmp_path) -> None:
    """A Ctrl-C landing just after the pool registers a semaphore with multiprocessing's resource
    tracker (before its finalizer exists) is held until the pool is whole, then raised: the
    process ends with a KeyboardInterrupt and the tracker finds nothing leaked.  Cut there, the
    semaphore would stay registered and the tracker would warn at exit."""
    script = tmp_path / "parent.py"
    script.write_text(
        "import os, signal\n"
        "from multiprocessing import resource_tracker\n"
        "from hanamikoji_env.pool import new_pool\n"
        "register = resource_tracker._resource_tracker.register\n"
        "def ctrl_c_after(name, rtype):\n"
        "    register(name, rtype)\n"
        "    os.kill(os.getpid(), signal.SIGINT)\n"
        "resource_tracker.register = resource_tracker._resource_tracker.register = ctrl_c_after\n"
        "if __name__ == '__main__':\n"
        "    try:\n"
        "        new_pool(1)\n"
        "    except KeyboardInterrupt:\n"
        "        print('interrupted', flush=True)\n"
    )
    out = subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        timeout=60,
        preexec_fn=_as_from_a_terminal,
    )
    assert out.stdout == "interrupted\n" and out.returncode == 0, (out.stdout, out.stderr)
    assert "leaked" not in out.stderr and "Traceback" not in out.stderr, out.stderr


def test_the_spec_help_marks_only_the_checkpoint_as_required() -> None:
    """A belief file is an option of psearch, not a requirement: the help must not say so."""
    forms = usage()
    assert "psearch:ckpt=PATH[,samples=N,candidates=N,belief=PATH,exact=N,value=N]" in forms
    assert "rollout:ckpt=PATH[,samples=N]" in forms and "search[:samples=N,candidates=N]" in forms
