"""The first run's compilation: which compiled kernels a command needs that numba has not cached yet,
the one line that says so before the wait, and a warm-up that compiles them ahead of the users.

numba compiles the engine and the compiled bots on first use and caches the machine code (in
``__pycache__`` beside the modules, or in ``NUMBA_CACHE_DIR``); later runs load it in about a
second.  Each part below names the kernels whose cache tells whether it is compiled, and its
cold compilation time on the 2-core reference machine (``benchmarks/cold_compile.py``, idle, each
part after the ones above it).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterable
from typing import NamedTuple, TextIO


class Part(NamedTuple):
    what: str
    """How the announcement names it."""
    seconds: float
    """Its cold compilation on the reference machine."""
    kernels: tuple[str, ...]
    """``module:function`` of the compiled kernels that tell whether it is cached."""


PARTS = {
    "engine": Part(
        "the engine", 4.0, ("hanamikoji_env.engine:play", "hanamikoji_env.observation:encode_row")
    ),
    "batch": Part(
        "the batch engine",
        3.0,
        ("hanamikoji_env.vector:_apply_all", "hanamikoji_env.observation:encode_rows"),
    ),
    "heuristic": Part("the heuristic bot", 8.0, ("hanamikoji_env.bots.heuristic:_heuristic_rows",)),
    "search": Part("the search bot", 7.0, ("hanamikoji_env.bots.search:_search_rows",)),
    "playouts": Part(
        "the playouts",
        4.0,
        ("hanamikoji_env.simulate:_apply_sequences", "hanamikoji_env.simulate:_round_values"),
    ),
}
"""The compiled parts, in the order a command meets them."""

BOT_PARTS = {
    "heuristic": ("heuristic",),
    "search": ("search",),
    "psearch": ("batch", "playouts"),
    "rollout": ("batch", "playouts"),
}
"""The parts each bot (by spec name) compiles beyond the engine."""


def parts_for(specs: Iterable[str], env: bool = True, batch: bool = False) -> list[str]:
    """The parts a command playing these player specs needs (``env``: on the AEC env; ``batch``: on
    the batch engine, as training does), in :data:`PARTS` order."""
    wanted = {*(["engine"] if env else []), *(["batch"] if batch else [])}
    for spec in specs:
        wanted.update(BOT_PARTS.get(spec.partition(":")[0], ()))
    return [p for p in PARTS if p in wanted]


def _cached(kernel: str) -> bool:
    """Whether numba's cache holds machine code for ``kernel`` from its current source; True when
    numba's cache cannot be read (nothing is announced rather than something wrong)."""
    module, _, name = kernel.partition(":")
    try:
        dispatcher = getattr(importlib.import_module(module), name)
        return len(dispatcher._cache._cache_file._load_index()) > 0
    except Exception:  # numba's cache layout is not public API: stay quiet if it moves
        return True


def uncached(parts: Iterable[str]) -> list[str]:
    """The parts among ``parts`` that a first run must still compile."""
    return [p for p in parts if not all(_cached(k) for k in PARTS[p].kernels)]


def announce(parts: Iterable[str], stream: TextIO | None = None) -> float:
    """One line on ``stream`` (stderr) when any of ``parts`` must be compiled first, saying what and
    about how long on the reference machine; returns those seconds (0 when everything is cached)."""
    todo = uncached(parts)
    if not todo:
        return 0.0
    seconds = sum(PARTS[p].seconds for p in todo)
    names = [PARTS[p].what for p in todo]
    listed = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
    print(
        f"compiling {listed} (first run only, about {seconds:.0f} s on 2 cores; later runs start at once)",
        file=stream or sys.stderr,
        flush=True,
    )
    return seconds


def warm_up(specs: Iterable[str], round_limit: int | None = None) -> None:
    """Compile what these player specs play with, before anyone waits on it: the announcement, then
    one game of each spec against ``random`` on the AEC env (a cached part costs a game)."""
    from hanamikoji_env.bots.spec import parse_player
    from hanamikoji_env.games import play_game

    specs = list(dict.fromkeys(specs))
    announce(parts_for(specs))
    opponent = parse_player("random").make(seed=0, round_limit=round_limit)
    for spec in specs:
        bot = parse_player(spec).make(seed=0, round_limit=round_limit)
        play_game((bot, opponent), deal_seed=0, round_limit=round_limit)
