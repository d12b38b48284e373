"""Issue 35's acceptance, headless: the embedded sandbox (the gateways' real dialects) delivers to a real
`gateway-tui listen --alert-command ...` process, whose command appends each alert (its stdin) to a file. A
disconnect gives exactly one raised `disconnected`, the reconnect exactly one cleared; the flapping fault exactly
one raised `flapping` and nothing else. Every wait is on a condition, bounded."""

from __future__ import annotations

import asyncio
import json
import shlex
import signal
import sys
from pathlib import Path

import httpx
import pytest

from tests.alerts.test_sinks import APPEND_STDIN, lines, until
from tests.webhooks.headless import start_headless
from tui.api.client import GatewayHttp
from tui.gateways.clients import InstanceClient, SessionClient
from tui.api.credentials import InstanceCredentials, SessionCredentials
from tui.api.models import DeliveryWebhook, WebhookUpdate
from tui.api.operations import InstanceDialect, SessionDialect
from tui.gateways.sandbox import SandboxGateway

INSTANCE_ID, INSTANCE_TOKEN, CLIENT_TOKEN, SESSION_TOKEN = "alerts", "alerts-instance-tk", "alerts-client-tk", "alerts-session-tk"
SUBSCRIBED = ["Message", "ReadReceipt", "Connected", "Disconnected", "LoggedOut"]


async def sandbox_posting_to(listener_url: str) -> tuple[SandboxGateway, InstanceClient, GatewayHttp]:
    sandbox = SandboxGateway(
        instance_id=INSTANCE_ID, instance_token=INSTANCE_TOKEN, client_token=CLIENT_TOKEN,
        session_token=SESSION_TOKEN, delivery_delay=0.0, webhook_format="json",
        instance_dialect=InstanceDialect.ZAPI, session_dialect=SessionDialect.WUZAPI,
    )
    await sandbox.start()
    http = GatewayHttp(timeout=5.0)
    zapi = InstanceClient(http, InstanceCredentials(sandbox.url, INSTANCE_ID, INSTANCE_TOKEN, CLIENT_TOKEN),
                          InstanceDialect.ZAPI)
    wuzapi = SessionClient(http, SessionCredentials(sandbox.url, SESSION_TOKEN), SessionDialect.WUZAPI)
    await zapi.set_delivery_webhook(DeliveryWebhook(value=f"{listener_url}/delivery"))
    await wuzapi.update_webhook(WebhookUpdate(webhook=f"{listener_url}/session", events=SUBSCRIBED, active=True))
    return sandbox, zapi, http


async def listen_with_alerts(tmp_path: Path):
    out = tmp_path / "alerts.jsonl"
    command = shlex.join([sys.executable, "-c", APPEND_STDIN, str(out)])
    process, url = await start_headless(tmp_path / "events.sqlite3", "--alert-command", command)
    return process, url, out


async def stop(process) -> str:
    process.send_signal(signal.SIGINT)
    _, stderr = await asyncio.wait_for(process.communicate(), timeout=30)
    assert process.returncode == 0, stderr.decode()
    return stderr.decode()


async def post(sandbox: SandboxGateway, path: str, body: object) -> httpx.Response:
    async with httpx.AsyncClient(trust_env=False) as client:
        return await client.post(f"{sandbox.url}{path}", content=json.dumps(body))


def states(out: Path, kind: str) -> list[str]:
    return [alert["state"] for alert in lines(out) if alert["kind"] == kind]


async def test_a_disconnect_raises_one_alert_and_the_reconnect_clears_it(tmp_path: Path) -> None:
    process, url, out = await listen_with_alerts(tmp_path)
    sandbox, zapi, http = await sandbox_posting_to(url)
    try:
        answer = await post(sandbox, "/sandbox/disconnect", {"family": "instance", "reason": "network"})
        assert answer.status_code == 200, answer.text
        # Told once it lasted DOWN_GRACE, at the listener's next tick (TICK_EVERY).
        await until(lambda: states(out, "disconnected") == ["raised"], "the disconnected alert", timeout=60)
        assert (await zapi.restart()).ok  # Z-API's reconnect: the paired phone is back without a new code
        await until(lambda: states(out, "disconnected") == ["raised", "cleared"], "the disconnected alert cleared")
        await sandbox.wait_for_deliveries()
    finally:
        await sandbox.stop()
        await http.aclose()
        stderr = await stop(process)
    alerts = lines(out)  # after the listener stopped: nothing more came
    assert [(a["kind"], a["state"], a["family"]) for a in alerts] == [
        ("disconnected", "raised", "instance"), ("disconnected", "cleared", "instance")]
    assert "alert: instance disconnected raised" in stderr
    for secret in (INSTANCE_TOKEN, CLIENT_TOKEN, SESSION_TOKEN):
        assert secret not in out.read_text() and secret not in stderr


async def test_the_flapping_fault_raises_exactly_one_flapping_alert(tmp_path: Path) -> None:
    process, url, out = await listen_with_alerts(tmp_path)
    sandbox, _zapi, http = await sandbox_posting_to(url)
    try:
        answer = await post(sandbox, "/sandbox/fault", {"kind": "flap", "family": "session", "times": 10,
                                                        "interval": 0.01})
        assert answer.status_code == 200, answer.text
        await until(lambda: states(out, "flapping") == ["raised"], "the flapping alert")
        await until(lambda: not sandbox.flapping, "the flap's last change")
        await sandbox.wait_for_deliveries()
    finally:
        await sandbox.stop()
        await http.aclose()
        await stop(process)
    # Ten changes, one raised alert in all: the storm's first disconnect lasted less than the grace (DOWN_GRACE).
    assert [(alert["kind"], alert["state"], alert["family"]) for alert in lines(out)] == [
        ("flapping", "raised", "session")]


@pytest.mark.parametrize("flags, words", [
    (["--alert-command", ""], "--alert-command"),
    (["--alert-command", "notify 'unbalanced"], "--alert-command"),
    (["--alert-webhook", "https://alerts.example.com/hook"], "not this machine"),
])
async def test_bad_alert_flags_are_refused_before_listening(tmp_path: Path, flags: list[str], words: str) -> None:
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "tui", "listen", "--port", "0", "--db", str(tmp_path / "e.sqlite3"), *flags,
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE)
    _, stderr = await asyncio.wait_for(process.communicate(), timeout=30)
    assert process.returncode == 2 and words in stderr.decode() and "listening on" not in stderr.decode()
