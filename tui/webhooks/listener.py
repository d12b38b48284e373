"""The webhook listener: an aiohttp server that judges each call's signature, stores it, then answers.

Embedded, it runs on the app's event loop and installs no signal handlers (the app owns them). Headless,
`gateway-tui listen` runs it through `run_cli`, which owns its loop, Ctrl+C and SIGTERM.

Answers: 200 once the event is committed; 401 (stored, rejected) for a missing or bad signature in strict
mode (an unsigned call below `/delivery` is accepted unless signatures are required everywhere: see
families.py); 400 (stored, rejected) for an unparseable body, or one whose HTTP framing is broken (stored without
the body); 413 (stored without the body, rejected) for a body over the limit; 415 (stored without the body,
rejected) for a compressed body (`Content-Encoding` other than identity: never inflated); 408 (not stored) for a
body that does not arrive in time; 405 for anything but POST (not stored); 500 when the store fails (not stored,
so the sender retries); 503 when the bodies already in flight leave no room for this one, or every connection
slot is inside a request (not stored, so the sender retries; see budget.py and connections.py).

The signature covers the body exactly as it came off the wire: chunked framing removed, nothing decoded.
Slow senders: a request head must arrive within HEADER_TIMEOUT (connections.py), a body within BODY_GRACE plus
one second per MIN_BODY_RATE bytes; open connections are capped (connections.py).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from datetime import UTC, datetime
from typing import NamedTuple

from aiohttp import web
from aiohttp.helpers import rfc822_formatted_time
from aiohttp.http import SERVER_SOFTWARE, HttpVersion11
from aiohttp.streams import StreamReader
from aiohttp.web_protocol import RequestPayloadError

from tui.webhooks.bodies import UnparseableBody, parse_body, without_inline_media
from tui.webhooks.budget import DEFAULT_MAX_BODY, BudgetExhausted, ByteBudget
from tui.webhooks.classify import UNKNOWN, classify
from tui.webhooks.connections import HEADER_TIMEOUT, LISTEN_BACKLOG, GuardedServer, connection_cap
from tui.webhooks.events import HEADERS_OF_INTEREST, EventRecord, StoredEvent
from tui.webhooks.families import unsigned_allowed
from tui.webhooks.signing import SIGNATURE_HEADER, Verdict, verify
from tui.webhooks.store import EventStore, StoreFailing, StoreUnusable

HMAC_KEY_ENV = "GATEWAY_TUI_HMAC_KEY"
# Bodies in flight may hold this much beyond one largest body, so small events still pass while a big one is read.
IN_FLIGHT_HEADROOM = 16 * 1024 * 1024
# How long a request waits for room before it is answered 503 (WuzAPI gives up on an attempt after 30 s).
IN_FLIGHT_WAIT = 20.0
# Bodies at least this big are verified and parsed on a worker thread, so the event loop (the app's UI) keeps going.
OFF_LOOP_BODY = 1024 * 1024
HEADER_VALUE_LIMIT = 1024
# A body must arrive within BODY_GRACE seconds plus one second per MIN_BODY_RATE bytes (see _read_body).
BODY_GRACE = 10.0
MIN_BODY_RATE = 32 * 1024
# SIGTERM stops `listen` within 2 s in every state (issue 13). Both graces run from the signal, side by side,
# and what remains (closing the forwarder, the store's last commit) takes milliseconds.
STOP_GRACE = 1.0  # seconds `stop` lets requests under way finish before it closes their connections
FORWARD_STOP_GRACE = 1.0  # seconds `listen` waits at exit for forwards still under way (then names the rest)

log = logging.getLogger(__name__)


class _BodyTooLarge(Exception):
    """More body bytes arrived than the limit allows."""


class Listener:
    """Receives webhook calls on any path. `received` counts stored events, `rejected` those among them refused."""

    def __init__(
        self,
        store: EventStore,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        hmac_key: str | None = None,
        strict: bool = True,
        max_body: int = DEFAULT_MAX_BODY,
        on_event: Callable[[StoredEvent], None] | None = None,
        require_signatures: bool = False,
        in_flight_limit: int | None = None,
        max_connections: int | None = None,
        header_timeout: float = HEADER_TIMEOUT,
    ) -> None:
        if max_body < 1:
            raise ValueError("max_body must be at least 1 byte")
        self.store = store
        self.host = host
        self.strict = strict
        self.require_signatures = require_signatures
        self.max_body = max_body
        self.in_flight = ByteBudget(in_flight_limit or max_body + IN_FLIGHT_HEADROOM)
        self.on_event = on_event
        self.max_connections = connection_cap(max_connections)
        self.header_timeout = header_timeout
        self.received = 0
        self.rejected = 0
        self.duplicates = 0
        self.dropped_slow = 0  # bodies that did not arrive in time (408, not stored)
        self._requested_port = port
        self._hmac_key = hmac_key or None
        self._runner: web.ServerRunner | None = None
        self._server: GuardedServer | None = None
        self._unread: set[asyncio.BaseTransport] = set()  # connections whose request body is not read yet
        self.port: int | None = None

    def __repr__(self) -> str:
        # Spelled out so no default repr can ever grow to include the key.
        return f"<Listener {self.url if self.port else 'stopped'} strict={self.strict} key={'set' if self._hmac_key else 'none'}>"

    @property
    def url(self) -> str:
        if self.port is None:
            raise RuntimeError("the listener is not started")
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    def refuses(self, verdict: Verdict, path: str) -> bool:
        """Whether a call with this verdict on this path is answered 401 (it is stored either way)."""
        if not self.strict or self._hmac_key is None:
            return False
        if verdict is Verdict.INVALID:
            return True
        return verdict is Verdict.UNSIGNED and not unsigned_allowed(path, require_signatures=self.require_signatures)

    @property
    def has_hmac_key(self) -> bool:
        return self._hmac_key is not None

    def set_hmac_key(self, key: str | None) -> None:
        """Use this key (None or "" for none) from the next request on."""
        self._hmac_key = key or None

    async def start(self) -> None:
        if self._runner is not None:
            return
        server = GuardedServer(self._handle, cap=self.max_connections, header_timeout=self.header_timeout)
        # shutdown_timeout: at stop, requests already being stored finish (milliseconds); a body still trickling in
        # is cut off, so that stopping never waits on a sender.
        runner = web.ServerRunner(server, handle_signals=False, shutdown_timeout=STOP_GRACE)
        await runner.setup()
        try:
            site = web.TCPSite(runner, self.host, self._requested_port, reuse_address=True, backlog=LISTEN_BACKLOG)
            await site.start()
        except BaseException:
            await runner.cleanup()
            raise
        self._server = server
        self._runner = runner
        self.port = runner.addresses[0][1]

    @property
    def open_connections(self) -> int:
        return self._server.open_connections if self._server is not None else 0

    async def stop(self) -> None:
        """Stop accepting; requests already being stored finish first. The store stays open (the caller owns it)."""
        runner, self._runner = self._runner, None
        # A request still waiting for its body (or for room in the budget) is not worth waiting for: its sender
        # has not been answered and will send it again. Requests being stored are let finish (STOP_GRACE).
        for transport in list(self._unread):
            transport.close()
        if runner is not None:
            await runner.cleanup()
        self._server = None
        self.port = None

    async def _handle(self, request: web.BaseRequest) -> web.StreamResponse:
        if request.method != "POST":
            return web.json_response({"error": "only POST is accepted"}, status=405, headers={"Allow": "POST"})
        received_at = datetime.now(UTC)
        path = redact_query(request.raw_path)
        headers = _headers_of_interest(request)
        encoding = request.headers.get("Content-Encoding")
        if encoding is not None and encoding.strip().lower() not in ("", "identity"):
            return await self._compressed(received_at, path, headers, encoding)
        declared = request.content_length
        if declared is not None and declared > self.max_body:
            return await self._too_large(received_at, path, headers, declared)
        # A chunked body declares no size: it may grow to the limit, so that much is reserved.
        transport = request.transport
        if transport is not None:
            self._unread.add(transport)
        try:
            async with self.in_flight.reserve(self.max_body if declared is None else declared, timeout=IN_FLIGHT_WAIT):
                return await self._receive(request, received_at, path, headers)
        except BudgetExhausted:
            return web.json_response(
                {"error": "too many large events in flight; retry later"},
                status=503,
                headers={"Retry-After": "5", "Connection": "close"},
            )
        finally:
            self._unread.discard(transport)

    async def _receive(
        self, request: web.BaseRequest, received_at: datetime, path: str, headers: dict[str, str]
    ) -> web.StreamResponse:
        try:
            body = await self._read_body(request.content)
            self._unread.discard(request.transport)  # from here on, `stop` lets the request finish
        except _BodyTooLarge:
            return await self._too_large(received_at, path, headers, None)
        except TimeoutError:
            self.dropped_slow += 1
            # Not stored: nothing arrived worth keeping, and a sender that is merely slow will try again.
            return web.json_response(
                {"error": f"the body did not arrive in time (at least {MIN_BODY_RATE} bytes a second after the first "
                 f"{BODY_GRACE:g} s)"},
                status=408,
                headers={"Connection": "close"},
            )
        except (RequestPayloadError, ConnectionResetError) as error:
            if request.transport is None or request.transport.is_closing():
                # The sender went away mid-body: nobody to answer and nothing worth keeping.
                return web.Response(status=400)
            return await self._unreadable(received_at, path, headers, error)
        judge = (self._hmac_key, body, request.headers.get(SIGNATURE_HEADER), request.headers.get("Content-Type", ""))
        judged = await asyncio.to_thread(_judge, *judge) if len(body) >= OFF_LOOP_BODY else _judge(*judge)
        verdict = judged.verdict
        status, reason = 200, None
        if self.refuses(verdict, path):
            status, reason = 401, "signature missing" if verdict is Verdict.UNSIGNED else "signature invalid"
        elif judged.parse_error is not None:
            status, reason = 400, judged.parse_error
        record = EventRecord(
            received_at=received_at,
            path=path,
            headers=headers,
            body=body,
            payload=judged.payload,
            kind=judged.kind,
            summary=judged.summary,
            verdict=verdict,
            rejected=status != 200,
            reason=reason,
            message_ids=judged.message_ids,
            payload_is_body=judged.payload_is_body,
        )
        event = await self._store(record)
        if event is None:
            return web.json_response({"error": "the event could not be stored"}, status=500)
        if status == 200:
            if request.version == HttpVersion11 and request.keep_alive:
                return _Acknowledged(event.id)
            return web.Response(body=b'{"id":%d}' % event.id, content_type="application/json")
        return web.json_response({"error": reason, "id": event.id}, status=status)

    async def _read_body(self, content: StreamReader) -> bytes:
        """The body as it came off the wire (chunked framing removed, nothing decoded), within the limit and in time.

        Deadline: BODY_GRACE seconds, plus one second for every MIN_BODY_RATE bytes that arrive, so a sender
        keeping up at least that rate is never cut off and a trickle is. Raises _BodyTooLarge, TimeoutError.
        """
        limit = self.max_body
        if content.is_eof():  # the whole body came with the head (most webhooks): no deadline to arm
            body = content.read_nowait()
            if len(body) > limit:
                raise _BodyTooLarge
            return body
        loop = asyncio.get_running_loop()
        started = loop.time()
        chunks: list[bytes] = []
        size = 0
        async with asyncio.timeout_at(started + BODY_GRACE) as deadline:
            while chunk := await content.readany():
                size += len(chunk)
                if size > limit:
                    raise _BodyTooLarge
                chunks.append(chunk)
                deadline.reschedule(started + BODY_GRACE + size / MIN_BODY_RATE)
        return chunks[0] if len(chunks) == 1 else b"".join(chunks)

    async def _compressed(
        self, received_at: datetime, path: str, headers: dict[str, str], encoding: str
    ) -> web.StreamResponse:
        """415 for a compressed body: it is never inflated (a small body can inflate to gigabytes), and the
        signature covers the bytes on the wire. Kept as a rejected event without its body, so the panel shows why
        a sender's events do not arrive."""
        shown = encoding.strip()[:40].encode("ascii", "replace").decode("ascii")
        reason = f"Content-Encoding {shown} is not accepted (send the body uncompressed); body not kept"
        event = await self._store(self._unread_record(received_at, path, headers, reason))
        response: dict[str, object] = {"error": f"Content-Encoding {shown} is not accepted; send the body uncompressed"}
        if event is not None:
            response["id"] = event.id
        # Close: the compressed body is still on the wire; it is read and thrown away, never inflated.
        return web.json_response(response, status=415, headers={"Accept-Encoding": "identity", "Connection": "close"})

    async def _unreadable(
        self, received_at: datetime, path: str, headers: dict[str, str], error: Exception
    ) -> web.StreamResponse:
        """400 for a body whose HTTP framing is broken (a bad chunk size, a body shorter than declared...)."""
        reason = f"body framing is broken ({type(error).__name__}); body not kept"
        event = await self._store(self._unread_record(received_at, path, headers, reason))
        response: dict[str, object] = {"error": "the body's HTTP framing is broken"}
        if event is not None:
            response["id"] = event.id
        return web.json_response(response, status=400, headers={"Connection": "close"})

    def _unread_record(self, received_at: datetime, path: str, headers: dict[str, str], reason: str) -> EventRecord:
        return EventRecord(
            received_at=received_at,
            path=path,
            headers=headers,
            body=b"",
            payload=None,
            kind=UNKNOWN,
            summary=f"rejected: {reason}",
            verdict=self._unread_verdict(headers),
            rejected=True,
            reason=reason,
        )

    async def _too_large(
        self, received_at: datetime, path: str, headers: dict[str, str], declared: int | None
    ) -> web.StreamResponse:
        size = f"{declared} bytes" if declared is not None else "over the limit"
        reason = f"body too large ({size}; limit {self.max_body} bytes); body not kept"
        event = await self._store(self._unread_record(received_at, path, headers, reason))
        response: dict[str, object] = {"error": f"body larger than {self.max_body} bytes"}
        if event is not None:
            response["id"] = event.id
        # Close: the rest of the oversized body is still on the wire and is not worth reading.
        return web.json_response(response, status=413, headers={"Connection": "close"})

    def _unread_verdict(self, headers: dict[str, str]) -> Verdict:
        """Verdict for a body that was never read: a signature that could not be checked counts as invalid."""
        if self._hmac_key is None:
            return Verdict.NO_KEY
        return Verdict.INVALID if headers.get(SIGNATURE_HEADER, "").strip() else Verdict.UNSIGNED

    async def _store(self, record: EventRecord) -> StoredEvent | None:
        try:
            event = await self.store.append(record)
        except (StoreFailing, StoreUnusable):
            return None  # the store reports its health once per change (see `listen`'s log and the header)
        except Exception as error:
            log.error("storing a webhook event failed: %s", error, exc_info=True)
            return None
        if event.duplicate_of is not None:
            self.duplicates += 1  # stored and flagged, counted once: not in `received`
        else:
            self.received += 1
            if event.rejected:
                self.rejected += 1
        if self.on_event is not None:
            try:
                self.on_event(event)
            except Exception:
                # A broken consumer must not turn a stored event into an error answer (the sender would resend).
                log.exception("on_event callback failed")
        return event


class _Acknowledged(web.StreamResponse):
    """The 200 for a committed event on an HTTP/1.1 keep-alive connection, written to the socket in one piece.

    Same bytes as `web.Response(body=..., content_type="application/json")` would send, without aiohttp's general
    path (a header multidict, the status line formatted, the writer's buffering), which py-spy showed as about a
    tenth of the listener's time per event. aiohttp's request handler only prepares it, ends it and asks whether
    to keep the connection open; everything else (errors, HTTP/1.0, Connection: close) takes `web.Response`."""

    def __init__(self, event_id: int) -> None:  # deliberately not StreamResponse's: nothing of it is used
        self._event_id = event_id

    @property
    def keep_alive(self) -> bool:
        return True

    @property
    def status(self) -> int:
        return 200

    async def prepare(self, request: web.BaseRequest) -> None:
        transport = request.transport
        if transport is None or transport.is_closing():
            raise ConnectionResetError("the sender went away before the answer")  # aiohttp's "client disconnected"
        body = b'{"id":%d}' % self._event_id
        transport.write(
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\nDate: %s\r\nServer: %s\r\n\r\n%s"
            % (len(body), rfc822_formatted_time().encode(), _SERVER, body)
        )
        if request.protocol.writing_paused:  # a sender not reading its answers: wait, as aiohttp's writer does
            await request.writer.drain()

    async def write_eof(self, data: bytes = b"") -> None:
        pass


_SERVER = SERVER_SOFTWARE.encode()


def redact_query(target: str) -> str:
    """The request target with every query-string value replaced by `***`, the names kept: some senders put keys
    or tokens in the query, and events are stored, shown and exported."""
    path, mark, query = target.partition("?")
    if not mark:
        return target
    redacted = [part.partition("=")[0] + ("=***" if "=" in part else "") for part in query.split("&")]
    return f"{path}?{'&'.join(redacted)}"


def _judge(key: str | None, body: bytes, signature: str | None, content_type: str) -> _Judgement:
    """Verdict, payload and classification of one body, each computed once; pure, so it may run on a thread."""
    verdict = verify(key, body, signature)
    try:
        parsed, from_form = parse_body(content_type, body)
    except UnparseableBody as error:
        return _Judgement(verdict, None, False, str(error), UNKNOWN, f"unparseable body: {error}", ())
    payload = without_inline_media(parsed)
    kind, summary, message_ids = classify(payload)
    return _Judgement(verdict, payload, not from_form and payload is parsed, None, kind, summary, message_ids)


class _Judgement(NamedTuple):
    verdict: Verdict
    payload: object
    payload_is_body: bool  # the payload is exactly the body's JSON (see EventRecord.payload_is_body)
    parse_error: str | None
    kind: str
    summary: str
    message_ids: tuple[str, ...]


def _headers_of_interest(request: web.BaseRequest) -> dict[str, str]:
    kept: dict[str, str] = {}
    for name in HEADERS_OF_INTEREST:
        value = request.headers.get(name)
        if value is not None:
            value = value[:HEADER_VALUE_LIMIT]
            # aiohttp keeps undecodable header bytes as lone surrogates; they cannot be stored or printed.
            kept[name] = value if value.isascii() else value.encode("utf-8", "replace").decode("utf-8")
    return kept


# -- headless mode --------------------------------------------------------------------------------------------
