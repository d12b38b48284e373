"""Differential test of the listener's HTTP layer (connections.py and http_connection.py, on httptools: llhttp) against h11, a separate
HTTP/1.1 implementation: the same byte streams, whole and split at every byte, go to our server over a real socket
and to an h11 server connection, and each must frame them the same way: for every request its method, target and
body (a POST's body; other methods' bodies are never kept by the listener, so for them only the framing of what
follows is compared); and where h11 refuses a stream, our server refuses it too (a 400 and a close), after at most
the requests h11 accepted before the refusal (those that came in the same read as a refused head are dropped, as
http_connection.py says). The few deliberate differences are listed in DIFFERENT, each with its reason, and checked to
be exactly as described, so the list stays true.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import AsyncIterator, Iterable
from typing import NamedTuple

import h11
import pytest

from tui.webhooks import http_connection
from tui.webhooks.budget import ByteBudget
from tui.webhooks.connections import Server
from tui.webhooks.http_request import Answer, BrokenFraming, PeerGone, Request

CEILING = 10.0  # seconds: the longest any one exchange may take (they take milliseconds)
HOST = "Host: x\r\n"


class Seen(NamedTuple):
    method: str
    target: str
    body: bytes | None  # None: not a POST, its body (if any) never kept


class Outcome(NamedTuple):
    requests: tuple[Seen, ...]
    refused: bool  # the stream was refused as malformed (not merely cut short by the end of the stream)


def post(body: bytes, target: str = "/h", extra: str = "") -> bytes:
    return f"POST {target} HTTP/1.1\r\n{HOST}{extra}Content-Length: {len(body)}\r\n\r\n".encode() + body


def chunked(*chunks: bytes, target: str = "/h", extensions: str = "", trailers: str = "", extra: str = "") -> bytes:
    head = f"POST {target} HTTP/1.1\r\n{HOST}{extra}Transfer-Encoding: chunked\r\n\r\n".encode()
    body = b"".join(b"%x%s\r\n%s\r\n" % (len(chunk), extensions.encode(), chunk) for chunk in chunks)
    return head + body + b"0\r\n" + trailers.encode() + b"\r\n"


H2C = "Upgrade: h2c\r\nConnection: Upgrade, HTTP2-Settings\r\nHTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\n"

STREAMS: dict[str, bytes] = {
    # -- well-formed ---------------------------------------------------------------------------------------------
    "one POST": post(b'{"a":1}'),
    "pipelined POSTs": post(b'{"n":1}', "/a") + post(b'{"n":2}', "/b?x=1&y=%20") + post(b"", "/c"),
    "GET then POST": f"GET /g HTTP/1.1\r\n{HOST}\r\n".encode() + post(b"{}"),
    "GET with a body then POST": f"GET /g HTTP/1.1\r\n{HOST}Content-Length: 3\r\n\r\nabc".encode() + post(b"{}"),
    "HEAD then POST": f"HEAD /h HTTP/1.1\r\n{HOST}\r\n".encode() + post(b"{}"),
    "POST without a length": f"POST /h HTTP/1.1\r\n{HOST}\r\n".encode() + post(b"{}"),
    "chunked": chunked(b'{"a":', b"1}") + post(b"{}"),
    "chunk extensions": chunked(b"hello", b"world", extensions=';name=value;q="quoted"') + post(b"{}"),
    "trailers": chunked(b"hello", trailers="X-Trailer: one\r\nX-Other: two\r\n") + post(b"{}"),
    "chunk sizes in upper case with leading zeros": (
        f"POST /h HTTP/1.1\r\n{HOST}Transfer-Encoding: chunked\r\n\r\n".encode() + b"000A\r\n0123456789\r\n00\r\n\r\n"
    ),
    "case and spaces in header names and values": (
        f"POST /h HTTP/1.1\r\n{HOST}content-LENGTH:    2   \r\n\r\n{{}}".encode() + post(b"{}")
    ),
    "HTTP/1.0 POST": b"POST /h HTTP/1.0\r\nContent-Length: 2\r\n\r\n{}" + post(b"{}"),
    "HTTP/1.0 keep-alive": b"POST /h HTTP/1.0\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\n{}" + post(b"{}"),
    "Connection: close then more": post(b"{}", extra="Connection: close\r\n") + post(b"{}"),
    "absolute-form target": post(b"{}", "http://x/h?q=1"),
    "Expect: 100-continue": post(b"{}", extra="Expect: 100-continue\r\n") + post(b"{}"),
    # Past MAX_QUEUED and FEED_SLICE (http_connection.py): the rest of the read is parsed as the first are answered.
    "60 pipelined, of each kind": b"".join(
        post(b'{"n":%d}' % n, f"/p{n}") + chunked(b"c%d" % n, extensions=";x=1") + f"GET /g{n} HTTP/1.1\r\n{HOST}\r\n".encode()
        for n in range(20)
    ),
    "a large body, then pipelined": post(bytes(range(256)) * 80) + chunked(b"x" * 9000, b"y") + post(b"{}") * 12,
    "h2c upgrade on a POST": post(b'{"u":1}', extra=H2C) + post(b'{"u":2}'),
    "h2c upgrade on a chunked POST": chunked(b'{"u":', b"1}", extra=H2C) + post(b"{}"),
    "websocket upgrade on a GET": f"GET /ws HTTP/1.1\r\n{HOST}Upgrade: websocket\r\nConnection: Upgrade\r\n\r\n".encode()
    + post(b"{}"),
    "cut short in a head": post(b"{}") + b"POST /h HTTP/1.1\r\nHo",
    "cut short in a body": post(b"{}") + f"POST /h HTTP/1.1\r\n{HOST}Content-Length: 10\r\n\r\n{{}}".encode(),
    "cut short in a chunk": post(b"{}") + f"POST /h HTTP/1.1\r\n{HOST}Transfer-Encoding: chunked\r\n\r\n5\r\nhe".encode(),
    # -- malformed -----------------------------------------------------------------------------------------------
    "bad chunk size": f"POST /h HTTP/1.1\r\n{HOST}Transfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n".encode(),
    "chunk size overflowing 64 bits": (
        f"POST /h HTTP/1.1\r\n{HOST}Transfer-Encoding: chunked\r\n\r\n1ffffffffffffffff\r\nhello\r\n0\r\n\r\n".encode()
    ),
    "negative chunk size": f"POST /h HTTP/1.1\r\n{HOST}Transfer-Encoding: chunked\r\n\r\n-5\r\nhello\r\n0\r\n\r\n".encode(),
    "chunk longer than its size": (
        f"POST /h HTTP/1.1\r\n{HOST}Transfer-Encoding: chunked\r\n\r\n5\r\nhelloXX\r\n0\r\n\r\n".encode()
    ),
    "pipelined POST then a bad chunk size": post(b"{}")
    + f"POST /h HTTP/1.1\r\n{HOST}Transfer-Encoding: chunked\r\n\r\n2\r\n{{}}\r\nnot-a-size\r\n\r\n".encode(),
    "two different Content-Lengths": f"POST /h HTTP/1.1\r\n{HOST}Content-Length: 2\r\nContent-Length: 3\r\n\r\n{{}}x".encode(),
    "two equal Content-Lengths": f"POST /h HTTP/1.1\r\n{HOST}Content-Length: 2\r\nContent-Length: 2\r\n\r\n{{}}".encode(),
    "Content-Length list": f"POST /h HTTP/1.1\r\n{HOST}Content-Length: 2, 2\r\n\r\n{{}}".encode(),
    "Content-Length and chunked": (
        f"POST /h HTTP/1.1\r\n{HOST}Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n".encode()
    ),
    "chunked, then Content-Length": (
        f"POST /h HTTP/1.1\r\n{HOST}Transfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n5\r\nhello\r\n0\r\n\r\n".encode()
    ),
    "chunked not last": (
        f"POST /h HTTP/1.1\r\n{HOST}Transfer-Encoding: chunked, gzip\r\n\r\n5\r\nhello\r\n0\r\n\r\n".encode()
    ),
    "Transfer-Encoding gzip, chunked": (
        f"POST /h HTTP/1.1\r\n{HOST}Transfer-Encoding: gzip, chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n".encode() + post(b"{}")
    ),
    "Transfer-Encoding twice": (
        f"POST /h HTTP/1.1\r\n{HOST}Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n".encode()
    ),
    "Transfer-Encoding identity": f"POST /h HTTP/1.1\r\n{HOST}Transfer-Encoding: identity\r\n\r\n{{}}".encode(),
    "negative Content-Length": f"POST /h HTTP/1.1\r\n{HOST}Content-Length: -2\r\n\r\n{{}}".encode(),
    "Content-Length with a plus sign": f"POST /h HTTP/1.1\r\n{HOST}Content-Length: +2\r\n\r\n{{}}".encode(),
    "Content-Length not a number": f"POST /h HTTP/1.1\r\n{HOST}Content-Length: abc\r\n\r\n{{}}".encode(),
    "Content-Length shorter than the body": post(b"{}") + b"trailing garbage\r\n\r\n",
    "bare LF line endings": b"POST /h HTTP/1.1\nHost: x\nContent-Length: 2\n\n{}",
    "bare LF after a header": f"POST /h HTTP/1.1\r\n{HOST}X-A: 1\nContent-Length: 2\r\n\r\n{{}}".encode(),
    "bare CR in a header": f"POST /h HTTP/1.1\r\n{HOST}X-A: 1\rX-B: 2\r\nContent-Length: 2\r\n\r\n{{}}".encode(),
    "obs-fold": f"POST /h HTTP/1.1\r\n{HOST}X-Folded: one\r\n two\r\nContent-Length: 2\r\n\r\n{{}}".encode(),
    "obs-fold of Content-Length": f"POST /h HTTP/1.1\r\n{HOST}Content-Length:\r\n 2\r\n\r\n{{}}".encode(),
    "space before the colon": f"POST /h HTTP/1.1\r\n{HOST}Content-Length : 2\r\n\r\n{{}}".encode(),
    "header line without a colon": f"POST /h HTTP/1.1\r\n{HOST}Just-A-Name\r\nContent-Length: 2\r\n\r\n{{}}".encode(),
    "NUL in a header value": f"POST /h HTTP/1.1\r\n{HOST}X-A: a\0b\r\nContent-Length: 2\r\n\r\n{{}}".encode(),
    "oversized header": post(b"{}", extra=f"X-Huge: {'h' * 100_000}\r\n"),
    "oversized target": post(b"{}", "/" + "p" * 100_000),
    "many small headers": post(b"{}", extra="".join(f"X-H{i}: v\r\n" for i in range(150))),
    "unknown method": f"BREW /h HTTP/1.1\r\n{HOST}Content-Length: 2\r\n\r\n{{}}".encode(),
    "method in lower case": f"post /h HTTP/1.1\r\n{HOST}Content-Length: 2\r\n\r\n{{}}".encode(),
    "HTTP/1.2": f"POST /h HTTP/1.2\r\n{HOST}Content-Length: 2\r\n\r\n{{}}".encode(),
    "HTTP/2.0 in an HTTP/1 head": f"POST /h HTTP/2.0\r\n{HOST}Content-Length: 2\r\n\r\n{{}}".encode(),
    "HTTP/2 preface": b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
    "version in lower case": f"POST /h http/1.1\r\n{HOST}Content-Length: 2\r\n\r\n{{}}".encode(),
    "two spaces in the request line": f"POST  /h HTTP/1.1\r\n{HOST}Content-Length: 2\r\n\r\n{{}}".encode(),
    "space in the target": f"POST /a b HTTP/1.1\r\n{HOST}Content-Length: 2\r\n\r\n{{}}".encode(),
    "no Host": b"POST /h HTTP/1.1\r\nContent-Length: 2\r\n\r\n{}",
    "two Hosts": f"POST /h HTTP/1.1\r\n{HOST}{HOST}Content-Length: 2\r\n\r\n{{}}".encode(),
    "garbage": b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03 not HTTP\r\n\r\n",
    "pipelined POSTs then garbage": post(b'{"n":1}') + post(b'{"n":2}') + b"NOT HTTP AT ALL\r\n\r\n",
    "CONNECT": b"CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n" + post(b"{}"),
}

# Streams on which our server and h11 disagree on purpose, and why ours is kept: "ours refuses" (a 400 and a close
# where h11 reads the request), "ours accepts" (ours reads it, or reads more, where h11 refuses or stops). Each is
# checked to differ exactly that way. The refusals are llhttp's strict mode and the listener's head limits; RFC 9110
# and 9112 allow each of them, and none of them is something a real gateway sends.
REFUSES, ACCEPTS = "ours refuses", "ours accepts"
DIFFERENT: dict[str, tuple[str, str]] = {
    "two equal Content-Lengths": (REFUSES, "RFC 9110 8.6 lets a recipient reject repeated Content-Lengths"),
    "Content-Length list": (REFUSES, "the same, as one list-valued field"),
    "Content-Length and chunked": (REFUSES, "RFC 9112 6.3 lets a server reject both: the classic smuggling pair"),
    "chunked, then Content-Length": (REFUSES, "the same, in the other order"),
    "bare LF line endings": (REFUSES, "RFC 9112 2.2 only lets a recipient accept a bare LF; a smuggling vector"),
    "bare LF after a header": (REFUSES, "the same, in one line"),
    "obs-fold": (REFUSES, "RFC 9112 5.2: a server must reject obs-fold with 400 or unfold it; llhttp rejects"),
    "obs-fold of Content-Length": (REFUSES, "the same, on a framing header"),
    "chunk size overflowing 64 bits": (REFUSES, "llhttp refuses a chunk size past 64 bits; h11 waits for its bytes"),
    "oversized header": (REFUSES, "the listener's head limits (8190 bytes a line, as aiohttp's); h11 checks its "
                         "16 KiB limit only on a head still incomplete"),
    "oversized target": (REFUSES, "the same, for the request line"),
    "many small headers": (REFUSES, "the listener's limit of 100 header lines (h11 has none below 16 KiB)"),
    "unknown method": (REFUSES, "llhttp knows only registered methods; h11 reads any token (answered 405)"),
    "method in lower case": (REFUSES, "the same: methods are case-sensitive, `post` is not POST"),
    "HTTP/1.2": (REFUSES, "llhttp's strict version check (RFC 9112 2.3 would read it as 1.1); no sender uses it"),
    "HTTP/1.0 keep-alive": (ACCEPTS, "h11 closes after every HTTP/1.0 request; the listener keeps a 1.0 keep-alive "
                            "connection open (RFC 9112 C.2.2), as aiohttp did (test_answers)"),
    "two spaces in the request line": (ACCEPTS, "RFC 9112 3 lets a recipient split the request line on any "
                                       "whitespace: no framing ambiguity"),
    "no Host": (ACCEPTS, "RFC 9112 3.2 wants a 400, but the listener serves one site and uses no Host: refusing "
                "would only lose events from an odd client, and a 4xx tells a gateway not to retry"),
    "two Hosts": (ACCEPTS, "the same"),
}

# Representative streams also sent split at every byte boundary (each split point: two reads on the server).
SPLIT = (
    "pipelined POSTs",
    "chunk extensions",
    "trailers",
    "h2c upgrade on a POST",
    "h2c upgrade on a chunked POST",
    "pipelined POST then a bad chunk size",
    "Content-Length and chunked",
    "bare LF after a header",
)


# -- h11's reading ----------------------------------------------------------------------------------------------


def by_h11(pieces: Iterable[bytes]) -> Outcome:
    """Feed the pieces to an h11 server connection, answering each request as the listener would (200 to a POST,
    405 to anything else), then the end of the stream."""
    connection = h11.Connection(h11.SERVER)
    requests: list[Seen] = []
    method, target, body = "", "", b""
    for piece in (*pieces, b""):  # b"": the sender half-closes after its last byte
        connection.receive_data(piece)
        while True:
            try:
                event = connection.next_event()
            except h11.RemoteProtocolError:
                return Outcome(tuple(requests), refused=piece != b"")
            if event is h11.NEED_DATA or isinstance(event, h11.ConnectionClosed):
                break
            if isinstance(event, h11.Request):
                method, target, body = event.method.decode(), event.target.decode(), b""
            elif isinstance(event, h11.Data):
                body += event.data
            elif isinstance(event, h11.EndOfMessage):
                requests.append(Seen(method, target, body if method == "POST" else None))
                if method == "CONNECT":  # the listener closes after answering a CONNECT (see http_connection.py)
                    return Outcome(tuple(requests), refused=False)
                connection.send(h11.Response(status_code=200 if method == "POST" else 405, headers=[("Content-Length", "0")]))
                connection.send(h11.EndOfMessage())
                if connection.our_state is h11.MUST_CLOSE:
                    return Outcome(tuple(requests), refused=False)
                connection.start_next_cycle()
    return Outcome(tuple(requests), refused=False)


# -- our server's reading ---------------------------------------------------------------------------------------


class Ours:
    """Our server, with a handler that records what it is given, and a client that sends each piece as a read of
    its own: the next piece goes once the server has received all of this one (or has stopped reading for good)."""

    def __init__(self) -> None:
        self.seen: list[Seen] = []
        self.fed = 0  # bytes the server has received on the current connection
        self.reads = 0  # and in how many reads
        self.reading: asyncio.Transport | None = None  # the server's side of the current connection
        self.arrived = asyncio.Event()
        self.connections = 0
        # No key: every connection stays unproven, its body bytes counted against the whole budget as they arrive.
        self.server = Server(self.handler, cap=16, budget=ByteBudget(1 << 22), keyed=False, header_timeout=CEILING)
        self.port = 0

    async def handler(self, request: Request) -> Answer | None:
        body = None
        if request.method == "POST":
            try:
                body = await request.read(1 << 20, CEILING, 1.0)
            except BrokenFraming:
                return Answer(400, b"{}", close=True)  # as the listener answers broken framing (listener.py)
            except PeerGone:
                return None
        self.seen.append(Seen(request.method, request.target, body))
        return Answer(200 if request.method == "POST" else 405, b"{}")

    def received(self, transport: asyncio.Transport | None, data: bytes) -> None:
        self.fed += len(data)
        self.reads += 1
        self.reading = transport
        self.arrived.set()

    async def outcome(self, pieces: Iterable[bytes]) -> Outcome:
        self.seen.clear()
        self.fed = self.reads = 0
        self.reading = None
        self.connections += 1
        reader, writer = await asyncio.open_connection("127.0.0.1", self.port)
        sent = 0
        try:
            for piece in pieces:
                writer.write(piece)
                await writer.drain()
                sent += len(piece)
                await asyncio.wait_for(self._consumed(sent), CEILING)
            writer.write_eof()
        except ConnectionError:
            pass  # the server closed after refusing the stream
        answers = await asyncio.wait_for(_read_to_the_end(reader), CEILING)
        writer.close()
        statuses = [int(status) for status in re.findall(rb"HTTP/1\.[01] (\d{3}) ", answers)]
        return Outcome(tuple(self.seen), refused=bool(statuses) and statuses[-1] == 400)

    async def _consumed(self, sent: int) -> None:
        while self.fed < sent and not (self.reading is not None and self.reading.is_closing()):
            self.arrived.clear()
            with contextlib.suppress(TimeoutError):  # wakes to look at the transport now and then
                await asyncio.wait_for(self.arrived.wait(), 0.05)


async def _read_to_the_end(reader: asyncio.StreamReader) -> bytes:
    data = b""
    with contextlib.suppress(ConnectionError):
        while chunk := await reader.read(65536):
            data += chunk
    return data


@pytest.fixture
async def ours(monkeypatch) -> AsyncIterator[Ours]:
    wrapper = Ours()
    # The test's one reach into http_connection.py's private side: what the server has read, so that each piece can be
    # sent as a read of its own.
    original = http_connection._Connection.data_received

    def counting(self: http_connection._Connection, data: bytes) -> None:
        wrapper.received(self.transport, data)
        original(self, data)

    monkeypatch.setattr(http_connection._Connection, "data_received", counting)
    wrapper.port = await wrapper.server.start("127.0.0.1", 0)
    yield wrapper
    await wrapper.server.stop(1.0)


# -- the comparisons --------------------------------------------------------------------------------------------


def assert_same_framing(name: str, mine: Outcome, theirs: Outcome, cut: int | None = None) -> None:
    label = name if cut is None else f"{name} cut at {cut}"
    if name in DIFFERENT:
        direction, _reason = DIFFERENT[name]
        if direction == REFUSES:
            assert (mine.refused, theirs.refused) == (True, False) and mine.requests == (), (label, mine, theirs)
        else:
            assert not mine.refused and len(mine.requests) > len(theirs.requests), (label, mine, theirs)
            assert mine.requests[: len(theirs.requests)] == theirs.requests, (label, mine, theirs)
        return
    if theirs.refused:
        assert mine.refused, f"{label}: h11 refuses it, we do not: {mine}"
        assert theirs.requests[: len(mine.requests)] == mine.requests, (label, mine, theirs)
    else:
        assert mine == theirs, label


@pytest.mark.parametrize("name", list(STREAMS))
async def test_whole_streams_are_framed_as_h11_frames_them(ours, name):
    stream = STREAMS[name]
    assert_same_framing(name, await ours.outcome([stream]), by_h11([stream]))


@pytest.mark.parametrize("name", SPLIT)
async def test_streams_split_at_every_byte_are_framed_as_h11_frames_them(ours, name):
    stream = STREAMS[name]
    whole = by_h11([stream])
    for cut in range(1, len(stream)):
        pieces = [stream[:cut], stream[cut:]]
        mine, theirs = await ours.outcome(pieces), by_h11(pieces)
        assert theirs == whole, f"h11 frames {name!r} cut at {cut} differently"
        assert_same_framing(name, mine, theirs, cut)
        assert ours.reads >= 2 or mine.refused, f"{name} cut at {cut} came in one read"
    assert ours.connections == len(stream) - 1, "each cut was sent on a connection of its own"
