"""``hanamikoji-eval``: the tournament's command line."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from hanamikoji_env.bots.spec import parse_player, usage
from hanamikoji_env.entry import missing_extra
from hanamikoji_env.tournament.outputs import GAMES_FILE, check_writable, format_table, write_outputs
from hanamikoji_env.tournament.schedule import Interrupted, run_tournament


class _HelpFormatter(argparse.HelpFormatter):
    """Fills in the player specs (:func:`usage` imports every bot's class, torch included) only
    when help is shown, not on every run."""

    def _expand_help(self, action: argparse.Action) -> str:
        return super()._expand_help(action).replace("{players}", usage())


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="hanamikoji-eval",
        description="Round-robin tournament of Hanamikoji players.",
        formatter_class=_HelpFormatter,
    )
    p.add_argument(
        "--players",
        nargs="+",
        required=True,
        help="player specs (docs/bots.md): {players}",
    )
    p.add_argument(
        "--games", type=int, default=1000, help="games per pair, even (each deal twice, seats swapped)"
    )
    p.add_argument("--seed", type=int, default=0, help="seed of the deals and the bots")
    p.add_argument("--out", type=Path, default=None, help="folder for results.json, pairs.csv, heatmap.png")
    p.add_argument("--workers", type=int, default=None, help="processes (default: all cores)")
    p.add_argument("--round-limit", type=int, default=None, help="play at most this many rounds per game")
    p.add_argument(
        "--save-games",
        type=Path,
        default=None,
        metavar="DIR",
        help="write every game's record to DIR/games.jsonl (replay or check it with "
        "python -m hanamikoji_env.records verify)",
    )
    p.add_argument(
        "--backend",
        choices=("local", "ray"),
        default="local",
        help="local: processes on this machine; ray: tasks on a Ray cluster (same results)",
    )
    p.add_argument(
        "--address", default=None, help="--backend ray: a running cluster's address (default: a local Ray)"
    )
    p.add_argument(
        "--device", default="cpu", help="where checkpoint players' networks run: auto, cpu, cuda, cuda:N"
    )
    p.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    p.add_argument(
        "--first-only", action="store_true", help="play only the pairs that include the first player"
    )
    return p


def main(argv: list[str] | None = None) -> None:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        if args.out is not None:
            check_writable(args.out)  # before the first game, not after the last
            import matplotlib  # noqa: F401  (the heatmap's: missing, the games are not played for nothing)
        if args.save_games is not None:
            check_writable(args.save_games, "--save-games")
        players = [parse_player(s) for s in args.players]
        if args.seed < 0:
            raise ValueError(f"--seed must be >= 0, got {args.seed}")
        if args.workers is not None and args.workers < 1:
            raise ValueError(f"--workers must be >= 1, got {args.workers}")
        if args.round_limit is not None and args.round_limit < 1:
            raise ValueError(f"--round-limit must be >= 1, got {args.round_limit}")
        results = run_tournament(
            players,
            args.games,
            args.seed,
            args.workers,
            args.round_limit,
            not args.no_progress,
            args.first_only,
            args.save_games,
            args.backend,
            args.address,
            args.device,
        )
    except Interrupted as e:
        folders = [str(d) for d in (args.out, args.save_games) if d is not None]
        written = "nothing was written" + (f" to {' or '.join(folders)}" if folders else "")
        print(f"\ninterrupted: {e.played} of {e.total} games played; {written}", file=sys.stderr)
        raise SystemExit(130) from None
    except KeyboardInterrupt:  # while the players load, before the first game
        print("\ninterrupted before the first game; nothing was written", file=sys.stderr)
        raise SystemExit(130) from None
    except ModuleNotFoundError as e:  # a player's or the heatmap's library: the extra that brings it
        parser.error(missing_extra(e) or str(e))
    except RuntimeError as e:
        print(f"error: {e}", file=sys.stderr)
        raise SystemExit(1) from None
    except ValueError as e:
        parser.error(str(e))
    except OSError as e:  # a player's file unreadable, or the records' disk full
        print(f"error: {e}", file=sys.stderr)
        raise SystemExit(1) from None
    print(format_table(results))
    if args.out is not None:
        try:
            write_outputs(results, args.out)
        except OSError as e:
            print(f"error: {e}", file=sys.stderr)
            raise SystemExit(1) from None
        print(f"\nwrote {args.out / 'results.json'}, pairs.csv and heatmap.png")
    else:
        print("\nnothing was saved: pass --out DIR to keep results.json, pairs.csv and heatmap.png")
    if args.save_games is not None:
        print(f"wrote {args.save_games / GAMES_FILE}")
