"""A loopback HTTP server that records raw requests and answers with canned replies, for wire-level tests.

It knows nothing about the spec: tests say what to answer and compare what arrived with literal JSON.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web


@dataclass(frozen=True)
class Recorded:
    method: str
    raw_path: str  # as sent, still percent-encoded, without the query
    query: dict[str, str]
    headers: dict[str, str]
    body: bytes
    peer: tuple[str, int] | None = None  # client address; one port across calls means a reused connection

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class Reply:
    status: int = 200
    body: str | bytes = "{}"
    headers: dict[str, str] = field(default_factory=lambda: {"Content-Type": "application/json"})
    delay: float = 0.0
    echo: bool = False  # answer with everything the request carried, as a careless server might


class RecordingGateway:
    def __init__(self) -> None:
        self.requests: list[Recorded] = []
        self._replies: dict[tuple[str, str], list[Reply]] = {}
        self.default = Reply()
        self._runner: web.AppRunner | None = None
        self.url = ""
        self._released = asyncio.Event()

    def reply(
        self,
        method: str,
        path_suffix: str,
        status: int = 200,
        *,
        json_body: Any = None,
        text: str | bytes | None = None,
        headers: dict[str, str] | None = None,
        delay: float = 0.0,
    ) -> None:
        """Queue an answer for the next request whose raw path ends with `path_suffix`; the last one repeats."""
        if text is None:
            body: str | bytes = json.dumps(json_body if json_body is not None else {})
            content_type = {"Content-Type": "application/json"}
        else:
            body = text
            content_type = {"Content-Type": "text/plain"}
        reply = Reply(status, body, {**content_type, **(headers or {})}, delay)
        self._replies.setdefault((method, path_suffix), []).append(reply)

    def echo(self, method: str, path_suffix: str, status: int = 400) -> None:
        self._replies.setdefault((method, path_suffix), []).append(Reply(status, echo=True))

    def _reply_for(self, method: str, raw_path: str) -> Reply:
        for (reply_method, suffix), queue in self._replies.items():
            if reply_method == method and raw_path.endswith(suffix):
                return queue.pop(0) if len(queue) > 1 else queue[0]
        return self.default

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        raw_path = request.raw_path.split("?", 1)[0]
        self.requests.append(
            Recorded(
                method=request.method,
                raw_path=raw_path,
                query=dict(request.query),
                headers=dict(request.headers),
                body=await request.read(),
                peer=request.transport.get_extra_info("peername")[:2] if request.transport else None,
            )
        )
        reply = self._reply_for(request.method, raw_path)
        if reply.delay:
            # Released early by stop(), so shutdown never waits for a deliberately slow answer.
            try:
                await asyncio.wait_for(self._released.wait(), reply.delay)
            except TimeoutError:
                pass
        if reply.echo:
            seen = self.requests[-1]
            reply.body = json.dumps({
                "error": f"{seen.method} {request.raw_path} {seen.headers} {seen.body.decode(errors='replace')}"
            })
        body = reply.body.encode() if isinstance(reply.body, str) else reply.body
        return web.Response(status=reply.status, body=body, headers=reply.headers)

    async def start(self) -> None:
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self._handle)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        host, port = self._runner.addresses[0][:2]
        self.url = f"http://{host}:{port}"

    async def stop(self) -> None:
        self._released.set()
        if self._runner is not None:
            await self._runner.cleanup()

    @property
    def last(self) -> Recorded:
        return self.requests[-1]
