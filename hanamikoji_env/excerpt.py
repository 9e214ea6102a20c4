"""A bounded ``repr`` for error messages about untrusted values (configs, checkpoints, records).

``repr`` of an untrusted value can take unbounded time and memory: a 1.3 KB pickle can hold a tuple
nested 60 deep whose levels share one child, and its ``repr`` (or a sort of such keys) walks 2**60
nodes.  :func:`short` looks at the first few items of each container down to a few levels, never
sorts, and clips the text, so an error message costs microseconds whatever it describes.
"""

from __future__ import annotations

import itertools
import reprlib


class _Bounded(reprlib.Repr):
    def __init__(self) -> None:
        super().__init__()  # Python 3.11's Repr takes no keyword arguments
        self.maxlevel, self.maxdict, self.maxlist, self.maxtuple, self.maxset = 2, 6, 6, 6, 6
        self.maxstring, self.maxother = 60, 60

    def repr_dict(self, x: dict, level: int) -> str:  # reprlib's own sorts every key first
        if not x:
            return "{}"
        if level <= 0:
            return "{...}"
        items = itertools.islice(x.items(), self.maxdict)
        pieces = [f"{self.repr1(k, level - 1)}: {self.repr1(v, level - 1)}" for k, v in items]
        return "{" + ", ".join(pieces) + (", ..." if len(x) > self.maxdict else "") + "}"

    def repr_set(self, x: set, level: int) -> str:  # unsorted, as repr_dict
        if not x:
            return "set()"
        if level <= 0:
            return "{...}"
        pieces = [self.repr1(v, level - 1) for v in itertools.islice(x, self.maxset)]
        return "{" + ", ".join(pieces) + (", ..." if len(x) > self.maxset else "") + "}"

    repr_frozenset = repr_set


_REPR = _Bounded()


def short(value: object, limit: int = 80) -> str:
    """A ``repr`` of ``value`` of at most ``limit`` characters, in bounded time."""
    return clip(_REPR.repr(value), limit)


def clip(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters."""
    return text if len(text) <= limit else text[: limit - 3] + "..."
