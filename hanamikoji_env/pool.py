"""Worker processes, one per core: how the tournament and the browser server start, feed and
stop them.

Spawned, not forked (a forked child of a process that has run torch can hang in torch); a
:class:`~concurrent.futures.ProcessPoolExecutor`, not ``multiprocessing.Pool`` (a worker that
dies breaks the executor with an error, where a Pool silently replaces it and waits for ever
for its task).  Each worker gives torch, numpy's BLAS and numba one thread (:func:`init_worker`).
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from contextlib import contextmanager
from multiprocessing import resource_tracker
from typing import Any, TypeVar

import numba

T = TypeVar("T")


def init_worker() -> None:
    """Pool workers run one per core: torch (imported later, by checkpoint players), numpy's BLAS
    and numba's thread count (the bots' batches, ``bots.base.run_rows``) get one thread each
    instead of one per core, which would oversubscribe the machine.
    A spawned worker first imports the parent's main module; where that imported torch, its
    thread count is already set (to the number of cores), so it is set to one here as well.
    Ctrl-C is the parent's to handle: a worker ignores SIGINT and is terminated by the parent.
    A worker starts with SIGINT blocked (:func:`submit_all`), so a Ctrl-C while it imports is
    held, then dropped here, never a traceback.  A worker ends with its parent, even one killed
    with SIGKILL."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # drops a SIGINT held while blocked
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ[var] = "1"
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(1)
    # the bots' row threads (bots.base.run_rows): one thread too.  Not through NUMBA_NUM_THREADS: numba re-reads
    # it at every compilation and refuses a change once its threads run.
    numba.set_num_threads(1)
    parent = multiprocessing.parent_process()
    if parent is not None:  # a pool's worker: it ends with its parent, even one killed outright
        threading.Thread(target=_exit_with, args=(parent,), daemon=True).start()


def _exit_with(parent: multiprocessing.process.BaseProcess) -> None:
    """Wait for ``parent`` to end, then end this process (an orphaned worker would otherwise wait
    for ever on a queue that no one feeds)."""
    parent.join()
    os._exit(1)


def new_pool(
    workers: int, initializer: Callable[..., None] = init_worker, initargs: tuple[Any, ...] = ()
) -> ProcessPoolExecutor:
    """A pool of ``workers`` spawned processes, each set up by ``initializer`` (which must call
    :func:`init_worker` first); none runs until :func:`submit_all`.  A Ctrl-C while the pool's
    queues are made is held until they are whole (one cut between a semaphore's registration
    with multiprocessing's resource tracker and its finalizer would leave the tracker warning
    of a leaked semaphore at exit), then raised with the pool shut."""
    with _ctrl_c_held() as interrupted:
        pool = ProcessPoolExecutor(workers, multiprocessing.get_context("spawn"), initializer, initargs)
    if interrupted:
        pool.shutdown(wait=True)
        raise KeyboardInterrupt
    return pool


def submit_all(pool: ProcessPoolExecutor, fn: Callable[[Any], T], items: Iterable[Any]) -> list[Future[T]]:
    """``fn(item)`` submitted for every item, the workers that this starts shielded from a Ctrl-C
    meanwhile.

    SIGINT is blocked in this thread while the workers are spawned, so they inherit the block
    (:func:`init_worker` drops what it held): none dies with a traceback while it starts.  A
    Ctrl-C in the parent meanwhile (even one taken before the block but not yet acted on) is
    held instead of raised, so it cannot cut a worker's launch in half; it is raised as a
    ``KeyboardInterrupt`` once the submissions are done, and the caller stops ``pool``."""
    with _ctrl_c_held() as interrupted:
        futures = [pool.submit(fn, item) for item in items]
    if interrupted:
        raise KeyboardInterrupt
    return futures


@contextmanager
def _ctrl_c_held() -> Iterator[list[int]]:
    """SIGINT recorded in the list it yields instead of raised, and blocked in this thread (what
    it spawns inherits the block), for the body's length.  Only in the main thread, where a
    handler can be set, and only where SIGINT is not ignored already."""
    record = threading.current_thread() is threading.main_thread() and callable(
        signal.getsignal(signal.SIGINT)
    )
    interrupted: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda *_: interrupted.append(1)) if record else None
    held = None
    try:
        resource_tracker.ensure_running()  # it unblocks SIGINT once its tracker is spawned: before the block
        held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        yield interrupted
    finally:
        if held is not None:
            signal.pthread_sigmask(signal.SIG_SETMASK, held)  # a Ctrl-C held meanwhile is recorded now
        if record:  # restored even where the tracker failed to start
            signal.signal(signal.SIGINT, previous)


def stop(pool: ProcessPoolExecutor) -> None:
    """Shut ``pool`` down now: queued tasks cancelled, running ones ended midway."""
    # the executor has no public way to end running tasks before Python 3.14's terminate_workers()
    for process in list(getattr(pool, "_processes", {}).values()):
        process.terminate()
    pool.shutdown(wait=True, cancel_futures=True)
