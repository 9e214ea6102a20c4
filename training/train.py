"""Train a PPO self-play policy, or a whole curriculum of stages.

    hanamikoji-train --config quick [key=value ...]          # a bundled config, or a YAML file
    hanamikoji-train --resume runs/quick
    hanamikoji-train --config ppo_selfplay                    # a curriculum: every stage;
                                                              # run it again to continue

(``python -m training.train`` is the same command, from a clone.)

Every hyperparameter lives in the YAML config (``training/config.py`` lists
them with their defaults) and can be overridden as ``key=value`` (YAML
syntax: ``num_envs=512 bot_shares="{heuristic: 0.1}"``).  The run folder
(``runs_dir/run_name``) gets the resolved ``config.json``, TensorBoard logs in
``tb/``, ``checkpoint.pt`` (everything, for ``--resume``) and ``policy.pt``
(the policy, for ``ckpt:`` players and shipping).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from training.checkpoints import MACHINE_KEYS, describe_kept
from training.config import Config, bundled_configs, load_config, parse_overrides, read_yaml
from training.curriculum import is_curriculum, load_curriculum, run_curriculum
from training.ppo import CHECKPOINT, POLICY, TrainingDivergedError, check_resumable, load_init_from, train


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="hanamikoji-train", description=__doc__.splitlines()[0])
    parser.add_argument(
        "--config",
        help=f"a YAML file, or a bundled config: {', '.join(bundled_configs())} (default: the built-in defaults)",
    )
    parser.add_argument("--resume", type=Path, metavar="RUN_DIR", help="continue the run saved in RUN_DIR")
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    parser.add_argument("--stop-after", type=int, metavar="N", help="stop after N more updates (resumable)")
    parser.add_argument("overrides", nargs="*", metavar="key=value", help="override config values")
    args = parser.parse_args(argv)
    if args.config is not None and args.resume is None:
        try:
            curriculum = is_curriculum(read_yaml(args.config)[0])
            stages = load_curriculum(args.config, args.overrides) if curriculum else []
            if curriculum and args.stop_after is not None:
                raise ValueError("--stop-after does not apply to a curriculum: its stages set their updates")
        except ValueError as e:
            parser.error(str(e))
        if curriculum:
            try:
                run_curriculum(stages, progress=not args.no_progress)
            except TrainingDivergedError as e:
                print(f"error: {e}", file=sys.stderr)
                raise SystemExit(1) from None
            except KeyboardInterrupt:
                print(f"\ninterrupted: run the same command again to continue the curriculum where its "
                      f"last checkpoint left it ({stages[0].run_dir.parent})", file=sys.stderr)  # fmt: skip
                raise SystemExit(130) from None
            print(f"curriculum done: {stages[-1].run_dir / POLICY}")
            return
    try:
        if args.resume is not None:
            machine = parse_overrides(args.overrides)
            if args.config is not None or set(machine) - set(MACHINE_KEYS):
                raise ValueError(
                    "--resume continues a run with its saved config: no --config, and overrides only of "
                    f"the machine keys {', '.join(MACHINE_KEYS)}"
                )
            saved = args.resume / "config.json"
            if not (args.resume / CHECKPOINT).is_file() or not saved.is_file():
                raise ValueError(f"{args.resume} holds no {CHECKPOINT} and config.json to resume from")
            try:
                data = json.loads(saved.read_text())
            except (json.JSONDecodeError, UnicodeDecodeError) as e:
                raise ValueError(f"{saved} is not valid JSON ({e}); it is the run's saved config") from None
            cfg = Config.from_dict({**data, **machine}, source=str(saved))
            run_dir = args.resume
            check_resumable(cfg, run_dir)  # a truncated checkpoint or an edited config: a usage error
        else:
            cfg = load_config(args.config, args.overrides)
            run_dir = Path(cfg.runs_dir) / cfg.run_name
            if (run_dir / CHECKPOINT).exists():
                raise ValueError(f"{run_dir} already holds a run: --resume {run_dir}, or set run_name=...")
            if cfg.init_from is not None:
                load_init_from(cfg)  # a bad file or network shape: a usage error, before any work
    except ValueError as e:
        parser.error(str(e))
    if args.stop_after is not None and args.stop_after < 1:
        parser.error(f"--stop-after must be >= 1, got {args.stop_after}")
    try:
        trainer = train(
            cfg,
            run_dir,
            resume=args.resume is not None,
            progress=not args.no_progress,
            stop_after=args.stop_after,
        )
    except RuntimeError as e:  # diverged, or the run folder in use by another process
        print(f"error: {e}", file=sys.stderr)
        raise SystemExit(1) from None
    except ValueError as e:  # a damaged checkpoint to resume, a device this machine lacks
        print(f"error: {e}", file=sys.stderr)
        raise SystemExit(2) from None
    except OSError as e:  # the run folder cannot be made or written (runs_dir=/proc/nope)
        print(f"error: {e.filename or run_dir}: {e.strerror or e}", file=sys.stderr)
        raise SystemExit(2) from None
    except KeyboardInterrupt:
        print(f"\ninterrupted: {describe_kept(run_dir)}", file=sys.stderr)
        raise SystemExit(130) from None
    print(
        f"trained {trainer.decisions:,} decisions in {trainer.update} updates ({trainer.games:,} games); "
        f"greedy win rate vs random {trainer.last_eval.get('random', float('nan')):.3f}, "
        f"vs heuristic {trainer.last_eval.get('heuristic', float('nan')):.3f} "
        f"({cfg.eval_games} games each)\npolicy: {run_dir / POLICY}",
        file=sys.stdout,
    )


if __name__ == "__main__":
    main()
