"""The held-out opponents: players no training config may name, so that a score against them
measures what an agent learned of the game, not of its opponents.

Every yardstick that is also a training opponent (the heuristic, the search bot, the
agent's own snapshots) can be beaten by learning that opponent.  The players here are
never trained against: :func:`check_trainable` refuses them wherever a training config
names a player (``bot_shares``, ``eval_bots``, ``teacher``, ``init_from``), and a test runs
it over every bundled config.  A checkpoint is recognised by its content, not its path,
so a copy of a held-out file under another name is refused too.

:data:`HELD_OUT` lists them, each with why it is there; :func:`heldout_specs` gives the
player specs to evaluate against (``benchmarks/heldout.py``), and
:data:`FAST` the members cheap enough for a training run's periodic evaluation
(``eval_heldout: true``: the curve's ``vs_heldout`` column).
"""

from __future__ import annotations

import hashlib
from functools import cache
from pathlib import Path
from typing import NamedTuple

from hanamikoji_env.files import shipped_folder


class HeldOut(NamedTuple):
    spec: str
    """The player spec (checkpoint paths relative to the shipped ``checkpoints`` folder)."""
    why: str
    games: int | None = None
    """At most this many mirrored games against it in a report (a slow player), else any."""


STAGES, HELDOUT = "stages", "heldout"
"""The folders of earlier agents and of held-out checkpoints (``checkpoints/stages``,
``checkpoints/heldout``), in the wheel too."""

HELD_OUT: tuple[HeldOut, ...] = (
    HeldOut("enum", "the enumeration bot: every move of the turn over every deal of the unseen cards"),
    HeldOut("heuristic-weights:bonus=0,sharpness=16", "the heuristic weighing charm alone"),
    HeldOut(
        "heuristic-weights:bonus=40,sharpness=8",
        "the heuristic minding the geisha count, less sure of margins",
    ),
    HeldOut("ckpt:stages/stage10.pt", "an agent shipped earlier: 8.5 hours of a ten-stage curriculum"),
    HeldOut(
        "ckpt:stages/stage7.pt",
        "an earlier agent of that curriculum (its stage 7, the agent shipped before stage 10)",
    ),
    HeldOut(
        "psearch:ckpt=stages/stage10.pt",
        "PolicySearchBot over that agent (about 1 s a game)",
        500,
    ),
    HeldOut(
        "ckpt:heldout/exploiter_s3.pt",
        "a best response to the agent shipped before the league's (stages/from_scratch.pt): 10M decisions of PPO against it",
    ),
    HeldOut(
        "os-ismcts:sims=100", "OpenSpiel's information-set MCTS, random rollouts (about 10 s a game)", 100
    ),
)
"""The held-out pool, in the order a report lists it."""

FAST = ("ckpt:stages/stage10.pt", "ckpt:stages/stage7.pt")
"""Members a training run evaluates against every ``eval_every`` updates (batched networks)."""

HELD_OUT_KINDS: frozenset[str] = frozenset({"enum", "heuristic-weights", "os-ismcts"})
"""Bot kinds (the spec's name) that are held out whatever their options."""


def _resolve(spec: str) -> str:
    """A held-out spec with its checkpoint paths (relative to ``checkpoints/``) made absolute."""
    folder = shipped_folder("checkpoints", "checkpoints")
    for sub in (STAGES, HELDOUT):
        spec = spec.replace(f"ckpt:{sub}/", f"ckpt:{folder / sub}/").replace(
            f"ckpt={sub}/", f"ckpt={folder / sub}/"
        )
    return spec


def heldout_specs(fast: bool = False) -> list[str]:
    """The held-out players' specs, ready for ``parse_player`` (``fast``: :data:`FAST` only)."""
    return [_resolve(h.spec) for h in HELD_OUT if not fast or h.spec in FAST]


def _digest(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


@cache
def _heldout_digests() -> dict[str, str]:
    """Content digest -> held-out spec, for every held-out checkpoint."""
    out = {}
    for h in HELD_OUT:
        if h.spec.startswith("ckpt:"):
            path = Path(_resolve(h.spec)[5:])
            if path.is_file():
                out[_digest(path)] = h.spec
    return out


def heldout_match(spec: str) -> str | None:
    """The held-out player that ``spec`` names (by kind, or a checkpoint by content), or None."""
    from hanamikoji_env.bots.spec import parse_player
    from hanamikoji_env.pretrained import resolve_checkpoint

    try:
        parsed = parse_player(spec, load=False)
    except ValueError:  # not a player spec: the caller's own checks say what is wrong with it
        return None
    if parsed.kind in HELD_OUT_KINDS:
        return spec
    paths = [parsed.path] if parsed.kind == "ckpt" else [v for k, v in parsed.options.items() if k == "ckpt"]
    for path in paths:
        file = resolve_checkpoint(path)
        # sizes first: a file of no held-out size is not hashed (a 20 GiB one took 45 s)
        sized = file.is_file() and file.stat().st_size in _heldout_sizes()
        if sized and (found := _heldout_digests().get(_digest(file))):
            return found
    return None


@cache
def _heldout_sizes() -> frozenset[int]:
    """The byte sizes of the held-out checkpoints."""
    return frozenset(
        Path(_resolve(h.spec)[5:]).stat().st_size
        for h in HELD_OUT
        if h.spec.startswith("ckpt:") and Path(_resolve(h.spec)[5:]).is_file()
    )


def check_trainable(spec: str, key: str) -> None:
    """``ValueError`` if ``spec`` (named by the config key ``key``) is a held-out player."""
    found = heldout_match(spec)
    if found is not None:
        raise ValueError(
            f"{key}: {spec[:80]} is the held-out opponent {found}; held-out players are never "
            "trained against (hanamikoji_env.heldout): evaluate against them with eval_heldout: true"
        )
