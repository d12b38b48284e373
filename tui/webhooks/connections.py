"""What the listener allows a connection: a deadline for the request head, and a cap on open connections.

aiohttp's low-level server, with two additions:

- Header deadline: a connection must deliver a whole request head within HEADER_TIMEOUT of connecting (or of
  its previous answer), else it is closed. aiohttp's keep-alive timer does exactly this (it closes a
  connection still waiting for a complete request when it fires, partial headers or not), so it is armed with
  HEADER_TIMEOUT. The body deadline is the listener's (it reads the body).
- Connection cap: at most `cap` connections are open (by default well under the process's file limit, so the
  store and the app always have descriptors left, and asyncio never fails an accept for want of one). A new connection beyond the cap takes the place of the
  connection idle the longest (connected, or answered, and no complete request since), so stalled sockets never
  lock an honest sender out; when every connection is inside a request, the new one is answered 503 and closed.
  Reaching the cap is logged once, and once more with the counts when the listener is back under it.
"""

from __future__ import annotations

import asyncio
import logging
import resource
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web
from aiohttp.web_protocol import RequestHandler

HEADER_TIMEOUT = 10.0
DEFAULT_MAX_CONNECTIONS = 512
# Descriptors left for everything else in the process: SQLite's files, the app's own sockets, forwarding.
FD_RESERVE = 64
# The listening socket's queue, which is also how many connections asyncio accepts in one go before any of them
# reaches connection_made (where the cap is applied). Up to two such batches can be open beside the cap before
# the connections they replace are closed, so the cap leaves room for them under the file limit.
LISTEN_BACKLOG = 64
# After the cap was reached, "back under it" means this fraction of the cap (so a flood is not logged twice).
UNDER_CAP_AGAIN = 0.5

_REFUSAL_BODY = b'{"error":"too many open connections; retry later"}'
REFUSAL = (
    b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nRetry-After: 5\r\n"
    b"Connection: close\r\nContent-Length: %d\r\n\r\n%s" % (len(_REFUSAL_BODY), _REFUSAL_BODY)
)

log = logging.getLogger(__name__)

Handler = Callable[[web.BaseRequest], Awaitable[web.StreamResponse]]


def connection_cap(requested: int | None = None) -> int:
    """The cap to use: `requested` (or the default), lowered to leave FD_RESERVE descriptors of the soft limit."""
    cap = requested if requested is not None else DEFAULT_MAX_CONNECTIONS
    if cap < 1:
        raise ValueError("the connection cap must be at least 1")
    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY:
        spare = FD_RESERVE + 2 * LISTEN_BACKLOG
        room = soft - spare if soft >= 2 * spare else soft // 4
        cap = min(cap, max(1, room))
    return cap


class GuardedServer(web.Server):
    """aiohttp's low-level server with the header deadline and the connection cap described above."""

    def __init__(self, handler: Handler, *, cap: int, header_timeout: float = HEADER_TIMEOUT, **kwargs: Any) -> None:
        super().__init__(
            self._tracked,
            keepalive_timeout=header_timeout,
            # Bodies are taken as they are on the wire: a compressed one is refused, never inflated (listener.py).
            auto_decompress=False,
            access_log=None,
            **kwargs,
        )
        self._handle = handler
        self.cap = cap
        self._open: set[RequestHandler] = set()
        # Connections outside a request, oldest first: a dict keeps insertion order and each one is re-inserted
        # when it becomes idle again, so the first key is always the one idle the longest.
        self._idle: dict[RequestHandler, None] = {}
        self._at_cap = False
        self.closed_for_room = 0  # since the cap was last reached
        self.refused = 0

    @property
    def open_connections(self) -> int:
        return len(self._open)

    def connection_made(self, handler: RequestHandler, transport: asyncio.Transport) -> None:
        super().connection_made(handler, transport)
        self._open.add(handler)
        self._idle[handler] = None
        if len(self._open) > self.cap:
            self._make_room(handler, transport)

    def connection_lost(self, handler: RequestHandler, exc: BaseException | None = None) -> None:
        self._open.discard(handler)
        self._idle.pop(handler, None)
        super().connection_lost(handler, exc)
        if self._at_cap and len(self._open) <= self.cap * UNDER_CAP_AGAIN:
            self._at_cap = False
            log.warning(
                "open connections back under the cap of %d: %d idle connections were closed to make room, "
                "%d new ones refused",
                self.cap,
                self.closed_for_room,
                self.refused,
            )
            self.closed_for_room = self.refused = 0

    def _make_room(self, newcomer: RequestHandler, transport: asyncio.Transport) -> None:
        if not self._at_cap:
            self._at_cap = True
            log.warning(
                "%d connections open, the cap: each new one now replaces the longest-idle connection, "
                "or is refused (503) while all are inside a request",
                self.cap,
            )
        oldest = next(iter(self._idle))
        if oldest is not newcomer:
            self._forget(oldest)
            oldest.force_close()
            self.closed_for_room += 1
            return
        self._forget(newcomer)
        self.refused += 1
        transport.write(REFUSAL)
        transport.close()

    def _forget(self, handler: RequestHandler) -> None:
        self._open.discard(handler)
        self._idle.pop(handler, None)

    async def _tracked(self, request: web.BaseRequest) -> web.StreamResponse:
        protocol = request.protocol
        self._idle.pop(protocol, None)
        try:
            return await self._handle(request)
        finally:
            if protocol in self._open:
                self._idle[protocol] = None
