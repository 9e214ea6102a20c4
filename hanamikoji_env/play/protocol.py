"""uvicorn's HTTP/1.1 protocol with a deadline on every request: a connection that sends nothing, or
half a request, is closed after :data:`REQUEST_SECONDS`.

uvicorn closes an idle keep-alive connection only after a response, so a connection that never
completes a request (idle from the start, or a request sent a byte a minute) stays open for ever,
and a thousand of them take every file descriptor of the process.  Here each request, headers and
body, must arrive within :data:`REQUEST_SECONDS` of the connection opening or of the previous
response; a request being answered is never cut.
"""

from __future__ import annotations

import asyncio

from uvicorn.protocols.http.h11_impl import H11Protocol

REQUEST_SECONDS = 20.0
"""How long a connection may take to send one whole request (a 3 MB replay upload on a slow line
takes a few seconds)."""


class DeadlineH11Protocol(H11Protocol):
    _deadline: asyncio.TimerHandle | None = None

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
        super().connection_lost(exc)
