"""Player specs: one string names any player, for the tournament, training opponents and wrappers.

| spec | player |
|---|---|
| ``random`` | :class:`~hanamikoji_env.bots.random.RandomBot` |
| ``heuristic`` | :class:`~hanamikoji_env.bots.heuristic.HeuristicBot` |
| ``search[:samples=N,candidates=K]`` | :class:`~hanamikoji_env.bots.search.SearchBot` |
| ``enum[:samples=N,budget=B]`` | :class:`~hanamikoji_env.bots.enum.EnumBot` (held out: no training
  config plays it, :mod:`hanamikoji_env.heldout`) |
| ``heuristic-weights[:bonus=B,sharpness=S]`` | the heuristic with other evaluation weights
  (:class:`~hanamikoji_env.bots.heuristic_reference.HeuristicVariant`; held out) |
| ``ckpt:PATH`` | a trained policy: a hanamikoji-env ``.pt`` checkpoint (``PolicyBot``), a
  Stable-Baselines3 ``MaskablePPO`` ``.zip`` (``SB3Bot``) or a ``.mlp`` network of OpenSpiel's
  learners (``MLPBot``), all loaded without running code |
| ``pretrained`` | the shipped agent (``checkpoints/ppo_selfplay.pt``, installed with the package);
  ``pretrained`` also names it wherever a checkpoint path goes (``psearch:ckpt=pretrained``) |
| ``sampled:ckpt=PATH`` | a ``.pt`` policy (or a ``.mlp`` network, an SB3 ``.zip``) that samples its moves
  (:class:`~hanamikoji_env.bots.policy.SampledPolicyBot`) |
| ``rollout:ckpt=PATH[,samples=N]`` | :class:`~hanamikoji_env.bots.rollout.RolloutBot` over a ``.pt`` policy |
| ``psearch:ckpt=PATH[,samples=N,candidates=K,belief=PATH,exact=0|1,value=0|1]`` | :class:`~hanamikoji_env.bots.psearch.PolicySearchBot`
  over a ``.pt`` policy |
| ``os-ismcts[:sims=N]``, ``os-mcts[:sims=N]`` | OpenSpiel's ISMCTS / determinized MCTS
  (:mod:`hanamikoji_env.bots.openspiel`, ``openspiel`` extra) |

Options are ``key=value`` after a colon, separated by commas; each bot class
declares its options and their bounds (``Bot.options``), and :func:`usage`
lists them.  :func:`parse_player` checks a spec completely, checkpoints
included, before any game starts.

The registry, :data:`BOTS`, is one line per bot: its spec name and where its
class lives (imported on first use, so a spec of a light bot never imports
torch).  Adding a bot is its module, its line here and its tests.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from difflib import get_close_matches
from importlib import import_module
from typing import Any

from hanamikoji_env.bots.base import Bot
from hanamikoji_env.excerpt import short
from hanamikoji_env.pretrained import PRETRAINED

MAX_SPEC_LENGTH = 4096

BOTS: dict[str, str] = {
    "random": "hanamikoji_env.bots.random:RandomBot",
    "heuristic": "hanamikoji_env.bots.heuristic:HeuristicBot",
    "search": "hanamikoji_env.bots.search:SearchBot",
    "enum": "hanamikoji_env.bots.enum:EnumBot",
    "heuristic-weights": "hanamikoji_env.bots.heuristic_reference:HeuristicVariant",
    "sampled": "hanamikoji_env.bots.policy:SampledPolicyBot",
    "rollout": "hanamikoji_env.bots.rollout:RolloutBot",
    "psearch": "hanamikoji_env.bots.psearch:PolicySearchBot",
    "os-ismcts": "hanamikoji_env.bots.openspiel:ISMCTSBot",
    "os-mcts": "hanamikoji_env.bots.openspiel:MCTSBot",
}
"""Every named bot: spec name -> ``module:Class``."""


def bot_class(name: str) -> type[Bot]:
    """The class of the bot named ``name`` in :data:`BOTS`."""
    module, _, cls = BOTS[name].partition(":")
    bot = getattr(import_module(module), cls)
    assert bot.name == name, (bot, name)
    return bot


def usage() -> str:
    """Every spec form with its options, for help texts."""
    forms = []
    for name in BOTS:
        options = bot_class(name).options
        required = ["ckpt=PATH"] if "ckpt" in options else []  # the one option a bot cannot do without
        optional = [f"{k}={'PATH' if o.type is str else 'N'}" for k, o in options.items() if k != "ckpt"]
        text = name + (":" + ",".join(required) if required else "")
        if optional:
            text += f"[{',' if required else ':'}{','.join(optional)}]"
        forms.append(text)
    return ", ".join([*forms, "ckpt:PATH (.pt, an SB3 .zip or a .mlp)", f"{PRETRAINED} (the shipped agent)"])


@dataclass(frozen=True)
class PlayerSpec:
    """A parsed player: a bot name with options, or a checkpoint path."""

    text: str
    """The spec as written (``search:samples=50``): the player's name in tables and records."""
    kind: str
    options: dict[str, Any] = field(default_factory=dict)
    path: str | None = None

    def bot_class(self) -> type[Bot]:
        """The class that plays this spec."""
        if self.kind != "ckpt":
            return bot_class(self.kind)
        return checkpoint_class(self.path)  # type: ignore[arg-type]

    def make(self, seed: int, round_limit: int | None = None, device: str = "cpu") -> Bot:
        """A new bot of this spec, seeded (``round_limit``: the game's, for bots that simulate it;
        ``device``: where a hanamikoji-env checkpoint's network runs)."""
        if self.kind == "ckpt":
            return checkpoint_bot(self.path, seed, device)  # type: ignore[arg-type]
        return bot_class(self.kind).from_spec(dict(self.options), seed, round_limit, device)


def parse_player(spec: str, load: bool = True) -> PlayerSpec:
    """Parse and check a player spec; ``ValueError`` says what is wrong.

    With ``load`` (the default) a checkpoint named by the spec is loaded and checked now."""
    if not isinstance(spec, str) or not spec:
        raise ValueError(f"a player spec must be a non-empty string, got {short(spec)}")
    if len(spec) > MAX_SPEC_LENGTH:
        raise ValueError(f"a player spec may be at most {MAX_SPEC_LENGTH} characters, got {len(spec)}")
    if spec == PRETRAINED or spec.startswith("ckpt:"):
        path = PRETRAINED if spec == PRETRAINED else spec[5:]
        if not path:
            raise ValueError("ckpt: needs a path, e.g. ckpt:runs/quick/policy.pt (or: pretrained)")
        if load:
            checkpoint_bot(path, 0)  # loads and validates the checkpoint now, before any game
        return PlayerSpec(spec, "ckpt", path=path)
    name, _, rest = spec.partition(":")
    if name not in BOTS:
        raise ValueError(
            f"unknown player {name[:40]!r}{did_you_mean(name, [*BOTS, PRETRAINED])}; "
            f"known: {sorted(BOTS)}, {PRETRAINED} (the shipped agent) or ckpt:PATH"
        )
    cls = bot_class(name)
    options: dict[str, Any] = {}
    for item in filter(None, rest.split(",")):
        key, eq, value = item.partition("=")
        if not eq or key not in cls.options:
            raise ValueError(
                f"bad option {item[:60]!r} for {name}{did_you_mean(key, list(cls.options))}; "
                f"options: {sorted(cls.options) or 'none'} as key=value"
            )
        option = cls.options[key]
        if option.type is int:
            if not value.isdigit() or len(value) > 9:  # digits only: no 1e9, no 10**100 to parse
                raise ValueError(
                    f"option {key} of {name} must be an int in [{option.low}, {option.high}], got {value[:20]!r}"
                )
            cls.check_option(key, int(value))
        options[key] = option.type(value)
    if load:
        cls.check_available()
    if "ckpt" in cls.options:
        if "ckpt" not in options:
            others = ",".join(
                f"{key}={'N' if option.type is int else 'PATH'}"
                for key, option in cls.options.items()
                if key != "ckpt"
            )
            raise ValueError(
                f"{name} needs a checkpoint: {name}:ckpt=PATH" + (f"[,{others}]" if others else "")
            )
        if load:
            cls.check_checkpoint(options["ckpt"])  # loads and validates it now, before any game
    if load:
        cls.check_files(options)
    return PlayerSpec(spec, name, options)


def did_you_mean(word: str, known: list[str]) -> str:
    """`` (did you mean 'X'?)`` for the closest of ``known`` to a mistyped ``word``, or ``""``."""
    close = get_close_matches(word[:40], known, n=1, cutoff=0.7)
    return f" (did you mean {close[0]!r}?)" if close else ""


def checkpoint_class(path: str) -> type[Bot]:
    """What plays a checkpoint file: a Stable-Baselines3 ``.zip`` (MaskablePPO) is an
    ``SB3Bot``, a ``.mlp`` (OpenSpiel's learners) an ``MLPBot``, anything else a hanamikoji-env
    policy (``PolicyBot``)."""
    if path.endswith(".zip"):
        from hanamikoji_env.bots.sb3 import SB3Bot

        return SB3Bot
    if path.endswith(".mlp"):
        from hanamikoji_env.bots.mlp import MLPBot

        return MLPBot
    from hanamikoji_env.bots.policy import PolicyBot

    return PolicyBot


def checkpoint_bot(path: str, seed: int, device: str = "cpu") -> Bot:
    """The bot of a checkpoint file (:func:`checkpoint_class`), its network on ``device``."""
    return checkpoint_class(path)(path, seed=seed, device=device)  # type: ignore[call-arg]
