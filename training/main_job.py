"""The main job: a short PPO self-play run, then a tournament against the baseline bots.

    python -m hanamikoji_env.training.main_job [--games 100] [--seed 0] [--config quick]

Trains the bundled ``quick`` config (``configs/quick.yaml``) into a new folder
``runs/quick/<date-time>`` and plays the result, the shipped agent (``pretrained``)
and the random, heuristic and search bots against each other (``--games``
mirrored games per pair), printing the table and writing it, and every game's
record (``games.jsonl``, see :mod:`hanamikoji_env.records`), to ``eval/``.

It starts with one line saying what it will do, where, and how long that
should take on this machine once compiled: measured, from one training update
and one search game after a warm-up, not a constant (a first run first says
what it compiles and about how long that takes).  Ctrl-C stops it with one line saying what was
kept and how to go on.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

from hanamikoji_env.bots.spec import parse_player
from hanamikoji_env.first_run import announce, parts_for
from hanamikoji_env.games import play_game
from hanamikoji_env.tournament import Interrupted, format_table, run_tournament, write_outputs
from hanamikoji_env.training.config import Config, config_path, load_config
from hanamikoji_env.training.ppo import POLICY, Trainer, train
from hanamikoji_env.training.run_folder import describe_kept

PLAYERS = ["random", "heuristic", "search", "pretrained"]
"""The trained policy's opponents in the tournament."""


def estimate_seconds(cfg: Config, games: int) -> float:
    """How long the job should take here once compiled: one timed training update (after one to
    warm up) scaled to the config's budget, and one timed search game (after one to warm up)
    scaled to the tournament's search games."""
    with tempfile.TemporaryDirectory() as scratch:
        trainer = Trainer(cfg, Path(scratch))
        trainer.learn(trainer.collect())
        start, before = time.perf_counter(), trainer.decisions
        trainer.learn(trainer.collect())
        per_decision = (time.perf_counter() - start) / max(trainer.decisions - before, 1)
    bots = [parse_player(s).make(seed=0, round_limit=cfg.round_limit) for s in ("search", "heuristic")]
    play_game((bots[0], bots[1]), deal_seed=0, round_limit=cfg.round_limit)  # compiles: not timed
    start = time.perf_counter()
    play_game((bots[1], bots[0]), deal_seed=1, round_limit=cfg.round_limit)
    per_search_game = time.perf_counter() - start
    players = len(PLAYERS) + 1
    search_games = (players - 1) * games  # the pairs with search dominate; the others are cheap
    workers = os.cpu_count() or 1
    return cfg.total_decisions * per_decision + search_games * per_search_game / workers


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m hanamikoji_env.training.main_job", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--games", type=int, default=100, help="mirrored games per pair in the tournament")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--config", default="quick", help="a YAML file or a bundled config (default: quick)")
    args = parser.parse_args(argv)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    try:
        cfg = load_config(
            args.config,
            [f"run_name={stamp}", f"seed={args.seed}", f"runs_dir=runs/{config_path(args.config).stem}"],
        )
    except ValueError as e:
        parser.error(str(e))
    run_dir = Path(cfg.runs_dir) / cfg.run_name
    print(
        f"main job: train PPO self-play for {cfg.total_decisions:,} decisions ({config_path(args.config).name}), "
        f"then play it against {', '.join(PLAYERS)} ({args.games} games a pair); "
        f"writing to {run_dir}/ - measuring this machine's speed...",
        flush=True,
    )
    opponents = [*cfg.bot_shares, *cfg.eval_bots, *PLAYERS, *([cfg.teacher] if cfg.teacher else [])]
    announce(parts_for(opponents, batch=True))  # the compilation is said, and not in the estimate
    estimate = estimate_seconds(cfg, args.games)
    print(
        f"about {estimate / 60:.0f} min on this machine at its current load ({os.cpu_count()} cores)",
        flush=True,
    )
    start = time.perf_counter()
    try:
        train(cfg, run_dir)
    except KeyboardInterrupt:
        print(f"\ninterrupted while training: {describe_kept(run_dir)}", file=sys.stderr)
        raise SystemExit(130) from None
    print(
        f"trained {cfg.total_decisions:,} decisions in {time.perf_counter() - start:.0f} s -> {run_dir / POLICY}"
    )
    players = [parse_player(s) for s in [*PLAYERS[:3], f"ckpt:{run_dir / POLICY}", PLAYERS[3]]]
    try:
        results = run_tournament(players, args.games, seed=args.seed, save_games=run_dir / "eval")
    except (Interrupted, KeyboardInterrupt):
        print(
            f"\ninterrupted while evaluating: the trained policy is kept at {run_dir / POLICY}; evaluate it with "
            f"hanamikoji-eval --players ckpt:{run_dir / POLICY} heuristic search --out {run_dir / 'eval'}",
            file=sys.stderr,
        )
        raise SystemExit(130) from None
    print(format_table(results))
    write_outputs(results, run_dir / "eval")
    print(f"\nresults and game records in {run_dir / 'eval'}; total {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
