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

from pathlib import Path
from typing import Any

from hanamikoji_env.nn import CheckpointError, load_checkpoint
from training.config import Config

MACHINE_KEYS = ("device", "ray_address", "torch_threads")
"""Config keys about the machine, not the run: a run may resume with other values."""
CHECKPOINT = "checkpoint.pt"
POLICY = "policy.pt"


def check_resumable(cfg: Config, run_dir: Path) -> dict[str, Any]:
    """The run's ``checkpoint.pt``, checked (a ``CheckpointError``/``ValueError`` names the problem)."""
    data = load_checkpoint(Path(run_dir) / CHECKPOINT)
    saved = data.get("config") if isinstance(data.get("config"), dict) else {}
    defaults = Config().to_dict()  # keys added after the run was written hold their defaults there
    changed = sorted(
        k for k in cfg.to_dict() if k not in MACHINE_KEYS and saved.get(k, defaults[k]) != getattr(cfg, k)
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
