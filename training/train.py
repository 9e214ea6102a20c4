"""Train a PPO self-play policy, or a whole curriculum of stages.

    hanamikoji-train --config quick [key=value ...]          # a bundled config, or a YAML file
    hanamikoji-train --resume runs/quick
    hanamikoji-train --config ppo_selfplay                    # a curriculum: every stage;
                                                              # run it again to continue

(``python -m hanamikoji_env.training.train`` is the same command; ``python -m training.train``
from a clone.)

Every hyperparameter lives in the YAML config (``training/config.py`` lists
them with their defaults) and can be overridden as ``key=value`` (YAML
syntax: ``num_envs=512 bot_shares="{heuristic: 0.1}"``).  The run folder
(``runs_dir/run_name``) gets the resolved ``config.json``, TensorBoard logs in
``tb/``, ``checkpoint.pt`` (everything, for ``--resume``) and ``policy.pt``
(the policy, for ``ckpt:`` players and shipping).
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

from hanamikoji_env.training.config import (
    Config,
    bundled_configs,
    config_path,
    load_config,
    parse_overrides,
    read_yaml,
)
from hanamikoji_env.training.curriculum import Stage, is_curriculum, load_curriculum, run_curriculum
from hanamikoji_env.training.ppo import (
    CHECKPOINT,
    POLICY,
    Trainer,
    TrainingDivergedError,
    check_resumable,
    load_init_from,
    train,
)
from hanamikoji_env.training.run_folder import (
    BUDGET_KEYS,
    CONFIG,
    MACHINE_KEYS,
    describe_kept,
    read_saved_config,
)


def trainer_configs() -> list[str]:
    """The bundled configs this command runs: PPO runs and curricula (the others, such as ``expert``
    and ``sb3_maskable_ppo``, belong to their own trainers)."""
    keys = {f.name for f in dataclasses.fields(Config)}
    names = []
    for name, path in bundled_configs().items():
        data = read_yaml(path)[0]
        if is_curriculum(data) or set(data) <= keys:
            names.append(name)
    return names


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="hanamikoji-train", description=__doc__.splitlines()[0])
    parser.add_argument(
        "--config",
        help=f"a YAML file, or a bundled config: {', '.join(trainer_configs())} (default: the built-in "
        "defaults); the run goes to runs_dir/run_name (runs/ and the config's run_name unless overridden)",
    )
    parser.add_argument("--resume", type=Path, metavar="RUN_DIR", help="continue the run saved in RUN_DIR")
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    parser.add_argument("--stop-after", type=int, metavar="N", help="stop after N more updates (resumable)")
    parser.add_argument("overrides", nargs="*", metavar="key=value", help="override config values")
    return parser


def main(argv: list[str] | None = None) -> None:
    parser = build_parser()
    args = parser.parse_intermixed_args(argv)  # key=value overrides before and after the flags
    if args.config is not None and args.resume is None:
        try:
            config_path(args.config, trainer_configs())  # the bundled configs this command runs
            stages = (
                load_curriculum(args.config, args.overrides)
                if is_curriculum(read_yaml(args.config)[0])
                else []
            )
            if stages and args.stop_after is not None:
                raise ValueError("--stop-after does not apply to a curriculum: its stages set their updates")
        except ValueError as e:
            parser.error(str(e))
        if stages:
            return curriculum(stages, progress=not args.no_progress)
    try:
        cfg, run_dir = (
            resumed_run(args.resume, args.overrides, args.config)
            if args.resume
            else new_run(args.config, args.overrides)
        )
    except ValueError as e:
        parser.error(str(e))
    if args.stop_after is not None and args.stop_after < 1:
        parser.error(f"--stop-after must be >= 1, got {args.stop_after}")
    trainer = run(cfg, run_dir, resume=args.resume is not None, progress=not args.no_progress,
                  stop_after=args.stop_after)  # fmt: skip
    rates = ", ".join(f"vs {bot} {rate:.3f}" for bot, rate in trainer.last_eval.items()) or "none measured"
    print(
        f"trained {trainer.decisions:,} decisions in {trainer.update} updates ({trainer.games:,} games); "
        f"greedy win rate {rates} ({cfg.eval_games} games each)\npolicy: {run_dir / POLICY}"
    )


def curriculum(stages: list[Stage], progress: bool) -> None:
    """Every stage of a curriculum; a divergence or Ctrl-C is one line and an exit code."""
    try:
        run_curriculum(stages, progress=progress)
    except TrainingDivergedError as e:
        print(f"error: {e}", file=sys.stderr)
        raise SystemExit(1) from None
    except KeyboardInterrupt:
        print(f"\ninterrupted: run the same command again to continue the curriculum where its "
              f"last checkpoint left it ({stages[0].run_dir.parent})", file=sys.stderr)  # fmt: skip
        raise SystemExit(130) from None
    print(f"curriculum done: {stages[-1].run_dir / POLICY}")


def resumed_run(run_dir: Path, overrides: list[str], config: str | None = None) -> tuple[Config, Path]:
    """The saved config of the run in ``run_dir`` (overridable in the machine keys only, and no
    other ``config``), checked against its checkpoint; ``ValueError`` says what is wrong."""
    machine = parse_overrides(overrides)
    if config is not None or set(machine) - {*MACHINE_KEYS, *BUDGET_KEYS}:
        raise ValueError(
            "--resume continues a run with its saved config: no --config, and overrides only of "
            f"the machine keys {', '.join(MACHINE_KEYS)} and the budget {', '.join(BUDGET_KEYS)}"
        )
    if not (run_dir / CHECKPOINT).is_file() or not (run_dir / CONFIG).is_file():
        raise ValueError(f"{run_dir} holds no {CHECKPOINT} and {CONFIG} to resume from")
    data = read_saved_config(run_dir)
    cfg = Config.from_dict({**data, **machine}, source=str(run_dir / CONFIG))
    check_resumable(cfg, run_dir)  # a truncated checkpoint or an edited config: a usage error
    return cfg, run_dir


def new_run(config: str | None, overrides: list[str]) -> tuple[Config, Path]:
    """The config of a new run and its folder, which must not hold a run yet; ``ValueError`` says
    what is wrong (an ``init_from`` checkpoint is loaded and checked now, before any work)."""
    cfg = load_config(config, overrides)
    run_dir = Path(cfg.runs_dir) / cfg.run_name
    if (run_dir / CHECKPOINT).exists():
        raise ValueError(f"{run_dir} already holds a run: --resume {run_dir}, or set run_name=...")
    if cfg.init_from is not None:
        load_init_from(cfg)
    return cfg, run_dir


def run(cfg: Config, run_dir: Path, resume: bool, progress: bool, stop_after: int | None) -> Trainer:
    """:func:`training.ppo.train`, its failures as one line and an exit code: 1 for a diverged run
    or a run folder in use, 2 for a damaged checkpoint, a missing device or an unwritable folder,
    130 for Ctrl-C."""
    try:
        return train(cfg, run_dir, resume=resume, progress=progress, stop_after=stop_after)
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


if __name__ == "__main__":
    main()
