"""Every console command goes through ``hanamikoji_env.entry``: a library that an extra brings,
missing, ends the command in one line naming that extra (and the package), not in a traceback,
and never after the work it would waste."""

from __future__ import annotations

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
