"""The main job: a short PPO self-play run, then a tournament against the baseline bots.

    python -m training.main_job [--games 100] [--seed 0]

Trains the bundled ``quick`` config (``configs/quick.yaml``) into a new folder
``runs/quick/<date-time>`` and plays the result, the shipped agent (``pretrained``)
and the random, heuristic and search bots against each other (``--games``
mirrored games per pair), printing the table and writing it, and every game's
record (``games.jsonl``, see :mod:`hanamikoji_env.records`), to ``eval/``.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from hanamikoji_env.bots.spec import parse_player
from hanamikoji_env.tournament import format_table, run_tournament, write_outputs
from training.config import config_path, load_config
from training.ppo import POLICY, train


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=100, help="mirrored games per pair in the tournament")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--config", default="quick", help="a YAML file or a bundled config (default: quick)")
    args = parser.parse_args(argv)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    cfg = load_config(
        args.config,
        [f"run_name={stamp}", f"seed={args.seed}", f"runs_dir=runs/{config_path(args.config).stem}"],
    )
    run_dir = Path(cfg.runs_dir) / cfg.run_name
    start = time.perf_counter()
    train(cfg, run_dir)
    print(
        f"trained {cfg.total_decisions:,} decisions in {time.perf_counter() - start:.0f} s -> {run_dir / POLICY}"
    )
    specs = ["random", "heuristic", "search", f"ckpt:{run_dir / POLICY}", "pretrained"]
    players = [parse_player(s) for s in specs]
    results = run_tournament(players, args.games, seed=args.seed, save_games=run_dir / "eval")
    print(format_table(results))
    write_outputs(results, run_dir / "eval")
    print(f"\nresults and game records in {run_dir / 'eval'}; total {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
