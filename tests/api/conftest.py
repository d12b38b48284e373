from __future__ import annotations

import pytest

from tests.api.recording_gateway import RecordingGateway
from tui.api.client import GatewayHttp, InstanceCredentials, RequestLog, SessionCredentials
from tui.gateways.clients import InstanceClient, SessionClient

# Distinctive secrets: tests assert they never show up where a person could read them.
INSTANCE_TOKEN = "inst-tok-SECRET-3b1f9"
CLIENT_TOKEN = "client-tok-SECRET-77ad2"
SESSION_TOKEN = "session-tok-SECRET-c0ffee"
HMAC_SECRET = "hmac-key-SECRET-0123456789abcdefghijkl"
PROXY_PASSWORD = "proxy-pw-SECRET-5150"
ALL_SECRETS = (INSTANCE_TOKEN, CLIENT_TOKEN, SESSION_TOKEN, HMAC_SECRET, PROXY_PASSWORD)


@pytest.fixture
async def gateway():
    server = RecordingGateway()
    await server.start()
    yield server
    await server.stop()


@pytest.fixture
def request_log() -> RequestLog:
    return RequestLog()


@pytest.fixture
async def http(request_log):
    async with GatewayHttp(timeout=5.0, on_exchange=request_log.append) as shared:
        yield shared


@pytest.fixture
def instance(http, gateway) -> InstanceClient:
    return InstanceClient(http, InstanceCredentials(gateway.url, "inst-1", INSTANCE_TOKEN, CLIENT_TOKEN))


@pytest.fixture
def session(http, gateway) -> SessionClient:
    return SessionClient(http, SessionCredentials(gateway.url, SESSION_TOKEN))
