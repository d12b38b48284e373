"""A sandbox gateway on 127.0.0.1 port 0 per test, and clients of both families pointed at it."""

from __future__ import annotations

import pytest

from tui.api.client import GatewayHttp, InstanceClient, SessionClient
from tui.api.credentials import InstanceCredentials, SessionCredentials
from tui.sandbox.server import SandboxGateway

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
