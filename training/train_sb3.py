"""Train sb3-contrib's MaskablePPO on SingleAgentEnv, with self-play snapshots, then evaluate it.

    python -m hanamikoji_env.training.train_sb3 --config sb3_maskable_ppo [key=value ...]

Every game draws the learner's opponent from ``opponents`` (shares of
``random``, ``heuristic``, ``search`` and ``self``: the newest of the model's own
snapshots, taken every ``snapshot_every`` timesteps and loaded back with
SB3Bot, so no pickled code runs).  Until the first snapshot, ``self`` games are
played against ``random``.  Saves ``final.zip`` and the snapshots in
``runs_dir/run_name``, then evaluates the model with
``sb3_contrib.common.maskable.evaluation.evaluate_policy`` and with the
tournament (``ckpt:final.zip``).
"""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from hanamikoji_env.bots.base import Bot
from hanamikoji_env.bots.spec import parse_player
from hanamikoji_env.files import replace_atomically
from hanamikoji_env.nn import MAX_HIDDEN, MAX_LAYERS
from hanamikoji_env.tournament import format_table, run_tournament, write_outputs
from hanamikoji_env.training.config import (
    check_ranges,
    dataclass_from_dict,
    from_config,
    ranged,
    read_yaml,
    short,
)
from hanamikoji_env.training.run_folder import write_saved_config


@dataclass
class SB3Config:
    run_name: str = "sb3_maskable_ppo"
    runs_dir: str = "runs"
    seed: int = from_config("seed")
    total_timesteps: int = ranged(200_000, 1, 10**10)
    n_envs: int = ranged(4, 1, 256)
    n_steps: int = ranged(512, 1, 1 << 16)
    batch_size: int = ranged(256, 1, 1 << 20)
    n_epochs: int = ranged(4, 1, 100)
    learning_rate: float = from_config("learning_rate")
    gamma: float = from_config("gamma")
    gae_lambda: float = from_config("gae_lambda")
    ent_coef: float = from_config("ent_coef")
    net_arch: list[int] = field(default_factory=lambda: [128, 128])
    opponents: dict[str, float] = field(
        default_factory=lambda: {"random": 0.5, "heuristic": 0.2, "self": 0.3}
    )
    snapshot_every: int = ranged(50_000, 1, 10**10)
    eval_episodes: int = ranged(200, 1, 10**6)
    eval_games: int = ranged(200, 2, 10**6)
    """Mirrored games per pair in the final tournament."""

    def validate(self) -> SB3Config:
        check_ranges(self)
        if (
            not self.net_arch
            or len(self.net_arch) > MAX_LAYERS
            or not all(1 <= w <= MAX_HIDDEN for w in self.net_arch)
        ):
            raise ValueError(
                f"net_arch must be 1..{MAX_LAYERS} layer widths in [1, {MAX_HIDDEN}], got {short(self.net_arch)}"
            )
        unknown = set(self.opponents) - {"random", "heuristic", "search", "self"}
        if unknown or not self.opponents or not all(0 <= v <= 1 for v in self.opponents.values()):
            raise ValueError(
                f"opponents: shares in [0, 1] of random, heuristic, search, self; got {short(self.opponents)}"
            )
        if sum(self.opponents.values()) <= 0:
            raise ValueError("opponents: the shares must not all be 0")
        if self.eval_games % 2:
            raise ValueError("eval_games must be even (mirrored deals)")
        return self


class OpponentMix(Bot):
    """Draws one opponent per game (at ``reset``) from fixed bots and the newest snapshot."""

    name = "mix"

    def __init__(self, shares: dict[str, float], seed: int = 0) -> None:
        super().__init__(seed)
        self.names = sorted(shares)
        p = np.array([shares[n] for n in self.names], dtype=np.float64)
        self.p = p / p.sum()
        self.bots = {n: parse_player(n).make(seed) for n in self.names if n != "self"}
        self.snapshot: Bot | None = None
        self.current: Bot = next(iter(self.bots.values()), None) or parse_player("random").make(seed)

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        name = self.names[int(self.rng.choice(len(self.names), p=self.p))]
        if name == "self":
            self.current = self.snapshot or self.bots.get("random") or parse_player("random").make(0)
        else:
            self.current = self.bots[name]
        self.current.reset(seed=int(self.rng.integers(2**31)))

    def _act(self, vector: np.ndarray, mask: np.ndarray) -> int:
        return self.current.act({"observation": vector, "action_mask": mask})


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(
        prog="python -m hanamikoji_env.training.train_sb3", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--config", type=Path, help="YAML config")
    parser.add_argument("--no-progress", action="store_true")
    parser.add_argument("overrides", nargs="*", metavar="key=value")
    args = parser.parse_args(argv)
    try:
        data, source = read_yaml(args.config, args.overrides)
        cfg = dataclass_from_dict(SB3Config, data, source).validate()
    except ValueError as e:
        parser.error(str(e))
    from sb3_contrib import MaskablePPO
    from sb3_contrib.common.maskable.evaluation import evaluate_policy
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.monitor import Monitor
    from stable_baselines3.common.vec_env import DummyVecEnv

    from hanamikoji_env.bots.sb3 import SB3Bot
    from hanamikoji_env.wrappers import SingleAgentEnv

    run_dir = Path(cfg.runs_dir) / cfg.run_name
    (run_dir / "snapshots").mkdir(parents=True, exist_ok=True)
    write_saved_config(run_dir, asdict(cfg))
    mixes = [OpponentMix(cfg.opponents, seed=cfg.seed + i) for i in range(cfg.n_envs)]
    venv = DummyVecEnv([lambda m=m: SingleAgentEnv(opponent=m) for m in mixes])
    venv.seed(cfg.seed)
    model = MaskablePPO(
        "MlpPolicy", venv, n_steps=cfg.n_steps, batch_size=cfg.batch_size, n_epochs=cfg.n_epochs,
        learning_rate=cfg.learning_rate, gamma=cfg.gamma, gae_lambda=cfg.gae_lambda, ent_coef=cfg.ent_coef,
        policy_kwargs={"net_arch": list(cfg.net_arch)}, seed=cfg.seed, verbose=0,
        tensorboard_log=str(run_dir / "tb"),
    )  # fmt: skip

    class Snapshots(BaseCallback):
        """Every ``snapshot_every`` steps: save a zip and make it the ``self`` opponent."""

        def _on_step(self) -> bool:
            if (
                self.num_timesteps // cfg.snapshot_every
                > (self.num_timesteps - cfg.n_envs) // cfg.snapshot_every
            ):
                path = run_dir / "snapshots" / f"step_{self.num_timesteps}.zip"
                self.model.save(path)
                for mix in mixes:
                    mix.snapshot = SB3Bot(path)
            return True

    model.learn(cfg.total_timesteps, callback=Snapshots(), progress_bar=not args.no_progress)
    final = run_dir / "final.zip"
    model.save(final)

    summary: dict[str, Any] = {"model": str(final), "timesteps": model.num_timesteps}
    for name in ("random", "heuristic"):
        eval_env = Monitor(SingleAgentEnv(opponent=name))
        eval_env.reset(seed=cfg.seed + 1000)
        rewards, _ = evaluate_policy(
            model, eval_env, n_eval_episodes=cfg.eval_episodes, return_episode_rewards=True
        )
        summary[f"evaluate_policy_vs_{name}"] = float(np.mean(np.array(rewards) > 0))
        print(
            f"evaluate_policy vs {name}: win rate {summary[f'evaluate_policy_vs_{name}']:.3f} over {cfg.eval_episodes} episodes"
        )
    players = [parse_player(f"ckpt:{final}"), parse_player("random"), parse_player("heuristic")]
    results = run_tournament(players, cfg.eval_games, seed=cfg.seed, progress=not args.no_progress)
    write_outputs(results, run_dir / "eval")
    print(format_table(results))
    summary["tournament"] = results
    text = json.dumps(summary, indent=2)
    replace_atomically(run_dir / "summary.json", lambda tmp: tmp.write_text(text))
    return summary


if __name__ == "__main__":
    main()
