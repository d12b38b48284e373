"""The sandbox answers errors as the spec says, and the client turns each into its typed error with the
server's message. Invalid input is sent raw with httpx, so the sandbox's own validation is what is tested."""

from __future__ import annotations

import httpx
import pytest

from tests.sandbox.conftest import CLIENT_TOKEN, INSTANCE_ID, INSTANCE_TOKEN, SESSION_TOKEN
from tui.api.client import GatewayHttp
from tui.gateways.clients import InstanceClient, SessionClient
from tui.api.credentials import InstanceCredentials, SessionCredentials
from tui.api.errors import Conflict, NotFound, RateLimited, Unauthorized
from tui.api.models import SendText
from tui.gateways.sandbox import SandboxGateway

HI = SendText(phone="5511999999999", message="hi")


def instance_path(sandbox, operation: str, token: str = INSTANCE_TOKEN) -> str:
    return f"{sandbox.url.rstrip('/')}/instances/{INSTANCE_ID}/token/{token}/{operation}"


@pytest.mark.parametrize(
    "credentials",
    [
        InstanceCredentials("URL", INSTANCE_ID, INSTANCE_TOKEN, "wrong-client-token"),
        InstanceCredentials("URL", INSTANCE_ID, "wrong-instance-token", CLIENT_TOKEN),
        InstanceCredentials("URL", "other-instance", INSTANCE_TOKEN, CLIENT_TOKEN),
    ],
    ids=["client-token", "instance-token", "instance-id"],
)
async def test_instance_401(credentials, http, sandbox):
    client = InstanceClient(
        http, InstanceCredentials(sandbox.url, credentials.instance_id, credentials.instance_token, credentials.client_token)
    )
    with pytest.raises(Unauthorized) as caught:
        await client.send_text(HI)
    assert caught.value.status == 401 and str(caught.value)
    assert len(sandbox.state.sent) == 0


async def test_missing_client_token_header_401(sandbox):
    async with httpx.AsyncClient() as raw:
        answer = await raw.post(instance_path(sandbox, "send-text"), json={"phone": "5511999999999", "message": "hi"})
    assert answer.status_code == 401 and "Client-Token" in answer.text


async def test_session_401(http, sandbox):
    client = SessionClient(http, SessionCredentials(sandbox.url, "wrong"))
    with pytest.raises(Unauthorized):
        await client.hmac_status()
    async with httpx.AsyncClient() as raw:
        answer = await raw.get(f"{sandbox.url.rstrip('/')}/session/hmac/config")
    assert answer.status_code == 401


@pytest.mark.parametrize(
    "operation, body, field",
    [
        ("send-text", {"phone": "+55 11 9999", "message": "hi"}, "phone"),
        ("send-button-actions", {"phone": "5511999999999", "message": "m",
                                 "buttons": [{"id": str(n), "text": "b"} for n in range(4)]}, "buttons"),
        ("send-poll", {"phone": "5511999999999", "message": "q", "poll": [{"name": "a"}, {"name": "b"}], "selectableCount": 3},
         "selectableCount"),
        ("send-location", {"phone": "5511999999999", "title": "t", "address": "a", "lat": 91, "lng": 0}, "lat"),
    ],
)
async def test_instance_400_names_the_field(operation, body, field, sandbox):
    async with httpx.AsyncClient() as raw:
        answer = await raw.post(instance_path(sandbox, operation), json=body, headers={"Client-Token": CLIENT_TOKEN})
    assert answer.status_code == 400
    assert field in answer.text
    assert len(sandbox.state.sent) == 0


@pytest.mark.parametrize(
    "path, body, field",
    [
        ("/session/proxy", {"enable": True, "proxy_url": "ftp://proxy:1"}, "proxy_url"),
        ("/session/hmac/config", {"hmac_key": "short"}, "hmac_key"),
    ],
)
async def test_session_400_names_the_field(path, body, field, sandbox):
    async with httpx.AsyncClient() as raw:
        answer = await raw.post(sandbox.url.rstrip("/") + path, json=body, headers={"token": SESSION_TOKEN})
    assert answer.status_code == 400 and field in answer.text


async def test_404_for_unknown_group_community_product(instance):
    with pytest.raises(NotFound) as group:
        await instance.group_metadata("999999999999999999-group")
    with pytest.raises(NotFound):
        await instance.product("0000000000000000")
    from tui.api.models import AddAdmin

    with pytest.raises(NotFound):
        await instance.add_admin(AddAdmin(communityId="999999999999999999", phones=["5511999999999"]))
    assert str(group.value)


async def test_409_while_disconnected(instance, sandbox):
    sandbox.state.connected = False
    with pytest.raises(Conflict) as caught:
        await instance.send_text(HI)
    assert caught.value.status == 409 and len(sandbox.state.sent) == 0


async def test_429_with_retry_after_past_the_rate():
    gateway = SandboxGateway(
        instance_id=INSTANCE_ID, instance_token=INSTANCE_TOKEN, client_token=CLIENT_TOKEN,
        session_token=SESSION_TOKEN, rate_limit=2,
    )
    await gateway.start()
    try:
        async with GatewayHttp(timeout=5.0) as http:
            client = InstanceClient(http, InstanceCredentials(gateway.url, INSTANCE_ID, INSTANCE_TOKEN, CLIENT_TOKEN))
            with pytest.raises(RateLimited) as caught:
                for _ in range(10):  # bounded: the bucket holds 2
                    await client.send_text(HI)
        assert caught.value.retry_after is not None and caught.value.retry_after >= 1
        assert len(gateway.state.sent) == 2  # sends are never retried automatically
        async with httpx.AsyncClient() as raw:
            answer = await raw.post(
                instance_path(gateway, "send-text"), json={"phone": "5511999999999", "message": "hi"},
                headers={"Client-Token": CLIENT_TOKEN},
            )
        assert answer.status_code == 429 and int(answer.headers["Retry-After"]) >= 1
    finally:
        await gateway.stop()
