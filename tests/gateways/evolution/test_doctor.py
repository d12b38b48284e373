"""The doctor for an Evolution profile (issue 33): `GET /webhook/find/{instance}` read into the webhook's whole
setting (url, enabled, events, byEvents, base64), findings for each thing that keeps events from the listener,
and the fix (`POST /webhook/set/{instance}` with the whole `webhook` object) that cures them all. The answers are
this folder's LITERAL fixtures (answers.json: webhook-find, webhook-find-never-set; written by hand from Evolution
2.3.6's event.controller.ts get and webhook.controller.ts set); the rest against the sandbox's Evolution dialect."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from tui.api import connection as c
from tui.api import operations as ops
from tui.api.credentials import InstanceCredentials
from tui.api.dialects import InstanceDialect
from tui.api.gateway_http import GatewayHttp
from tui.core.doctor import Doctor, DoctorInputs
from tui.gateways import adapter_for
from tui.gateways.clients import InstanceClient
from tui.gateways.sandbox import SandboxGateway

HERE = Path(__file__).parent
ANSWERS = {entry["name"]: entry for entry in json.loads((HERE / "answers.json").read_text())["entries"]}
INSTANCE = "office"
API_KEY = "B6D711FC-DE4D-4FD5-9365-44120E713976"
LISTENER = "http://127.0.0.1:8787"


def _read(name: str) -> c.ZapiInstanceData:
    answer = ANSWERS[name]
    read = adapter_for(InstanceDialect.EVOLUTION).read_answer
    return read(c.ZapiInstanceData, answer["status"], json.dumps(answer["body"]), ops.INSTANCE_DATA.id.value)


def test_webhook_find_reads_the_whole_setting() -> None:
    webhook = _read("webhook-find").webhook
    assert webhook is not None
    assert (webhook.url, webhook.enabled, webhook.byEvents, webhook.base64) == (
        "https://listener.example.com/evolution", True, True, False)
    assert webhook.events == ["MESSAGES_UPSERT", "MESSAGES_UPDATE", "CONNECTION_UPDATE"]
    assert webhook.missing_events() == ["SEND_MESSAGE", "QRCODE_UPDATED"]
    never = _read("webhook-find-never-set").webhook
    assert never is not None and (never.url, never.enabled) == ("", False)


@pytest.fixture
async def evolution():
    gateway = SandboxGateway(instance_id=INSTANCE, instance_token=API_KEY, client_token="unused-client-token",
                             session_token="unused-session-token", instance_dialect=InstanceDialect.EVOLUTION,
                             delivery_delay=0.0)
    await gateway.start()
    try:
        yield gateway
    finally:
        await gateway.stop()


async def _set(gateway: SandboxGateway, webhook: dict) -> None:
    async with httpx.AsyncClient(base_url=gateway.url, timeout=10) as http:
        answer = await http.post(f"/webhook/set/{INSTANCE}", json={"webhook": webhook}, headers={"apikey": API_KEY})
    assert answer.status_code == 201, answer.text


async def _found(gateway: SandboxGateway) -> dict:
    async with httpx.AsyncClient(base_url=gateway.url, timeout=10) as http:
        return (await http.get(f"/webhook/find/{INSTANCE}", headers={"apikey": API_KEY})).json()


async def _examine(gateway: SandboxGateway, http: GatewayHttp) -> tuple[Doctor, list[tuple[str, str | None]]]:
    client = InstanceClient(http, InstanceCredentials(gateway.url, INSTANCE, API_KEY, ""), InstanceDialect.EVOLUTION)

    async def reachable(_url: str) -> bool:
        return True

    doctor = Doctor(DoctorInputs(INSTANCE, client, None, None, LISTENER, None, is_sandbox=True, reachable=reachable))
    report = await doctor.examine(probe=False)
    return doctor, [(finding.id.value, finding.fix.value if finding.fix else None) for finding in report.findings]


@pytest.mark.parametrize(("webhook", "expected"), [
    pytest.param(None, [("webhook-url-mismatch", "point-webhooks"), ("webhook-inactive", "activate")],
                 id="never-set"),
    pytest.param({"enabled": True, "url": "https://elsewhere.example/hook", "events": list(
        ("MESSAGES_UPSERT", "MESSAGES_UPDATE", "CONNECTION_UPDATE", "QRCODE_UPDATED", "SEND_MESSAGE")),
                  "base64": True}, [("webhook-url-mismatch", "point-webhooks")], id="url-wrong"),
    pytest.param({"enabled": False, "url": f"{LISTENER}/evolution"}, [("webhook-inactive", "activate")],
                 id="disabled"),
    pytest.param({"enabled": True, "url": f"{LISTENER}/evolution", "events": ["MESSAGES_UPSERT"], "base64": True},
                 [("event-not-subscribed", "subscribe")], id="events-missing"),
    pytest.param({"enabled": True, "url": f"{LISTENER}/evolution", "events": [], "base64": False},
                 [("media-without-bytes", "subscribe")], id="base64-off"),
])
async def test_each_webhook_fault_is_found_and_the_fix_cures_it(evolution, webhook, expected) -> None:
    if webhook is not None:
        await _set(evolution, webhook)
    async with GatewayHttp(timeout=10) as http:
        doctor, findings = await _examine(evolution, http)
        assert [finding for finding in findings if finding[0] != "listener-not-running"] == expected
        report = await doctor.examine(probe=False)
        lines = await doctor.fix(report)
        assert lines and any("/evolution" in line for line in lines)
        stored = await _found(evolution)
        assert (stored["url"], stored["enabled"], stored["webhookBase64"]) == (f"{LISTENER}/evolution", True, True)
        assert {"MESSAGES_UPSERT", "MESSAGES_UPDATE", "CONNECTION_UPDATE"} <= set(stored["events"])
        _again, after = await _examine(evolution, http)
        assert [finding for finding in after if finding[0] != "listener-not-running"] == []

