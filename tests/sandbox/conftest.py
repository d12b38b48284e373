"""A sandbox gateway on 127.0.0.1 port 0 per test, clients of both families pointed at it, and a webhook target
that keeps what the sandbox delivers to it."""

from __future__ import annotations

import pytest
from aiohttp import web

from tui.api.client import GatewayHttp
from tui.gateways.clients import InstanceClient, SessionClient
from tui.api.credentials import InstanceCredentials, SessionCredentials
from tui.gateways.sandbox import SandboxGateway

INSTANCE_ID = "sbx-inst"
INSTANCE_TOKEN = "sbx-instance-token"
CLIENT_TOKEN = "sbx-client-token"
SESSION_TOKEN = "sbx-session-token"


@pytest.fixture
async def sandbox():
    gateway = SandboxGateway(
        instance_id=INSTANCE_ID,
        instance_token=INSTANCE_TOKEN,
        client_token=CLIENT_TOKEN,
        session_token=SESSION_TOKEN,
        delivery_delay=0.0,
    )
    await gateway.start()
    yield gateway
    await gateway.stop()


@pytest.fixture
async def http():
    async with GatewayHttp(timeout=5.0) as shared:
        yield shared


@pytest.fixture
def instance(http, sandbox) -> InstanceClient:
    return InstanceClient(http, InstanceCredentials(sandbox.url, INSTANCE_ID, INSTANCE_TOKEN, CLIENT_TOKEN))


@pytest.fixture
def session(http, sandbox) -> SessionClient:
    return SessionClient(http, SessionCredentials(sandbox.url, SESSION_TOKEN))


class Receiver:
    """A webhook target on 127.0.0.1 port 0 that keeps every request's path, headers and raw body."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, dict[str, str], bytes]] = []
        self._runner: web.AppRunner | None = None
        self.url = ""

    async def start(self) -> None:
        async def record(request: web.Request) -> web.Response:
            self.requests.append((request.path, dict(request.headers), await request.read()))
            return web.Response(text="ok")

        app = web.Application()
        app.router.add_post("/{tail:.*}", record)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.url = f"http://127.0.0.1:{self._runner.addresses[0][1]}"

    async def stop(self) -> None:
        await self._runner.cleanup()

    def at(self, path: str) -> list[tuple[dict[str, str], bytes]]:
        return [(headers, body) for seen, headers, body in self.requests if seen == path]


@pytest.fixture
async def receiver():
    target = Receiver()
    await target.start()
    yield target
    await target.stop()
