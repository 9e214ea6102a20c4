"""The README's examples run as written."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

README = (Path(__file__).resolve().parents[1] / "README.md").read_text()


def test_readme_usage_example_runs() -> None:
    blocks = re.findall(r"```python\n(.*?)```", README, flags=re.S)
    assert blocks, "the README has no python example"
    for code in blocks:
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr
        assert "final reward" in out.stdout and "private to player_0" in out.stdout


def test_demo_runs() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "hanamikoji_env.demo", "--seed", "3", "--seconds", "0.2"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert "final rewards" in out.stdout and "steps/s" in out.stdout


def test_ci_runs_the_readme_test_command() -> None:
    ci = (Path(__file__).resolve().parents[1] / ".ci" / "run").read_text()
    command = re.search(r"\*\*The tests\*\*.*?```bash\n(.*?)\n```", README, flags=re.S)
    assert command is not None
    assert command.group(1).strip() in ci
