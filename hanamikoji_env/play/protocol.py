"""uvicorn's HTTP/1.1 protocol with a deadline on every request and a cap on each address's
connections: a connection that sends nothing, or half a request, is closed after
:data:`REQUEST_SECONDS`, and one address holds at most :data:`PER_ADDRESS_CONNECTIONS` open.

uvicorn closes an idle keep-alive connection only after a response, so a connection that never
completes a request (idle from the start, or a request sent a byte a minute) stays open for ever,
and a thousand of them take every file descriptor of the process.  Here each request, headers and
body, must arrive within :data:`REQUEST_SECONDS` of the connection opening or of the previous
response; a request being answered is never cut.  An address already holding
:data:`PER_ADDRESS_CONNECTIONS` connections has a new one closed as it opens, so one client
cannot hold the server's connection slots (the reverse proxies trusted with
``--forwarded-allow-ips`` are exempt: every client behind them shares their address).
"""

from __future__ import annotations

import asyncio
from collections import Counter

from uvicorn.protocols.http.h11_impl import H11Protocol

REQUEST_SECONDS = 20.0
"""How long a connection may take to send one whole request (a 3 MB replay upload on a slow line
takes a few seconds)."""


PER_ADDRESS_CONNECTIONS = 64
"""Connections one address may hold open at once (a browser opens about 6 to a site; a NAT of
a few dozen people fits)."""


class DeadlineH11Protocol(H11Protocol):
    _deadline: asyncio.TimerHandle | None = None
    _counted: str | None = None
    """The address this connection counts against, while it is open."""

    def _admit(self) -> bool:
        """Count this connection against its address; False (uncounted) when the address holds
        :data:`PER_ADDRESS_CONNECTIONS` already."""
        if self.client is None:  # a Unix socket: no address to count
            return True
        host = self.client[0]
        trusted = self.config.forwarded_allow_ips if self.config.proxy_headers else ""
        trusted = trusted if isinstance(trusted, str) else ",".join(trusted)
        if trusted == "*" or host in {t.strip() for t in trusted.split(",")}:
            return True  # a trusted reverse proxy: its clients are counted by the app's limits
        by_address: Counter[str] = self.server_state.__dict__.setdefault("by_address", Counter())
        if by_address[host] >= PER_ADDRESS_CONNECTIONS:
            return False
        by_address[host] += 1
        self._counted = host
        return True

    def _arm(self) -> None:
        self._disarm()
        self._deadline = self.loop.call_later(REQUEST_SECONDS, self._too_slow)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _too_slow(self) -> None:
        self._deadline = None
        if self.cycle is None or self.cycle.response_complete:  # still waiting for a request
            self.transport.close()

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        if not self._admit():
            transport.close()  # before reading a byte: the address holds its share already
            return
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
            by_address: Counter[str] = self.server_state.__dict__["by_address"]
            by_address[self._counted] -= 1
            if not by_address[self._counted]:
                del by_address[self._counted]
            self._counted = None
        super().connection_lost(exc)
