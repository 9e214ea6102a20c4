"""Run configuration: every hyperparameter, loaded from YAML, overridable as ``key=value``.

Unknown keys, wrong types and out-of-range values are errors that name the key.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from hanamikoji_env.tournament import parse_player


@dataclass
class Config:
    # run
    run_name: str = "ppo"
    runs_dir: str = "runs"
    seed: int = 0
    total_decisions: int = 2_000_000
    """Learner decisions to train on (the stopping point)."""
    torch_threads: int = 2
    round_limit: int | None = None
    # rollout
    num_envs: int = 256
    rollout_steps: int = 64
    """Engine steps per rollout; a step is one decision in every env (learner's or opponent's)."""
    # PPO
    learning_rate: float = 3e-4
    anneal_lr: bool = True
    gamma: float = 1.0
    gae_lambda: float = 0.95
    update_epochs: int = 4
    num_minibatches: int = 4
    clip_coef: float = 0.2
    clip_vloss: bool = True
    ent_coef: float = 0.01
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    target_kl: float | None = None
    shaping: float = 0.0
    """Potential-based shaping at each scoring: the potential of a seat is
    shaping * (charm-point lead / 11 + geisha lead / 4) / 2, and 0 once the game
    is over, so the shaping rewards of a game add up to 0 (the optimal policy is
    unchanged) but the learner hears about a good round when it happens."""
    critic: str = "policy"
    """The value function of the advantages: ``policy`` (the PolicyNet's own value head) or
    ``oracle``: a training-only network that also sees the opponent's own observation (their
    hand, Secret and Trade-off; never the removed card or the draw pile).  The policy never
    sees it, so the trained policy stays a player of its own observation (see training/ppo.py)."""
    critic_warmup: int = 0
    """Updates at the start of a run that train only the value functions (for a fresh oracle
    critic next to a policy loaded with init_from)."""
    # network
    hidden: int = 256
    layers: int = 2
    init_from: str | None = None
    """A policy checkpoint (e.g. checkpoints/ppo_selfplay.pt) to start from: its weights and
    optimizer state.  Its network must have the config's layers and at most its hidden
    size: a narrower one is widened without changing what it computes (``nn.widen``; new
    units start with zero outgoing weights) and gets a fresh optimizer."""
    # opponents (shares of new games; the rest is pure self-play, both seats learning)
    pool_share: float = 0.3
    """Games against a past snapshot of the policy."""
    bot_shares: dict[str, float] = field(default_factory=lambda: {"heuristic": 0.05, "random": 0.05})
    """Games against baseline bots, by player spec: ``random``, ``heuristic``, ``search`` or
    ``search:samples=N,candidates=K`` (the tournament's syntax)."""
    snapshot_every: int = 10
    """Updates between snapshots added to the pool."""
    pool_size: int = 20
    # evaluation, logging, checkpoints
    eval_every: int = 20
    """Updates between evaluations against random and heuristic bots (0: only at the end)."""
    eval_games: int = 200
    eval_bots: list[str] = field(default_factory=lambda: ["random", "heuristic"])
    """Bots (player specs, as in ``bot_shares``) the periodic evaluation plays."""
    checkpoint_every: int = 20

    def validate(self) -> Config:
        positive = [
            "total_decisions", "torch_threads", "num_envs", "rollout_steps", "update_epochs",
            "num_minibatches", "hidden", "layers", "snapshot_every", "pool_size", "eval_games", "checkpoint_every",
        ]  # fmt: skip
        for name in positive:
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")
        for name in ("gamma", "gae_lambda", "pool_share"):
            if not 0 <= getattr(self, name) <= 1:
                raise ValueError(f"{name} must be in [0, 1], got {getattr(self, name)}")
        for name in ("learning_rate", "clip_coef", "max_grad_norm"):
            if getattr(self, name) <= 0:
                raise ValueError(f"{name} must be > 0, got {getattr(self, name)}")
        for name in ("ent_coef", "vf_coef", "eval_every", "seed", "shaping"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be >= 0, got {getattr(self, name)}")
        if self.critic not in ("policy", "oracle"):
            raise ValueError(f"critic must be 'policy' or 'oracle', got {self.critic!r}")
        if self.critic_warmup < 0:
            raise ValueError(f"critic_warmup must be >= 0, got {self.critic_warmup}")
        if self.round_limit is not None and self.round_limit < 1:
            raise ValueError(f"round_limit must be null or >= 1, got {self.round_limit}")
        for key in ("bot_shares", "eval_bots"):
            for spec in getattr(self, key):
                try:
                    if spec.startswith(("ckpt:", "rollout:")):  # refused before parse_player loads a file
                        raise ValueError("checkpoints are not supported here")
                    parse_player(spec)
                except ValueError as e:
                    raise ValueError(
                        f"{key}: bad bot {spec!r}: {e}; use random, heuristic or search[:options]"
                    ) from None
        if (
            any(v < 0 for v in self.bot_shares.values())
            or self.pool_share + sum(self.bot_shares.values()) > 1
        ):
            raise ValueError("pool_share and bot_shares must be >= 0 and add up to at most 1")
        if (self.num_envs * self.rollout_steps) % self.num_minibatches:
            raise ValueError("num_envs * rollout_steps must be divisible by num_minibatches")
        if self.init_from is not None and not Path(self.init_from).is_file():
            raise ValueError(f"init_from: {self.init_from} does not exist")
        if not self.run_name or "/" in self.run_name:
            raise ValueError(f"run_name must be a plain folder name, got {self.run_name!r}")
        return self

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any], source: str = "config") -> Config:
        return dataclass_from_dict(cls, data, source).validate()


def dataclass_from_dict(cls: type, data: dict[str, Any], source: str) -> Any:
    """An instance of the dataclass ``cls`` from ``data``, checking keys and types."""
    if not isinstance(data, dict):
        raise ValueError(f"{source} must be a mapping of hyperparameters, got {type(data).__name__}")
    fields = {f.name: f for f in dataclasses.fields(cls)}
    unknown = sorted(set(data) - set(fields))
    if unknown:
        raise ValueError(f"{source}: unknown keys {unknown}; known: {sorted(fields)}")
    defaults = cls()
    values = {
        key: _coerce(key, value, getattr(defaults, key), fields[key].type, source)
        for key, value in data.items()
    }
    return cls(**values)


def _coerce(key: str, value: Any, default: Any, annotation: Any, source: str) -> Any:
    optional = "None" in str(annotation)
    if value is None:
        if optional:
            return None
        raise ValueError(f"{source}: {key} may not be null")
    if isinstance(default, bool) or "bool" in str(annotation):
        if isinstance(value, bool):
            return value
    elif isinstance(default, dict):
        if isinstance(value, dict) and all(
            isinstance(v, (int, float)) and not isinstance(v, bool) for v in value.values()
        ):
            return {str(k): float(v) for k, v in value.items()}
    elif isinstance(default, list):
        item = str if "list[str]" in str(annotation) else int
        if isinstance(value, list) and all(isinstance(v, item) and not isinstance(v, bool) for v in value):
            return value
    elif "float" in str(annotation):
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
    elif "int" in str(annotation):
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    elif "str" in str(annotation) and isinstance(value, str):
        return value
    raise ValueError(f"{source}: {key} must be {annotation}, got {value!r}")


def load_config(path: str | Path | None, overrides: list[str] | None = None) -> Config:
    """A config from a YAML file (or the defaults) with ``key=value`` overrides applied."""
    data, source = read_yaml(path, overrides)
    return Config.from_dict(data, source)


def read_yaml(path: str | Path | None, overrides: list[str] | None = None) -> tuple[dict[str, Any], str]:
    """The mapping in a YAML file (empty without one) with ``key=value`` overrides applied."""
    data: dict[str, Any] = {}
    if path is not None:
        path = Path(path)
        if not path.is_file():
            raise ValueError(f"config file {path} does not exist")
        try:
            data = yaml.safe_load(path.read_text()) or {}
        except yaml.YAMLError as e:
            raise ValueError(f"config file {path} is not valid YAML: {e}") from None
        if not isinstance(data, dict):
            raise ValueError(f"config file {path} must hold a mapping of hyperparameters")
    for item in overrides or []:
        key, eq, raw = item.partition("=")
        if not eq or not key:
            raise ValueError(f"override {item!r} must look like key=value")
        try:
            data[key] = yaml.safe_load(raw)
        except yaml.YAMLError as e:
            raise ValueError(f"override {item!r}: bad value ({e})") from None
    return data, str(path) if path else "config"
