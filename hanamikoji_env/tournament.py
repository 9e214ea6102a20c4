"""Round-robin evaluation of bots and checkpoints: mirrored deals, Wilson intervals, Elo.

Every pair of players plays the same deals twice, seats swapped, so the luck
of the cards cancels.  Games run in parallel over the machine's cores.
Results: a table on the terminal, ``results.json`` and ``pairs.csv`` and a
win-rate heatmap ``heatmap.png`` in ``--out``.

Players are named by the player specs of :mod:`hanamikoji_env.bots.spec`, every
bot there with its options as ``name:key=value,key=value`` (e.g.
``search:samples=800``), a checkpoint as ``ckpt:PATH`` or ``pretrained``;
``hanamikoji-eval --help`` lists them all, from the same registry.  Specs are
checked before any game starts.

CLI: ``hanamikoji-eval`` (or ``python -m hanamikoji_env.tournament``, same arguments).
"""

from __future__ import annotations

import argparse
import csv
import json
import multiprocessing
import os
import signal
import sys
import tempfile
import threading
from collections.abc import Iterator
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from itertools import combinations
from multiprocessing import resource_tracker
from pathlib import Path
from typing import Any, NamedTuple

import numba
import numpy as np

from hanamikoji_env import records
from hanamikoji_env._version import __version__
from hanamikoji_env.aec import raw_env
from hanamikoji_env.bots.base import Bot
from hanamikoji_env.bots.spec import PlayerSpec, parse_player, usage
from hanamikoji_env.stats import bootstrap_elo, bradley_terry, wilson

SCHEMA = "hanamikoji-eval/1"
GAMES_FILE = "games.jsonl"
MAX_GAMES = 10_000_000
"""The most games per pair a tournament plays (its tasks are listed up front)."""


# ------------------------------------------------------------ playing ---


def play_game(bots: tuple[Bot, Bot], deal_seed: int, round_limit: int | None) -> tuple[float, int]:
    """One game, ``bots[0]`` as player_0; returns (player_0's reward, rounds played)."""
    history = play_env(bots, deal_seed, round_limit).history()
    return history.rewards[0], history.round


def play_env(bots: tuple[Bot, Bot], deal_seed: int, round_limit: int | None) -> raw_env:
    """One game, ``bots[0]`` as player_0; returns the finished env (its rewards and history)."""
    e = raw_env(round_limit=round_limit)
    e.reset(seed=deal_seed)
    seats = {"player_0": bots[0], "player_1": bots[1]}
    for agent in e.agent_iter():
        _, _, term, trunc, _ = e.last(observe=False)
        bot = seats[agent]
        e.step(None if term or trunc else bot.act(e.observe(agent, bot.observation_version)))
    return e


_BOTS: dict[tuple[str, int | None], Bot] = {}


class Task(NamedTuple):
    """Some deals of one pair, for one worker."""

    pair: int
    spec_a: PlayerSpec
    spec_b: PlayerSpec
    deals: list[int]
    seed: int
    round_limit: int | None
    keep_records: bool = False
    device: str = "cpu"
    batch: bool = True


Result = tuple[int, int, int, float, int, str | None]
"""(pair, deal, a_seat, a's reward, rounds, the game record as a JSON line or None)."""


def _worker(task: Task) -> list[Result]:
    """Play the task's deals (both seatings); the game records too when it asks for them."""
    round_limit = task.round_limit
    for spec in (task.spec_a, task.spec_b):
        if (spec.spec, round_limit) not in _BOTS:
            _BOTS[(spec.spec, round_limit)] = spec.make(task.seed, round_limit, task.device)
    a, b = _BOTS[(task.spec_a.spec, round_limit)], _BOTS[(task.spec_b.spec, round_limit)]
    if task.batch and a.batched and b.batched:
        return _play_lockstep(task, a, b)
    out = []
    for deal in task.deals:
        for a_seat in (0, 1):
            deal_seed, game_seed = _seeds(task, deal, a_seat)
            a.reset(seed=game_seed)
            b.reset(seed=game_seed + 1)
            e = play_env((a, b) if a_seat == 0 else (b, a), deal_seed, round_limit)
            out.append(_result(task, e, deal, a_seat))
    return out


def _seeds(task: Task, deal: int, a_seat: int) -> tuple[int, int]:
    """The deal's seed (the env's) and the game's seed (player A's; B's is one more)."""
    deal_seed = task.seed * 1_000_003 + deal
    return deal_seed, (deal_seed * 4 + a_seat) * 7919 + task.pair


def _result(task: Task, e: raw_env, deal: int, a_seat: int) -> Result:
    history = e.history()
    r0 = history.rewards[0]
    record = None
    if task.keep_records:
        a, b = task.spec_a.spec, task.spec_b.spec
        meta: records.Meta = {"source": "hanamikoji-eval", "seed": task.seed, "deal": deal}
        record = records.from_env(e, (a, b) if a_seat == 0 else (b, a), meta).to_json()
    return (task.pair, deal, a_seat, r0 if a_seat == 0 else -r0, history.round, record)


def _pending(e: raw_env) -> bool:
    """Whether an agent is to act in ``e``; False once the game is over (the agents' closing
    ``step(None)`` done)."""
    while e.agents:
        _, _, term, trunc, _ = e.last(observe=False)
        if not (term or trunc):
            return True
        e.step(None)
    return False


def _play_lockstep(task: Task, a: Bot, b: Bot) -> list[Result]:
    """The task's games all at once, each on its own AEC env: every step, each player makes its
    moves in all the games where it is to act with one ``act_batch`` call, game ``g`` with the
    generator and game state a bot of its own would have (seeded like :func:`_worker`'s
    ``reset``), so every game is the one the one-game-at-a-time path plays."""
    games = [(deal, a_seat) for deal in task.deals for a_seat in (0, 1)]
    envs, rngs = [], ([], [])
    for deal, a_seat in games:
        deal_seed, game_seed = _seeds(task, deal, a_seat)
        e = raw_env(round_limit=task.round_limit)
        e.reset(seed=deal_seed)
        envs.append(e)
        rngs[0].append(np.random.default_rng(game_seed))
        rngs[1].append(np.random.default_rng(game_seed + 1))
    states: tuple[list[tuple[int, ...]], list[tuple[int, ...]]] = ([()] * len(games), [()] * len(games))
    out: list[Result] = []
    live = list(range(len(games)))
    while live:
        waiting: tuple[list[int], list[int]] = ([], [])
        views: tuple[list[dict[str, np.ndarray]], list[dict[str, np.ndarray]]] = ([], [])
        for g in live:
            if not _pending(envs[g]):
                out.append(_result(task, envs[g], *games[g]))
                continue
            agent = envs[g].agent_selection
            who = 0 if agent == f"player_{games[g][1]}" else 1
            waiting[who].append(g)
            views[who].append(envs[g].observe(agent, (a, b)[who].observation_version))
        for who, bot in enumerate((a, b)):
            if not waiting[who]:
                continue
            own = [states[who][g] for g in waiting[who]]
            actions = bot.act_batch(
                np.stack([v["observation"] for v in views[who]]),
                np.stack([v["action_mask"] for v in views[who]]),
                rngs=[rngs[who][g] for g in waiting[who]],
                states=own,
            )
            for g, action, state in zip(waiting[who], actions, own, strict=True):
                states[who][g] = state
                envs[g].step(int(action))
        live = waiting[0] + waiting[1]
    return out


def _init_worker() -> None:
    """Pool workers run one per core: torch (imported later, by checkpoint players), numpy's BLAS
    and numba's parallel kernels (the bots') get one thread each instead of one per core, which
    would oversubscribe the machine.
    A spawned worker first imports the parent's main module; where that imported torch, its
    thread count is already set (to the number of cores), so it is set to one here as well.
    Ctrl-C is the parent's to handle: a worker ignores SIGINT and is terminated by the parent.
    A worker starts with SIGINT blocked (:func:`_start_pool`), so a Ctrl-C while it imports is
    held, then dropped here, never a traceback."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # drops a SIGINT held while blocked
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ[var] = "1"
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(1)
    # the bots' parallel kernels: one thread too.  Not through NUMBA_NUM_THREADS: numba re-reads
    # it at every compilation and refuses a change once its threads run.
    numba.set_num_threads(1)


class Interrupted(KeyboardInterrupt):
    """Ctrl-C during :func:`run_tournament`; ``played`` games of ``total`` had finished."""

    def __init__(self, played: int, total: int) -> None:
        super().__init__(f"{played} of {total} games played")
        self.played, self.total = played, total


def _stop(pool: ProcessPoolExecutor) -> None:
    """Shut ``pool`` down now: queued tasks cancelled, running games ended mid-game."""
    # the executor has no public way to end running tasks before Python 3.14's terminate_workers()
    for process in list(getattr(pool, "_processes", {}).values()):
        process.terminate()
    pool.shutdown(wait=True, cancel_futures=True)


def _new_pool(workers: int) -> ProcessPoolExecutor:
    """A pool of ``workers`` spawned processes; none runs until :func:`_submit_all`."""
    # spawn, not fork: a forked child of a process that has run torch can hang in torch.
    # An executor, not multiprocessing.Pool: a worker that dies breaks the executor with an
    # error, where a Pool silently replaces it and waits forever for its task.
    return ProcessPoolExecutor(workers, multiprocessing.get_context("spawn"), _init_worker)


def _submit_all(pool: ProcessPoolExecutor, tasks: list[Task]) -> list[Future[list[Result]]]:
    """Every task submitted, the workers that this starts shielded from a Ctrl-C meanwhile.

    SIGINT is blocked in this thread while the workers are spawned, so they inherit the block
    (:func:`_init_worker` drops what it held): none dies with a traceback while it starts.  A
    Ctrl-C in the parent meanwhile (even one taken before the block but not yet acted on) is
    recorded instead of raised, so it cannot cut a worker's launch in half; it is raised as a
    ``KeyboardInterrupt`` once the submissions are done, and the caller stops ``pool``."""
    resource_tracker.ensure_running()  # spawn's tracker unblocks SIGINT after it starts: first
    record = threading.current_thread() is threading.main_thread() and callable(
        signal.getsignal(signal.SIGINT)  # not where SIGINT is ignored (SIG_IGN)
    )
    interrupted: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda *_: interrupted.append(1)) if record else None
    held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        return [pool.submit(_worker, t) for t in tasks]
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)  # a Ctrl-C held meanwhile is recorded now
        if record:
            signal.signal(signal.SIGINT, previous)
        if interrupted:
            raise KeyboardInterrupt


def _chunks(n: int, size: int) -> Iterator[list[int]]:
    for start in range(0, n, size):
        yield list(range(start, min(n, start + size)))


def run_tournament(
    players: list[PlayerSpec],
    games: int,
    seed: int = 0,
    workers: int | None = None,
    round_limit: int | None = None,
    progress: bool = True,
    first_only: bool = False,
    save_games: Path | None = None,
    backend: str = "local",
    address: str | None = None,
    device: str = "cpu",
    batch: bool = True,
) -> dict[str, Any]:
    """Play every pair ``games`` games (``games / 2`` deals, both seatings) and summarise.

    ``first_only`` plays only the pairs that include the first player (one
    candidate against a field of opponents).  ``save_games``: a folder to write every
    game's record to, as ``games.jsonl`` (see :mod:`hanamikoji_env.records`), in the order
    pair, deal, seating.  ``backend="ray"`` spreads the games over a Ray cluster (``address``, or
    a local Ray with ``workers`` CPUs): the same deals and seeds, so the same results.
    ``device``: where checkpoint players' networks run.  ``batch``: a pair whose players both
    play batches (``Bot.batched``: random, heuristic, search, checkpoints) plays each task's
    games in lockstep, one ``act_batch`` call per player and step; the same games as one at a
    time (``batch=False``), only faster."""
    if games > MAX_GAMES:
        raise ValueError(f"games must be at most {MAX_GAMES:,} per pair, got {games:,}")
    if games < 2 or games % 2:
        raise ValueError(f"games must be a positive even number (each deal is played twice), got {games}")
    if len(players) < 2:
        raise ValueError("a tournament needs at least two players")
    names = [p.spec for p in players]
    if len(set(names)) != len(names):
        raise ValueError(f"players must be distinct, got {names}")
    pairs = [(i, j) for i, j in combinations(range(len(players)), 2) if i == 0 or not first_only]
    deals = games // 2
    workers = workers or os.cpu_count() or 1
    # about 8 tasks per worker, at most 25 deals each, so the progress bar moves
    chunk = max(1, min(25, deals * len(pairs) // (8 * workers)))
    tasks = [
        Task(k, players[i], players[j], d, seed, round_limit, save_games is not None, device, batch)
        for k, (i, j) in enumerate(pairs)
        for d in _chunks(deals, chunk)
    ]
    results: list[Result] = []
    bar = _progress_bar(len(pairs) * games, progress)
    pool = None
    if backend not in ("local", "ray"):
        raise ValueError(f"backend must be 'local' or 'ray', got {backend!r}")
    if device != "cpu":
        from hanamikoji_env.nn import resolve_device  # torch, only for a GPU

        resolve_device(device)  # a missing GPU is an error now, not in every worker
    try:
        if backend == "ray":
            parts: Iterator[list[Result]] = _ray_parts(tasks, address, workers)
        elif workers == 1:
            parts = map(_worker, tasks)
        else:
            pool = _new_pool(workers)
            parts = (f.result() for f in as_completed(_submit_all(pool, tasks)))
        for part in parts:
            results += part
            bar.update(len(part))
    except KeyboardInterrupt:
        raise Interrupted(len(results), len(pairs) * games) from None
    except BrokenProcessPool:
        raise RuntimeError(
            "a tournament worker process died (killed, out of memory, or a crash in a player); "
            f"{len(results)} of {len(pairs) * games} games had finished, no results were kept"
        ) from None
    finally:
        bar.close()
        if pool is not None:
            _stop(pool)
    results.sort(key=lambda r: r[:3])
    if save_games is not None:
        save_games.mkdir(parents=True, exist_ok=True)
        records.write_lines(save_games / GAMES_FILE, (r[5] for r in results))  # type: ignore[misc]
    return summarise(names, pairs, [r[:5] for r in results], games, seed, round_limit)


def _ray_parts(tasks: list[Task], address: str | None, workers: int) -> Iterator[list[Result]]:
    """The tasks' results from Ray tasks, as they finish; cancelled on Ctrl-C or an error."""
    import ray

    if not ray.is_initialized():
        ray.init(address=address, num_cpus=None if address else workers, include_dashboard=False)
    remote = ray.remote(num_cpus=1)(_worker)
    pending = [remote.remote(t) for t in tasks]
    try:
        while pending:
            done, pending = ray.wait(pending, num_returns=1)
            try:
                yield ray.get(done[0])
            except ray.exceptions.RayError as e:
                raise RuntimeError(f"a tournament task failed on Ray: {str(e).splitlines()[0]}") from None
    finally:
        for ref in pending:
            ray.cancel(ref, force=True)


def _progress_bar(total: int, enabled: bool) -> Any:
    from tqdm import tqdm

    return tqdm(total=total, unit="game", disable=not enabled, file=sys.stderr)


def summarise(
    names: list[str],
    pairs: list[tuple[int, int]],
    results: list[tuple[int, int, int, float, int]],
    games: int,
    seed: int,
    round_limit: int | None,
) -> dict[str, Any]:
    """The results dict (the ``results.json`` schema, see docs/bots.md)."""
    n = len(names)
    wins = np.zeros((n, n))
    matrix: list[list[float | None]] = [[None] * n for _ in range(n)]
    rows = []
    outcomes: list[tuple[int, int, tuple[int, int, int]]] = []
    for k, (i, j) in enumerate(pairs):
        rewards = np.array([r for p, _, _, r, _ in results if p == k])
        w, d, lo = int((rewards > 0).sum()), int((rewards == 0).sum()), int((rewards < 0).sum())
        score = w + 0.5 * d
        ci = wilson(score, len(rewards))
        wins[i, j] += score
        wins[j, i] += lo + 0.5 * d
        outcomes.append((i, j, (w, d, lo)))
        matrix[i][j] = score / len(rewards)
        matrix[j][i] = 1 - score / len(rewards)
        rows.append(
            {
                "a": names[i],
                "b": names[j],
                "games": len(rewards),
                "wins": w,
                "draws": d,
                "losses": lo,
                "win_rate": score / len(rewards),
                "ci95": [ci[0], ci[1]],
            }
        )
    elo = bradley_terry(wins)
    anchor = names.index("random") if "random" in names else 0
    elo = elo - elo[anchor]
    intervals = bootstrap_elo(outcomes, n, anchor, seed=seed)
    return {
        "schema": SCHEMA,
        "env_version": __version__,
        "seed": seed,
        "round_limit": round_limit,
        "games_per_pair": games,
        "players": names,
        "pairs": rows,
        "elo": {name: float(e) for name, e in zip(names, elo, strict=True)},
        "elo_anchor": names[anchor],
        "elo_ci95": {name: [float(lo), float(hi)] for name, (lo, hi) in zip(names, intervals, strict=True)},
        "win_rate_matrix": matrix,
    }


# ------------------------------------------------------------ outputs ---


def format_table(results: dict[str, Any]) -> str:
    w = max(12, *(len(p) + 2 for p in results["players"]))
    lines = [f"{'player A':<{w}}{'player B':<{w}}{'W':>6}{'D':>5}{'L':>6}{'win rate A':>12}  95% CI"]
    for r in results["pairs"]:
        lines.append(
            f"{r['a']:<{w}}{r['b']:<{w}}{r['wins']:>6}{r['draws']:>5}{r['losses']:>6}"
            f"{r['win_rate']:>12.3f}  [{r['ci95'][0]:.3f}, {r['ci95'][1]:.3f}]"
        )
    lines.append("")
    lines.append(
        f"Bradley-Terry ratings (Elo scale, {results['elo_anchor']} = 0; 95% interval by a bootstrap over games):"
    )
    for name, e in sorted(results["elo"].items(), key=lambda x: -x[1]):
        lo, hi = results["elo_ci95"][name]
        lines.append(f"  {name:<{w}}{e:>8.0f}  [{lo:.0f}, {hi:.0f}]")
    return "\n".join(lines)


def check_writable(out: Path, option: str = "--out") -> None:
    """``ValueError`` unless ``out`` is (or can be made) a folder this process can write files in."""
    if out.exists() and not out.is_dir():
        raise ValueError(f"{option} {out} exists and is not a folder")
    try:
        out.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=out):
            pass
    except OSError as e:
        raise ValueError(f"{option} {out} is not a writable folder ({e.strerror or e})") from None


def write_outputs(results: dict[str, Any], out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    tmp = out / "results.json.tmp"
    tmp.write_text(json.dumps(results, indent=2))
    tmp.replace(out / "results.json")
    with open(out / "pairs.csv", "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(
            [
                "a",
                "b",
                "games",
                "wins",
                "draws",
                "losses",
                "win_rate",
                "ci95_low",
                "ci95_high",
                "elo_a",
                "elo_b",
            ]
        )
        for r in results["pairs"]:
            writer.writerow(
                [
                    r["a"],
                    r["b"],
                    r["games"],
                    r["wins"],
                    r["draws"],
                    r["losses"],
                    f"{r['win_rate']:.4f}",
                    f"{r['ci95'][0]:.4f}",
                    f"{r['ci95'][1]:.4f}",
                    f"{results['elo'][r['a']]:.1f}",
                    f"{results['elo'][r['b']]:.1f}",
                ]
            )
    heatmap(results, out / "heatmap.png")


def heatmap(results: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = results["players"]
    m = np.array([[np.nan if x is None else x for x in row] for row in results["win_rate_matrix"]])
    fig, ax = plt.subplots(figsize=(1.2 * len(names) + 2.5, 1.0 * len(names) + 1.8))
    im = ax.imshow(m, vmin=0, vmax=1, cmap="cividis")  # readable with any colour vision, and in grey
    ax.set_xticks(range(len(names)), names, rotation=30, ha="right")
    ax.set_yticks(range(len(names)), names)
    for i in range(len(names)):
        for j in range(len(names)):
            if not np.isnan(m[i, j]):
                ink = "white" if m[i, j] < 0.5 else "black"  # cividis is dark below the middle
                ax.text(j, i, f"{m[i, j]:.2f}", ha="center", va="center", fontsize=9, color=ink)
    ax.set_title(f"win rate of row vs column ({results['games_per_pair']} games per pair)")
    fig.colorbar(im, ax=ax, fraction=0.046)
    fig.savefig(path, dpi=110, bbox_inches="tight")  # long player names widen the figure, not clip
    plt.close(fig)


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
    except ImportError as e:
        parser.error(f"{e}: the tournament needs the eval extra, pip install 'hanamikoji-env[eval]'")
    except RuntimeError as e:
        print(f"error: {e}", file=sys.stderr)
        raise SystemExit(1) from None
    except (ValueError, OSError) as e:
        parser.error(str(e))
    print(format_table(results))
    if args.out is not None:
        write_outputs(results, args.out)
        print(f"\nwrote {args.out / 'results.json'}, pairs.csv and heatmap.png")
    else:
        print("\nnothing was saved: pass --out DIR to keep results.json, pairs.csv and heatmap.png")
    if args.save_games is not None:
        print(f"wrote {args.save_games / GAMES_FILE}")


if __name__ == "__main__":
    main()
