"""A training run on disk: ``checkpoint.pt`` (everything, for ``--resume``) and ``policy.pt``.

``policy.pt`` holds the weights, optimizer and RNG states, config and counts:
what ``ckpt:`` players and ``PolicyBot`` load, and what is shipped.
``checkpoint.pt`` adds the collector's state (the engine, the opponents: pool,
per-env opponents and seats, bot game states; the shaping potentials; with
``backend: ray`` that of every worker) and the oracle critic, so a resumed run
ends with exactly the weights of an uninterrupted one.  Both are
written atomically and read with ``torch.load(weights_only=True)``
(:mod:`hanamikoji_env.nn`).  ``Trainer.save`` and ``Trainer.restore``
(:mod:`training.ppo`) write and read them; this module names the files and
checks that a run can resume.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import IO, Any

from hanamikoji_env.files import check_untrusted, replace_atomically
from hanamikoji_env.nn import CheckpointError, load_checkpoint
from hanamikoji_env.training.config import MAX_CONFIG_BYTES, Config

MACHINE_KEYS = ("device", "ray_address", "torch_threads")
"""Config keys about the machine, not the run: a run may resume with other values."""
BUDGET_KEYS = ("total_decisions",)
"""Config keys a run may resume with another value of: a finished run trains on to a larger
budget (an annealed learning rate then follows the longer schedule from where it stands)."""
CHECKPOINT = "checkpoint.pt"
POLICY = "policy.pt"
CONFIG = "config.json"
"""The run's resolved config, written when it starts (and a new budget when it resumes with one)."""


def read_saved_config(run_dir: Path) -> dict[str, Any]:
    """The mapping in the run's :data:`CONFIG`; ``ValueError`` in one line when it is missing,
    larger than a config may be, or not a JSON mapping."""
    path = check_untrusted(Path(run_dir) / CONFIG, "run config", MAX_CONFIG_BYTES, ValueError)
    try:
        data = json.loads(path.read_bytes())
    except (ValueError, RecursionError) as e:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        raise ValueError(
            f"{path} is not valid JSON ({type(e).__name__}); it is the run's saved config"
        ) from None
    if not isinstance(data, dict):
        raise ValueError(f"{path} does not hold a mapping; it is the run's saved config")
    return data


def write_saved_config(run_dir: Path, data: dict[str, Any]) -> None:
    """``data`` as the run's :data:`CONFIG`, written whole or not at all."""
    text = json.dumps(data, indent=2)
    replace_atomically(Path(run_dir) / CONFIG, lambda tmp: tmp.write_text(text))


def check_resumable(cfg: Config, run_dir: Path) -> dict[str, Any]:
    """The run's ``checkpoint.pt``, checked (a ``CheckpointError``/``ValueError`` names the problem)."""
    data = load_checkpoint(Path(run_dir) / CHECKPOINT)
    saved = data.get("config") if isinstance(data.get("config"), dict) else {}
    defaults = Config().to_dict()  # keys added after the run was written hold their defaults there
    changed = sorted(
        k
        for k in cfg.to_dict()
        if k not in (*MACHINE_KEYS, *BUDGET_KEYS) and saved.get(k, defaults[k]) != getattr(cfg, k)
    )
    if changed:
        raise ValueError(
            f"{Path(run_dir) / CHECKPOINT} was written with another config than {Path(run_dir) / 'config.json'} "
            f"(differs in {changed[:8]}): was config.json edited?"
        )
    return data


def describe_kept(run_dir: Path) -> str:
    """What an interrupted run left in ``run_dir`` and how to go on, in one line."""
    try:
        update = load_checkpoint(Path(run_dir) / CHECKPOINT)["update"]
    except CheckpointError:
        return f"nothing was saved yet (the first save comes at checkpoint_every updates); {run_dir} can be removed"
    return (
        f"kept {run_dir} at update {update}: resume with hanamikoji-train --resume {run_dir}, or evaluate "
        f"it with hanamikoji-eval --players ckpt:{Path(run_dir) / POLICY} heuristic search"
    )


def lock_run(run_dir: Path) -> IO[str]:
    """Hold ``run_dir`` for this process until the returned file is closed: a second process
    training into the same folder gets a one-line ``RuntimeError`` naming the holder.  (POSIX
    advisory locks; where ``fcntl`` is missing, as on Windows, nothing is locked.)"""
    path = Path(run_dir) / ".lock"
    handle = open(path, "a+")  # noqa: SIM115 - held open for the run; the caller closes it
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        return handle
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        handle.seek(0)
        holder = handle.read().strip()[:20] or "another process"
        handle.close()
        raise RuntimeError(
            f"{run_dir} is in use: process {holder} is training into it; wait for it to finish or set another run_name"
        ) from None
    handle.seek(0)
    handle.truncate()
    handle.write(str(os.getpid()))
    handle.flush()
    return handle
