"""The package as a pip user gets it: the wheel (and sdist) built, checked by twine, installed into a
fresh venv outside the repository and run from another directory: one top-level name, the docs and
example recipes at hand, and no clash with a user's own ``training`` package."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path
from typing import NamedTuple

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


class Installed(NamedTuple):
    """The wheel and sdist built from this checkout, and the wheel installed in a fresh venv."""

    built: str
    """What the build printed."""
    wheel: Path
    sdist: Path
    python: Path
    bin: Path
    site: Path
    """The venv's site-packages."""


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory, worker_id: str) -> Installed:
    """A fresh venv outside the repository with the wheel installed, the dependencies read from
    this environment (no network).  Under ``pytest -n`` the wheel is built once for all workers
    (two builds at once from one source tree break each other's)."""
    from filelock import FileLock

    tmp = tmp_path_factory.mktemp("installed")
    shared = tmp if worker_id == "master" else tmp_path_factory.getbasetemp().parent  # this run's
    dist = shared / "dist"
    with FileLock(str(shared / "build.lock")):
        said = dist / "built.txt"  # what the build printed: its warnings are checked
        if not said.is_file():
            output = _build(dist, tmp)
            said.write_text(output)
        built = said.read_text()
    (wheel,), (sdist,) = dist.glob("*.whl"), dist.glob("*.tar.gz")
    venv = tmp / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", venv], cwd=tmp)
    python = venv / "bin" / "python"
    site = Path(_run([python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"], tmp).strip())
    (site / "dependencies.pth").write_text(sysconfig.get_path("purelib") + "\n")
    _run([sys.executable, "-m", "pip", "--python", python, "install", "--no-deps", "-q", wheel], cwd=tmp)
    return Installed(built, wheel, sdist, python, venv / "bin", site)


@pytest.mark.slow(30)
def test_the_wheel_carries_everything_and_runs_outside_the_repository(installed: Installed, tmp_path) -> None:
    # clean of warnings (but byte-compiling's note where the environment turns it off)
    noted = [
        line
        for line in installed.built.lower().splitlines()
        if "warning" in line and "byte-compil" not in line
    ]
    assert not noted, noted
    wheel, python, site = installed.wheel, installed.python, installed.site
    _run([sys.executable, "-m", "twine", "check", "--strict", wheel, installed.sdist], cwd=tmp_path)
    names = set(zipfile.ZipFile(wheel).namelist())
    # everything under one name: the package, and the repository's top-level folders mapped into it
    (top_level,) = [n for n in names if n.endswith(".dist-info/top_level.txt")]
    assert zipfile.ZipFile(wheel).read(top_level).decode().split() == ["hanamikoji_env"]
    for folder, installed_as in (("hanamikoji_env", "hanamikoji_env"), ("training", "hanamikoji_env/training"),
                                 ("examples", "hanamikoji_env/examples")):  # fmt: skip
        for module in (ROOT / folder).rglob("*.py"):
            assert f"{installed_as}/{module.relative_to(ROOT / folder)}" in names, module
    for page in (ROOT / "docs").rglob("*.*"):
        if page.suffix in (".md", ".png"):
            assert f"hanamikoji_env/docs/{page.relative_to(ROOT / 'docs')}" in names, page
    assert {"hanamikoji_env/checkpoints/ppo_selfplay.pt", "hanamikoji_env/training/configs/quick.yaml"} <= names  # fmt: skip
    for checkpoint in (ROOT / "checkpoints").rglob("*.pt"):  # the shipped agent and the held-out pool's
        assert f"hanamikoji_env/{checkpoint.relative_to(ROOT)}" in names, checkpoint
    for asset in (ROOT / "hanamikoji_env/play/static").iterdir():  # the page, its script, style and icon
        assert str(asset.relative_to(ROOT)) in names, asset
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    (metadata,) = [n for n in names if n.endswith(".dist-info/METADATA")]
    urls = re.findall(
        r"^(?:Project-URL|Home-page): .*$", zipfile.ZipFile(wheel).read(metadata).decode(), re.M
    )
    assert not urls, f"the metadata names URLs that do not exist yet: {urls}"
    assert not any(n.startswith(("tests/", "benchmarks/", "training/", "examples/", "docs/")) for n in names)
    venv = installed.bin.parent

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
    table = _run([venv / "bin" / "hanamikoji-eval", "--players", "pretrained", "ckpt:checkpoints/stages/from_scratch.pt",
                  "random", "--games", "20", "--workers", "1", "--no-progress", "--first-only"], work)  # fmt: skip
    assert "pretrained" in table and "from_scratch.pt" in table
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


PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
"""The pages a user reads from an install: the README (the package's page on the index) and
every page ``hanamikoji-docs`` shows."""

ELSEWHERE = (
    "# in a clone of the repository",
    "# on a Ray cluster",
    "# on a machine with the public package index",
)
"""A fenced block whose first line is one of these runs elsewhere than an install: not run here."""

INTERACTIVE = {"hanamikoji-play", "hanamikoji-serve", "tensorboard"}
"""Programs that run until stopped: checked with ``--help`` (they exist and start)."""

SHORT = [  # what makes a documented command finish in seconds, its meaning kept
    (r"--games \d+", "--games 2"),
    (r"--decisions \d+", "--decisions 600"),
    (r"--iterations \d+", "--iterations 1"),
    (r"--seconds \d+", "--seconds 1"),
    (r"--minutes \d+", "--minutes 0.05"),
    (r"--updates \d+", "--updates 2"),
    (r"\bsims=\d+", "sims=4"),  # a search player's budget (os-ismcts:sims=100)
    (r"\bnum_workers=\d+", "num_workers=1"),  # Ray rollout workers: each starts its own Python
]
QUICK_RUN = "num_envs=8 rollout_steps=8 eval_games=2"
"""Overrides that make any training config's update and evaluations small."""
EXTRA = {  # program or module -> what is added to its documented command
    "hanamikoji-train": f"--stop-after 1 {QUICK_RUN} --no-progress",
    "hanamikoji-exploit": f"--games 2 {QUICK_RUN} --no-progress",
    "hanamikoji-eval": "--workers 1 --no-progress",
    "hanamikoji_env.training.expert": "iterations=1 positions=32 eval_games=2 num_envs=8 rollout_steps=8 --no-progress",
    "hanamikoji_env.training.train_sb3": "total_timesteps=256 n_envs=1 n_steps=128 batch_size=64 "
    "snapshot_every=128 eval_episodes=2 eval_games=2 --no-progress",
    "hanamikoji_env.training.train_rllib": "--batch 200 --num-cpus 1",
}


def documented_commands() -> list[tuple[str, str]]:
    """Every command line of the pages' fenced shell blocks (continuations joined, comments
    dropped) with its page, but those of blocks that run elsewhere and the clone's own set-up
    (``pip install -e``)."""
    commands = []
    for page in PAGES:
        for block in re.findall(r"```(?:bash|sh|shell)\n(.*?)```", page.read_text(), flags=re.S):
            if block.lstrip().startswith(ELSEWHERE):
                continue
            for line in block.replace("\\\n", " ").splitlines():
                command = re.sub(r"\s+#.*$", "", line).strip()
                if command and not command.startswith("#") and "pip install -e" not in command:
                    commands.append((page.name, command))
    return commands


def runnable(command: str) -> list[str]:
    """A documented command as the test runs it: optional ``[...]`` parts dropped, budgets
    shortened (:data:`SHORT`), quick settings added (:data:`EXTRA`), a server only asked for help."""
    while re.search(r"\s\[[^\[\]]*\]", command):
        command = re.sub(r"\s\[[^\[\]]*\]", "", command)
    words = command.split()
    program = words[2] if words[:2] == ["python", "-m"] else words[0]
    if program in INTERACTIVE:
        return [program, "--help"]
    for pattern, short in SHORT:
        command = re.sub(pattern, short, command)
    extra = EXTRA.get(program, "")
    if program == "hanamikoji-exploit" and re.search(r"--method (exact|lbr)\b", command):
        extra = ""  # computed, not trained: nothing to shorten
    elif program == "hanamikoji-train" and "--resume" in command:
        extra = "--stop-after 1 --no-progress"  # a resumed run takes no config overrides
    elif program == "hanamikoji-train" and re.search(r"--config (from_scratch|ppo_selfplay)\b", command):
        extra = (
            f"{QUICK_RUN} total_decisions=64 --no-progress"  # a curriculum: each stage tiny (the first warns)
        )
    return [*command.split(), *extra.split()]


def test_the_documented_commands_are_read_from_every_page() -> None:
    """The extraction itself: commands of the README and the docs, none of a skipped block."""
    commands = documented_commands()
    pages = {page for page, _ in commands}
    assert {"README.md", "training.md", "bots.md", "play.md", "openspiel.md"} <= pages, pages
    assert not any(c.startswith(("ray ", "ruff ", "python -m pytest")) for _, c in commands), commands
    assert runnable("hanamikoji-play --opponent heuristic [--seat 0|1] [--seed S]") == [
        "hanamikoji-play",
        "--help",
    ]
    assert runnable("hanamikoji-eval --players a b --games 1000")[:6] == ["hanamikoji-eval", "--players", "a", "b", "--games", "2"]  # fmt: skip
    assert "os-ismcts:sims=4" in runnable("hanamikoji-eval --players os-ismcts:sims=100 random --games 2")
    assert "num_workers=1" in runnable("hanamikoji-train --config quick backend=ray num_workers=4")


@pytest.mark.slow(180)
def test_every_documented_command_runs_from_the_installed_wheel(installed: Installed, tmp_path) -> None:
    """Each command of the pages' fenced blocks, exactly as written but shortened, from a folder
    outside the repository with only the wheel installed: console scripts, ``hanamikoji_env``
    modules, bundled config names and ``pretrained`` all resolve there (a ``python -m training.X``
    or ``configs/quick.yaml`` would not).  A page's commands run in order in a folder of its
    own, as its reader would run them (a ``--resume`` after its run, a second run beside the
    first)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PATH"] = f"{installed.bin}{os.pathsep}{env['PATH']}"
    failed = []
    for page, command in documented_commands():
        work = tmp_path / page  # a reader of that page, in a folder of their own
        if not work.is_dir():
            work.mkdir()
            games = [
                "--players",
                "random",
                "heuristic",
                "--games",
                "2",
                "--save-games",
                work,
                "--no-progress",
            ]
            _run([installed.bin / "hanamikoji-eval", *games], work)  # games.jsonl, for `records verify`
        args = runnable(command)
        if args[0] == "python":
            args[0] = str(installed.python)
        out = subprocess.run(args, cwd=work, env=env, capture_output=True, text=True, timeout=600)
        if out.returncode != 0:
            failed.append(f"{page}: {command}\n  ran: {' '.join(args)}\n  {out.stderr.strip()[-600:]}")
    assert not failed, "\n".join(failed)


@pytest.mark.slow
def test_the_installed_extras_agree_with_each_other() -> None:
    """Every extra installs into one venv: pip finds no broken or conflicting requirement here
    (the dev venv holds them all)."""
    out = subprocess.run([sys.executable, "-m", "pip", "check"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr


EXTRAS = ["train,eval", "eval", "train", "sb3", "openspiel", "bench", "tianshou", "torchrl", "ray", "play"]
"""Every extra alone, and the main job's pair (the README's first command)."""


def requirements(extra: str) -> list[str]:
    """What ``.[extra]`` asks for (``extra``: one, or several comma-separated), read from
    pyproject.toml: the dependencies, and the extra's own with the extras it names
    (``hanamikoji-env[train]``) spelled out."""
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted, seen, stack = list(project["dependencies"]), set(), extra.split(",")
    while stack:
        name = stack.pop()
        if name in seen:
            continue
        seen.add(name)
        for requirement in project["optional-dependencies"][name]:
            named = re.fullmatch(r"hanamikoji-env\[(.+)\]", requirement)
            if named:
                stack += named.group(1).split(",")
            else:
                wanted.append(requirement)
    return wanted


def _resolution(extra: str) -> dict[str, str]:
    """What ``pip install '.[extra]'`` would install into a venv holding only the pinned torch (the
    README's order): a dry run, package -> version.  Asked as the requirements themselves (no
    build of the project's metadata each time: a third of the time)."""
    import json
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.json"
        _run([sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--quiet",
              "--report", report, "torch==2.13.0", *requirements(extra)], ROOT)  # fmt: skip
        data = json.loads(report.read_text())
    return {i["metadata"]["name"].lower(): i["metadata"]["version"] for i in data["install"]}


def test_the_requirements_of_an_extra_are_read_whole() -> None:
    dev = requirements("dev")
    assert "pytest>=8" in dev and "torch>=2.2" in dev and "textual>=0.80" in dev and "numpy>=1.26" in dev
    assert not any(r.startswith("hanamikoji-env") for r in dev)
    assert requirements("eval")[-1] == "matplotlib>=3.7"
    assert set(requirements("train,eval")) == set(requirements("train")) | set(requirements("eval"))


@pytest.mark.slow(80)
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


def _imported(module: str, everywhere: bool) -> set[str]:
    """The absolute imports of ``module``'s source: at its top level, or (``everywhere``) in its
    functions too; none guarded by ``except ImportError`` (an optional feature)."""
    import ast
    import importlib.util

    spec = importlib.util.find_spec(module)
    assert spec is not None and spec.origin, module
    tree = ast.parse(Path(spec.origin).read_text())
    guarded: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Try) and any(
            isinstance(h.type, ast.Name) and h.type.id in ("ImportError", "ModuleNotFoundError")
            for h in node.handlers
        ):
            guarded |= {id(n) for stmt in node.body for n in ast.walk(stmt)}
    nodes = ast.walk(tree) if everywhere else iter(tree.body)
    out = set()
    for node in nodes:
        if id(node) in guarded:
            continue
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out |= {node.module} | {f"{node.module}.{a.name}" for a in node.names}
    return out


def third_party_imports(start: str) -> set[str]:
    """The top-level names of the packages outside the standard library that loading ``start``
    and running its functions imports: every import of ``start``, then the top-level imports of
    each of our modules and OpenSpiel's it reaches, followed through."""
    import importlib.util

    seen, stack, found = set(), [(start, True)], set()
    while stack:
        module, everywhere = stack.pop()
        if module in seen:
            continue
        seen.add(module)
        for name in _imported(module, everywhere):
            top = name.split(".")[0]
            if top in ("hanamikoji_env", "open_spiel"):
                try:
                    follow = importlib.util.find_spec(name) is not None
                except ModuleNotFoundError:  # ``from package import function``
                    follow = False
                if follow and name not in seen:
                    stack.append((name, False))
            elif top not in sys.stdlib_module_names and top != "__future__":
                found.add(top)
    return found


@pytest.mark.slow(20)
def test_the_openspiel_extra_alone_brings_what_its_learners_import() -> None:
    """What the OpenSpiel learners (NFSP, Deep CFR, ESCHER: training/openspiel_learners.py and
    the OpenSpiel modules it loads) import is all installed by ``.[openspiel]`` alone, after the
    pinned torch the README installs first: OpenSpiel's PyTorch learners import dm-tree without
    declaring it, and a fresh install of the extra once stopped at ``No module named 'tree'``."""
    from importlib.metadata import packages_distributions

    modules = third_party_imports("hanamikoji_env.training.openspiel_learners")
    assert {"torch", "tree", "pyspiel", "numpy"} <= modules, modules  # the walk reaches the learners
    providers = packages_distributions()
    needed = {m: [d.lower().replace("_", "-") for d in providers.get(m, [m])] for m in modules}
    installed = {name.replace("_", "-") for name in _resolution("openspiel")}
    missing = {m: dists for m, dists in needed.items() if not any(d in installed for d in dists)}
    assert not missing, missing
