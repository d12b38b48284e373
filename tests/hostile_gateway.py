"""A gateway on loopback (port 0) that answers every request with the same hostile answer: one that never ends,
one that comes a byte a second, or one nested 100,000 levels deep. Tests run the real command against it.

    async with hostile_gateway(endless_answer) as url:
        code, out, err = await run_gateway_tui("call", "status", ...)

Every answer is bounded (in bytes and in time) so that a command that does not stop reading still ends.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable

Answer = Callable[[asyncio.StreamWriter], Awaitable[None]]

MIB = 1024 * 1024
ENDLESS_BYTES = 320 * MIB  # past the client's 256 MiB cap; a client without one reads it all and fails later
SLOW_BYTES = 120  # at one a second: longer than any test waits
NESTING = 100_000

HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n"


async def endless_answer(writer: asyncio.StreamWriter) -> None:
    """A 200 without a Content-Length whose body keeps coming (ENDLESS_BYTES of digits, then the connection ends)."""
    writer.write(HEAD + b"\r\n[")
    chunk = b"0," * (MIB // 2)
    for _ in range(ENDLESS_BYTES // len(chunk)):
        writer.write(chunk)
        await writer.drain()


async def slow_answer(writer: asyncio.StreamWriter) -> None:
    """A 200 whose body comes one byte a second: each read gets something before any per-read timeout."""
    body = b" " * (SLOW_BYTES - 2) + b"{}"
    writer.write(HEAD + b"Content-Length: %d\r\n\r\n" % len(body))
    for byte in body:
        await writer.drain()
        writer.write(bytes([byte]))
        await asyncio.sleep(1.0)  # the hostile gateway's pace, not a wait of the test


async def nested_answer(writer: asyncio.StreamWriter) -> None:
    """A 200 whose JSON body is NESTING arrays deep (Python's parser recurses once per level)."""
    body = b"[" * NESTING + b"]" * NESTING
    writer.write(HEAD + b"Content-Length: %d\r\n\r\n" % len(body) + body)
    await writer.drain()


@contextlib.asynccontextmanager
async def hostile_gateway(answer: Answer) -> AsyncIterator[str]:
    """Serve `answer` to every request on 127.0.0.1 (port 0) until the block ends: the gateway's base URL."""
    tasks: set[asyncio.Task[None]] = set()

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        tasks.add(asyncio.current_task())  # type: ignore[arg-type]
        try:
            await reader.readuntil(b"\r\n\r\n")
            await answer(writer)
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            pass  # the client went away: what a bounded client does
        finally:
            writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.close()
        for task in list(tasks):
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await server.wait_closed()
