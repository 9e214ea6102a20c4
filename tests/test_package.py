"""The package as a pip user gets it: the wheel (and sdist) built, checked by twine, installed into a
fresh venv outside the repository and run from another directory: one top-level name, the docs and
example recipes at hand, and no clash with a user's own ``training`` package."""

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


def _build(dist: Path, cwd: Path) -> str:
    """The wheel and sdist built into ``dist``: what the build printed, its warnings included."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    out = subprocess.run(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(dist), str(ROOT)],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    return out.stdout + out.stderr


@pytest.mark.slow
def test_the_wheel_carries_everything_and_runs_outside_the_repository(tmp_path) -> None:
    dist = tmp_path / "dist"
    built = _build(dist, tmp_path)
    # clean of warnings (but byte-compiling's note where the environment turns it off)
    noted = [line for line in built.lower().splitlines() if "warning" in line and "byte-compil" not in line]
    assert not noted, noted
    (wheel,), (sdist,) = dist.glob("*.whl"), dist.glob("*.tar.gz")
    _run([sys.executable, "-m", "twine", "check", "--strict", wheel, sdist], cwd=tmp_path)
    names = set(zipfile.ZipFile(wheel).namelist())
    # everything under one name: the package, and the repository's top-level folders mapped into it
    (top_level,) = [n for n in names if n.endswith(".dist-info/top_level.txt")]
    assert zipfile.ZipFile(wheel).read(top_level).decode().split() == ["hanamikoji_env"]
    for folder, installed in (("hanamikoji_env", "hanamikoji_env"), ("training", "hanamikoji_env/training"),
                              ("examples", "hanamikoji_env/examples")):  # fmt: skip
        for module in (ROOT / folder).rglob("*.py"):
            assert f"{installed}/{module.relative_to(ROOT / folder)}" in names, module
    for page in (ROOT / "docs").rglob("*.*"):
        if page.suffix in (".md", ".png"):
            assert f"hanamikoji_env/docs/{page.relative_to(ROOT / 'docs')}" in names, page
    assert {"hanamikoji_env/checkpoints/ppo_selfplay.pt", "hanamikoji_env/training/configs/quick.yaml"} <= names  # fmt: skip
    for asset in (ROOT / "hanamikoji_env/play/static").iterdir():  # the page, its script, style and icon
        assert str(asset.relative_to(ROOT)) in names, asset
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    assert not any(n.startswith(("tests/", "benchmarks/", "training/", "examples/", "docs/")) for n in names)

    # a fresh venv: the wheel installed in it, the dependencies read from this environment (no network)
    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", venv], cwd=tmp_path)
    python = venv / "bin" / "python"
    site = Path(
        _run([python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"], tmp_path).strip()
    )
    (site / "dependencies.pth").write_text(sysconfig.get_path("purelib") + "\n")
    _run([sys.executable, "-m", "pip", "--python", python, "install", "--no-deps", "-q", wheel], cwd=tmp_path)

    # a user's project with its own training package: neither shadows the other
    work = tmp_path / "elsewhere"
    (work / "training").mkdir(parents=True)
    (work / "training" / "__init__.py").write_text("")
    (work / "training" / "train.py").write_text('print("the user\'s own training")\n')
    where = _run(
        [python, "-c", "import hanamikoji_env, hanamikoji_env.training.ppo as p, training; "
         "print(hanamikoji_env.__file__, p.__file__, training.__file__)"],
        work,
    )  # fmt: skip
    assert where.count(str(venv)) == 2 and str(work / "training") in where, where
    assert _run([python, "-m", "training.train"], work).strip() == "the user's own training"
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
    # the docs and the example recipes, from the install
    listing = _run([venv / "bin" / "hanamikoji-docs"], work)
    assert "rules" in listing and str(site / "hanamikoji_env" / "docs") in listing
    assert "11 or more charm points wins" in _run([venv / "bin" / "hanamikoji-docs", "rules"], work)
    rollout = _run([python, "-m", "hanamikoji_env.examples.torchrl_rollout", "--steps", "300"], work)
    assert "all within the mask" in rollout


@pytest.mark.slow
def test_the_installed_extras_agree_with_each_other() -> None:
    """Every extra installs into one venv: pip finds no broken or conflicting requirement here
    (the dev venv holds them all)."""
    out = subprocess.run([sys.executable, "-m", "pip", "check"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr


EXTRAS = ["train,eval", "eval", "train", "sb3", "openspiel", "bench", "tianshou", "torchrl", "ray", "play"]
"""Every extra alone, and the main job's pair (the README's first command)."""


def _resolution(extra: str) -> dict[str, str]:
    """What ``pip install '.[extra]'`` would install into a venv holding only the pinned torch (the
    README's order): a dry run, package -> version."""
    import json
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.json"
        _run([sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--quiet",
              "--report", report, "torch==2.13.0", f".[{extra}]"], ROOT)  # fmt: skip
        data = json.loads(report.read_text())
    return {i["metadata"]["name"].lower(): i["metadata"]["version"] for i in data["install"]}


@pytest.mark.slow
def test_installing_any_extra_after_any_other_changes_no_version() -> None:
    """Each extra resolves every package it shares with the dev extra (all of them together) to the
    same version, so installing one after another never up- or downgrades anything (the dev extra
    after the main job's train,eval once downgraded gymnasium and filelock)."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(4) as pool:
        every, *alone = pool.map(_resolution, ["dev", *EXTRAS])
    changed = {
        extra: {
            name: (version, every[name])
            for name, version in got.items()
            if every.get(name, version) != version
        }
        for extra, got in zip(EXTRAS, alone, strict=True)
    }
    assert not any(changed.values()), {k: v for k, v in changed.items() if v}
