"""A request as the listener's handler sees it: its head, its body read on demand (Request.read, within the
handler's limits and deadlines), whether it is proven; the answer the handler gives; what can go wrong with a
body (too large, broken framing, the sender gone, cut to shed load). A Request sees its connection only as a
BodySource (`admit`, `prove`)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import NamedTuple, Protocol


class BodyTooLarge(Exception):
    """More body bytes arrived than the limit allows."""


class BrokenFraming(Exception):
    """The body's HTTP framing is broken (a bad chunk size...): the parser refused the bytes after the head."""


class PeerGone(Exception):
    """The sender closed its side before the whole body arrived: nobody to answer."""


class Shed(Exception):
    """The request was cut to make room for others: its connection is unproven and stalled, or over its share."""


class BodySource(Protocol):
    """What a Request needs of the connection it came on."""

    def admit(self, request: Request) -> None:
        """The handler will read this request's body: start reading it off the socket."""

    def prove(self) -> None:
        """A request on this connection verified: treat the connection as proven from now on."""

    @property
    def proven(self) -> bool: ...


class Answer(NamedTuple):
    """What the handler answers: always a JSON body."""

    status: int
    body: bytes
    headers: tuple[tuple[str, str], ...] = ()
    close: bool = False


Handler = Callable[["Request"], Awaitable[Answer | None]]  # None: the sender is gone, nothing to answer


class Request:
    """One request: its head as parsed, and its body as it arrives (chunked framing removed, nothing decoded).

    The handler uses the head, `read`, `proven`/`prove` and `expendable`; the connection feeds it through `add`,
    `fail` and `finish`, and meters it through `metered`/`held`/`admitted`/`limit`."""

    __slots__ = (
        "method",
        "target",
        "headers",
        "http_version",
        "keep_alive",
        "complete",
        "expendable",
        "admitted",
        "limit",
        "metered",
        "held",
        "_chunks",
        "_size",
        "_error",
        "_waiter",
        "_source",
    )

    def __init__(self, source: BodySource, method: str, target: str, headers: dict[str, str], version: str) -> None:
        self.method = method
        self.target = target
        self.headers = headers  # lower-case names: the ones the handler asked for, and the framing ones
        self.http_version = version
        self.keep_alive = True
        self.complete = False  # the whole body has arrived
        # Set by the handler while nothing of the request is stored yet: stop and a lost connection drop it then.
        self.expendable = False
        self.admitted = False  # the handler called read: the body may be read off the socket
        self.limit = 0  # the handler's body limit once it reads (0: not known yet; -1: the body is never kept)
        self.metered = False  # came on an unproven connection: its bytes count against the unproven share
        self.held = 0  # bytes of it counted against the unproven share, until the server releases them
        self._chunks: list[bytes] = []
        self._size = 0
        self._error: Exception | None = None
        self._waiter: asyncio.Future[None] | None = None
        self._source = source

    @property
    def content_length(self) -> int | None:
        """The declared body size (None for a chunked body); the parser has checked the header's form."""
        if "transfer-encoding" in self.headers:
            return None
        value = self.headers.get("content-length")
        try:
            return int(value) if value is not None else 0
        except ValueError:
            return None

    @property
    def received(self) -> int:
        """Body bytes arrived so far."""
        return self._size

    @property
    def proven(self) -> bool:
        """Whether the request came on a proven connection (its body reserves its room; see budget.py)."""
        return not self.metered

    def prove(self) -> None:
        """This request verified: its connection is proven from now on (its later requests are not metered)."""
        self._source.prove()

    async def read(self, limit: int, grace: float, min_rate: float) -> bytes:
        """The body within `limit` bytes and in time: it must bring `min_rate` x `grace` bytes in every `grace`
        seconds (the last part of it, whatever is left), so a sender keeping up that rate is never cut off and a
        trickle is; a burst earns no credit beyond the window it completes.

        Raises BodyTooLarge, TimeoutError, BrokenFraming, PeerGone, Shed."""
        self.limit = limit
        if self._size > limit:
            raise BodyTooLarge
        if not self.admitted:
            self.admitted = True
            if not self.complete:
                self._source.admit(self)
        if not self.complete and self._error is None:  # the body did not all come with the head: wait for it
            loop = asyncio.get_running_loop()
            window = min_rate * grace
            window_from = self._size
            async with asyncio.timeout_at(loop.time() + grace) as deadline:
                while not self.complete and self._error is None and self._size <= limit:
                    self._waiter = loop.create_future()
                    try:
                        await self._waiter
                    finally:
                        self._waiter = None
                    if self._size - window_from >= window:
                        window_from = self._size
                        deadline.reschedule(loop.time() + grace)
        if self._error is not None:
            raise self._error
        if self._size > limit:
            raise BodyTooLarge
        chunks = self._chunks
        self._chunks = []
        return chunks[0] if len(chunks) == 1 else b"".join(chunks)

    # -- fed by the connection -----------------------------------------------------------------------------------

    def add(self, data: bytes) -> bool:
        """More of the body; False when it is not kept (over the limit, or the request has failed)."""
        if self._error is not None:
            return False
        self._size += len(data)
        kept = not (self.limit and self._size > self.limit)
        if kept:
            self._chunks.append(data)
        else:
            self._chunks = []  # over the limit: nothing more is kept
        self._wake()
        return kept

    def finish(self) -> None:
        """The whole body has arrived."""
        self.complete = True
        self._wake()

    def fail(self, error: Exception) -> None:
        if self._error is None and not self.complete:
            self._error = error
            self._chunks = []
        self._wake()

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)
