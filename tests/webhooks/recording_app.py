"""A stand-in for the user's own app: an aiohttp server on 127.0.0.1 that records every request exactly.

It can be told to answer a status for the next requests, or to hold every answer until released (a slow app).
"""

from __future__ import annotations

import asyncio
import socket
from dataclasses import dataclass

from aiohttp import web


@dataclass(frozen=True)
class Received:
    path: str
    headers: dict[str, str]  # lower-case names
    body: bytes


class RecordingApp:
    def __init__(self, port: int = 0) -> None:
        self.received: list[Received] = []
        self.statuses: list[int] = []  # answered to the next requests, in order; then 200
        self.release = asyncio.Event()
        self.release.set()  # cleared: every answer waits (a slow app)
        self.arrived = asyncio.Condition()
        self._port = port
        self._runner: web.AppRunner | None = None
        self.port: int | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hooks/gateway"

    async def start(self) -> RecordingApp:
        app = web.Application()
        app.router.add_route("*", "/{path:.*}", self._handle)
        self._runner = web.AppRunner(app, handle_signals=False, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", self._port, reuse_address=True)
        await site.start()
        self.port = self._runner.addresses[0][1]
        return self

    async def stop(self) -> None:
        self.release.set()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def wait_for(self, count: int, timeout: float = 20.0) -> list[Received]:
        async with asyncio.timeout(timeout):
            async with self.arrived:
                await self.arrived.wait_for(lambda: len(self.received) >= count)
        return list(self.received)

    async def _handle(self, request: web.Request) -> web.Response:
        body = await request.read()
        received = Received(request.path, {name.lower(): value for name, value in request.headers.items()}, body)
        async with self.arrived:
            self.received.append(received)
            self.arrived.notify_all()
        await self.release.wait()
        status = self.statuses.pop(0) if self.statuses else 200
        return web.json_response({"ok": status == 200}, status=status)


def free_port() -> int:
    """A port nothing listens on right now (the app "down"); the test starts the app on it later."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]
