"""The listener's HTTP/1.1 server: an asyncio protocol on httptools (uvicorn's parser, llhttp), and what it allows a
connection.

aiohttp's server took about 30 µs of the listener's ~75 µs per webhook on the request path alone (README, issue 13);
the listener needs a small part of HTTP (a POST with a body, a one-piece JSON answer), so it speaks that part
itself on a well-kept parser:

- Requests on a connection are answered in order (pipelined ones too), one at a time, by the handler; the
  connection stays open unless the request or the answer says close (HTTP/1.0 without keep-alive, `Connection:
  close`: nothing after that request is read, RFC 9112 9.6). A request head the parser refuses (unknown method,
  broken Content-Length, a Transfer-Encoding other than chunked...) or one over the size limits below is answered
  400 and the connection closed; requests that arrived in the same read as it are dropped unanswered (as aiohttp
  did), the sender resends them.
- Pipelining: at most MAX_QUEUED requests are parsed ahead of the one being answered; the rest of the read is kept
  as bytes and the connection stops reading until they are answered, so a flood of tiny requests is answered in
  order without ever being held as thousands of objects, and never refused (a 4xx tells a gateway not to retry).
- `Upgrade` (curl's `--http2` asks for h2c) is ignored, as RFC 9110 7.8 allows: the request is served in HTTP/1.1,
  its body framed as usual (llhttp stops at an upgrade's head, so a fresh parser reads the body and what follows).
  CONNECT is answered by the handler (405) and the connection closed: what follows its head is meant for a tunnel.
- HEAD is answered with the head its GET would get (Content-Length included) and no body (RFC 9110 9.3.2).
- Header deadline: a connection must deliver a whole request head within HEADER_TIMEOUT of connecting (or of its
  previous answer), partial head or not, else it is closed. The body deadline is the handler's (Request.read:
  the body must bring `min_rate` x `grace` bytes in every `grace` seconds).
- Bodies are held only once the handler admits them (Request.read): until then the connection stops reading, so
  TCP pushes back on the sender. A body past the handler's limit is not kept (Request.read raises BodyTooLarge).
- Proven and unproven connections. A connection is *unproven* until the handler calls Request.prove() for one of
  its requests (the listener does so when a request's signature verifies against its key). The source address
  proves nothing (behind a tunnel every sender is 127.0.0.1). An unproven connection's body bytes are counted as
  they arrive against the budget's unproven share (budget.py); when they go over it, the unproven bodies still
  arriving that have waited longest for their next bytes are cut (Shed: the handler answers 503, Retry-After)
  until they fit again, never the body whose bytes just arrived. A proven connection's path has none of this.
- Connection cap: at most `cap` connections are open (by default well under the process's file limit, so the
  store and the app always have descriptors left, and asyncio never fails an accept for want of one), and at
  most `unproven_slots` of them unproven (half the cap with a key; the whole cap without one, when nothing can
  be proven). A new connection is unproven: past either limit, the longest-stalled unproven connection makes
  room (the one that has sent nothing for the longest, among those waiting on their sender rather than on the
  handler: a request being answered is never cut); when there is none and the cap is reached, the connection
  idle the longest (connected, or answered, and no complete request head since); else the new one is answered
  503 and closed. So stalled sockets never lock an honest sender out: a fresh connection always gets in while
  any unproven one is stalled. Reaching a limit is logged once, and once more with the counts when the listener
  is back under it.
- Accepting: the server takes every connection the kernel has queued at once (no transport yet, a few microseconds
  each) and turns them into connections ADMIT_BATCH a turn, the newest first, so that a burst never keeps the
  kernel's queue full (a full queue drops an honest sender's SYN, resent only after a second) and the sender who
  came after a burst is read before it. Past the queue's depth, the oldest accepted sockets that have sent nothing
  are closed, as the longest-stalled unproven connections are; one with bytes waiting becomes a connection.
- Shedding load: cutting a request under way (an unproven body for the byte share, an unproven connection inside
  a request for a slot) or refusing one (503) is logged once ("shedding load: ..."), `on_shedding(True)` called,
  and once more, `on_shedding(False)`, when SHED_CALM seconds passed without any.
- An answer that closes the connection while the request's body is still arriving (413, 415, 408...) is followed
  by a half-close and the rest of the body read and thrown away for up to LINGER seconds, so the sender reads the
  answer rather than a reset.

Interfaces: the handler sees a Request (its head, `read`, `proven`/`prove`, `expendable`); a Request sees its
connection only as a BodySource (`admit`, `prove`); a connection sees the Server only through its public
bookkeeping methods (`connected`, `disconnected`, `busy`, `idle`, `stirred`, `body_arrived`, `release`,
`proven`); the Server drives a connection through `stop`, `cut` and `close`.
"""

from __future__ import annotations

import asyncio
import logging
import os
import resource
import socket
import time
from collections import deque
from collections.abc import Awaitable, Callable, Iterable
from email.utils import formatdate
from http import HTTPStatus
from typing import NamedTuple, Protocol

import httptools

from tui.webhooks.budget import ByteBudget

HEADER_TIMEOUT = 10.0
DEFAULT_MAX_CONNECTIONS = 512
# Descriptors left for everything else in the process: SQLite's files, the app's own sockets, forwarding.
FD_RESERVE = 64
# How many accepted sockets become connections (a transport and a task each, 50-150 µs) per turn of the loop, before
# any of them reaches connection_made (where the cap is applied). Up to two such batches can be open beside the cap
# before the connections they replace are closed, so the cap leaves room for them under the file limit.
LISTEN_BACKLOG = 64
ADMIT_BATCH = LISTEN_BACKLOG
# The kernel's queue of connections waiting to be accepted (capped by net.core.somaxconn), and as many accepted
# sockets waiting to become connections (Server._pending): a full kernel queue drops every SYN, an honest sender's
# too, and TCP sends it again only after a second. Only as deep as the file limit allows (accept_queue_depth).
ACCEPT_QUEUE = 1024
# Connections taken off the kernel's queue per readiness of the listening socket (a few microseconds each: no
# transport yet); the oldest idle ones past the queue's depth are closed as they come (Server._trim_pending).
ACCEPT_BURST = 4096
ACCEPT_RETRY = 0.1  # seconds before accepting again after accept itself failed (EMFILE...)
# After the cap was reached, "back under it" means this fraction of the cap (so a flood is not logged twice).
UNDER_CAP_AGAIN = 0.5
# Request heads: the same limits aiohttp's parser had (8190 bytes a line), and at most this many headers.
MAX_TARGET = 8190
MAX_FIELD = 8190
MAX_HEADERS = 100
MAX_HEAD = 64 * 1024  # bytes received while a head is incomplete
# Requests parsed ahead of the one being answered (pipelining) before the connection stops reading and parsing.
MAX_QUEUED = 8
# A read is parsed this many bytes at a time (a body's declared rest in one piece), so that parsing can stop once
# MAX_QUEUED requests wait: one read (256 KiB) can hold thousands of tiny pipelined requests, each held as an object
# many times its size on the wire. At most FEED_SLICE / 18 (the shortest request) more are parsed past the limit.
FEED_SLICE = 4096
# After an answer that closes the connection, the rest of the request is read and discarded this long at most.
LINGER = 2.0
# Unproven connections may hold at most cap // UNPROVEN_SLOTS slots when the listener can prove any (it has a key).
UNPROVEN_SLOTS = 2
# A connection that has sent nothing yet is closed for room only after this many seconds (or when no other can be).
FIRST_BYTES = 1.0
# Connections looked at to find the longest-stalled unproven one (Server._longest_stalled): a few, never all.
STALLED_SCAN = 8
# Shedding load is reported over when nothing was shed for this many seconds.
SHED_CALM = 30.0

_REFUSAL_BODY = b'{"error":"too many open connections; retry later"}'
REFUSAL = (
    b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nRetry-After: 5\r\n"
    b"Connection: close\r\nContent-Length: %d\r\n\r\n%s" % (len(_REFUSAL_BODY), _REFUSAL_BODY)
)
_BAD_REQUEST_BODY = b'{"error":"malformed HTTP request"}'
_CONTINUE = b"HTTP/1.1 100 Continue\r\n\r\n"
# Headers the server itself reads; the handler names the others it wants (Server's kept_headers).
_FRAMING_HEADERS = ("content-length", "transfer-encoding", "expect")

log = logging.getLogger(__name__)


class BodyTooLarge(Exception):
    """More body bytes arrived than the limit allows."""


class BrokenFraming(Exception):
    """The body's HTTP framing is broken (a bad chunk size...): the parser refused the bytes after the head."""


class PeerGone(Exception):
    """The sender closed its side before the whole body arrived: nobody to answer."""


class Shed(Exception):
    """The request was cut to make room for others: its connection is unproven and stalled, or over its share."""


class _BadHead(Exception):
    """A request head over the limits above."""


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


class _Connection(asyncio.Protocol):
    """One client connection: parses requests, hands them to the handler one at a time, writes the answers.

    The Server drives it through `stop`, `cut` and `close`, and reads `proven`, `task` and `waiting_on_sender`;
    its requests reach it through `admit` and `prove` (BodySource)."""

    def __init__(self, server: Server) -> None:
        self._server = server
        self._loop = server.loop
        # Made at the first bytes: a flood of connections that send nothing never pays for one (60 µs each here).
        self._parser: httptools.HttpRequestParser | None = None
        self._kept = server.kept_headers
        self._value_limit = server.value_limit
        self.transport: asyncio.Transport | None = None
        self._requests: deque[Request] = deque()  # heads complete, not yet answered, in order
        self._parsing: Request | None = None  # the request whose body is being parsed
        self._url = b""
        self._headers: dict[str, str] = {}
        self._header_count = 0
        self._head_bytes: int | None = None  # bytes received while a head is incomplete
        self._new_in_feed = 0  # requests whose head completed in the current data_received
        self._unparsed = b""  # the rest of a read, left unparsed while MAX_QUEUED requests wait
        self._upgrading: Request | None = None  # a request that asked for an upgrade, its body not read yet
        self._made_up_head = False  # feeding a fresh parser a head of our own, so that it reads such a body
        self._task: asyncio.Task[None] | None = None
        self._paused = False
        self._closing = False  # a request that closes, or a bad one, was read: everything further is discarded
        self._ended = False  # an answer that ends the connection was written
        self._eof = False
        self._lost = False
        self._stopping = False  # the server stops: the request being answered is the last
        self._writable: asyncio.Future[None] | None = None
        self._writing_paused = False
        self._waiting_since: float | None = None  # when a head started being awaited (None: inside a request)
        self._timer: asyncio.TimerHandle | None = None
        self._handling: Request | None = None  # the request the handler has
        self.proven = False  # one of its requests verified (Request.prove)
        self.heard = False  # it has sent something (only kept while unproven)
        self.connected_at = 0.0

    # -- asyncio.Protocol ----------------------------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        self.connected_at = now = self._loop.time()
        self._idle_from(now)
        self._server.connected(self)

    def connection_lost(self, exc: Exception | None) -> None:
        self._lost = True
        self._server.disconnected(self)
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        for request in self._requests:
            request.fail(PeerGone())
            if request is not self._handling:  # the handler's is released when the handler is done with it
                self._server.release(request)
        if self._task is not None and self._requests and self._requests[0].expendable:
            self._task.cancel()  # nothing of it is stored: the sender has not been answered and will resend
        if self._writable is not None and not self._writable.done():
            self._writable.set_result(None)

    def data_received(self, data: bytes) -> None:
        if self._closing:
            return
        if not self.proven:
            self.heard = True
            self._server.stirred(self)
        if self._unparsed:  # a read under way when the transport was paused: it comes after what was left
            data = self._unparsed + data
        self._feed(data)
        if self._parsing is not None or self._paused or self._unparsed or len(self._requests) > MAX_QUEUED:
            self._update_reading()

    def _feed(self, data: bytes) -> None:
        """Parse a read, FEED_SLICE bytes at a time when it is longer, until more than MAX_QUEUED requests wait:
        the rest is kept in `_unparsed` (fed by _update_reading once they are answered)."""
        self._new_in_feed = 0
        self._unparsed = b""
        size = len(data)
        offset = 0
        while offset < size and not self._closing:
            if len(self._requests) > MAX_QUEUED:
                self._unparsed = data[offset:]
                return
            end = size
            if size - offset > FEED_SLICE:
                span = FEED_SLICE
                parsing = self._parsing
                if parsing is not None and parsing.limit >= 0 and parsing.content_length:  # a kept body's rest
                    span = max(span, parsing.content_length - parsing.received)
                end = min(size, offset + span)
            piece = data if offset == 0 and end == size else memoryview(data)[offset:end]
            if self._head_bytes is not None:
                self._head_bytes += end - offset
            try:
                if self._head_bytes is not None and self._head_bytes > MAX_HEAD:
                    raise _BadHead
                parser = self._parser
                if parser is None:
                    parser = self._parser = httptools.HttpRequestParser(self)
                parser.feed_data(piece)
            except httptools.HttpParserUpgrade as upgrade:
                end = offset + upgrade.args[0]  # where the upgrade's head ended: the parser stopped there
                if not self._upgrade_ignored():
                    return
            except (httptools.HttpParserError, _BadHead):
                if not self._closing:  # else: bytes after a request that closes the connection, never read
                    self._bad_request()
                return
            offset = end

    def _upgrade_ignored(self) -> bool:
        """After a head asking for an upgrade: go on in HTTP/1.1 with a fresh parser, which reads the request's
        body (llhttp left it unread) from a head made up to frame it as declared. False after a CONNECT: the rest
        is not read."""
        request, self._upgrading = self._upgrading, None
        if request is None or request.method == "CONNECT" or request not in self._requests:
            if request is not None:
                request.keep_alive = False
            self._closing = True  # answered (405), then closed: nothing after the head is read
            return False
        self._parser = httptools.HttpRequestParser(self)
        if not request.complete:
            length = request.content_length
            framing = b"Transfer-Encoding: chunked" if length is None else b"Content-Length: %d" % length
            close = b"" if request.keep_alive else b"Connection: close\r\n"
            self._made_up_head = True
            try:
                self._parser.feed_data(b"POST / HTTP/1.1\r\n%s\r\n%s\r\n" % (framing, close))
            finally:
                self._made_up_head = False
        return True

    def eof_received(self) -> bool:
        self._eof = True
        parsing = self._parsing
        if parsing is not None:
            parsing.fail(PeerGone())  # the sender stopped mid-body
        if self._task is None or parsing is not None:
            return False  # nothing left to answer: close
        return True  # answer what was sent (a client may half-close after its request), then close

    def pause_writing(self) -> None:
        self._writing_paused = True

    def resume_writing(self) -> None:
        self._writing_paused = False
        if self._writable is not None and not self._writable.done():
            self._writable.set_result(None)

    # -- httptools callbacks -------------------------------------------------------------------------------------

    def on_message_begin(self) -> None:
        if self._made_up_head:
            return
        self._url = b""
        self._headers = {}
        self._header_count = 0
        self._head_bytes = 0

    def on_url(self, url: bytes) -> None:
        if self._made_up_head:
            return
        self._url += url
        if len(self._url) > MAX_TARGET:
            raise _BadHead

    def on_header(self, name: bytes, value: bytes) -> None:
        if self._made_up_head:
            return
        self._header_count += 1
        if self._header_count > MAX_HEADERS or len(name) + len(value) > MAX_FIELD:
            raise _BadHead
        key = self._kept.get(name.lower())
        if key is not None and key not in self._headers:  # the first of repeated headers, as aiohttp's get()
            if len(value) > self._value_limit:
                value = value[: self._value_limit]
            self._headers[key] = value.decode("ascii") if value.isascii() else value.decode("utf-8", "replace")

    def on_headers_complete(self) -> None:
        if self._made_up_head:
            return
        self._head_bytes = None
        coding = self._headers.get("transfer-encoding")
        if coding is not None and coding.strip().lower() != "chunked":  # a coding the listener cannot undo
            raise _BadHead
        parser = self._parser
        assert parser is not None  # this is its callback
        url = self._url
        request = Request(
            self,
            parser.get_method().decode("ascii"),
            url.decode("ascii") if url.isascii() else url.decode("utf-8", "replace"),
            self._headers,
            parser.get_http_version(),
        )
        request.keep_alive = parser.should_keep_alive()
        if request.method != "POST":
            request.admitted = True  # its body is never kept, so it never waits
            request.limit = -1
        elif not self.proven:
            request.metered = True
        self._parsing = request
        self._requests.append(request)
        self._new_in_feed += 1
        self._waiting_since = None
        self._server.busy(self)
        if self._task is None:
            self._task = self._loop.create_task(self._serve())

    def on_body(self, body: bytes) -> None:
        request = self._parsing
        if request is not None and request.limit >= 0 and request.add(body) and request.metered:
            self._server.body_arrived(request, len(body))

    def on_message_complete(self) -> None:
        request = self._parsing
        if self._parser is not None and self._parser.should_upgrade():  # llhttp ends the message at an upgrade's head, its body unread
            self._upgrading = request
            if request is not None and request.content_length != 0:
                return  # the body is read by the parser that replaces this one (_upgrade_ignored)
        if request is not None:
            request.finish()
            if request.metered:
                self._server.body_complete(request)
            if not request.keep_alive:
                self._closing = True  # RFC 9112 9.6: nothing after it is read; it is answered, then the close
        self._parsing = None

    # -- serving -------------------------------------------------------------------------------------------------

    async def _serve(self) -> None:
        requests = self._requests
        try:
            while requests and not self._lost and not self._stopping:
                request = requests[0]
                self._handling = request
                try:
                    answer = await self._server.handler(request)
                except PeerGone:
                    answer = None
                except Exception:
                    log.exception("the webhook handler failed")
                    answer = Answer(500, b'{"error":"internal error"}', close=True)
                finally:
                    self._handling = None
                    if request.metered:  # a proven connection's request holds nothing here (listener reserves)
                        self._server.release(request)
                if answer is None:  # the sender is gone
                    self._close()
                    return
                self._write(request, answer)
                if requests and requests[0] is request:
                    requests.popleft()
                if answer.close or not request.keep_alive:
                    self._linger()
                    return
                if self._writing_paused and self.transport is not None and not self.transport.is_closing():
                    self._writable = self._loop.create_future()
                    await self._writable
                self._update_reading()
            if self._eof or self._stopping:
                self._close()
        finally:
            self._task = None
            if not requests and not self._closing:
                self._server.idle(self)
                self._idle_from(self._loop.time())

    def _write(self, request: Request, answer: Answer) -> None:
        transport = self.transport
        if transport is None or transport.is_closing():
            return
        body = answer.body
        status = answer.status
        close = answer.close or not request.keep_alive
        if status == 200 and not close and not answer.headers and request.http_version == "1.1" and request.method != "HEAD":
            transport.write(
                b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\nDate: %s\r\n\r\n%s"
                % (len(body), _http_date(), body)
            )
            return
        version = b"1.0" if request.http_version == "1.0" else b"1.1"
        extra = b"".join(b"%s: %s\r\n" % (name.encode(), value.encode()) for name, value in answer.headers)
        if close:
            extra += b"Connection: close\r\n"
        elif version == b"1.0":
            extra += b"Connection: keep-alive\r\n"
        transport.write(
            b"HTTP/%s %d %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\nDate: %s\r\n%s\r\n%s"
            % (
                version,
                status,
                _PHRASES.get(status) or HTTPStatus(status).phrase.encode(),
                len(body),
                _http_date(),
                extra,
                b"" if request.method == "HEAD" else body,
            )
        )

    def _bad_request(self) -> None:
        """A head the parser refused, or framing broken mid-body: the request being read, if its handler has it,
        learns (BrokenFraming); otherwise, once the requests before it are answered, a 400 and the connection
        closed. The requests of this read are dropped, as aiohttp did."""
        self._closing = True
        self._head_bytes = None
        self._unparsed = b""
        parsing = self._parsing
        if parsing is not None and self._new_in_feed == 0 and parsing.method == "POST" and parsing in self._requests:
            # Its handler either reads the body (and answers 400 for the framing) or has answered with a close.
            parsing.fail(BrokenFraming())
            return
        for _ in range(self._new_in_feed):
            self._server.release(self._requests.pop())
        self._parsing = None
        if self._task is None:
            self._answer_bad_request()
        else:
            self._task.add_done_callback(lambda _task: self._answer_bad_request())

    def _answer_bad_request(self) -> None:
        transport = self.transport
        if self._ended:
            return
        if transport is not None and not transport.is_closing():
            transport.write(
                b"HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\nContent-Length: %d\r\n"
                b"Connection: close\r\n\r\n%s" % (len(_BAD_REQUEST_BODY), _BAD_REQUEST_BODY)
            )
        self._linger()

    def _linger(self) -> None:
        """Close after an answer that says so: half-close at once, and read what the sender is still sending
        (thrown away) for up to LINGER seconds, so it reads the answer and not a reset."""
        self._closing = self._ended = True
        for request in self._requests:
            if request is not self._handling:
                self._server.release(request)
        self._requests.clear()
        self._unparsed = b""
        transport = self.transport
        if transport is None or transport.is_closing():
            return
        if self._paused:
            self._paused = False
            transport.resume_reading()
        if transport.can_write_eof():
            transport.write_eof()
        self._loop.call_later(LINGER, transport.close)

    def _close(self) -> None:
        self._closing = True
        if self.transport is not None:
            self.transport.close()

    # -- what its requests call (BodySource) ---------------------------------------------------------------------

    def admit(self, request: Request) -> None:
        if not request.complete and not request.received and request.headers.get("expect", "").lower() == "100-continue":
            if self.transport is not None and not self.transport.is_closing():
                self.transport.write(_CONTINUE)  # the sender waits for it before sending the body
        self._update_reading()

    def prove(self) -> None:
        if not self.proven:
            self.proven = True
            self._server.proven(self)

    # -- what the server calls -----------------------------------------------------------------------------------

    @property
    def task(self) -> asyncio.Task[None] | None:
        """The task answering its requests, while there is one."""
        return self._task

    @property
    def waiting_on_sender(self) -> bool:
        """Whether it waits for bytes from its sender (a head, or the rest of a body) rather than on the handler:
        only such a connection is ever cut for room."""
        return not any(request.complete for request in self._requests)

    def stop(self) -> bool:
        """The server stops: the request being answered is the last. Closes it at once, and returns True, when
        nothing of it is worth waiting for (idle, or its request not stored yet)."""
        self._stopping = True
        requests = self._requests
        if not requests or requests[0].expendable:
            self._close()
            return True
        return False

    def close(self) -> None:
        self._close()
        if self._task is not None:
            self._task.cancel()

    @property
    def requests_waiting(self) -> int:
        """Requests whose head has arrived and that are not answered yet."""
        return len(self._requests)

    def refuse(self) -> None:
        """Refused a slot before any request: 503 and closed."""
        self._closing = self._ended = True
        transport = self.transport
        if transport is not None and not transport.is_closing():
            transport.write(REFUSAL)
            transport.close()

    def cut(self) -> None:
        """Closed for room: a request under way is answered 503 (Retry-After) first; an idle connection is just
        closed."""
        transport = self.transport
        if self._requests and not self._ended and transport is not None and not transport.is_closing():
            self._ended = True
            transport.write(REFUSAL)
        self._close()

    def _update_reading(self) -> None:
        """Stop reading while a body waits for its handler to admit it, or too many requests are queued; parse
        what was left unparsed once few enough are."""
        transport = self.transport
        if transport is None or self._closing:
            return
        if self._unparsed and len(self._requests) <= MAX_QUEUED:
            self._feed(self._unparsed)
            if self._closing:
                return
        parsing = self._parsing
        pause = (parsing is not None and not parsing.admitted) or len(self._requests) > MAX_QUEUED or bool(self._unparsed)
        if pause != self._paused:
            self._paused = pause
            if pause:
                transport.pause_reading()
            elif not transport.is_closing():
                transport.resume_reading()

    # -- the header deadline -------------------------------------------------------------------------------------

    def _idle_from(self, now: float) -> None:
        self._waiting_since = now
        if self._timer is None:
            self._timer = self._loop.call_at(now + self._server.header_timeout, self._check_head)

    def _check_head(self) -> None:
        self._timer = None
        since = self._waiting_since
        if since is None or self.transport is None or self.transport.is_closing():
            return  # inside a request: armed again once it is answered
        due = since + self._server.header_timeout
        if self._loop.time() >= due:
            self._close()
        else:
            self._timer = self._loop.call_at(due, self._check_head)


_PHRASES = {200: b"OK", 400: b"Bad Request", 401: b"Unauthorized", 413: b"Request Entity Too Large"}


def _http_date(_cache: list[object] = [0, b""]) -> bytes:  # noqa: B006 (a one-second cache)
    now = int(time.time())
    if _cache[0] != now:
        _cache[0] = now
        _cache[1] = formatdate(now, usegmt=True).encode()
    return _cache[1]  # type: ignore[return-value]


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


def accept_queue_depth(cap: int) -> int:
    """How deep the kernel's accept queue may be beside `cap` connections: ACCEPT_QUEUE, less what the soft file
    limit cannot hold once the cap, FD_RESERVE and two accept batches are counted; never below LISTEN_BACKLOG.

    Under a 256-file limit (cap 64) a 1024-deep queue let a flood of idle sockets be accepted faster than the ones
    they replaced were closed, and asyncio ran out of descriptors (tests/webhooks/test_hostile_http.py)."""
    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return ACCEPT_QUEUE
    return max(LISTEN_BACKLOG, min(ACCEPT_QUEUE, soft - cap - FD_RESERVE - 2 * LISTEN_BACKLOG))


class Server:
    """The HTTP server: accepts connections under the cap, hands each request to `handler`.

    `budget` holds the unproven share of body bytes (budget.py); `keyed` says whether any connection can be proven
    (the listener has a key), which sets the unproven connections' share of the slots (set_keyed)."""

    def __init__(
        self,
        handler: Handler,
        *,
        cap: int,
        budget: ByteBudget,
        keyed: bool = True,
        header_timeout: float = HEADER_TIMEOUT,
        kept_headers: Iterable[str] = (),
        value_limit: int = MAX_FIELD,
        on_shedding: Callable[[bool], None] | None = None,
    ) -> None:
        self.handler = handler
        self.cap = cap
        self.budget = budget
        self.unproven_slots = cap
        self.header_timeout = header_timeout
        self.value_limit = value_limit  # header values are cut to this many bytes
        self.kept_headers = {name.lower().encode(): name.lower() for name in (*kept_headers, *_FRAMING_HEADERS)}
        self.loop = asyncio.get_running_loop()
        self._server: asyncio.base_events.Server | None = None
        self._listening: list[socket.socket] = []  # our duplicates of the server's sockets, which we accept on
        self._pending: deque[socket.socket] = deque()  # accepted, not yet connections (oldest first)
        self._pending_limit = LISTEN_BACKLOG
        self._admitting = False
        self._admissions: set[asyncio.Task[tuple[asyncio.Transport, _Connection]]] = set()
        self._open: set[_Connection] = set()
        # Connections outside a request, oldest first: a dict keeps insertion order and each one is re-inserted
        # when it becomes idle again, so the first key is always the one idle the longest.
        self._idle_order: dict[_Connection, None] = {}
        # Unproven connections, the one that has sent nothing for the longest first (re-inserted on every read).
        self._unproven: dict[_Connection, None] = {}
        # The unproven connections that have sent something, in the same order (the longest silent first).
        self._heard: dict[_Connection, None] = {}
        # Unproven requests whose bodies are still arriving, the one that has waited longest for bytes first.
        self._arriving: dict[Request, None] = {}
        self._at_cap = False
        self.closed_for_room = 0  # since the cap was last reached
        self.refused = 0
        self.on_shedding = on_shedding
        self.shedding = False
        self.shed_count = 0  # requests cut or refused since shedding was last reported
        self._last_shed = 0.0
        self.set_keyed(keyed)

    def set_keyed(self, keyed: bool) -> None:
        self.unproven_slots = max(1, self.cap // UNPROVEN_SLOTS) if keyed else self.cap

    async def start(self, host: str, port: int, *, backlog: int = LISTEN_BACKLOG) -> int:
        # asyncio makes the listening sockets (names, families, SO_REUSEADDR) but does not accept on them: it took
        # `backlog` connections a turn, each through a task, so a burst of 10,000 filled the kernel's queue, whose
        # full state drops every SYN, an honest sender's too, and TCP sends it again only after a second (issue 37,
        # item 7: every honest request over 1 s coincided with ListenOverflows). The server drains the kernel's
        # queue itself (_accept_ready), through duplicates of asyncio's descriptors.
        self._server = await self.loop.create_server(
            lambda: _Connection(self), host, port, reuse_address=True, backlog=backlog, start_serving=False
        )
        self._pending_limit = max(backlog, accept_queue_depth(self.cap))
        for listening in self._server.sockets:
            duplicate = socket.socket(fileno=os.dup(listening.fileno()))
            duplicate.setblocking(False)
            duplicate.listen(self._pending_limit)
            self._listening.append(duplicate)
            self.loop.add_reader(duplicate.fileno(), self._accept_ready, duplicate)
        return int(self._server.sockets[0].getsockname()[1])

    def _accept_ready(self, listening: socket.socket) -> None:
        """Take every connection the kernel has queued (a few microseconds each, no transport yet) into `_pending`,
        and let the loop turn them into connections a batch at a time, newest first (_admit_pending)."""
        pending = self._pending
        for _ in range(ACCEPT_BURST):
            try:
                accepted, _address = listening.accept()
            except (BlockingIOError, InterruptedError):
                break
            except ConnectionAbortedError:
                continue
            except OSError as error:  # out of descriptors or memory: pause rather than spin on the error
                log.warning("accepting a connection failed (%s); accepting again in %g s", error, ACCEPT_RETRY)
                self.loop.remove_reader(listening.fileno())
                self.loop.call_later(ACCEPT_RETRY, self._accept_again, listening)
                break
            accepted.setblocking(False)
            pending.append(accepted)
            if len(pending) > self._pending_limit:
                self._trim_pending()  # as they come: the descriptors they hold are counted under the file limit
        if pending and not self._admitting:
            self._admitting = True
            self.loop.call_soon(self._admit_pending)

    def _accept_again(self, listening: socket.socket) -> None:
        if listening in self._listening:
            self.loop.add_reader(listening.fileno(), self._accept_ready, listening)

    def _trim_pending(self) -> None:
        """Past `_pending_limit` (the descriptors the file limit leaves: accept_queue_depth), the connections
        accepted longest ago and never read make room: closed when they have sent nothing yet, as the longest-stalled
        unproven connections are (a flood's idle sockets); one with bytes waiting is a sender on its way and becomes
        a connection instead."""
        pending = self._pending
        while len(pending) > self._pending_limit:
            oldest = pending.popleft()
            try:
                waiting = oldest.recv(1, socket.MSG_PEEK)
            except (BlockingIOError, InterruptedError):
                waiting = b""
                self._reached_cap()
                self.closed_for_room += 1
            except OSError:
                waiting = b""
            if waiting:
                self._admit(oldest)
            else:
                oldest.close()

    def _admit_pending(self) -> None:
        """Turn up to ADMIT_BATCH accepted sockets into connections, the newest first: after a burst, the sender who
        came last (an honest one, whose request is already on its way) is read before the burst's idle sockets, which
        the cap would close for room anyway. One batch a turn, so that the kernel's queue is drained in between."""
        pending = self._pending
        for _ in range(min(ADMIT_BATCH, len(pending))):
            self._admit(pending.pop())
        if pending and self._listening:
            self.loop.call_soon(self._admit_pending)
        else:
            self._admitting = False

    def _admit(self, accepted: socket.socket) -> None:
        task = self.loop.create_task(self.loop.connect_accepted_socket(lambda: _Connection(self), accepted))
        self._admissions.add(task)
        task.add_done_callback(lambda done: self._admitted(done, accepted))

    def _admitted(self, task: asyncio.Task[tuple[asyncio.Transport, _Connection]], accepted: socket.socket) -> None:
        self._admissions.discard(task)
        if task.cancelled():
            accepted.close()  # stopped before it became a connection (closing twice is harmless)
        elif task.exception() is not None:
            log.debug("a connection was gone before it could be served: %s", task.exception())
            accepted.close()

    @property
    def open_connections(self) -> int:
        return len(self._open)

    @property
    def unproven_connections(self) -> int:
        return len(self._unproven)

    @property
    def requests_waiting(self) -> int:
        """Requests whose head has arrived and that are not answered yet, on every connection."""
        return sum(connection.requests_waiting for connection in self._open)

    async def stop(self, grace: float) -> None:
        """Stop accepting; close idle connections and requests nothing of which is stored yet; let the others be
        answered for up to `grace` seconds, then close everything."""
        for listening in self._listening:
            self.loop.remove_reader(listening.fileno())
            listening.close()
        self._listening.clear()
        while self._pending:
            self._pending.pop().close()
        for admission in list(self._admissions):
            admission.cancel()
        if self._server is not None:
            self._server.close()
        for connection in list(self._open):
            connection.stop()
        tasks = [connection.task for connection in self._open if connection.task is not None]
        if tasks:
            await asyncio.wait(tasks, timeout=grace)
        for connection in list(self._open):
            connection.close()
        self._open.clear()
        self._idle_order.clear()
        self._unproven.clear()
        self._heard.clear()
        self._arriving.clear()

    # -- bookkeeping, called by the connections ------------------------------------------------------------------

    def connected(self, connection: _Connection) -> None:
        self._open.add(connection)
        self._idle_order[connection] = None
        self._unproven[connection] = None
        if len(self._open) > self.cap or len(self._unproven) > self.unproven_slots:
            self._make_room(connection)

    def disconnected(self, connection: _Connection) -> None:
        self._forget(connection)
        if (
            self._at_cap
            and len(self._open) <= self.cap * UNDER_CAP_AGAIN
            and len(self._unproven) <= self.unproven_slots * UNDER_CAP_AGAIN
        ):
            self._at_cap = False
            log.warning(
                "open connections back under the cap of %d (%d for unverified ones): %d connections were closed "
                "to make room, %d new ones refused",
                self.cap,
                self.unproven_slots,
                self.closed_for_room,
                self.refused,
            )
            self.closed_for_room = self.refused = 0

    def busy(self, connection: _Connection) -> None:
        self._idle_order.pop(connection, None)

    def idle(self, connection: _Connection) -> None:
        if connection in self._open:
            self._idle_order[connection] = None
            if not connection.proven:
                self.stirred(connection)

    def stirred(self, connection: _Connection) -> None:
        """An unproven connection received bytes (or was answered): it is the least stalled now."""
        unproven = self._unproven
        if connection in unproven:
            del unproven[connection]
            unproven[connection] = None
            if connection.heard:
                heard = self._heard
                heard.pop(connection, None)
                heard[connection] = None

    def proven(self, connection: _Connection) -> None:
        self._unproven.pop(connection, None)
        self._heard.pop(connection, None)

    def body_arrived(self, request: Request, size: int) -> None:
        """`size` bytes of an unproven request's body arrived: count them, and keep the unproven bodies within their
        share by cutting the ones that have waited longest for their next bytes (never this one)."""
        request.held += size
        arriving = self._arriving
        arriving.pop(request, None)
        arriving[request] = None
        if self.budget.arrived(size):
            for stalled in list(arriving):
                if not self.budget.unproven_over:
                    break
                if stalled is not request:
                    self.release(stalled)
                    stalled.fail(Shed())  # its handler answers 503 and closes
                    self.shed(
                        f"an unverified body was cut (503): unverified bodies held more than their share of "
                        f"{self.budget.unproven_capacity} bytes"
                    )

    def body_complete(self, request: Request) -> None:
        self._arriving.pop(request, None)

    def release(self, request: Request) -> None:
        """The request's bytes are no longer held (answered, failed or dropped)."""
        if request.held:
            self.budget.left(request.held)
            request.held = 0
        self._arriving.pop(request, None)

    # -- making room ---------------------------------------------------------------------------------------------

    def _reached_cap(self) -> None:
        """Log, once until the listener is back under it, that connections now make room for new ones."""
        if self._at_cap:
            return
        self._at_cap = True
        if len(self._open) > self.cap:
            log.warning(
                "%d connections open, the cap: each new one now replaces the longest-stalled unverified "
                "connection or the longest-idle one, or is refused (503) while all are inside a request",
                self.cap,
            )
        else:
            log.warning(
                "%d unverified connections open, their share of the cap of %d: each new one now replaces the "
                "longest-stalled unverified connection, or is refused (503) while all are inside a request",
                self.unproven_slots,
                self.cap,
            )

    def _make_room(self, newcomer: _Connection) -> None:
        self._reached_cap()
        stalled = self._longest_stalled(newcomer)
        if stalled is not None:
            self._close_for_room(stalled)
            return
        if len(self._open) <= self.cap:
            return  # every unproven connection is still to be read: the newcomer waits its turn past the share
        oldest = next(iter(self._idle_order))
        if oldest is not newcomer:
            self._close_for_room(oldest)
            return
        self._forget(newcomer)
        newcomer.refuse()
        self.refused += 1
        self.shed("a new connection was refused (503): every connection slot is inside a request")

    def _longest_stalled(self, newcomer: _Connection) -> _Connection | None:
        """The unproven connection to close for room: the one silent the longest among those that sent something
        or had FIRST_BYTES seconds to (a connection accepted under a flood may not have been read yet: its request
        is on the way); failing that, at the cap only, the one silent the longest (below the cap the newcomer is let
        in past the share instead). Never one whose request the handler has.

        Looks at a few connections, never all: `_unproven` is in order of last activity, so once its first one
        waiting on its sender is a young silent one, every later one is younger or has sent something, and of
        those the longest silent is the first of `_heard`. Scanning them all for every newcomer cost 0.5 ms per
        connection under a 10,000-connection flood, and an honest sender queued behind it waited seconds (issue 37)."""
        young_after = self.loop.time() - FIRST_BYTES
        fallback = None
        for scanned, connection in enumerate(self._unproven):
            if scanned >= STALLED_SCAN:
                break
            if connection is newcomer or not connection.waiting_on_sender:
                continue
            if connection.heard or connection.connected_at <= young_after:
                return connection
            fallback = connection
            break
        for scanned, connection in enumerate(self._heard):
            if scanned >= STALLED_SCAN:
                break
            if connection is not newcomer and connection.waiting_on_sender:
                return connection
        return fallback if len(self._open) > self.cap else None

    def _close_for_room(self, connection: _Connection) -> None:
        if connection.requests_waiting:
            self.shed("an unverified connection stalled inside a request was closed (503) to make room")
        self._forget(connection)
        connection.cut()
        self.closed_for_room += 1

    def _forget(self, connection: _Connection) -> None:
        self._open.discard(connection)
        self._idle_order.pop(connection, None)
        self._unproven.pop(connection, None)
        self._heard.pop(connection, None)

    # -- shedding load -------------------------------------------------------------------------------------------

    def shed(self, what: str) -> None:
        """A request was cut or refused to keep room for others: said once (log and on_shedding), until SHED_CALM
        seconds pass without any."""
        self.shed_count += 1
        self._last_shed = self.loop.time()
        if self.shedding:
            return
        self.shedding = True
        log.warning(
            "shedding load: %s; unverified senders are cut or refused first, signed senders on their connections "
            "keep their room (said once until it stops)",
            what,
        )
        self.loop.call_later(SHED_CALM, self._check_calm)
        self._report(True)

    def _check_calm(self) -> None:
        calm_at = self._last_shed + SHED_CALM
        if self.loop.time() < calm_at:
            self.loop.call_at(calm_at, self._check_calm)
            return
        self.shedding = False
        log.warning("no longer shedding load: %d requests or connections were cut or refused", self.shed_count)
        self.shed_count = 0
        self._report(False)

    def _report(self, shedding: bool) -> None:
        if self.on_shedding is not None:
            try:
                self.on_shedding(shedding)
            except Exception:
                log.exception("the shedding callback failed")
