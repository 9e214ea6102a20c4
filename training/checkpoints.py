"""A training run on disk: ``checkpoint.pt`` (everything, for ``--resume``) and ``policy.pt``.

``policy.pt`` holds the weights, optimizer and RNG states, config and counts:
what ``ckpt:`` players and ``PolicyBot`` load, and what is shipped.
``checkpoint.pt`` adds the collector's state (the engine, the opponents: pool,
per-env opponents and seats, bot game states; the shaping potentials; with
``backend: ray`` that of every worker) and the oracle critic, so a resumed run
ends with exactly the weights of an uninterrupted one.  Both are
written atomically and read with ``torch.load(weights_only=True)``
(:mod:`hanamikoji_env.nn`).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from hanamikoji_env.nn import load_checkpoint, save_checkpoint
from training.config import Config

if TYPE_CHECKING:
    from training.ppo import Trainer

MACHINE_KEYS = ("device", "ray_address", "torch_threads")
"""Config keys about the machine, not the run: a run may resume with other values."""
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
        **t.collector.state(generators=False),  # the local one shares the trainer's generators
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


def restore_run(t: Trainer) -> None:
    """Load ``checkpoint.pt`` of ``t``'s run folder into ``t``."""
    data = check_resumable(t.cfg, t.run_dir)
    t.model.load_state_dict(data["state_dict"])
    t.optimizer.load_state_dict(data["optimizer"])
    t.gen.set_state(data["torch_generator"])
    t.rng.bit_generator.state = data["rng"]
    t.collector.load(data)
    if t.values.critic is not None:
        t.values.critic.load_state_dict(data["critic"])
        t.values.optimizer.load_state_dict(data["critic_optimizer"])  # type: ignore[union-attr]
    t.update, t.decisions, t.games = data["update"], data["decisions"], data["games"]
    t.saved_update = t.update
    t.last_eval = dict(data["last_eval"])
