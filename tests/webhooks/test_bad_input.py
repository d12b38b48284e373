"""Hostile and broken requests over a raw socket: each one gets an answer, and valid events still get through."""

from __future__ import annotations

import asyncio
import os

import pytest

from tests.webhooks.conftest import KEY
from tests.webhooks.test_signing import JSON_BODY, JSON_BODY_SIGNATURE

VALID_REQUEST_HEADERS = f"Content-Type: application/json\r\nx-hmac-signature: {JSON_BODY_SIGNATURE}\r\n"


def request(method: str, body: bytes, headers: str = "Content-Type: application/json\r\n", path: str = "/hook") -> bytes:
    return (
        f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{headers}Content-Length: {len(body)}\r\n"
        "Connection: close\r\n\r\n"
    ).encode() + body


async def exchange(port: int, raw: bytes) -> int | None:
    """Send raw bytes, return the status code of the answer (None when the server closed without one)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        try:
            writer.write(raw)
            await writer.drain()
        except ConnectionError:
            pass  # the server may answer and close before reading everything we meant to send
        status_line = await asyncio.wait_for(reader.readline(), timeout=10)
        return int(status_line.split()[1]) if status_line else None
    finally:
        writer.close()
        try:
            await writer.wait_closed()
        except ConnectionError:
            pass


BAD_REQUESTS = {
    "malformed JSON": (request("POST", b'{"type": "Message", "event": {'), 400),
    "JSON of the wrong encoding": (request("POST", '{"a": "é"}'.encode("latin-1")), 400),
    "deeply nested JSON": (request("POST", b"[" * 200_000), 400),
    "truncated form data": (
        request("POST", b"instanceName=x&jsonData=%7B%22type%22%3A%22Mess", "Content-Type: application/x-www-form-urlencoded\r\n"),
        400,
    ),
    "form without jsonData": (request("POST", b"a=1&b=2", "Content-Type: application/x-www-form-urlencoded\r\n"), 400),
    "empty body": (request("POST", b""), 400),
    "binary garbage body": (request("POST", os.urandom(4096) + b"\xff"), 400),
    "oversized body (declared)": (request("POST", b"x" * (1024 * 1024 + 1)), 413),
    "oversized chunked body": (
        b"POST /hook HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
        + b"".join(b"10000\r\n" + b"a" * 0x10000 + b"\r\n" for _ in range(20))
        + b"0\r\n\r\n",
        413,
    ),
    "GET": (request("GET", b""), 405),
    "PUT": (request("PUT", JSON_BODY), 405),
    "DELETE": (request("DELETE", b""), 405),
    "HEAD": (request("HEAD", b""), 405),
    "unknown method": (request("BREW", JSON_BODY), 400),  # refused by aiohttp's HTTP parser itself
    "huge header": (request("POST", JSON_BODY, f"X-Huge: {'h' * 100_000}\r\n"), 400),
    "many headers": (request("POST", JSON_BODY, "".join(f"X-H{i}: v\r\n" for i in range(2000))), 400),
    "huge path": (request("POST", JSON_BODY, path="/" + "p" * 100_000), 400),
    "garbage instead of HTTP": (os.urandom(2048).replace(b"\r\n", b"xx") + b"\r\n\r\n", 400),
    "lying Content-Length": (
        b"POST /hook HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\nConnection: close\r\n\r\n{}",
        400,
    ),
    "undecodable header bytes": (request("POST", JSON_BODY).replace(b"Host:", b"User-Agent: \xff\xfe\x80\r\nHost:"), 200),
}


@pytest.mark.parametrize("name", list(BAD_REQUESTS))
async def test_each_bad_request_is_answered(store, start_listener, name):
    listener = await start_listener(max_body=1024 * 1024)  # the oversized cases are sized against 1 MiB
    raw, expected = BAD_REQUESTS[name]
    assert await exchange(listener.port, raw) == expected


async def test_listener_keeps_serving_after_all_of_them(store, start_listener):
    listener = await start_listener(hmac_key=KEY)
    for raw, _expected in BAD_REQUESTS.values():
        assert await exchange(listener.port, raw) is not None
    # Half-sent requests, then the peer vanishes: nothing to answer, and nothing may break.
    for partial in (b"POST /hook HTTP/1.1\r\nContent-Length: 100\r\n\r\n{", b"POST /ho"):
        _reader, writer = await asyncio.open_connection("127.0.0.1", listener.port)
        writer.write(partial)
        await writer.drain()
        writer.close()
    ok = request("POST", JSON_BODY, VALID_REQUEST_HEADERS)
    assert await exchange(listener.port, ok) == 200
    newest = store.newest(1)[0]
    assert (newest.verdict, newest.rejected, newest.body) == ("valid", False, JSON_BODY)


async def test_garbage_rows_are_kept_as_rejected(store, start_listener):
    listener = await start_listener()
    garbage = b"\x00\xff\xfe garbage \x81"
    assert await exchange(listener.port, request("POST", garbage)) == 400
    event = store.newest(1)[0]
    assert (event.rejected, event.body, event.kind) == (True, garbage, "unknown")
    assert event.to_json()["body_base64"]  # binary bodies export losslessly


async def test_undecodable_header_bytes_are_stored_readably(store, start_listener):
    listener = await start_listener()
    raw = request("POST", JSON_BODY).replace(b"Host:", b"User-Agent: bot\xff\xfe\r\nHost:")
    assert await exchange(listener.port, raw) == 200
    user_agent = store.newest(1)[0].headers["user-agent"]
    assert user_agent.startswith("bot") and len(user_agent) > 3
    user_agent.encode("utf-8")  # no lone surrogates left to break printing or export
