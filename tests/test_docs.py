"""The examples of the README and docs/ run as written; the docs reach a pip user (they ship, and link
only to each other); the rules page agrees with the engine."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()
DOCS = [
    ROOT / "README.md",
    *sorted((ROOT / "docs").glob("*.md")),
]


EXPECTED = {  # a line of each example -> what its output must contain
    'e = env(render_mode="ansi")': ["final reward", "private to player_0"],
    "venv = BatchEngine(": ["wins by seat:"],
    "bots = {": ["1.0"],
    "model = MaskablePPO(": ["win rate vs random:"],
    "bot = ismcts.ISMCTSBot(": ["ISMCTS opens with token:"],
    'images[0].save("game.gif"': ["game.gif:", "(430, 660, 3)"],
    "e = env(observation_version=1)": ["[1, 2, 3] (669,)"],
    "e = env(observation_version=3)": ["(249,)"],
    "e = env(observation_version=2)": ["(669,) [1. 1. 0.]"],
    "class GreedyCardBot(Bot):": ["rewards by seat:"],
    "for progress in learn(Args(updates=12": ["12 updates: won"],
    'e = gymnasium.make("hanamikoji/HanamikojiVsBot-v0"': ["legal actions: ["],
    "result = exact.exploitability(": ["score 0.744395, NashConv 0.977579"],
    'aec = pettingzoo.make("aec"': ["['player_0', 'player_1'] hanamikoji/HanamikojiVsBot-v0"],
}


def test_the_registered_ids_need_what_the_environment_page_says() -> None:
    """PettingZoo's id needs the package imported first (its registry loads no plugins); Gymnasium's
    ``module:id`` form imports it itself, as docs/environment.md says."""
    code = {
        "pettingzoo": 'import pettingzoo; pettingzoo.make("aec", "hanamikoji/Hanamikoji-v0")',
        "gymnasium": 'import gymnasium; e = gymnasium.make("hanamikoji_env:hanamikoji/HanamikojiVsBot-v0", '
        'opponent="heuristic"); print(type(e.unwrapped).__name__)',
    }
    alone = {
        k: subprocess.run([sys.executable, "-c", c], capture_output=True, text=True, timeout=300)
        for k, c in code.items()
    }
    assert (
        alone["pettingzoo"].returncode != 0
        and "Namespace 'hanamikoji' not found" in alone["pettingzoo"].stderr
    )
    assert alone["gymnasium"].returncode == 0 and alone["gymnasium"].stdout.strip() == "SingleAgentEnv"
    page = (ROOT / "docs" / "environment.md").read_text()
    assert (
        "Namespace 'hanamikoji' not found" in page
        and 'gymnasium.make("hanamikoji_env:hanamikoji/HanamikojiVsBot-v0",' in page
    )


@pytest.mark.slow(60)
def test_documented_examples_run(tmp_path) -> None:
    blocks = [b for page in DOCS for b in re.findall(r"```python\n(.*?)```", page.read_text(), flags=re.S)]
    assert len(blocks) == len(EXPECTED), "every example needs an entry in EXPECTED"
    for code in blocks:
        (expected,) = [v for k, v in EXPECTED.items() if k in code]
        out = subprocess.run(
            # the timeout guards against a hang, it measures nothing: the SB3 example trains for about
            # 15 s on an idle core and minutes on a machine loaded ten processes deep
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            timeout=1800,
            cwd=tmp_path,
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
    assert "final rewards" in out.stdout and "decisions/s" in out.stdout


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
            # the README is the index page: a relative link there leads nowhere; docs/ ships whole
            assert page.name != "README.md" or not path, f"README.md links to {path}, not on the index"
            assert linked.resolve().is_relative_to(page.parent), (
                f"{page.name} links out of its folder: {path}"
            )
            if anchor:
                assert anchor in heading_anchors(linked), f"{page.name} links to {target}: no such heading"
            checked += 1
    assert checked >= 10


def test_nothing_refers_to_a_file_outside_the_repository() -> None:
    texts = [
        *DOCS,
        *ROOT.glob("hanamikoji_env/**/*.py"),
        *ROOT.glob("training/*.py"),
        *ROOT.glob("tests/*.py"),
    ]
    texts.remove(Path(__file__).resolve())  # this test names them
    outside = [p.name for p in texts if re.search(r"shared/(RULES|DESIGN)\.md|shared/seeds", p.read_text())]
    assert not outside, f"these refer to files outside the repository: {outside}"


def test_the_rules_page_states_the_engines_numbers() -> None:
    from hanamikoji_env import engine, rules
    from hanamikoji_env.actions import NUM_TOKENS, TOKEN_NAMES, TOKEN_SIZES

    page = (ROOT / "docs" / "rules.md").read_text()
    table = dict(re.findall(r"^\| ([^|]+?) \| ([^|]+?) \|$", page, flags=re.M))
    assert table["charm values of geishas 0 to 6"] == ", ".join(map(str, rules.VALUES))
    assert int(table["geishas, in a fixed row (index 0 to 6)"]) == rules.NUM_GEISHAS
    assert int(table["item cards (each geisha's type as many times as her charm)"]) == rules.NUM_CARDS
    assert int(table[f"action tokens per player: {', '.join(TOKEN_NAMES)}"]) == NUM_TOKENS
    assert f"are the 10 cards the four tokens use ({' + '.join(map(str, TOKEN_SIZES))})" in re.sub(
        r"\s+", " ", page
    )
    assert f"add up to {sum(rules.VALUES)} points" in page
    prose = re.sub(r"\s+", " ", page)
    assert f"Each player is dealt {rules.HAND_SIZE} cards; the remaining {rules.DRAW_PILE_SIZE} form" in prose
    assert f"({rules.TURNS_PER_ROUND} turns a round)" in prose
    assert f"**{rules.WIN_POINTS} or more charm points wins.**" in prose
    assert f"Otherwise **{rules.WIN_GEISHAS} or more geishas wins.**" in prose
    # and a deal on the engine: one card unseen, the hands, the pile, the first player's draw
    state = engine.new_game(rules.shuffled_deck(np.random.default_rng(0)))
    assert rules.NUM_REMOVED == 1 and state.removed >= 0 and state.starter == 0
    assert sum(state.hands[1]) == rules.HAND_SIZE and sum(state.hands[0]) == rules.HAND_SIZE + 1
    assert len(state.draw_pile) == rules.DRAW_PILE_SIZE - 1


def test_hanamikoji_docs_lists_every_page_and_prints_one(capsys) -> None:
    from hanamikoji_env.manual import main

    assert main([]) == 0
    listing = capsys.readouterr().out
    for page in sorted((ROOT / "docs").glob("*.md")):
        assert f"  {page.stem} " in listing, page.name
    assert main(["RULES"]) == 0
    assert capsys.readouterr().out == (ROOT / "docs" / "rules.md").read_text()
    with pytest.raises(SystemExit):
        main(["no-such-page"])
    assert "pages: " in capsys.readouterr().err


def recipe_rows(page: str) -> tuple[list[int], list[float], list[int]]:
    """A model card's recipe table: each row's stage number, millions of decisions and minutes."""
    card = (ROOT / "docs" / page).read_text()
    rows = re.findall(r"^\| (\d+) \|.*\| ([\d.]+)M \| (\d+) min \|$", card, flags=re.M)
    return [int(r[0]) for r in rows], [float(r[1]) for r in rows], [int(r[2]) for r in rows]


def prose(page: str) -> str:
    return re.sub(r"\s+", " ", (ROOT / "docs" / page).read_text())


@pytest.mark.parametrize(("page", "stages"), [("MODEL_CARD.md", 3), ("previous_agents.md", 10)])
def test_a_model_cards_totals_are_the_sums_of_its_recipe_table(page: str, stages: int) -> None:
    """The decisions and hours a model card's prose gives are its recipe table's sums, so an
    edited table cannot leave them stale."""
    numbers, decisions, minutes = recipe_rows(page)
    assert numbers == list(range(1, stages + 1))
    assert f"{sum(decisions):.1f}M learner decisions and about {sum(minutes) / 60:.1f} h" in prose(page)


def test_the_previous_agents_card_sums_the_stages_of_the_agent_before_it() -> None:
    _, decisions, minutes = recipe_rows("previous_agents.md")
    assert f"Stages 1-7 were the agent shipped before this one ({sum(decisions[:7]):.1f}M decisions, " \
           f"about {sum(minutes[:7]) / 60:.1f} h" in prose("previous_agents.md")  # fmt: skip


def test_the_module_map_names_every_module() -> None:
    """docs/architecture.md's module tree is where a newcomer looks for a module: every Python file
    of the package, training/ and benchmarks/ is named in it (a new module cannot hide)."""
    root = Path(__file__).resolve().parents[1]
    page = (root / "docs" / "architecture.md").read_text()
    tree = re.search(r"```\nhanamikoji_env/\n(.*?)```", page, flags=re.S)
    assert tree is not None, "the module tree (a block starting hanamikoji_env/) is gone"
    named = set(re.findall(r"[A-Za-z_]\w*\.py", tree.group(1)))
    files = [
        *(root / "hanamikoji_env").rglob("*.py"),
        *(root / "training").glob("*.py"),
        *(root / "benchmarks").glob("*.py"),
    ]
    missing = sorted(
        str(f.relative_to(root))
        for f in files
        if f.name not in named and f.name not in ("__init__.py", "__main__.py")
    )
    assert not missing, f"not in docs/architecture.md's module tree: {missing}"


REPOSITORY_NOTE = (
    "*Files under `benchmarks/` and `tests/` named on this page are in a clone of the source "
    "repository, not in the installed package.*"
)


def test_pages_citing_repository_files_say_they_are_in_a_clone() -> None:
    """A page read from an install (``hanamikoji-docs``) that names a benchmark or test file says,
    under its title, that those live in a clone: a pip user is not sent looking for them."""
    for page in sorted((ROOT / "docs").glob("*.md")):
        text = page.read_text()
        if re.search(r"\b(benchmarks|tests)/\w+\.py", text):
            assert text.split("\n")[2] == REPOSITORY_NOTE, (
                f"{page.name} cites repository files without the note"
            )


def test_the_readme_is_a_short_guide_naming_the_engine_of_record() -> None:
    """The README gets a user going: at most 160 lines, its architecture section naming the one
    engine of record and pointing to the module map."""
    assert len(README.splitlines()) <= 160, len(README.splitlines())
    section = README.split("## Architecture\n", 1)[1].split("\n## ", 1)[0]
    assert "**The engine of record** is `hanamikoji_env/engine.py`" in section
    assert "hanamikoji-docs\narchitecture" in section or "hanamikoji-docs architecture" in section
