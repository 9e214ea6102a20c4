"""The examples of the README and docs/ run as written."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), ROOT / "MODEL_CARD.md"]


EXPECTED = {  # a line of each example -> what its output must contain
    'e = env(render_mode="ansi")': ["final reward", "private to player_0"],
    "venv = VectorHanamikoji(": ["wins by seat:"],
    "bots = {": ["1.0"],
    "model = MaskablePPO(": ["win rate vs random:"],
    "bot = ismcts.ISMCTSBot(": ["ISMCTS opens with token:"],
    'images[0].save("game.gif"': ["game.gif:", "(430, 660, 3)"],
    "e = env(observation_version=1)": ["[1] (109,)"],
    "class GreedyCardBot(Bot):": ["rewards by seat:"],
    "envs = gym.vector.SyncVectorEnv(": ["updates: won"],
}


@pytest.mark.slow
def test_documented_examples_run(tmp_path) -> None:
    blocks = [b for page in DOCS for b in re.findall(r"```python\n(.*?)```", page.read_text(), flags=re.S)]
    assert len(blocks) == len(EXPECTED), "every example needs an entry in EXPECTED"
    for code in blocks:
        (expected,) = [v for k, v in EXPECTED.items() if k in code]
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=tmp_path
        )
        assert out.returncode == 0, out.stderr
        for text in expected:
            assert text in out.stdout


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


def test_relative_links_in_the_docs_resolve() -> None:
    for page in DOCS:
        for target in re.findall(r"\]\(([^)#:]+)\)", page.read_text()):
            assert (page.parent / target).exists(), f"{page.name} links to missing {target}"
