"""Issue 35 item 4's acceptance, headless: a real `gateway-tui listen` process for a WuzAPI profile, the embedded
sandbox (WuzAPI's dialect) writing to it. The listener stops; the sandbox sends 20 messages while nothing listens (its
deliveries fail); the listener starts again and, in the background, reads WuzAPI's history of the gap: the 20 are in
the inbox, marked recovered, said in one line; the sandbox then delivers some of them again and nothing is doubled.
Every wait is on a condition, bounded."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from pathlib import Path

import httpx

from tests.alerts.test_listen_alerts import stop
from tests.webhooks.conftest import no_listener_left_running  # noqa: F401  (an autouse fixture, by import)
from tests.webhooks.headless import start_headless
from tui.api.client import GatewayHttp
from tui.api.credentials import SessionCredentials
from tui.api.models import WebhookUpdate
from tui.api.operations import InstanceDialect, SessionDialect
from tui.gateways.clients import SessionClient
from tui.gateways.sandbox import SandboxGateway
from tui.local import config

SESSION_TOKEN, HMAC_KEY = "catch-up-session-token", "catch-up-hmac-key-of-at-least-32-characters"
ANA = "5511987654321"  # a seeded contact (tui.sandbox.state)


async def post(sandbox: SandboxGateway, path: str, body: object) -> dict:
    async with httpx.AsyncClient(trust_env=False) as client:
        answer = await client.post(f"{sandbox.url}{path}", content=json.dumps(body))
    assert answer.status_code == 200, answer.text
    return answer.json()


async def point_webhook(sandbox: SandboxGateway, listener_url: str) -> None:
    async with GatewayHttp(timeout=5.0) as http:
        session = SessionClient(http, SessionCredentials(sandbox.url, SESSION_TOKEN), SessionDialect.WUZAPI)
        await session.update_webhook(WebhookUpdate(webhook=f"{listener_url}/session", events=["Message"], active=True))


def rows(db: Path, sql: str) -> list[tuple]:
    with sqlite3.connect(db) as connection:
        return connection.execute(sql).fetchall()


async def until(condition, what: str, seconds: float = 20.0) -> None:
    async with asyncio.timeout(seconds):
        while not condition():
            await asyncio.sleep(0.05)
    assert condition(), what


async def test_what_was_sent_while_listen_was_down_is_recovered_once(tmp_path: Path) -> None:
    sandbox = SandboxGateway(instance_id="catchup", instance_token="i-token", client_token="c-token",
                             session_token=SESSION_TOKEN, delivery_delay=0.0, webhook_format="json",
                             instance_dialect=InstanceDialect.SPEC, session_dialect=SessionDialect.WUZAPI)
    await sandbox.start()
    sandbox.state.hmac_key = HMAC_KEY  # the listener verifies WuzAPI's signature with the profile's key
    sandbox.deliveries.attempts = 1  # a delivery nobody takes is dropped at once (no retries to wait for)
    config.save_profile(config.Profile(name="shop", session_url=sandbox.url, session_dialect=SessionDialect.WUZAPI))
    db, env = tmp_path / "events.sqlite3", {"GATEWAY_TUI_SESSION_TOKEN": SESSION_TOKEN}
    try:
        process, url = await start_headless(db, "--profile", "shop", key=HMAC_KEY, extra_env=env)
        await point_webhook(sandbox, url)
        live = await post(sandbox, "/sandbox/incoming", {"from": ANA, "text": "before the stop", "lid": False})
        await until(lambda: rows(db, "SELECT count(*) FROM chat_messages")[0][0] == 1, "the live message stored")
        await stop(process)

        missed = [(await post(sandbox, "/sandbox/incoming", {"from": ANA, "text": f"while down {n}", "lid": False}))["id"]
                  for n in range(20)]
        await sandbox.deliveries.wait()  # each delivery tried, and refused: nothing listens

        process, url = await start_headless(db, "--profile", "shop", key=HMAC_KEY, extra_env=env)
        said = ""
        async with asyncio.timeout(30):
            while "recovered" not in said:
                said = (await process.stderr.readline()).decode()
                assert said, "listen ended before saying what it recovered"
        assert "20 messages recovered from " in said and "WuzAPI" in said
        stored = rows(db, "SELECT message_id, event_id FROM chat_messages WHERE chat_id = '5511987654321' "
                          "ORDER BY at_us")
        assert [message_id for message_id, _ in stored] == [live["id"], *missed]
        assert all(event_id is None for message_id, event_id in stored if message_id in missed)  # never as events
        assert {row[0] for row in rows(db, "SELECT message_id FROM recovered_messages")} == set(missed)

        # WuzAPI delivers five of them again, now that someone listens: stored as events, not as messages twice.
        await point_webhook(sandbox, url)
        events_before = rows(db, "SELECT count(*) FROM events")[0][0]
        await post(sandbox, "/sandbox/redeliver", {"ids": missed[:5]})
        await until(lambda: rows(db, "SELECT count(*) FROM events")[0][0] >= events_before + 5, "the 5 re-delivered")
        stored_again = rows(db, "SELECT message_id FROM chat_messages WHERE chat_id = '5511987654321'")
        assert sorted(message_id for (message_id,) in stored_again) == sorted([live["id"], *missed])
        await stop(process)
    finally:
        await sandbox.stop()
