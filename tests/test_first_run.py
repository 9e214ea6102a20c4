"""A first run says what it compiles before the wait; a warm-up compiles ahead of the users; a
second run says nothing.  Each case runs in a fresh process with an empty ``NUMBA_CACHE_DIR``."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from hanamikoji_env.first_run import PARTS, parts_for


def test_the_parts_follow_the_players_and_the_engine_used() -> None:
    assert parts_for(["random", "ckpt:x.pt"]) == ["engine"]
    assert parts_for(["search:samples=5", "heuristic", "heuristic"]) == ["engine", "heuristic", "search"]
    assert parts_for(["psearch:ckpt=pretrained"], env=False) == ["batch", "playouts"]
    assert set(parts_for(["heuristic", "search", "rollout:ckpt=x"], batch=True)) == set(PARTS)


def _cold(tmp_path, args: list[str]) -> subprocess.CompletedProcess:
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "numba-cache")}
    out = subprocess.run([sys.executable, *args], env=env, capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, out.stderr[-3000:]
    return out


@pytest.mark.slow(20)
def test_a_first_tournament_announces_its_compilation_and_the_next_does_not(tmp_path) -> None:
    command = ["-m", "hanamikoji_env.tournament", "--players", "heuristic", "random", "--games", "2",
               "--workers", "1", "--no-progress"]  # fmt: skip
    first = _cold(tmp_path, command)
    line = "compiling the engine and the heuristic bot (first run only, about "
    assert line in first.stderr and first.stderr.count("compiling") == 1
    assert "compiling" not in _cold(tmp_path, command).stderr


@pytest.mark.slow(20)
def test_a_warm_up_compiles_what_its_players_need(tmp_path) -> None:
    script = (
        "from hanamikoji_env.first_run import PARTS, uncached, warm_up; "
        "warm_up(['search:samples=2', 'random']); print(uncached(PARTS))"
    )
    out = _cold(tmp_path, ["-c", script])
    assert "compiling the engine and the search bot" in out.stderr
    assert out.stdout.strip() == str(["batch", "heuristic", "playouts"])  # what no search game uses
