"""The tournament's schedule: every pair's deals cut into tasks, played by worker processes
(or Ray), each task's games one at a time or in lockstep, every game a :class:`GameResult`."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from concurrent.futures import as_completed
from concurrent.futures.process import BrokenProcessPool
from itertools import combinations
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from hanamikoji_env import records
from hanamikoji_env.aec import raw_env
from hanamikoji_env.bots.base import Bot
from hanamikoji_env.bots.spec import PlayerSpec
from hanamikoji_env.excerpt import short
from hanamikoji_env.first_run import announce, parts_for
from hanamikoji_env.games import play_env, play_lockstep
from hanamikoji_env.pool import new_pool, stop, submit_all
from hanamikoji_env.tournament.outputs import GAMES_FILE
from hanamikoji_env.tournament.summary import GameResult, summarise

MAX_GAMES = 10_000_000
"""The most games per pair a tournament plays (its tasks are listed up front)."""

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


def _worker(task: Task) -> list[GameResult]:
    """Play the task's deals (both seatings); the game records too when it asks for them."""
    round_limit = task.round_limit
    for spec in (task.spec_a, task.spec_b):
        if (spec.text, round_limit) not in _BOTS:
            _BOTS[(spec.text, round_limit)] = spec.make(task.seed, round_limit, task.device)
    a, b = _BOTS[(task.spec_a.text, round_limit)], _BOTS[(task.spec_b.text, round_limit)]
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


def _result(task: Task, e: raw_env, deal: int, a_seat: int) -> GameResult:
    history = e.history()
    r0 = history.rewards[0]
    record = None
    if task.keep_records:
        a, b = task.spec_a.text, task.spec_b.text
        meta: records.Meta = {"source": "hanamikoji-eval", "seed": task.seed, "deal": deal}
        record = records.from_env(e, (a, b) if a_seat == 0 else (b, a), meta).to_json()
    return GameResult(task.pair, deal, a_seat, r0 if a_seat == 0 else -r0, history.round, record)


def _play_lockstep(task: Task, a: Bot, b: Bot) -> list[GameResult]:
    """The task's games all at once (:func:`~hanamikoji_env.games.play_lockstep`), each bot
    drawing in game ``g`` from the generator :func:`_worker`'s ``reset`` would give it, so every
    game is the one the one-game-at-a-time path plays."""
    games = [(deal, a_seat) for deal in task.deals for a_seat in (0, 1)]
    seeds = [_seeds(task, deal, a_seat) for deal, a_seat in games]
    rngs = (
        [np.random.default_rng(game_seed) for _, game_seed in seeds],
        [np.random.default_rng(game_seed + 1) for _, game_seed in seeds],
    )
    played = play_lockstep(
        (a, b), [deal_seed for deal_seed, _ in seeds], [a_seat for _, a_seat in games], rngs, task.round_limit
    )
    return [_result(task, e, *games[g]) for g, e in played]


class Interrupted(KeyboardInterrupt):
    """Ctrl-C during :func:`run_tournament`; ``played`` games of ``total`` had finished."""

    def __init__(self, played: int, total: int) -> None:
        super().__init__(f"{played} of {total} games played")
        self.played, self.total = played, total


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
    names = [p.text for p in players]
    if len(set(names)) != len(names):
        raise ValueError(f"players must be distinct, got {names}")
    if backend == "local":  # Ray workers compile on their own machines
        announce(parts_for(names))
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
    results: list[GameResult] = []
    bar = _progress_bar(len(pairs) * games, progress)
    pool = None
    if backend not in ("local", "ray"):
        raise ValueError(f"backend must be 'local' or 'ray', got {short(backend)}")
    if device != "cpu":
        from hanamikoji_env.nn import resolve_device  # torch, only for a GPU

        resolve_device(device)  # a missing GPU is an error now, not in every worker
    try:
        if backend == "ray":
            parts: Iterator[list[GameResult]] = _ray_parts(tasks, address, workers)
        elif workers == 1:
            parts = map(_worker, tasks)
        else:
            pool = new_pool(workers)
            parts = (f.result() for f in as_completed(submit_all(pool, _worker, tasks)))
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
            stop(pool)
    results.sort(key=lambda r: (r.pair, r.deal, r.a_seat))
    if save_games is not None:
        save_games.mkdir(parents=True, exist_ok=True)
        records.write_lines(save_games / GAMES_FILE, (r.record for r in results))  # type: ignore[misc]
    return summarise(names, pairs, results, games, seed, round_limit)


def _ray_parts(tasks: list[Task], address: str | None, workers: int) -> Iterator[list[GameResult]]:
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
