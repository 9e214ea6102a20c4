"""``torch_threads: auto``: each update runs with the thread count that runs updates fastest now.

On an idle machine two or more torch threads speed up the update; beside other
CPU-bound work they collapse it, because each multi-threaded operation waits
for a thread the kernel has not scheduled (docs/speed.md has the figures).  So
``auto`` measures both and follows the faster: 1 thread and up to
:data:`MAX_AUTO` (one per core).  The other count is measured again after 8,
16, 32, ... updates (starting over at 8 whenever the choice changes), so a
machine that becomes busy or idle is noticed within a few updates and the
re-measuring costs little.  The weights do not depend on the count: the same
run gives the same policy with any choice (``tests/test_training.py``).
"""

from __future__ import annotations

import os

import torch

MAX_AUTO = 4
"""The most threads ``auto`` tries."""
FIRST_RECHECK = 8


class ThreadChooser:
    """Picks torch's intra-op thread count for each update from the measured speeds."""

    def __init__(self, cores: int | None = None) -> None:
        cores = cores or os.cpu_count() or 1
        self.options = (1,) if cores < 2 else (1, min(cores, MAX_AUTO))
        self.speed: dict[int, float] = {}
        """Decisions/s of the latest update run with each count."""
        self.best = self.options[-1]
        self.wait = FIRST_RECHECK
        self.since = 0
        """Updates since the other count was last measured."""
        self.warm = False
        """The first update compiles and allocates: its speed says nothing and is not kept."""

    def threads(self) -> int:
        """The count for the next update (also set in torch)."""
        untried = [t for t in self.options if t not in self.speed]
        if untried:
            count = untried[0]
        elif self.since >= self.wait:
            count = next(t for t in self.options if t != self.best)
        else:
            count = self.best
        torch.set_num_threads(count)
        return count

    def record(self, count: int, decisions: int, seconds: float) -> None:
        """The update just run with ``count`` threads made ``decisions`` in ``seconds``."""
        if not self.warm:
            self.warm = True
            return
        self.speed[count] = decisions / max(seconds, 1e-9)
        if len(self.speed) < len(self.options):
            return
        best = max(self.options, key=lambda t: self.speed[t])
        if count != self.best:
            self.since = 0
            self.wait = FIRST_RECHECK if best != self.best else 2 * self.wait
        else:
            self.since += 1
        self.best = best
