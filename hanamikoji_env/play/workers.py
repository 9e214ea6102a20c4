"""Where the browser server's CPU-heavy work runs: worker processes, never the serving process.

A move of a bot that is not :attr:`~hanamikoji_env.bots.base.Bot.light` (search, a checkpoint,
an enumeration), a watched bot game and a replay's frames cost from a millisecond to seconds of
CPU.  In a thread of the serving process they would hold its interpreter lock while every
other client waited: ten addresses replaying in a loop once made a plain move take a second.
Here they queue for one of :class:`Workers`' processes (one per core, each warmed up before
the first visitor, at a lower scheduling priority: :data:`WORKER_NICENESS`), while the event loop and the light work (a random or heuristic bot's reply,
a person's move, a view) go on in the serving process.

The queue is fair (:class:`Turns`): addresses take the free workers in turn, and one address
holds all workers but one at most, so an address with a hundred heavy tasks waiting leaves a
worker to everyone else; watched games and replays together hold all but one at most too, so
a bot's move never waits behind them.  A worker killed mid-task (out of memory, an operator)
breaks the pool: each task it held is made once more in a new one, one at a time, and only a
task that breaks that one too is refused (503).  A task past :data:`TASK_SECONDS` has the
workers killed the same way, and is refused itself.

A bot that moves in a worker is a :class:`PooledBot` in the serving process: its generator and
its memory of the game (:meth:`~hanamikoji_env.bots.base.Bot.game_state`) stay with the game, and
each move ships them with the bot's observation, so a game plays exactly as it would with the
bot in-process (same seed, same game).  A worker builds one bot per spec and plays it with
``act_batch``'s per-game generator and state, as a tournament's lockstep games do.

``Workers(0, ...)`` runs the same work in threads of this process (tests, embedding).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import threading
from collections import Counter, OrderedDict, deque
from collections.abc import AsyncIterator, Callable
from concurrent.futures import Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Any, TypeVar

import numpy as np
from fastapi import HTTPException
from fastapi.concurrency import run_in_threadpool

from hanamikoji_env import records
from hanamikoji_env.bots.base import Bot
from hanamikoji_env.bots.spec import parse_player
from hanamikoji_env.excerpt import short
from hanamikoji_env.first_run import warm_up
from hanamikoji_env.play.protocol import json_body
from hanamikoji_env.play.replays import bot_game, replay_frames, seat_names
from hanamikoji_env.pool import init_worker, new_pool, submit_all

T = TypeVar("T")
START_SECONDS = 300.0
"""How long replacement workers may take to start and warm up (a heavy bot's network loaded on a
busy machine) before a task waiting for them is refused."""
TASK_SECONDS = 60.0
"""The longest one task may take in a worker (a move, a watched game, a replay: seconds at
most); past it the workers are killed and replaced, the others' tasks made again."""
MAX_REPLAY_DECISIONS = 5000
"""The most decisions a replayed record may hold (real games have a few hundred)."""


class PooledBot(Bot):
    """The bot of ``spec`` as the serving process holds it: its generator and game memory, its
    moves made in a worker (:meth:`Workers.act`)."""

    def __init__(self, spec: str, seed: int | None = 0) -> None:
        super().__init__(seed)
        self.spec = spec
        self.memory: tuple[int, ...] = ()

    def game_state(self) -> tuple[int, ...]:
        return self.memory

    def set_game_state(self, state: tuple[int, ...]) -> None:
        self.memory = tuple(state)

    def _act(self, vector: np.ndarray, mask: np.ndarray) -> int:
        raise RuntimeError(f"{self.spec} moves in a worker process: await Workers.act(bot, obs)")


class Turns:
    """``capacity`` slots handed out by key (a client's address) in turn, at most ``per_key`` of
    them to one key at once: while keys wait, each freed slot goes to the next of them below its
    share (round robin), so a key with a hundred tasks waiting gets one slot, then every other
    waiting key one, then it again, and with ``per_key < capacity`` a slot is always left for
    the other keys.  For the event loop's tasks only."""

    def __init__(self, capacity: int, per_key: int | None = None) -> None:
        self.capacity, self.per_key, self.busy = capacity, per_key or capacity, 0
        self.held: Counter[str] = Counter()
        self.waiting: OrderedDict[str, deque[asyncio.Future[None]]] = OrderedDict()

    @contextlib.asynccontextmanager
    async def slot(self, key: str) -> AsyncIterator[None]:
        """Holds one slot for ``key`` while inside."""
        await self._acquire(key)
        try:
            yield
        finally:
            self._release(key)

    async def _acquire(self, key: str) -> None:
        if self.busy < self.capacity and self.held[key] < self.per_key:  # nobody eligible waits then
            self.busy += 1
            self.held[key] += 1
            return
        granted: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.waiting.setdefault(key, deque()).append(granted)
        try:
            await granted
        except asyncio.CancelledError:
            if granted.done() and not granted.cancelled():  # handed a slot as it was cancelled
                self._release(key)
            elif (queue := self.waiting.get(key)) is not None and granted in queue:
                queue.remove(granted)
                if not queue:
                    del self.waiting[key]
            raise

    def _release(self, key: str) -> None:
        """``key``'s slot freed: it goes to the next key in turn below its share (its oldest task)."""
        self.busy -= 1
        self.held[key] -= 1
        if not self.held[key]:
            del self.held[key]
        while self.busy < self.capacity:
            waiter = next((k for k in self.waiting if self.held[k] < self.per_key), None)
            if waiter is None:
                return
            queue = self.waiting[waiter]
            granted = queue.popleft()
            if queue:
                self.waiting.move_to_end(waiter)
            else:
                del self.waiting[waiter]
            if not granted.done():  # (a waiter cancelled a moment ago: the next one)
                self.busy += 1
                self.held[waiter] += 1
                granted.set_result(None)


class Workers:
    """``processes`` worker processes for the bots of ``specs`` (0: threads of this process)."""

    def __init__(self, processes: int, specs: list[str], round_limit: int | None) -> None:
        if processes < 0:
            raise ValueError(f"workers must be 0 or more, got {processes}")
        self.processes, self.specs, self.round_limit = processes, list(specs), round_limit
        self.pooled = {s for s in self.specs if not parse_player(s, load=False).bot_class().light}
        """The specs whose bots move in a worker (read once: a spec's checkpoint is not loaded
        again for every new game)."""
        self.lock = threading.Lock()
        self.starting: list[Future[None]] = []
        """The replacement workers' start (each one's warm-up): a task waits for it before its
        own time limit runs."""
        self.pool: ProcessPoolExecutor | None = self._new_pool()
        self.turns = Turns(max(processes, 1), per_key=max(processes - 1, 1))
        """The workers, by address in turn, one address holding all but one at most."""
        self.bulk = Turns(max(processes - 1, 1))
        """What watched games and replays may hold of them: all but one."""
        self.retries = Turns(1)
        """Tasks made again after their workers were killed: one at a time."""

    def _new_pool(self) -> ProcessPoolExecutor | None:
        if not self.processes:
            return None
        return new_pool(self.processes, _init_worker, (self.specs, self.round_limit))

    def start(self) -> None:
        """Every worker started and warmed up (what its bots play with compiled or loaded), so
        no visitor waits on it."""
        if self.pool is not None:  # all submitted before any returns: one task per new worker
            wait(submit_all(self.pool, _ready, range(self.processes)))

    def close(self) -> None:
        """The workers finish the task in hand (a move, a replay: seconds at most) and end."""
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)

    def bot(self, spec: str) -> Bot | None:
        """A stand-in for the bot of ``spec`` (one of ``specs``) that moves in a worker; None where
        the bot moves in this process (no workers, or a light bot)."""
        if self.pool is None or spec not in self.pooled:
            return None
        return PooledBot(spec)

    async def run(self, fn: Callable[..., T], *args: Any, client: str = "?", bulk: bool = False) -> T:
        """``fn(*args)`` in a worker (a thread without workers), awaited without holding a thread,
        when it is ``client``'s turn (:class:`Turns`); ``bulk``: a watched game or a replay, which
        never holds the last worker."""
        if self.pool is None:
            return await run_in_threadpool(fn, *args)
        async with contextlib.AsyncExitStack() as held:
            if bulk:
                await held.enter_async_context(self.bulk.slot(client))
            await held.enter_async_context(self.turns.slot(client))
            pool = self.pool
            try:
                return await self._in(pool, fn, args)
            except BrokenProcessPool:  # a worker was killed: new ones, and the task once more
                self._replace(pool)
            async with self.retries.slot(client):  # alone: a task that kills its worker again fails alone
                pool = self.pool
                try:
                    return await self._in(pool, fn, args)
                except BrokenProcessPool:
                    self._replace(pool)
                    raise HTTPException(503, "a worker process of this server failed; try again") from None

    async def _in(self, pool: ProcessPoolExecutor | None, fn: Callable[..., T], args: tuple[Any, ...]) -> T:
        """``fn(*args)`` in one of ``pool``'s workers, within :data:`TASK_SECONDS` of the workers
        being ready (replacement workers start and warm up first, within :data:`START_SECONDS`)."""
        assert pool is not None
        starting = [asyncio.wrap_future(f) for f in self.starting if not f.done()]
        if starting:
            try:
                await asyncio.wait_for(asyncio.gather(*starting), START_SECONDS)
            except TimeoutError:
                raise HTTPException(503, "this server's workers are starting; try again") from None
        try:
            return await asyncio.wait_for(asyncio.wrap_future(pool.submit(fn, *args)), TASK_SECONDS)
        except TimeoutError:  # its worker would be lost for good: they go, the others' tasks retry
            for process in list(getattr(pool, "_processes", {}).values()):
                process.kill()
            self._replace(pool)
            raise HTTPException(503, f"the task took over {TASK_SECONDS:.0f} s and was stopped") from None

    def _replace(self, pool: ProcessPoolExecutor) -> None:
        """New workers in place of ``pool``'s (once, whoever asks first)."""
        with self.lock:
            if self.pool is pool:
                self.pool = self._new_pool()
                if self.pool is not None:  # started now, one task a worker: tasks wait for them
                    self.starting = submit_all(self.pool, _ready, range(self.processes))

    async def act(self, bot: Bot, obs: dict[str, np.ndarray], client: str = "?") -> int:
        """``bot``'s move for ``obs``: in a worker for a :class:`PooledBot` (its generator and game
        memory updated as if it had moved here) in ``client``'s turn, else in a thread of this
        process."""
        if not isinstance(bot, PooledBot):
            return await run_in_threadpool(bot.act, obs)
        state = bot.rng.bit_generator.state
        action, state, memory = await self.run(
            bot_move, bot.spec, self.round_limit, obs, state, bot.memory, client=client
        )
        bot.rng.bit_generator.state, bot.memory = state, memory
        return action


# ------------------------------------------------------- in a worker ---

_bots: dict[tuple[str, int | None], Bot] = {}


WORKER_NICENESS = 10
"""How much lower a worker's scheduling priority is than the serving process's: on busy cores
the light requests get the CPU first, and the heavy ones take what is left."""


def _init_worker(specs: list[str], round_limit: int | None) -> None:
    init_worker()
    os.nice(WORKER_NICENESS)
    warm_up(specs, round_limit)


def _ready(_: int) -> None:
    return None


def bot_move(
    spec: str,
    round_limit: int | None,
    obs: dict[str, np.ndarray],
    state: dict[str, Any],
    memory: tuple[int, ...],
) -> tuple[int, dict[str, Any], tuple[int, ...]]:
    """The move of ``spec``'s bot for ``obs`` with the generator state ``state`` and the game
    memory ``memory``; the move, and both after it."""
    key = (spec, round_limit)
    if key not in _bots:
        _bots[key] = parse_player(spec).make(seed=0, round_limit=round_limit)
    if state.get("bit_generator") != "PCG64":
        raise ValueError(f"a pooled bot's generator is a PCG64, got {short(state.get('bit_generator'))}")
    rng = np.random.Generator(np.random.PCG64())
    rng.bit_generator.state = state
    memories = [memory]
    action = _bots[key].act_batch(obs["observation"][None], obs["action_mask"][None], [rng], memories)
    return int(action[0]), rng.bit_generator.state, memories[0]


def watched(players: tuple[str, str], seed: int | None, round_limit: int | None) -> bytes:
    """A whole game of two bots as the watch view's reply (JSON, encoded here)."""
    record = bot_game(players, seed, round_limit)
    return _encoded(
        {
            "players": list(record.players),
            "names": list(seat_names(record.players)),
            "frames": replay_frames(record),
            "record": record.to_json() + "\n",
        }
    )


def replayed(body: bytes) -> bytes:
    """A request body holding a record (one line's JSON value) as the replay view's reply (JSON,
    encoded here); :class:`~hanamikoji_env.play.protocol.BodyError` if it is not JSON,
    :class:`~hanamikoji_env.records.RecordError` if it is not a record or is too long."""
    record = records.parse_record(json_body(body), "the record")
    if len(record.actions) > MAX_REPLAY_DECISIONS:
        raise records.RecordError(
            f"the record has {len(record.actions)} decisions; a replay shows at most {MAX_REPLAY_DECISIONS}"
        )
    return _encoded(
        {
            "players": list(record.players),
            "names": list(seat_names(record.players)),
            "round_limit": record.round_limit,
            "frames": replay_frames(record),
        }
    )


def _encoded(reply: dict[str, Any]) -> bytes:
    """A reply encoded where it was made: a replay of a few MB takes half a second to encode."""
    return json.dumps(reply, separators=(",", ":")).encode()
