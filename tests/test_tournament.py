"""The evaluation tournament: statistics against known values, spec parsing, outputs."""

from __future__ import annotations

import csv
import json
import math
import subprocess
import sys

import numpy as np
import pytest

from hanamikoji_env.nn import PolicyNet, save_checkpoint
from hanamikoji_env.stats import bradley_terry, wilson
from hanamikoji_env.tournament import SCHEMA, _worker, main, parse_player, run_tournament


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


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("alphazero", "unknown player 'alphazero'"),
        ("search:depth=3", "bad option 'depth=3'"),
        ("search:samples=many", "must be int"),
        ("search:samples=0", ">= 1"),
        ("heuristic:samples=3", "options: none"),
        ("ckpt:", "needs a path"),
        ("ckpt:/no/such/file.pt", "does not exist"),
        ("rollout:samples=8", "needs a checkpoint"),
        ("rollout:ckpt=/no/such/file.pt", "does not exist"),
        ("", "non-empty"),
    ],
)
def test_bad_player_specs(spec: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_player(spec)


def test_good_player_specs(tmp_path) -> None:
    assert parse_player("search:samples=50,candidates=3").options == {"samples": 50, "candidates": 3}
    path = tmp_path / "p.pt"
    save_checkpoint(path, PolicyNet(hidden=8, layers=1))
    assert parse_player(f"ckpt:{path}").path == str(path)
    rollout = parse_player(f"rollout:ckpt={path},samples=4")
    assert rollout.options == {"ckpt": str(path), "samples": 4}
    bot = rollout.make(seed=3, round_limit=2)
    assert (bot.samples, bot.round_limit, bot.model.config) == (4, 2, {"hidden": 8, "layers": 1})
    bad = tmp_path / "bad.pt"
    bad.write_text("not a checkpoint")
    with pytest.raises(ValueError, match="not a readable checkpoint"):
        parse_player(f"ckpt:{bad}")


def test_every_deal_is_played_with_both_seatings() -> None:
    a, b = parse_player("random"), parse_player("heuristic")
    out = _worker((0, a, b, [3, 4], 9, None))
    assert sorted((deal, seat) for _, deal, seat, _, _ in out) == [(3, 0), (3, 1), (4, 0), (4, 1)]
    # the same deals for another pair (same deal seeds), and deterministic
    again = _worker((0, a, b, [3, 4], 9, None))
    assert again == out


def test_tournament_rejects_bad_arguments() -> None:
    r, h = parse_player("random"), parse_player("heuristic")
    with pytest.raises(ValueError, match="even"):
        run_tournament([r, h], 3, progress=False)
    with pytest.raises(ValueError, match="at least two"):
        run_tournament([r], 2, progress=False)
    with pytest.raises(ValueError, match="distinct"):
        run_tournament([r, r], 2, progress=False)


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
    assert results["win_rate_matrix"][1][2] is None and set(results["elo"]) == {p.spec for p in players}


def test_pool_workers_give_torch_one_thread() -> None:
    """A worker's torch (imported after the pool initializer) runs one thread: workers are one per core."""
    code = (
        "from hanamikoji_env.tournament import _one_thread; _one_thread(); "
        "import torch; print(torch.get_num_threads())"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "1"
