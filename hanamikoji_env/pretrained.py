"""Where the shipped agent is: ``pretrained``, from any directory.

The repository's ``checkpoints/ppo_selfplay.pt`` (its model card:
``hanamikoji-docs MODEL_CARD``) is installed as the data package
``hanamikoji_env.checkpoints`` (``pyproject.toml`` maps the folder in), so ``pretrained`` names it in player specs (``pretrained``,
``psearch:ckpt=pretrained``), training configs (``init_from: pretrained``) and
every checkpoint loader, whether the package was installed from a wheel or runs
from a clone; so do paths under ``checkpoints/`` (the earlier agents in ``stages/``).  This module imports no torch.
"""

from __future__ import annotations

from pathlib import Path

from hanamikoji_env.files import shipped_folder

PRETRAINED = "pretrained"
"""The shipped agent's name wherever a checkpoint path goes."""
FILE = "ppo_selfplay.pt"


def pretrained_checkpoint() -> Path:
    """The shipped agent's checkpoint file (it may be missing from a broken installation: the
    loaders say so)."""
    return shipped_folder("checkpoints", "checkpoints") / FILE


def resolve_checkpoint(path: str | Path) -> Path:
    """``path``; the shipped agent's file where it is :data:`PRETRAINED`; and a path under the
    repository's ``checkpoints/`` that is not there (an installed wheel, another directory) is
    the shipped copy of that file (``init_from: checkpoints/stages/from_scratch.pt`` in a config,
    ``ckpt:checkpoints/stages/stage10.pt`` in a spec)."""
    if str(path) == PRETRAINED:
        return pretrained_checkpoint()
    path = Path(path)
    if not path.is_absolute() and path.parts[:1] == ("checkpoints",) and not path.exists():
        return shipped_folder("checkpoints", "checkpoints").joinpath(*path.parts[1:])
    return path
