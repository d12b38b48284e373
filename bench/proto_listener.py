"""Prototype (bench only): the listener's POST path on a bare asyncio.Protocol + httptools, no aiohttp.

Same work per event as Listener._handle/_receive on the happy path (headers of interest, query redacted,
Content-Encoding and size checks, in-flight reservation, verify + parse + classify, store, one-piece 200),
to compare CPU per event with the aiohttp-based listener in the same bench run.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

import httptools
from aiohttp.helpers import rfc822_formatted_time

from tui.webhooks.events import HEADERS_OF_INTEREST, EventRecord
from tui.webhooks.listener import IN_FLIGHT_WAIT, Listener, _judge, redact_query
from tui.webhooks.signing import SIGNATURE_HEADER, Verdict

_INTEREST = {name.encode(): name for name in HEADERS_OF_INTEREST}
_INTEREST[b"content-encoding"] = "content-encoding"


class ProtoServer:
    def __init__(self, listener: Listener) -> None:
        self.listener = listener
        self.server: asyncio.AbstractServer | None = None
        self.port = 0

    async def start(self) -> None:
        loop = asyncio.get_running_loop()
        self.server = await loop.create_server(lambda: _Conn(self.listener), "127.0.0.1", 0, backlog=64)
        self.port = self.server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        assert self.server is not None
        self.server.close()
        await self.server.wait_closed()


class _Conn(asyncio.Protocol):
    def __init__(self, listener: Listener) -> None:
        self.listener = listener
        self.parser = httptools.HttpRequestParser(self)
        self.transport: asyncio.Transport | None = None
        self.queue: list[tuple[str, dict[str, str], bytes, bool]] = []
        self.busy = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserError:
            assert self.transport is not None
            self.transport.write(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            self.transport.close()

    def on_message_begin(self) -> None:
        self.url = b""
        self.headers: dict[str, str] = {}
        self.chunks: list[bytes] = []

    def on_url(self, url: bytes) -> None:
        self.url += url

    def on_header(self, name: bytes, value: bytes) -> None:
        key = _INTEREST.get(name.lower())
        if key is not None:
            self.headers[key] = value.decode("latin-1")[:1024]

    def on_body(self, body: bytes) -> None:
        self.chunks.append(body)

    def on_message_complete(self) -> None:
        chunks = self.chunks
        body = chunks[0] if len(chunks) == 1 else b"".join(chunks)
        self.queue.append((self.url.decode("latin-1"), self.headers, body, self.parser.should_keep_alive()))
        if not self.busy:
            self.busy = True
            asyncio.get_running_loop().create_task(self._serve())

    async def _serve(self) -> None:
        try:
            while self.queue:
                await self._handle(*self.queue.pop(0))
        finally:
            self.busy = False

    async def _handle(self, target: str, headers: dict[str, str], body: bytes, keep_alive: bool) -> None:
        listener = self.listener
        received_at = datetime.now(UTC)
        path = redact_query(target)
        encoding = headers.pop("content-encoding", None)
        if encoding is not None and encoding.strip().lower() not in ("", "identity"):
            raise NotImplementedError
        if len(body) > listener.max_body:
            raise NotImplementedError
        async with listener.in_flight.reserve(len(body), timeout=IN_FLIGHT_WAIT):
            judged = _judge(listener._hmac_key, body, headers.get(SIGNATURE_HEADER), headers.get("content-type", ""))
            verdict = judged.verdict
            status, reason = 200, None
            if listener.refuses(verdict, path):
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
            event = await listener._store(record)
        transport = self.transport
        assert transport is not None and event is not None and status == 200
        answer = b'{"id":%d}' % event.id
        transport.write(
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\nDate: %s\r\n\r\n%s"
            % (len(answer), rfc822_formatted_time().encode(), answer)
        )
        if not keep_alive:
            transport.close()
