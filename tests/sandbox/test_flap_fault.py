"""The sandbox's flapping fault (issue 35): `{"kind": "flap"}` takes a connected family down and up again N times,
each change told to its webhook as the gateway tells it (WuzAPI Disconnected/Connected, Z-API
DisconnectedCallback/ConnectedCallback), so the alerts have a storm to fold into one."""

from __future__ import annotations

import json

import httpx
import pytest

from tests.sandbox.conftest import CLIENT_TOKEN, INSTANCE_ID, INSTANCE_TOKEN, SESSION_TOKEN
from tests.webhooks.conftest import until
from tui.gateways.clients import InstanceClient, SessionClient
from tui.api.credentials import InstanceCredentials, SessionCredentials
from tui.api.models import DeliveryWebhook, WebhookUpdate
from tui.api.operations import InstanceDialect, SessionDialect
from tui.gateways.sandbox import SandboxGateway

SUBSCRIBED = ["Message", "Connected", "Disconnected", "LoggedOut"]


@pytest.fixture
async def sandbox():
    gateway = SandboxGateway(
        instance_id=INSTANCE_ID, instance_token=INSTANCE_TOKEN, client_token=CLIENT_TOKEN,
        session_token=SESSION_TOKEN, delivery_delay=0.0, webhook_format="json",
        instance_dialect=InstanceDialect.ZAPI, session_dialect=SessionDialect.WUZAPI,
    )
    await gateway.start()
    yield gateway
    await gateway.stop()


@pytest.fixture
async def hooks(http, sandbox, receiver):
    zapi = InstanceClient(http, InstanceCredentials(sandbox.url, INSTANCE_ID, INSTANCE_TOKEN, CLIENT_TOKEN),
                          InstanceDialect.ZAPI)
    wuzapi = SessionClient(http, SessionCredentials(sandbox.url, SESSION_TOKEN), SessionDialect.WUZAPI)
    await zapi.set_delivery_webhook(DeliveryWebhook(value=f"{receiver.url}/zapi"))
    await wuzapi.update_webhook(WebhookUpdate(webhook=f"{receiver.url}/wuzapi", events=SUBSCRIBED, active=True))
    return receiver


async def fault(sandbox: SandboxGateway, body: object) -> httpx.Response:
    async with httpx.AsyncClient(trust_env=False) as client:
        return await client.post(f"{sandbox.url}/sandbox/fault", content=json.dumps(body))


def kinds(receiver, path: str) -> list[str]:
    return [json.loads(body)["type"] for _headers, body in receiver.at(path)]


@pytest.mark.parametrize(("family", "path", "down", "up"), [
    ("session", "/wuzapi", "Disconnected", "Connected"),
    ("instance", "/zapi", "DisconnectedCallback", "ConnectedCallback"),
])
async def test_flap_sends_n_alternating_changes_and_ends_as_it_began(sandbox, hooks, family, path, down, up) -> None:
    answer = await fault(sandbox, {"kind": "flap", "family": family, "times": 6, "interval": 0.01})
    assert answer.status_code == 200, answer.text
    assert answer.json()["flapping"] == {"family": family, "times": 6, "interval": 0.01}
    expected = [down, up] * 3
    await until(lambda: kinds(hooks, path) == expected, f"{expected} at {path}, got {kinds(hooks, path)}",
                timeout=60.0)
    link = sandbox.state.session_link if family == "session" else sandbox.state.instance_link
    assert link.connected  # an even number of changes: back up, as it began


async def test_flap_is_refused_with_what_to_send_instead(sandbox) -> None:
    for body, words in [({"kind": "flap"}, "family"), ({"kind": "flap", "family": "session", "times": 0}, "times"),
                        ({"kind": "flap", "family": "session", "interval": -1}, "interval")]:
        answer = await fault(sandbox, body)
        assert answer.status_code == 400 and words in answer.json()["error"], answer.text
    sandbox.state.session_link.online = False
    answer = await fault(sandbox, {"kind": "flap", "family": "session"})
    assert answer.status_code == 409 and "not connected" in answer.json()["error"]
