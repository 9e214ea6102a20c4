"""A league instead of a fixed mix: exploiters join the opponents, and opponents are drawn where
the agent still loses (prioritized fictitious self-play).

Two config keys turn it on (``training/config.py``; ``configs/league.yaml`` is the recipe):

- ``exploiter_every: D``: every ``D`` learner decisions the run pauses, freezes the
  current policy (``exploiters/K/target.pt``) and trains exploiter ``K`` (``Trainer.train_exploiter``): a best response
  to it, PPO from its own weights against it alone (``configs/exploit.yaml``'s settings,
  ``exploiter_decisions`` decisions, its own run folder ``exploiters/K``).  The frozen
  exploiter (greedy, ``ckpt:exploiters/K/policy.pt``) then stays an opponent of the agent
  for the rest of the run.  Together the exploiters have the prior share ``exploiter_share``.
- ``pfsp: P`` (> 0): the shares of new games among the opponents (snapshots, each bot,
  each exploiter) follow the agent's recent results against them: an opponent's prior
  share (``pool_share``, ``bot_shares[name]``, ``exploiter_share / K``) times
  ``floor + (1 - p) ** P``, where ``p`` is the agent's win rate (draws half) against it
  over its recent training games (:data:`MEMORY`; an opponent not met yet counts as 0.5)
  and :data:`FLOOR` keeps every opponent in play.  The opponents' total share stays the
  sum of the priors; pure self-play keeps the rest.

The league's state (exploiters, results, an exploiter in training) is in the run's
``checkpoint.pt``: ``--resume`` continues it, also in the middle of an exploiter's
training (that exploiter resumes from its own folder).  TensorBoard has each opponent's
share and win rate under ``league/``; ``curve.csv`` adds the agent's win rate against
the newest exploiters (``vs_exploiters``) beside the held-out pool's (``eval_heldout``).
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from hanamikoji_env.files import replace_atomically
from hanamikoji_env.training.config import Config, read_yaml
from hanamikoji_env.training.run_folder import POLICY
from hanamikoji_env.training.selfplay import SNAPSHOTS

MEMORY = 0.98
"""Each update, the results so far count this much: an opponent's win rate follows about its
last 50 updates of games."""
FLOOR = 0.05
"""The least PFSP weight of an opponent, however often the agent beats it."""
RECENT = 3
"""The curve's ``vs_exploiters`` is the agent's win rate against this many newest exploiters."""
EXPLOITERS = "exploiters"
"""The run folder's subfolder of exploiter runs, one folder each (1, 2, ...)."""
EXPLOIT_CONFIG = "exploit"
"""The bundled config of an exploiter's training (the same as ``hanamikoji-exploit``'s)."""


class League:
    """The exploiters so far, the agent's recent results against every opponent, and the
    shares of new games that follow from them."""

    def __init__(self, cfg: Config) -> None:
        self.cfg = cfg
        self.exploiters: list[str] = []
        """The exploiters' player specs (``ckpt:RUN/exploiters/K/policy.pt``), oldest first."""
        self.exploiter_rates: list[float] = []
        """Each exploiter's win rate against the policy it was trained on, at its end."""
        self.pending = 0
        """The exploiter in training (1, 2, ...), or 0: none.  Saved before it starts."""
        self.wins: dict[str, float] = {}
        self.games: dict[str, float] = {}
        """Decayed counts of the agent's wins (draws half) and games against each opponent."""

    # ----------------------------------------------------------- results ---

    def fold(self, results: dict[str, tuple[float, int]]) -> None:
        """One update's finished games, ``name -> (agent's wins, games)``, into the memory."""
        for name in set(self.games) | set(results):
            won, played = results.get(name, (0.0, 0))
            self.wins[name] = MEMORY * self.wins.get(name, 0.0) + won
            self.games[name] = MEMORY * self.games.get(name, 0.0) + played

    def win_rate(self, name: str) -> float:
        """The agent's recent win rate against ``name`` (0.5 before any game, with a prior
        of one drawn game so a few early games do not decide it)."""
        return (self.wins.get(name, 0.0) + 0.5) / (self.games.get(name, 0.0) + 1.0)

    def priors(self) -> dict[str, float]:
        """Each opponent's configured share of new games."""
        cfg = self.cfg
        out = {SNAPSHOTS: cfg.pool_share, **{b: s for b, s in cfg.bot_shares.items() if s > 0}}
        for spec in self.exploiters:
            out[spec] = cfg.exploiter_share / len(self.exploiters)
        return out

    def shares(self) -> dict[str, float]:
        """Each opponent's share of new games: the priors, reweighted by PFSP when ``pfsp > 0``."""
        priors = self.priors()
        if not self.cfg.pfsp:
            return priors
        weights = {
            name: prior * (FLOOR + (1.0 - self.win_rate(name)) ** self.cfg.pfsp)
            for name, prior in priors.items()
        }
        total = sum(weights.values())
        return {name: sum(priors.values()) * w / total if total else 0.0 for name, w in weights.items()}

    # ------------------------------------------------------------ exploiters ---

    def due(self, decisions: int) -> bool:
        """Is the next exploiter due after ``decisions`` learner decisions of the agent?"""
        every = self.cfg.exploiter_every
        return bool(every) and decisions >= (len(self.exploiters) + 1) * every

    def state(self) -> dict[str, Any]:
        return {
            "exploiters": list(self.exploiters),
            "exploiter_rates": list(self.exploiter_rates),
            "pending": self.pending,
            "wins": dict(self.wins),
            "games": dict(self.games),
        }

    def load(self, data: dict[str, Any]) -> None:
        self.exploiters = [str(s) for s in data["exploiters"]]
        self.exploiter_rates = [float(r) for r in data["exploiter_rates"]]
        self.pending = int(data["pending"])
        self.wins = {str(k): float(v) for k, v in data["wins"].items()}
        self.games = {str(k): float(v) for k, v in data["games"].items()}


def exploiter_config(cfg: Config, run_dir: Path, k: int) -> Config:
    """Exploiter ``k``'s run: ``configs/exploit.yaml`` against ``exploiters/k/target.pt`` alone,
    from its weights, ``exploiter_decisions`` decisions, with the agent's rollout sizes, threads
    and device."""
    folder = exploiter_folder(run_dir, k)
    target = f"ckpt:{folder / 'target.pt'}"
    data, _ = read_yaml(EXPLOIT_CONFIG)
    data.update(
        run_name=str(k),
        runs_dir=str(folder.parent),
        seed=cfg.seed + 1000 * k,
        total_decisions=cfg.exploiter_decisions,
        hidden=cfg.hidden,
        layers=cfg.layers,
        observation_version=cfg.observation_version,
        round_limit=cfg.round_limit,
        num_envs=cfg.num_envs,
        rollout_steps=cfg.rollout_steps,
        num_minibatches=cfg.num_minibatches,
        torch_threads=cfg.torch_threads,
        device=cfg.device,
        init_from=str(folder / "target.pt"),
        bot_shares={target: 1.0},
        eval_bots=[target],
    )
    return Config.from_dict(data, source=f"exploiter {k} of {run_dir}")


def exploiter_folder(run_dir: Path, k: int) -> Path:
    """Exploiter ``k``'s run folder in the league's ``run_dir``."""
    return Path(run_dir) / EXPLOITERS / str(k)


def freeze_target(run_dir: Path, k: int) -> None:
    """The agent's ``policy.pt`` as it is now, written whole as exploiter ``k``'s target."""
    folder = exploiter_folder(run_dir, k)
    folder.mkdir(parents=True, exist_ok=True)
    replace_atomically(folder / "target.pt", lambda tmp: shutil.copyfile(Path(run_dir) / POLICY, tmp))
