"""HTTP for the browser server: request bodies read as strict JSON (:func:`json_body`), and
uvicorn's HTTP/1.1 protocol with a deadline on every request and a cap on each address's
connections: a connection that sends nothing, or half a request, is closed after
:data:`REQUEST_SECONDS`, and one address holds at most :data:`PER_ADDRESS_CONNECTIONS` open.

uvicorn closes an idle keep-alive connection only after a response, so a connection that never
completes a request (idle from the start, or a request sent a byte a minute) stays open for ever,
and a thousand of them take every file descriptor of the process.  Here each request, headers and
body, must arrive within :data:`REQUEST_SECONDS` of the connection opening or of the previous
response (a body trickled a byte at a time is cut there too); a request being answered is never
cut.

An address already holding :data:`PER_ADDRESS_CONNECTIONS` connections has a new one held
unread until the deadline closes it (a tarpit): closing it at once would invite a client that
reopens what is closed to reconnect in a loop, which costs the server more than a held socket.
Beyond :data:`TARPIT_PER_ADDRESS` held ones, a new connection is closed as it opens.  The
reverse proxies trusted with ``--forwarded-allow-ips`` are exempt: every client behind them
shares their address.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

from uvicorn.protocols.http.h11_impl import H11Protocol

from hanamikoji_env.excerpt import clip

REQUEST_SECONDS = 20.0
"""How long a connection may take to send one whole request (a 3 MB replay upload on a slow line
takes a few seconds)."""


PER_ADDRESS_CONNECTIONS = 64
"""Connections one address may have served at once (a browser opens about 6 to a site; a NAT of
a few dozen people fits)."""
TARPIT_PER_ADDRESS = 1024
"""Connections over its share one address may have held unread (each until the deadline)."""


LOG_PERIOD_SECONDS = 60.0
"""The server logs at most one line of each kind this often (:class:`OnePerPeriod`)."""


MAX_DIGITS = 20
"""The most digits an integer of a request body may have."""


class BodyError(ValueError):
    """A request body that is not strict JSON (a 422)."""


def _number(text: str) -> float:
    raise ValueError(f"numbers must be finite, got {text}")


def _int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_DIGITS:
        raise ValueError(f"integers may have at most {MAX_DIGITS} digits, got {len(text.lstrip('-'))}")
    return int(text)


def _float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"numbers must be finite, got {text[:20]}")
    return value


def json_body(body: bytes) -> Any:
    """A request body as JSON; :class:`BodyError` for anything else and for NaN, Infinity,
    overflowing and over-long numbers (the message quotes at most a short excerpt)."""
    try:
        return json.loads(body, parse_constant=_number, parse_int=_int, parse_float=_float)
    except (ValueError, RecursionError) as e:  # JSONDecodeError is a ValueError
        raise BodyError(f"the body is not valid JSON: {clip(str(e), 120)}") from None


class DeadlineH11Protocol(H11Protocol):
    _deadline: asyncio.TimerHandle | None = None
    _counted: tuple[str, str] | None = None
    """(``served`` or ``held``, address): what this connection counts against, while open."""

    def _admit(self) -> str:
        """``served``, ``held`` (over the address's share: kept unread until the deadline) or
        ``closed`` (over its held ones too), counted against the address."""
        if self.client is None:  # a Unix socket: no address to count
            return "served"
        host = self.client[0]
        trusted = self.config.forwarded_allow_ips if self.config.proxy_headers else ""
        trusted = trusted if isinstance(trusted, str) else ",".join(trusted)
        if trusted == "*" or host in {t.strip() for t in trusted.split(",")}:
            return "served"  # a trusted reverse proxy: its clients are counted by the app's limits
        counts: dict[str, Counter[str]] = self.server_state.__dict__.setdefault(
            "by_address", {"served": Counter(), "held": Counter()}
        )
        if counts["served"][host] < PER_ADDRESS_CONNECTIONS:
            kind = "served"
        elif counts["held"][host] < TARPIT_PER_ADDRESS:
            kind = "held"
        else:
            return "closed"
        counts[kind][host] += 1
        self._counted = (kind, host)
        return kind

    def _arm(self) -> None:
        self._disarm()
        self._deadline = self.loop.call_later(REQUEST_SECONDS, self._too_slow)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _too_slow(self) -> None:
        """The deadline: a request still arriving (no request yet, or its headers or its body
        not all in) is cut; one being answered never is (the whole request in disarms it)."""
        self._deadline = None
        cycle = self.cycle
        if cycle is None or cycle.response_complete or not cycle.response_started:
            self.transport.close()

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        kind = self._admit()
        if kind == "closed":
            transport.close()  # before reading a byte: the address holds its share and more
            return
        if kind == "held":
            transport.pause_reading()  # never read: the deadline closes it
        self._arm()

    def handle_events(self) -> None:
        super().handle_events()
        if self.cycle is not None and not self.cycle.more_body and not self.cycle.response_complete:
            self._disarm()  # the whole request is in: being answered

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing():
            self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        if self._counted is not None:
            kind, host = self._counted
            counted: Counter[str] = self.server_state.__dict__["by_address"][kind]
            counted[host] -= 1
            if not counted[host]:
                del counted[host]
            self._counted = None
        super().connection_lost(exc)


class OnePerPeriod(logging.Filter):
    """At most one log record of each kind (logger, level, message) every ``period`` seconds; the
    next one let through says how many like it were left out.  A client that fails a thousand
    requests a second costs the log one line a minute, not a traceback each."""

    KINDS = 1000
    """Kinds remembered at once (the messages are the server's own few: this bounds a surprise)."""

    def __init__(
        self, period: float = LOG_PERIOD_SECONDS, clock: Callable[[], float] = time.monotonic
    ) -> None:
        super().__init__()
        self.period, self.clock = period, clock
        self.last: dict[tuple[str, int, str], float] = {}
        self.left_out: Counter[tuple[str, int, str]] = Counter()

    def filter(self, record: logging.LogRecord) -> bool:
        kind = (record.name, record.levelno, str(record.msg)[:200])
        now = self.clock()
        if kind in self.last and now - self.last[kind] < self.period:
            self.left_out[kind] += 1
            return False
        if len(self.last) >= self.KINDS:
            self.last.clear()
            self.left_out.clear()
        self.last[kind] = now
        if left_out := self.left_out.pop(kind, 0):
            record.msg = (
                f"{record.msg} ({left_out} more like this in the last {self.period:.0f} s not logged)"
            )
        return True
