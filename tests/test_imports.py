"""The import graph (read by grimp, without importing anything): no circles, and every import goes
down the layers, so a module never depends on one above it."""

from __future__ import annotations

import graphlib

import grimp
import pytest

LAYERS = [
    grimp.Layer("play", "tournament", "demo", "differential", "rllib", "wrappers", independent=False),
    "games",  # two bots playing a game on the AEC env
    "bots",  # players: read observations, may drive envs and networks
    grimp.Layer("records", "nn"),  # game records; the policy network and its checkpoints
    grimp.Layer("aec", "vector", "openspiel"),  # the envs: one game, a batch, OpenSpiel's
    grimp.Layer("infoset", "simulate", "render", "image"),  # information sets, playouts, pictures
    "observation",  # what a player may know
    "engine",  # the engine of record
    "rules",  # the readable rules
    grimp.Layer("actions", "stats", "_version", "pretrained", "checkpoints"),
]
"""``hanamikoji_env``'s modules from the top down (``training`` sits above all of them)."""


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return grimp.build_graph("hanamikoji_env", "training", include_external_packages=False, cache_dir=None)


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
    assert not graph.chain_exists("hanamikoji_env", "training", as_packages=True)
