"""The 200 on the wire: the listener writes it in one piece for HTTP/1.1 keep-alive requests (status line,
Content-Type, Content-Length, Date and the JSON body, exactly), and the connection stays usable for the next event;
HTTP/1.0 and `Connection: close` requests get an answer of their version and a closed connection."""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import AsyncIterator

from tests.webhooks.conftest import KEY
from tui.api.signing import sign

BODY = b'{"type":"Message","event":{"Info":{"ID":"M1"},"Message":{"conversation":"hi"}}}'
WAIT = 10.0
DATE = r"[A-Z][a-z]{2}, \d\d [A-Z][a-z]{2} \d{4} \d\d:\d\d:\d\d GMT"


def post(version: str = "1.1", extra: str = "") -> bytes:
    return (
        f"POST /hook HTTP/{version}\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"x-hmac-signature: {sign(KEY, BODY)}\r\nContent-Length: {len(BODY)}\r\n{extra}\r\n"
    ).encode() + BODY


@contextlib.asynccontextmanager
async def connected(port: int) -> AsyncIterator[tuple[asyncio.StreamReader, asyncio.StreamWriter]]:
    """A raw connection to the listener, closed on the way out."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        yield reader, writer
    finally:
        writer.close()


async def answer(reader: asyncio.StreamReader) -> tuple[bytes, bytes]:
    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), WAIT)
    length = int(re.search(rb"Content-Length: (\d+)", head).group(1))
    return head, await asyncio.wait_for(reader.readexactly(length), WAIT)


async def test_keep_alive_answers_are_complete_and_the_connection_is_reused(store, start_listener):
    listener = await start_listener(hmac_key=KEY)
    async with connected(listener.port) as (reader, writer):
        for expected_id in (1, 2, 3):
            writer.write(post())
            head, body = await answer(reader)
            assert re.fullmatch(
                rb"HTTP/1\.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: \d+\r\n"
                rb"Date: " + DATE.encode() + rb"\r\n\r\n",
                head,
            ), head
            assert body == b'{"id":%d}' % expected_id
            assert store.get(expected_id) is not None  # answered only once stored


async def test_pipelined_requests_get_their_answers_in_order(store, start_listener):
    listener = await start_listener(hmac_key=KEY)
    async with connected(listener.port) as (reader, writer):
        writer.write(post() * 3)
        bodies = [(await answer(reader))[1] for _ in range(3)]
        assert bodies == [b'{"id":1}', b'{"id":2}', b'{"id":3}']


async def test_http_1_0_and_connection_close_get_a_closing_answer(store, start_listener):
    listener = await start_listener(hmac_key=KEY)
    for request, expected in ((post("1.0"), b"HTTP/1.0 200 OK\r\n"), (post(extra="Connection: close\r\n"), None)):
        async with connected(listener.port) as (reader, writer):
            writer.write(request)
            head, body = await answer(reader)
            assert head.startswith(expected or b"HTTP/1.1 200 OK\r\n")
            if expected is None:
                assert b"\r\nConnection: close\r\n" in head
            assert body.startswith(b'{"id":')
            assert await asyncio.wait_for(reader.read(), WAIT) == b""  # closed by the listener


async def test_expect_100_continue_is_answered_before_the_body_is_sent(store, start_listener):
    listener = await start_listener(hmac_key=KEY)
    head, _, body = post(extra="Expect: 100-continue\r\n").partition(b"\r\n\r\n")
    async with connected(listener.port) as (reader, writer):
        writer.write(head + b"\r\n\r\n")
        assert await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), WAIT) == b"HTTP/1.1 100 Continue\r\n\r\n"
        writer.write(body)
        head, answered = await answer(reader)
        assert head.startswith(b"HTTP/1.1 200 OK\r\n") and answered == b'{"id":1}'


async def test_http_1_0_keep_alive_is_kept_open_and_says_so(store, start_listener):
    listener = await start_listener(hmac_key=KEY)
    async with connected(listener.port) as (reader, writer):
        for expected_id in (1, 2):
            writer.write(post("1.0", "Connection: keep-alive\r\n"))
            head, body = await answer(reader)
            assert head.startswith(b"HTTP/1.0 200 OK\r\n") and b"\r\nConnection: keep-alive\r\n" in head
            assert body == b'{"id":%d}' % expected_id


async def test_a_sender_that_half_closes_after_its_request_still_gets_the_answer(store, start_listener):
    listener = await start_listener(hmac_key=KEY)
    async with connected(listener.port) as (reader, writer):
        writer.write(post() * 2)
        writer.write_eof()
        bodies = [(await answer(reader))[1] for _ in range(2)]
        assert bodies == [b'{"id":1}', b'{"id":2}']
        assert await asyncio.wait_for(reader.read(), WAIT) == b""  # then closed by the listener


async def test_garbage_after_pipelined_requests_is_answered_400_after_them(store, start_listener):
    listener = await start_listener(hmac_key=KEY)
    async with connected(listener.port) as (reader, writer):
        writer.write(post() * 2)
        bodies = [(await answer(reader))[1] for _ in range(2)]
        writer.write(b"NOT HTTP AT ALL\r\n\r\n")
        head, _body = await answer(reader)
        assert bodies == [b'{"id":1}', b'{"id":2}']
        assert head.startswith(b"HTTP/1.1 400 ") and b"\r\nConnection: close\r\n" in head
        assert await asyncio.wait_for(reader.read(), WAIT) == b""
        assert store.get(2) is not None


async def test_head_gets_the_head_its_get_would_get_and_no_body(store, start_listener):
    """RFC 9110 9.3.2: the same header fields as for GET (Content-Length the GET body's size, as 8.6 allows), and no
    body: the next bytes on the wire are the next answer's status line."""
    listener = await start_listener(hmac_key=KEY)
    async with connected(listener.port) as (reader, writer):
        writer.write(b"GET /hook HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        get_head, get_body = await answer(reader)
        writer.write(b"HEAD /hook HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" + post())
        head_head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), WAIT)
        after, body = await answer(reader)
    assert get_head.startswith(b"HTTP/1.1 405 ") and len(get_body) > 0
    assert re.sub(DATE.encode(), b"", head_head) == re.sub(DATE.encode(), b"", get_head)
    assert after.startswith(b"HTTP/1.1 200 OK\r\n") and body == b'{"id":1}'
    async with connected(listener.port) as (reader, writer):  # HTTP/1.0: the head, then the connection closed
        writer.write(b"HEAD /hook HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
        closing = await asyncio.wait_for(reader.read(), WAIT)
    assert closing.startswith(b"HTTP/1.0 405 ") and closing.endswith(b"\r\n\r\n")
    assert b"Content-Length: %d\r\n" % len(get_body) in closing


async def test_bytes_after_a_request_that_closes_are_ignored_and_it_is_answered(store, start_listener):
    """RFC 9112 9.6: nothing after a `Connection: close` (or HTTP/1.0) request is read. Once a 400 with the request
    dropped, when more bytes came in the same read: a 4xx tells a gateway not to retry."""
    listener = await start_listener(hmac_key=KEY)
    for closing in (post(extra="Connection: close\r\n"), post("1.0")):
        async with connected(listener.port) as (reader, writer):
            writer.write(closing + post() + b"NOT HTTP AT ALL\r\n\r\n")
            head, body = await answer(reader)
            assert head.startswith((b"HTTP/1.1 200 OK\r\n", b"HTTP/1.0 200 OK\r\n")), head
            assert await asyncio.wait_for(reader.read(), WAIT) == b""  # then closed, nothing more answered
    assert (listener.received, listener.duplicates) == (1, 1)  # both stored (the same body: the second a repeat)
    assert store.get(3) is None
