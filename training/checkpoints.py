"""A training run on disk: ``checkpoint.pt`` (everything, for ``--resume``) and ``policy.pt``.

``policy.pt`` holds the weights, optimizer and RNG states, config and counts:
what ``ckpt:`` players and ``PolicyBot`` load, and what is shipped.
``checkpoint.pt`` adds the engine, the opponents (pool, per-env opponents and
seats, bot game states), the shaping potentials and the oracle critic, so a
resumed run ends with exactly the weights of an uninterrupted one.  Both are
written atomically and read with ``torch.load(weights_only=True)``
(:mod:`hanamikoji_env.nn`).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from hanamikoji_env.nn import load_checkpoint, save_checkpoint
from training.config import Config

if TYPE_CHECKING:
    from training.ppo import Trainer

CHECKPOINT = "checkpoint.pt"
POLICY = "policy.pt"


def save_run(t: Trainer) -> None:
    """``t``'s whole state to ``checkpoint.pt`` and its policy to ``policy.pt``."""
    common = {
        "config": t.cfg.to_dict(),
        "update": t.update,
        "decisions": t.decisions,
        "games": t.games,
        "optimizer": t.optimizer.state_dict(),
        "torch_generator": t.gen.get_state(),
        "rng": t.rng.bit_generator.state,
        "last_eval": t.last_eval,
    }
    critic = t.values.critic
    save_checkpoint(
        t.run_dir / CHECKPOINT,
        t.model,
        **common,
        engine={
            k: torch.as_tensor(v) if isinstance(v, np.ndarray) else v for k, v in t.engine.get_state().items()
        },
        **t.opponents.state(),
        rounds=torch.as_tensor(t.rounds),
        potential=torch.as_tensor(t.potential),
        **(
            {"critic": critic.state_dict(), "critic_optimizer": t.values.optimizer.state_dict()}  # type: ignore[union-attr]
            if critic is not None
            else {}
        ),
    )
    save_checkpoint(t.run_dir / POLICY, t.model, **common)
    t.saved_update = t.update


def check_resumable(cfg: Config, run_dir: Path) -> dict[str, Any]:
    """The run's ``checkpoint.pt``, checked (a ``CheckpointError``/``ValueError`` names the problem)."""
    data = load_checkpoint(Path(run_dir) / CHECKPOINT)
    if data.get("config") != cfg.to_dict():
        saved = data.get("config") if isinstance(data.get("config"), dict) else {}
        changed = sorted(k for k in cfg.to_dict() if saved.get(k) != getattr(cfg, k))
        raise ValueError(
            f"{Path(run_dir) / CHECKPOINT} was written with another config than {Path(run_dir) / 'config.json'} "
            f"(differs in {changed[:8]}): was config.json edited?"
        )
    return data


def restore_run(t: Trainer) -> None:
    """Load ``checkpoint.pt`` of ``t``'s run folder into ``t``."""
    data = check_resumable(t.cfg, t.run_dir)
    t.model.load_state_dict(data["state_dict"])
    t.optimizer.load_state_dict(data["optimizer"])
    t.gen.set_state(data["torch_generator"])
    t.rng.bit_generator.state = data["rng"]
    engine = {k: v.numpy() if isinstance(v, torch.Tensor) else v for k, v in data["engine"].items()}
    t.obs, t.mask, t.to_play = t.engine.set_state(engine)
    t.opponents.load(data, t.model.config)
    t.rounds = data["rounds"].numpy().copy()
    t.potential = data["potential"].numpy().copy()
    if t.values.critic is not None:
        t.values.critic.load_state_dict(data["critic"])
        t.values.optimizer.load_state_dict(data["critic_optimizer"])  # type: ignore[union-attr]
    t.update, t.decisions, t.games = data["update"], data["decisions"], data["games"]
    t.saved_update = t.update
    t.last_eval = dict(data["last_eval"])
