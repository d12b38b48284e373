"""One HTTP/1.1 connection of the listener's server (tui.webhooks.connections): an asyncio protocol on httptools
(uvicorn's parser, llhttp) that frames requests, hands them to the handler one at a time and writes the answers.

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
- An answer that closes the connection while the request's body is still arriving (413, 415, 408...) is followed
  by a half-close and the rest of the body read and thrown away for up to LINGER seconds, so the sender reads the
  answer rather than a reset.

A connection sees the Server only as a ConnectionKeeper: its public bookkeeping methods (`connected`,
`disconnected`, `busy`, `idle`, `stirred`, `body_arrived`, `body_complete`, `release`, `proven`) and the
settings it reads.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from email.utils import formatdate
from http import HTTPStatus
from typing import Protocol

import httptools

from tui.webhooks.http_request import Answer, BrokenFraming, Handler, PeerGone, Request

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

_REFUSAL_BODY = b'{"error":"too many open connections; retry later"}'
REFUSAL = (
    b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nRetry-After: 5\r\n"
    b"Connection: close\r\nContent-Length: %d\r\n\r\n%s" % (len(_REFUSAL_BODY), _REFUSAL_BODY)
)
_BAD_REQUEST_BODY = b'{"error":"malformed HTTP request"}'
_CONTINUE = b"HTTP/1.1 100 Continue\r\n\r\n"
# Headers the server itself reads; the handler names the others it wants (Server's kept_headers).

log = logging.getLogger(__name__)


class _BadHead(Exception):
    """A request head over the limits above."""


class ConnectionKeeper(Protocol):
    """What a connection sees of the Server (tui.webhooks.connections.Server): the settings it reads and the
    bookkeeping it reports to."""

    loop: asyncio.AbstractEventLoop
    handler: Handler
    header_timeout: float
    kept_headers: dict[bytes, str]  # wire name -> the name the handler reads
    value_limit: int

    def connected(self, connection: _Connection) -> None: ...
    def disconnected(self, connection: _Connection) -> None: ...
    def busy(self, connection: _Connection) -> None: ...
    def idle(self, connection: _Connection) -> None: ...
    def stirred(self, connection: _Connection) -> None: ...
    def proven(self, connection: _Connection) -> None: ...
    def body_arrived(self, request: Request, size: int) -> None: ...
    def body_complete(self, request: Request) -> None: ...
    def release(self, request: Request) -> None: ...


class _Connection(asyncio.Protocol):
    """One client connection: parses requests, hands them to the handler one at a time, writes the answers.

    The Server drives it through `stop`, `cut` and `close`, and reads `proven`, `task` and `waiting_on_sender`;
    its requests reach it through `admit` and `prove` (BodySource)."""

    def __init__(self, server: ConnectionKeeper) -> None:
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
