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


def heading_anchors(page: Path) -> set[str]:
    """The anchors of a Markdown page's headings, as GitHub and PyPI make them: lower case,
    punctuation but ``-`` and ``_`` dropped, spaces as ``-``; a repeated heading gets ``-1``, ``-2``."""
    text = re.sub(r"```.*?```", "", page.read_text(), flags=re.S)  # no headings inside code
    anchors: set[str] = set()
    for heading in re.findall(r"^#{1,6} +(.+?) *#* *$", text, flags=re.M):
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        k, anchor = 0, slug
        while anchor in anchors:
            k += 1
            anchor = f"{slug}-{k}"
        anchors.add(anchor)
    return anchors


def test_heading_anchors_are_made_as_github_makes_them(tmp_path) -> None:
    page = tmp_path / "p.md"
    page.write_text(
        "# Set-up: two commands\n## `act_batch` and *rngs*\n```\n# not a heading\n```\n## Notes\n## Notes\n"
    )
    assert heading_anchors(page) == {"set-up-two-commands", "act_batch-and-rngs", "notes", "notes-1"}


def test_relative_links_in_the_docs_resolve_anchors_included() -> None:
    checked = 0
    for page in DOCS:
        for target in re.findall(r"\]\(([^)\s]+)\)", page.read_text()):
            if re.match(r"[a-z]+:", target):  # https:, mailto:
                continue
            path, _, anchor = target.partition("#")
            linked = (page.parent / path) if path else page
            assert linked.exists(), f"{page.name} links to missing {path}"
            if anchor:
                assert anchor in heading_anchors(linked), f"{page.name} links to {target}: no such heading"
            checked += 1
    assert checked >= 25


def test_the_model_cards_totals_are_the_sums_of_its_recipe_table() -> None:
    """The decisions and hours the model card's prose gives are its recipe table's sums, so an
    edited table cannot leave them stale."""
    card = (ROOT / "MODEL_CARD.md").read_text()
    rows = re.findall(r"^\| (\d+) \|.*\| ([\d.]+)M \| (\d+) min \|$", card, flags=re.M)
    assert [int(r[0]) for r in rows] == list(range(1, len(rows) + 1)) and len(rows) >= 7
    decisions = [float(r[1]) for r in rows]
    minutes = [int(r[2]) for r in rows]
    prose = re.sub(r"\s+", " ", card)
    assert f"{sum(decisions):.1f}M learner decisions and about {sum(minutes) / 60:.1f} h" in prose
    assert f"Stages 1-7 were the agent shipped before this one ({sum(decisions[:7]):.1f}M decisions, " \
           f"about {sum(minutes[:7]) / 60:.1f} h" in prose  # fmt: skip
