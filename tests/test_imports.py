"""The import graph (read by grimp, without importing anything): no circles, and every import goes
down the layers, so a module never depends on one above it."""

from __future__ import annotations

import graphlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import grimp
import pytest

ROOT = Path(__file__).resolve().parents[1]

LAYERS = [
    "training",  # PPO self-play and the other trainers: the repository's training/, mapped in
    grimp.Layer(
        "play", "tournament", "demo", "differential", "rllib", "wrappers", "exact", "lbr", independent=False
    ),
    "first_run",  # what a first run compiles: announced, or warmed up by playing
    grimp.Layer("games", "heldout"),  # two bots playing a game on the AEC env; the held-out players
    "bots",  # players: read observations, may drive envs and networks
    "belief",  # what a player may believe of the hidden cards: a network trained on self-play
    grimp.Layer("records", "nn"),  # game records; the policy network and its checkpoints
    grimp.Layer("aec", "vector", "openspiel"),  # the envs: one game, a batch, OpenSpiel's
    grimp.Layer("infoset", "simulate", "render", "image"),  # information sets, playouts, pictures
    "observation",  # what a player may know
    "engine",  # the engine of record
    "rules",  # the readable rules
    grimp.Layer("actions", "stats", "_version", "pretrained", "checkpoints", "manual", "pool", "entry"),
    # writing files whole; the folders that ship with the package; bounded excerpts for errors
    grimp.Layer("files", "excerpt"),
]
"""``hanamikoji_env``'s modules from the top down."""


@pytest.fixture(scope="module")
def graph(tmp_path_factory: pytest.TempPathFactory) -> grimp.ImportGraph:
    """The graph of the package as it installs, where the repository's ``training/`` is
    ``hanamikoji_env.training`` (mapped in by pyproject.toml): grimp reads a copy laid out that way,
    in a fresh process, since this one has imported the package from the repository already."""
    tree = tmp_path_factory.mktemp("installed")
    skip = shutil.ignore_patterns("__pycache__", "static")
    shutil.copytree(ROOT / "hanamikoji_env", tree / "hanamikoji_env", ignore=skip)
    shutil.copytree(ROOT / "training", tree / "hanamikoji_env" / "training", ignore=skip)
    script = (
        "import grimp, json; g = grimp.build_graph('hanamikoji_env', cache_dir=None); "
        "print(json.dumps({m: sorted(g.find_modules_directly_imported_by(m)) for m in g.modules}))"
    )
    env = {**os.environ, "PYTHONPATH": str(tree)}
    out = subprocess.run(
        [sys.executable, "-c", script], cwd=tree, env=env, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    graph = grimp.ImportGraph()
    for module, imported in json.loads(out.stdout).items():
        graph.add_module(module)
        for other in imported:
            graph.add_import(importer=module, imported=other)
    return graph


def test_there_are_no_import_circles(graph: grimp.ImportGraph) -> None:
    edges = {m: graph.find_modules_directly_imported_by(m) for m in graph.modules}
    try:
        list(graphlib.TopologicalSorter(edges).static_order())
    except graphlib.CycleError as e:
        raise AssertionError(f"import circle: {' -> '.join(e.args[1])}") from None


def test_every_module_sits_in_a_layer(graph: grimp.ImportGraph) -> None:
    tails = [layer.module_tails if isinstance(layer, grimp.Layer) else {layer} for layer in LAYERS]
    named = {f"hanamikoji_env.{m}" for layer in tails for m in layer}
    top = {
        m.rsplit(".", 1)[0] if m.count(".") > 1 else m
        for m in graph.modules
        if m.startswith("hanamikoji_env.")
    }
    assert top <= named, f"modules in no layer: {sorted(top - named)}"


def test_imports_only_go_down_the_layers(graph: grimp.ImportGraph) -> None:
    illegal = graph.find_illegal_dependencies_for_layers(LAYERS, containers={"hanamikoji_env"})
    chains = [
        " -> ".join([min(route.heads), *route.middle, min(route.tails)])
        for dep in illegal
        for route in dep.routes
    ]
    assert not illegal, "imports from a lower layer to a higher one:\n" + "\n".join(sorted(chains))


def test_the_package_never_imports_training(graph: grimp.ImportGraph) -> None:
    training = {m for m in graph.modules if m.startswith("hanamikoji_env.training.")}
    assert "hanamikoji_env.training.ppo" in training  # the copy is laid out as the package installs
    upward = {
        (m, i)
        for m in graph.modules - training - {"hanamikoji_env.training"}
        for i in graph.find_modules_directly_imported_by(m)
        if i.startswith("hanamikoji_env.training")
    }
    assert not upward, f"the package imports its training code: {sorted(upward)}"
