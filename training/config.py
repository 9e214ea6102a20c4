"""Run configuration: every hyperparameter, loaded from YAML, overridable as ``key=value``.

Unknown keys, wrong types and out-of-range values are errors that name the key.
"""

from __future__ import annotations

import dataclasses
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from hanamikoji_env.bots.spec import did_you_mean, parse_player
from hanamikoji_env.excerpt import clip, short
from hanamikoji_env.files import check_untrusted, shipped_folder
from hanamikoji_env.heldout import check_trainable, heldout_match
from hanamikoji_env.nn import DEVICE_PATTERN, MAX_HIDDEN, MAX_LAYERS, load_checkpoint
from hanamikoji_env.observation import get_version
from hanamikoji_env.pretrained import resolve_checkpoint
from hanamikoji_env.rules import FULL, check_variant, variant_round_limit
from hanamikoji_env.training.imitation import check_teacher

MAX_CONFIG_BYTES = 1 << 20
"""A config file larger than this (1 MiB) is refused unread."""
MAX_ITEMS = 32
"""At most this many entries in a list or mapping value (bot_shares, eval_bots, ...)."""
MINI_OPPONENTS = ("random", "heuristic", "ckpt", "sampled")
"""The players a variant other than the full game trains against (the others simulate full deals)."""
MAX_ROLLOUT = 1 << 21
"""At most this many decisions per rollout (num_envs * rollout_steps): about 1 GB of buffers."""

Range = tuple[float, float, bool]
"""``(low, high, low_is_open)``: a value must be finite and in ``[low, high]`` (``(low, high]``)."""


def ranged(default: Any, low: float, high: float, low_open: bool = False) -> Any:
    """A numeric field of a config dataclass and the range it must be in: ``[low, high]``, or
    ``(low, high]`` if ``low_open`` (:func:`check_ranges` checks it)."""
    bounds: Range = (low, high, low_open)
    return field(default=default, metadata={"range": bounds})


def from_config(name: str, default: Any = dataclasses.MISSING) -> Any:
    """:class:`Config`'s field ``name`` for another trainer's config: its range, and its
    default unless another is given (the SB3 and expert configs share PPO's keys this way)."""
    source = {f.name: f for f in dataclasses.fields(Config)}[name]
    return field(
        default=source.default if default is dataclasses.MISSING else default, metadata=source.metadata
    )


def check_ranges(obj: Any) -> None:
    """Raise ``ValueError`` naming the first numeric key of the config dataclass ``obj`` that is
    non-finite or outside its range (:func:`ranged`)."""
    for f in dataclasses.fields(obj):
        if "range" not in f.metadata:
            continue
        name, (low, high, low_open) = f.name, f.metadata["range"]
        value = getattr(obj, name)
        if value is None or value == "auto":  # an optional key left unset, or torch_threads: auto
            continue
        inside = (low < value if low_open else low <= value) and value <= high  # False for NaN
        if not inside or not math.isfinite(value):
            bracket = "(" if low_open else "["
            raise ValueError(
                f"{name} must be a finite number in {bracket}{low:g}, {high:g}], got {short(value)}"
            )


@dataclass
class Config:
    # run
    run_name: str = "ppo"
    runs_dir: str = "runs"
    seed: int = ranged(0, 0, 2**32 - 1)
    total_decisions: int = ranged(2_000_000, 1, 10**12)
    """Learner decisions to train on (the stopping point)."""
    torch_threads: int | str = ranged("auto", 1, 256)
    """Torch's CPU threads: a number, or ``auto``: the updates run with 1 thread or with up to
    :data:`training.threads.MAX_AUTO` (one per core), whichever trains fastest now, re-measured
    as the run goes, so a machine that becomes shared does not slow training to a crawl
    (``training/threads.py``, docs/speed.md)."""
    device: str = "auto"
    """Where the network, its updates and the oracle critic run: ``auto`` (CUDA when available),
    ``cpu``, ``cuda`` or ``cuda:N``.  The batch engine always runs on the CPU; a rollout goes to
    the device once per update."""
    backend: str = "local"
    """``local``: rollouts in this process.  ``ray``: ``num_workers`` Ray actors each collect a
    slice of the ``num_envs`` games with a copy of the policy (``training/distributed.py``)."""
    num_workers: int = ranged(2, 1, 1024)
    """Ray rollout workers (``backend: ray`` only); ``num_envs`` is split among them."""
    ray_address: str | None = None
    """``backend: ray``: the address of a running cluster (``ray start --head``), or None to start
    a local Ray."""
    round_limit: int | None = ranged(None, 1, 1000)
    variant: str = "full"
    """The game trained on (:data:`hanamikoji_env.rules.VARIANTS`): ``mini`` trains on the variant
    small enough to solve exactly, whose exploitability ``hanamikoji-exploit --method exact``
    measures; its opponents are then random, heuristic and checkpoints of the same variant."""
    observation_version: int = ranged(1, 1, 1000)
    """The observation the policy reads (:data:`hanamikoji_env.observation.VERSIONS`)."""
    # rollout
    num_envs: int = ranged(256, 1, 65536)
    rollout_steps: int = ranged(64, 1, 4096)
    """Engine steps per rollout; a step is one decision in every env (learner's or opponent's)."""
    # PPO
    learning_rate: float = ranged(3e-4, 0, 1, low_open=True)
    anneal_lr: bool = True
    gamma: float = ranged(1.0, 0, 1)
    gae_lambda: float = ranged(0.95, 0, 1)
    update_epochs: int = ranged(4, 1, 100)
    num_minibatches: int = ranged(4, 1, 4096)
    clip_coef: float = ranged(0.2, 0, 10, low_open=True)
    clip_vloss: bool = True
    ent_coef: float = ranged(0.01, 0, 1)
    vf_coef: float = ranged(0.5, 0, 100)
    max_grad_norm: float = ranged(0.5, 0, 1e6, low_open=True)
    target_kl: float | None = ranged(None, 0, 10, low_open=True)
    magnet_coef: float = ranged(0.0, 0, 100)
    """Magnetic mirror descent (MMD, Sokota et al. 2023) when above 0: the weight in the policy
    loss of KL(policy || magnet), the reverse KL to a magnet policy that moves slowly towards the
    policy (``magnet_rate``); with ``ent_coef``, MMD's entropy regularisation.  0: plain PPO."""
    magnet_rate: float = ranged(0.05, 0, 1)
    """After each update the magnet's weights move this share of the way to the policy's (an
    exponential moving average; 0: the magnet stays the starting policy)."""
    shaping: float = ranged(0.0, 0, 100)
    """Potential-based shaping at each scoring: the potential of a seat is
    shaping * (charm-point lead / 11 + geisha lead / 4) / 2, and 0 once the game
    is over, so the shaping rewards of a game add up to 0 (the optimal policy is
    unchanged) but the learner hears about a good round when it happens."""
    critic: str = "policy"
    """The value function of the advantages: ``policy`` (the PolicyNet's own value head) or
    ``oracle``: a training-only network that also sees the opponent's own observation (their
    hand, Secret and Trade-off; never the removed card or the draw pile).  The policy never
    sees it, so the trained policy stays a player of its own observation (see training/ppo.py)."""
    critic_warmup: int = ranged(0, 0, 10**6)
    """Updates at the start of a run that train only the value functions (for a fresh oracle
    critic next to a policy loaded with init_from)."""
    # network
    hidden: int = ranged(256, 1, MAX_HIDDEN)
    layers: int = ranged(2, 1, MAX_LAYERS)
    init_from: str | None = None
    """A policy checkpoint (a path, or ``pretrained``: the shipped agent) to start from: its weights and
    optimizer state.  Its network must have the config's layers and at most its hidden
    size: a narrower one is widened without changing what it computes (``nn.widen``; new
    units start with zero outgoing weights) and gets a fresh optimizer."""
    # opponents (shares of new games; the rest is pure self-play, both seats learning)
    pool_share: float = ranged(0.3, 0, 1)
    """Games against a past snapshot of the policy."""
    bot_shares: dict[str, float] = field(default_factory=lambda: {"heuristic": 0.05, "random": 0.05})
    """Games against fixed opponents, by player spec (the tournament's syntax): ``random``,
    ``heuristic``, ``search[:samples=N,candidates=K]``, or a frozen policy checkpoint:
    ``ckpt:PATH`` (greedy, as it plays in the tournament) or ``sampled:ckpt=PATH``."""
    snapshot_every: int = ranged(10, 1, 10**6)
    """Updates between snapshots added to the pool."""
    pool_size: int = ranged(20, 1, 1000)
    # imitation warm start (training/imitation.py)
    teacher: str | None = None
    """A player spec that plays batches (``heuristic``, ``search[:options]``, ``ckpt:PATH``,
    ``pretrained``): the first ``imitation_decisions`` learner decisions learn its moves at the
    positions the policy reaches, then PPO goes on.  None: PPO from the start."""
    imitation_decisions: int = ranged(0, 0, 10**12)
    """The warm start's budget, in learner decisions (counted in ``total_decisions``)."""
    teacher_play: float = ranged(0.0, 0, 1)
    """The share of learner decisions where the teacher's move is played instead of the
    policy's at the start of the warm start, falling linearly to 0 over its budget."""
    # league (training/league.py)
    exploiter_every: int = ranged(0, 0, 10**12)
    """Learner decisions between exploiters: each a best response trained against the frozen
    policy of that moment, then an opponent for the rest of the run (0: no exploiters)."""
    exploiter_decisions: int = ranged(2_000_000, 1, 10**12)
    """Each exploiter's training budget, in its learner decisions."""
    exploiter_share: float = ranged(0.0, 0, 1)
    """The exploiters' prior share of new games, together (split evenly among them)."""
    pfsp: float = ranged(0.0, 0, 10)
    """Prioritized fictitious self-play: > 0 draws the opponents (snapshots, bots, exploiters)
    by prior share times ``0.05 + (1 - p) ** pfsp``, ``p`` the policy's recent win rate
    against each; 0: the configured shares as they are."""
    # evaluation, logging, checkpoints
    eval_every: int = ranged(20, 0, 10**6)
    """Updates between evaluations against random and heuristic bots (0: only at the end)."""
    eval_games: int = ranged(200, 1, 10**6)
    eval_bots: list[str] = field(default_factory=lambda: ["random", "heuristic"])
    """Bots (player specs, as in ``bot_shares``) the periodic evaluation plays."""
    measures: str | None = None
    """Set by ``hanamikoji-exploit``: the player (a spec) whose exploitability this run measures.
    That player alone may be a held-out one here (as the only opponent, the evaluation and
    ``init_from``), or one too slow to train an agent against (``enum``, ``psearch``: the budget
    is then what fits): the run's policy is a measurement of it, never an agent."""
    eval_heldout: bool = False
    """The periodic evaluation also plays the fast held-out opponents
    (:data:`hanamikoji_env.heldout.FAST`): ``vs_heldout`` in the curve is their mean."""
    checkpoint_every: int = ranged(20, 1, 10**6)

    def validate(self, check_files: bool = True) -> Config:
        """Check every key (``check_files``: that ``init_from`` exists now)."""
        if isinstance(self.torch_threads, str) and self.torch_threads != "auto":
            raise ValueError(
                f"torch_threads must be auto or an int in [1, 256], got {short(self.torch_threads)}"
            )
        check_ranges(self)
        get_version(self.observation_version)
        variant = check_variant(self.variant)
        variant_round_limit(self.round_limit, variant)
        if variant != FULL:  # the search bots and leagues simulate the full game's deals
            for spec in [*self.bot_shares, *self.eval_bots, *([self.teacher] if self.teacher else [])]:
                parsed = parse_player(spec, load=False) if isinstance(spec, str) else None
                if parsed is None or parsed.kind not in MINI_OPPONENTS:
                    raise ValueError(
                        f"the {variant.name} variant trains against {', '.join(MINI_OPPONENTS)} only, "
                        f"got {short(spec)}"
                    )
                path = parsed.path or parsed.options.get("ckpt")
                if check_files and path and load_checkpoint(path).get("variant", "full") != variant.name:
                    raise ValueError(f"{short(spec)} was not trained on the {variant.name} variant")
            if self.exploiter_every or self.backend != "local":
                raise ValueError(f"the {variant.name} variant trains without a league, with backend: local")
        if self.critic not in ("policy", "oracle"):
            raise ValueError(f"critic must be 'policy' or 'oracle', got {short(self.critic)}")
        if not isinstance(self.device, str) or not re.fullmatch(DEVICE_PATTERN, self.device):
            raise ValueError(f"device must be auto, cpu, cuda or cuda:N, got {short(self.device)}")
        if self.backend not in ("local", "ray"):
            raise ValueError(f"backend must be 'local' or 'ray', got {short(self.backend)}")
        if self.backend == "ray" and self.num_workers > self.num_envs:
            raise ValueError(f"num_workers ({self.num_workers}) must be at most num_envs ({self.num_envs})")
        if self.ray_address is not None and (
            not isinstance(self.ray_address, str) or len(self.ray_address) > 200
        ):
            raise ValueError(
                f"ray_address must be a cluster address such as 'auto' or 'host:6379', got {short(self.ray_address)}"
            )
        if self.measures is not None and (
            not isinstance(self.measures, str) or list(self.bot_shares) != [self.measures]
        ):
            raise ValueError(
                f"measures must be the run's only opponent (bot_shares), got {short(self.measures)}"
            )
        for key, specs in (
            ("bot_shares", list(self.bot_shares)),
            ("eval_bots", self.eval_bots),
            ("teacher", [self.teacher] if isinstance(self.teacher, str) else []),
            ("init_from", [f"ckpt:{self.init_from}"] if isinstance(self.init_from, str) else []),
        ):
            for spec in specs[:MAX_ITEMS]:
                if self.measures is None or heldout_match(spec) != heldout_match(self.measures):
                    check_trainable(spec, key)
        for key in ("bot_shares", "eval_bots"):
            if len(getattr(self, key)) > MAX_ITEMS:
                raise ValueError(f"{key} may hold at most {MAX_ITEMS} bots, got {len(getattr(self, key))}")
            for spec in getattr(self, key):
                try:
                    # too slow to train against, but for the one player a run measures (hanamikoji-exploit)
                    if spec != self.measures and not parse_player(spec, load=False).bot_class().fast:
                        raise ValueError("only random, heuristic, search and checkpoints play here")
                    parse_player(spec, load=check_files)  # a checkpoint is loaded (weights only) and checked
                except ValueError as e:
                    raise ValueError(
                        f"{key}: bad bot {short(spec)}: {e}; use random, heuristic, search[:options], "
                        "ckpt:PATH (a frozen policy, greedy) or sampled:ckpt=PATH"
                    ) from None
        if self.teacher is not None:
            if not isinstance(self.teacher, str):
                raise ValueError(f"teacher must be a player spec, got {short(self.teacher)}")
            check_teacher(self.teacher, load=check_files)
            if self.imitation_decisions < 1:
                raise ValueError(
                    f"imitation_decisions must be a positive budget with a teacher, got {self.imitation_decisions} "
                    "(to train without the warm start, set teacher=null)"
                )
        elif self.imitation_decisions or self.teacher_play:
            raise ValueError("imitation_decisions and teacher_play need a teacher (a player spec)")
        exploiters = self.exploiter_share if self.exploiter_every else 0.0
        if (
            not all(0 <= v <= 1 for v in self.bot_shares.values())  # also refuses NaN
            or self.pool_share + sum(self.bot_shares.values()) + exploiters > 1
        ):
            raise ValueError(
                "pool_share, bot_shares and exploiter_share must be in [0, 1] and add up to at most 1"
            )
        if self.exploiter_every and self.exploiter_share <= 0:
            raise ValueError("exploiter_every needs exploiter_share > 0: the exploiters' share of new games")
        if (self.exploiter_every or self.pfsp) and self.backend != "local":
            raise ValueError("a league (exploiter_every, pfsp) trains with backend: local only")
        if self.num_envs * self.rollout_steps > MAX_ROLLOUT:
            raise ValueError(
                f"num_envs * rollout_steps must be at most {MAX_ROLLOUT:,} decisions per rollout"
            )
        if (self.num_envs * self.rollout_steps) % self.num_minibatches:
            raise ValueError("num_envs * rollout_steps must be divisible by num_minibatches")
        if check_files and self.init_from is not None and not resolve_checkpoint(self.init_from).is_file():
            raise ValueError(f"init_from: {self.init_from} does not exist")
        if not isinstance(self.run_name, str) or not re.fullmatch(
            r"[A-Za-z0-9][A-Za-z0-9._-]{0,199}", self.run_name
        ):
            raise ValueError(
                f"run_name must be a plain folder name (letters, digits, . _ -, not starting with a dot), "
                f"got {short(self.run_name)}"
            )
        if "\0" in self.runs_dir or len(self.runs_dir) > 1000:
            raise ValueError(f"runs_dir must be a folder path, got {short(self.runs_dir)}")
        return self

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any], source: str = "config", check_files: bool = True) -> Config:
        return dataclass_from_dict(cls, data, source).validate(check_files)


def dataclass_from_dict(cls: type, data: dict[str, Any], source: str) -> Any:
    """An instance of the dataclass ``cls`` from ``data``, checking keys and types."""
    if not isinstance(data, dict):
        raise ValueError(f"{source} must be a mapping of hyperparameters, got {type(data).__name__}")
    fields = {f.name: f for f in dataclasses.fields(cls)}
    unknown = sorted(map(str, set(data) - set(fields)))
    if unknown:
        hint = did_you_mean(unknown[0], list(fields))
        raise ValueError(f"{source}: unknown keys {short(unknown)}{hint}; known: {sorted(fields)}")
    defaults = cls()
    values = {}
    for key, value in data.items():
        try:
            values[key] = _coerce(key, value, getattr(defaults, key), fields[key].type, source)
        except OverflowError:  # an int too large for a float (a 400-digit learning_rate)
            raise ValueError(f"{source}: {key} holds a number too large for a float") from None
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
    elif isinstance(value, (dict, list)) and len(value) > MAX_ITEMS:
        raise ValueError(f"{source}: {key} may hold at most {MAX_ITEMS} entries, got {len(value)}")
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
        if "str" in str(annotation) and isinstance(value, str):
            return value
    elif "str" in str(annotation) and isinstance(value, str):
        return value
    raise ValueError(f"{source}: {key} must be {annotation}, got {short(value)}")


def load_config(path: str | Path | None, overrides: list[str] | None = None) -> Config:
    """A config from a YAML file (or the defaults) with ``key=value`` overrides applied; an
    override of an unknown key or a wrong type is blamed on the command line, not the file."""
    data, source = read_yaml(path)
    extra = parse_overrides(overrides or [])
    dataclass_from_dict(Config, extra, "the command line's overrides")
    return Config.from_dict({**data, **extra}, source)


def bundled_configs() -> dict[str, Path]:
    """The configs that ship with the package (the repository's ``configs/``), by name."""
    return {p.stem: p for p in sorted(shipped_folder("training.configs", "configs").glob("*.yaml"))}


def config_path(name: str | Path, accepted: list[str] | None = None) -> Path:
    """A config file: ``name`` if it is a file, else the bundled config of that name (``quick``
    or ``quick.yaml``) among ``accepted`` (default: all); ``ValueError`` listing them otherwise."""
    path = Path(name)
    if path.exists():  # a folder or a pipe too: read_yaml refuses it as what it is
        return path
    bundled = {k: v for k, v in bundled_configs().items() if accepted is None or k in accepted}
    stem = path.stem if path.suffix in (".yaml", ".yml") and path.parent == Path() else str(name)
    if stem in bundled:
        return bundled[stem]
    raise ValueError(
        f"config file {path} does not exist, and no bundled config is named so{did_you_mean(stem, list(bundled))} "
        f"(bundled: {', '.join(bundled)})"
    )


def read_yaml(path: str | Path | None, overrides: list[str] | None = None) -> tuple[dict[str, Any], str]:
    """The mapping in a YAML file or bundled config (:func:`config_path`; empty without one) with
    ``key=value`` overrides applied."""
    data: dict[str, Any] = {}
    if path is not None:
        path = check_untrusted(config_path(path), "config file", MAX_CONFIG_BYTES, ValueError)
        try:
            data = parse_yaml(path.read_text()) or {}
        except yaml.YAMLError as e:
            raise ValueError(f"config file {path} is not valid YAML: {clip(str(e), 300)}") from None
        if not isinstance(data, dict):
            raise ValueError(f"config file {path} must hold a mapping of hyperparameters")
    return {**data, **parse_overrides(overrides or [])}, str(path) if path else "config"


def parse_overrides(overrides: list[str]) -> dict[str, Any]:
    """``["key=value", ...]`` as a mapping, each value parsed as YAML."""
    data: dict[str, Any] = {}
    for item in overrides:
        key, eq, raw = item.partition("=")
        if not eq or not key:
            raise ValueError(f"override {short(item)} must look like key=value")
        try:
            data[key] = parse_yaml(raw)
        except yaml.YAMLError as e:
            raise ValueError(f"override {short(item)}: bad value ({clip(str(e), 300)})") from None
    return data


MAX_INT_DIGITS = 30
"""The longest integer a config may hold (a seed has 10 digits): longer is refused unparsed."""
INT = "tag:yaml.org,2002:int"


def _at(node: Any) -> str:
    """Where ``node`` starts, on the error's one line."""
    return f" at line {node.start_mark.line + 1}, column {node.start_mark.column + 1}"


class _NoAliasLoader(yaml.SafeLoader):
    """PyYAML's safe loader made strict for configs: no aliases (``*name`` could expand a few bytes
    into gigabytes), no duplicate keys (the last one would silently win), numbers read as YAML 1.2
    does (``1:30:00`` is text, not 5400 as YAML 1.1's base 60 had it), and an integer of more
    than :data:`MAX_INT_DIGITS` digits refused with its key."""

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            raise yaml.YAMLError(f"aliases (*name) are not allowed in configs{self.peek_event().start_mark}")
        return super().compose_node(parent, index)

    def construct_mapping(self, node: Any, deep: bool = False) -> Any:
        seen: set[Any] = set()
        for key_node, value_node in node.value:
            key = self.construct_object(key_node, deep=True)
            if not isinstance(key, str | int | float | bool) and key is not None:
                raise yaml.YAMLError(f"a key must be a name, got {short(key)}{_at(key_node)}")
            if key in seen:
                raise yaml.YAMLError(f"duplicate key {short(key)}{_at(key_node)}")
            seen.add(key)
            if value_node.tag == INT and len(value_node.value) > MAX_INT_DIGITS:
                raise yaml.YAMLError(
                    f"{short(key)}: an integer of {len(value_node.value):,} digits (at most {MAX_INT_DIGITS})"
                )
        return super().construct_mapping(node, deep)

    def construct_yaml_int(self, node: Any) -> int:
        """YAML 1.2's integers: decimal (``010`` is ten, not YAML 1.1's octal eight; underscores
        allowed), ``0o`` octal, ``0x`` hexadecimal."""
        text = str(node.value).replace("_", "")
        if len(text) > MAX_INT_DIGITS:  # a bare value (an override): int() of it is slow or refused
            raise yaml.YAMLError(f"an integer of {len(text):,} digits (at most {MAX_INT_DIGITS})")
        digits = text.lstrip("+-")
        base = 16 if digits.startswith("0x") else 8 if digits.startswith("0o") else 10
        return int(text.replace("0x", "").replace("0o", "") if base != 10 else text, base)


_NoAliasLoader.add_constructor(INT, _NoAliasLoader.construct_yaml_int)
# YAML 1.2's numbers: the implicit resolvers without YAML 1.1's base 60 (1:30:00) and underscored
# floats; decimal integers keep their underscores (total_decisions: 80_000_000, as every config writes)
_NoAliasLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag not in (INT, "tag:yaml.org,2002:float")]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
for _tag, _pattern, _first in (
    (INT, r"^[-+]?[0-9][0-9_]*$|^0o[0-7]+$|^0x[0-9a-fA-F]+$", "-+0123456789"),
    ("tag:yaml.org,2002:float",
     r"^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?$|^[-+]?\.(?:inf|Inf|INF)$|^\.(?:nan|NaN|NAN)$",
     "-+0123456789."),
):  # fmt: skip
    _NoAliasLoader.add_implicit_resolver(_tag, re.compile(_pattern), list(_first))


def parse_yaml(text: str) -> Any:
    """YAML text as Python data, with the safe loader and no aliases (a nesting too deep to
    parse is a ``yaml.YAMLError`` like any other malformed text)."""
    try:
        return yaml.load(text, Loader=_NoAliasLoader)
    except RecursionError:
        raise yaml.YAMLError("nested too deeply") from None
