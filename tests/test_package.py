"""The package as a pip user gets it: the wheel (and sdist) built, checked by twine, installed into a
fresh venv outside the repository and run from another directory."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _run(args: list[str | Path], cwd: Path, timeout: int = 600) -> str:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    out = subprocess.run(
        [str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
    )
    assert out.returncode == 0, f"{args}\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}"
    return out.stdout


@pytest.mark.slow
def test_the_wheel_carries_everything_and_runs_outside_the_repository(tmp_path) -> None:
    dist = tmp_path / "dist"
    _run([sys.executable, "-m", "build", "--no-isolation", "--outdir", dist, ROOT], cwd=tmp_path)
    (wheel,), (sdist,) = dist.glob("*.whl"), dist.glob("*.tar.gz")
    _run([sys.executable, "-m", "twine", "check", "--strict", wheel, sdist], cwd=tmp_path)
    names = set(zipfile.ZipFile(wheel).namelist())
    # every module of the repository's two packages, the shipped agent, the configs, the license
    for package in ("hanamikoji_env", "training"):
        for module in (ROOT / package).rglob("*.py"):
            assert str(module.relative_to(ROOT)) in names, module
    assert {"hanamikoji_env/checkpoints/ppo_selfplay.pt", "training/configs/quick.yaml"} <= names  # fmt: skip
    for asset in (ROOT / "hanamikoji_env/play/static").iterdir():  # the page, its script, style and icon
        assert str(asset.relative_to(ROOT)) in names, asset
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    assert not any(n.startswith(("tests/", "benchmarks/")) for n in names)

    # a fresh venv: the wheel installed in it, the dependencies read from this environment (no network)
    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", venv], cwd=tmp_path)
    python = venv / "bin" / "python"
    site = Path(
        _run([python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"], tmp_path).strip()
    )
    (site / "dependencies.pth").write_text(sysconfig.get_path("purelib") + "\n")
    _run([sys.executable, "-m", "pip", "--python", python, "install", "--no-deps", "-q", wheel], cwd=tmp_path)

    work = tmp_path / "elsewhere"
    work.mkdir()
    where = _run(
        [python, "-c", "import hanamikoji_env, training; print(hanamikoji_env.__file__, training.__file__)"],
        work,
    )
    assert where.count(str(venv)) == 2, where  # the installed copies, not the repository's
    _run(
        [
            python,
            "-c",
            "from pettingzoo.test import api_test; from hanamikoji_env import env; api_test(env(), num_cycles=200)",
        ],
        work,
    )
    table = _run([venv / "bin" / "hanamikoji-eval", "--players", "pretrained", "random", "--games", "20",
                  "--workers", "1", "--no-progress"], work)  # fmt: skip
    assert "pretrained" in table
    trained = _run(
        [venv / "bin" / "hanamikoji-train", "--config", "quick", "total_decisions=20000", "--no-progress"],
        work,
    )
    assert "trained" in trained and (work / "runs" / "quick" / "policy.pt").is_file()
    usage = _run([venv / "bin" / "hanamikoji-exploit", "--help"], work)
    assert "--target" in usage


@pytest.mark.slow
def test_the_installed_extras_agree_with_each_other() -> None:
    """Every extra installs into one venv: pip finds no broken or conflicting requirement here
    (the dev venv holds them all)."""
    out = subprocess.run([sys.executable, "-m", "pip", "check"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
