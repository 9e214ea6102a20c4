"""Player specs: one string names any player, for the tournament, training opponents and wrappers.

| spec | player |
|---|---|
| ``random`` | :class:`~hanamikoji_env.bots.random.RandomBot` |
| ``heuristic`` | :class:`~hanamikoji_env.bots.heuristic.HeuristicBot` |
| ``search[:samples=N,candidates=K]`` | :class:`~hanamikoji_env.bots.search.SearchBot` |
| ``ckpt:PATH`` | a trained policy: a hanamikoji-env ``.pt`` checkpoint (``PolicyBot``) or a
  Stable-Baselines3 ``MaskablePPO`` ``.zip`` (``SB3Bot``), both loaded without running code |
| ``sampled:ckpt=PATH`` | a ``.pt`` policy that samples its moves (``PolicyBot(greedy=False)``) |
| ``rollout:ckpt=PATH[,samples=N]`` | :class:`~hanamikoji_env.bots.rollout.RolloutBot` over a ``.pt`` policy |
| ``psearch:ckpt=PATH[,samples=N,candidates=K]`` | :class:`~hanamikoji_env.bots.psearch.PolicySearchBot`
  over a ``.pt`` policy |
| ``os-ismcts[:sims=N]``, ``os-mcts[:sims=N]`` | OpenSpiel's ISMCTS / determinized MCTS
  (:class:`~hanamikoji_env.bots.openspiel.OpenSpielBot`, ``openspiel`` extra) |

Options are ``key=value`` after a colon, separated by commas; every option has
documented bounds (:data:`BOT_OPTIONS`).  :func:`parse_player` checks a spec
completely, checkpoints included, before any game starts.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NamedTuple

from hanamikoji_env.bots.base import Bot

MAX_SPEC_LENGTH = 4096


class Option(NamedTuple):
    """A bot option: its type and, for numbers, the inclusive bounds."""

    type: type
    low: int = 1
    high: int = 0


BOT_OPTIONS: dict[str, dict[str, Option]] = {
    "random": {},
    "heuristic": {},
    "search": {"samples": Option(int, 1, 20_000), "candidates": Option(int, 1, 200)},
    "rollout": {"ckpt": Option(str), "samples": Option(int, 1, 4096)},
    "sampled": {"ckpt": Option(str)},
    "psearch": {"ckpt": Option(str), "samples": Option(int, 1, 4096), "candidates": Option(int, 1, 23)},
    "os-ismcts": {"sims": Option(int, 1, 100_000)},
    "os-mcts": {"sims": Option(int, 1, 100_000)},
}
"""Every named bot and its options: ``search:samples`` is 1..20,000, ``candidates`` 1..200,
``rollout:samples`` and ``psearch:samples`` 1..4,096, ``psearch:candidates`` 1..23,
``os-ismcts``/``os-mcts``: ``sims`` 1..100,000 (the bots' constructors check the same bounds)."""


def check_option(bot: str, key: str, value: int) -> None:
    """``ValueError`` unless ``value`` is within the documented bounds of ``bot``'s ``key``."""
    option = BOT_OPTIONS[bot][key]
    if isinstance(value, bool) or not isinstance(value, int) or not option.low <= value <= option.high:
        raise ValueError(
            f"option {key} of {bot} must be an int in [{option.low}, {option.high}], got {value!r}"
        )


@dataclass(frozen=True)
class PlayerSpec:
    """A parsed player: a bot name with options, or a checkpoint path."""

    spec: str
    kind: str
    options: dict[str, Any] = field(default_factory=dict)
    path: str | None = None

    def make(self, seed: int, round_limit: int | None = None, device: str = "cpu") -> Bot:
        """A new bot of this spec, seeded (``round_limit``: the game's, for bots that simulate it;
        ``device``: where a hanamikoji-env checkpoint's network runs)."""
        if self.kind == "ckpt":
            return checkpoint_bot(self.path, seed, device)  # type: ignore[arg-type]
        if self.kind == "search":
            from hanamikoji_env.bots.search import SearchBot

            return SearchBot(seed=seed, round_limit=round_limit, **self.options)
        if self.kind.startswith("os-"):
            from hanamikoji_env.bots.openspiel import OpenSpielBot

            return OpenSpielBot(self.kind[3:], seed=seed, round_limit=round_limit, **self.options)
        if self.kind == "sampled":
            from hanamikoji_env.bots.policy import PolicyBot

            return PolicyBot(self.options["ckpt"], seed=seed, greedy=False, device=device)
        if self.kind in ("rollout", "psearch"):  # a search over a .pt policy
            from hanamikoji_env.bots.psearch import PolicySearchBot
            from hanamikoji_env.bots.rollout import RolloutBot

            options = dict(self.options)
            search = {"rollout": RolloutBot, "psearch": PolicySearchBot}[self.kind]
            return search(options.pop("ckpt"), seed=seed, round_limit=round_limit, **options)
        from hanamikoji_env.bots.heuristic import HeuristicBot
        from hanamikoji_env.bots.random import RandomBot

        return {"random": RandomBot, "heuristic": HeuristicBot}[self.kind](seed=seed, **self.options)


def parse_player(spec: str, load: bool = True) -> PlayerSpec:
    """Parse and check a player spec; ``ValueError`` says what is wrong.

    With ``load`` (the default) a checkpoint named by the spec is loaded and checked now."""
    if not isinstance(spec, str) or not spec:
        raise ValueError(f"a player spec must be a non-empty string, got {spec!r}")
    if len(spec) > MAX_SPEC_LENGTH:
        raise ValueError(f"a player spec may be at most {MAX_SPEC_LENGTH} characters, got {len(spec)}")
    if spec.startswith("ckpt:"):
        path = spec[5:]
        if not path:
            raise ValueError("ckpt: needs a path, e.g. ckpt:checkpoints/ppo_selfplay.pt")
        if load:
            checkpoint_bot(path, 0)  # loads and validates the checkpoint now, before any game
        return PlayerSpec(spec, "ckpt", path=path)
    name, _, rest = spec.partition(":")
    if name not in BOT_OPTIONS:
        raise ValueError(f"unknown player {name[:40]!r}; known: {sorted(BOT_OPTIONS)} or ckpt:PATH")
    options: dict[str, Any] = {}
    for item in filter(None, rest.split(",")):
        key, eq, value = item.partition("=")
        if not eq or key not in BOT_OPTIONS[name]:
            raise ValueError(
                f"bad option {item[:60]!r} for {name}; options: {sorted(BOT_OPTIONS[name]) or 'none'} as key=value"
            )
        kind = BOT_OPTIONS[name][key].type
        if kind is int:
            if not value.isdigit() or len(value) > 9:  # digits only: no 1e9, no 10**100 to parse
                raise ValueError(
                    f"option {key} of {name} must be an int in "
                    f"[{BOT_OPTIONS[name][key].low}, {BOT_OPTIONS[name][key].high}], got {value[:20]!r}"
                )
            check_option(name, key, int(value))
        options[key] = kind(value)
    if name.startswith("os-") and load:
        try:
            import hanamikoji_env.openspiel  # noqa: F401 - registers the game
        except ImportError as e:
            raise ValueError(
                f"{name} needs OpenSpiel: pip install 'hanamikoji-env[openspiel]' ({e})"
            ) from None
    if "ckpt" in BOT_OPTIONS[name]:
        if "ckpt" not in options:
            others = ",".join(f"{key}=N" for key in BOT_OPTIONS[name] if key != "ckpt")
            raise ValueError(
                f"{name} needs a checkpoint: {name}:ckpt=PATH" + (f"[,{others}]" if others else "")
            )
        if load:
            from hanamikoji_env.nn import load_policy

            load_policy(options["ckpt"])  # loads and validates the checkpoint now, before any game
    return PlayerSpec(spec, name, options)


def checkpoint_bot(path: str, seed: int, device: str = "cpu") -> Bot:
    """A hanamikoji-env policy checkpoint (its network on ``device``), or a Stable-Baselines3
    ``.zip`` (MaskablePPO, on the CPU)."""
    if path.endswith(".zip"):
        from hanamikoji_env.bots.sb3 import SB3Bot

        return SB3Bot(path, seed=seed)
    from hanamikoji_env.bots.policy import PolicyBot

    return PolicyBot(path, seed=seed, device=device)
