"""Every console command goes through ``hanamikoji_env.entry``: a library that an extra brings,
missing, ends the command in one line naming that extra (and the package), not in a traceback,
and never after the work it would waste."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from hanamikoji_env import entry

ROOT = Path(__file__).resolve().parents[1]


def test_every_console_command_goes_through_the_entry_module() -> None:
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert set(scripts) == set(entry.COMMANDS)
    for name, target in scripts.items():
        module, _, function = target.partition(":")
        assert module == "hanamikoji_env.entry" and getattr(entry, function) is entry.COMMANDS[name], name


CASES = [  # (command, the module made missing, its arguments, the extra named)
    (
        "hanamikoji-eval",
        "matplotlib",
        ["--players", "random", "heuristic", "--games", "2", "--out", "OUT"],
        "eval",
    ),
    ("hanamikoji-eval", "torch", ["--players", "random", "pretrained", "--games", "2"], "train"),
    ("hanamikoji-train", "yaml", ["--config", "quick"], "train"),
    ("hanamikoji-train", "torch", ["--config", "quick"], "train"),
    ("hanamikoji-exploit", "torch", ["--target", "random"], "train"),
    ("hanamikoji-play", "textual", [], "play"),
    ("hanamikoji-serve", "fastapi", [], "play"),
    ("hanamikoji-serve", "uvicorn", [], "play"),
]


def run_without(command: str, module: str, args: list[str]) -> subprocess.CompletedProcess[str]:
    """``command args`` in a fresh interpreter where importing ``module`` fails."""
    code = (
        f"import sys; sys.modules[{module!r}] = None\n"  # any import of it now fails
        "from hanamikoji_env import entry\n"
        f"sys.exit(entry.COMMANDS[{command!r}]({args!r}))"
    )
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)


def test_a_missing_extra_is_one_line_naming_it(tmp_path) -> None:
    cases = [(c, m, [str(tmp_path / "out") if a == "OUT" else a for a in args], x) for c, m, args, x in CASES]
    with ThreadPoolExecutor(2) as pool:
        results = list(pool.map(lambda case: run_without(*case[:3]), cases))
    for (command, module, _, extra), out in zip(cases, results, strict=True):
        lines = [line for line in out.stderr.splitlines() if line.strip() and "%|" not in line]
        assert out.returncode == 2, (command, module, out.stderr[-2000:])
        package = entry.EXTRA_OF[module][1]
        assert re.fullmatch(
            rf"{command}: error: {re.escape(package)} is not installed; it comes with the {extra} extra: "
            rf"pip install 'hanamikoji-env\[{extra}\]'",
            lines[-1],
        ), (command, module, out.stderr[-2000:])
        assert "Traceback" not in out.stderr
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())  # no games for nothing


def test_a_missing_module_no_extra_brings_is_not_disguised() -> None:
    error = ModuleNotFoundError("No module named 'nosuch'", name="nosuch")
    assert entry.missing_extra(error) is None
    with pytest.raises(ModuleNotFoundError):
        entry.run("hanamikoji_env.nosuch", "hanamikoji-x", [])


MODULE_CASES = [  # (python -m hanamikoji_env.MODULE, the module made missing, its arguments, the extra named)
    ("training.train_sb3", "sb3_contrib", ["total_timesteps=64"], "sb3"),
    ("training.train_rllib", "ray", ["--iterations", "1"], "ray"),
    (
        "training.openspiel_learners",
        "tree",
        ["--algo", "nfsp", "--minutes", "0.01", "--out", "OUT"],
        "openspiel",
    ),
    ("training.belief", "torch", [], "train"),
    ("training.expert", "yaml", [], "train"),
    ("examples.cleanrl_ppo", "torch", [], "train"),
    ("examples.sb3_tutorial", "sb3_contrib", ["--steps", "10"], "sb3"),
    ("examples.tianshou_dqn", "tianshou", ["--steps", "10"], "tianshou"),
    ("examples.tianshou_ppo", "tianshou", ["--steps", "10"], "tianshou"),
    ("examples.torchrl_rollout", "torchrl", ["--steps", "10"], "torchrl"),
]


@pytest.mark.slow(15)
def test_a_missing_extra_under_python_m_is_one_line_naming_it(tmp_path) -> None:
    """Every module the docs run with ``python -m``: the extra's library missing (imported at the
    top, or only when the work starts) is one line naming the extra, as for the commands."""
    blocked = tmp_path / "blocked"
    blocked.mkdir()

    def run(case: tuple[str, str, list[str], str]) -> subprocess.CompletedProcess[str]:
        module, missing, args, _ = case
        site = blocked / module  # a sitecustomize of its own: the import of ``missing`` fails
        site.mkdir()
        (site / "sitecustomize.py").write_text(f"import sys\nsys.modules[{missing!r}] = None\n")
        args = [str(tmp_path / "out") if a == "OUT" else a for a in args]
        env = {**os.environ, "PYTHONPATH": str(site)}
        return subprocess.run([sys.executable, "-m", f"hanamikoji_env.{module}", *args], capture_output=True,
                              text=True, timeout=300, cwd=tmp_path, env=env)  # fmt: skip

    with ThreadPoolExecutor(2) as pool:
        results = list(pool.map(run, MODULE_CASES))
    for (module, missing, _, extra), out in zip(MODULE_CASES, results, strict=True):
        package = entry.EXTRA_OF[missing][1]
        assert out.returncode == 2 and out.stderr.strip().splitlines() == [
            f"python -m hanamikoji_env.{module}: error: {package} is not installed; it comes with the "
            f"{extra} extra: pip install 'hanamikoji-env[{extra}]'"
        ], (module, out.stderr[-2000:])


@pytest.mark.parametrize(
    ("argv", "found"),
    [
        (["python", "-m", "hanamikoji_env.training.belief", "--help"], "hanamikoji_env.training.belief"),
        (
            ["python", "-X", "dev", "-W", "error", "-m", "hanamikoji_env.training.expert"],
            "hanamikoji_env.training.expert",
        ),
        (["python", "-m", "hanamikoji_env.tournament"], None),  # another package's
        (["python", "-c", "pass", "-m", "hanamikoji_env.training.belief"], None),  # -c's own argument
        (["python", "script.py", "-m", "hanamikoji_env.training.belief"], None),
        (["python"], None),
    ],
)
def test_the_module_run_with_python_m_is_read_from_the_command_line(monkeypatch, argv, found) -> None:
    monkeypatch.setattr(sys, "orig_argv", argv)
    assert entry.main_module("hanamikoji_env.training") == found


def test_a_ctrl_c_no_command_handled_is_one_line(monkeypatch, capsys) -> None:
    """One while the command's modules load (the first half second of hanamikoji-eval), or in a
    module that has no handler of its own (python -m hanamikoji_env.training.expert)."""

    def interrupted(name: str) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(entry.importlib, "import_module", interrupted)
    with pytest.raises(SystemExit) as stop:
        entry.COMMANDS["hanamikoji-eval"](["--players", "random", "heuristic"])
    assert stop.value.code == 130
    assert capsys.readouterr().err.strip().splitlines() == ["hanamikoji-eval: interrupted"]
