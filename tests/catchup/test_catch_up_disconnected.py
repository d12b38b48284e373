"""Issue 35 item 4, an account's own disconnected period: a real `gateway-tui listen` process keeps running while
the sandbox's WuzAPI session is dropped (`POST /sandbox/disconnect`, network) and a contact writes five messages its
webhook never delivers (the drop-events fault on Message). When the session is connected again (`Connected`), the
listener reads WuzAPI's history of that period: the five are in the inbox, marked recovered, said in one line, and
the period is kept in the store; re-delivered later, nothing is doubled. Every wait is on a condition, bounded."""

from __future__ import annotations

import asyncio

from tests.alerts.test_listen_alerts import stop
from tests.catchup.test_catch_up_listen import ANA, HMAC_KEY, SESSION_TOKEN, post, rows, until
from tests.webhooks.conftest import no_listener_left_running  # noqa: F401  (an autouse fixture, by import)
from tests.webhooks.headless import start_headless
from tui.api.client import GatewayHttp
from tui.api.credentials import SessionCredentials
from tui.api.models import WebhookUpdate
from tui.api.operations import InstanceDialect, SessionDialect
from tui.gateways.clients import SessionClient
from tui.gateways.sandbox import SandboxGateway
from tui.local import config

SUBSCRIBED = ["Message", "Connected", "Disconnected", "LoggedOut"]


async def five_missed_while_disconnected(sandbox: SandboxGateway, db) -> list[str]:
    """The session dropped (network) and its Disconnected event stored, then five messages from Ana that its webhook
    never delivers (the drop-events fault on Message, cleared after): their ids."""
    await post(sandbox, "/sandbox/fault", {"kind": "drop-events", "events": ["Message"]})
    await post(sandbox, "/sandbox/disconnect", {"family": "session", "reason": "network"})
    await until(lambda: rows(db, "SELECT count(*) FROM events WHERE kind = 'Disconnected'")[0][0] == 1,
                "the Disconnected event stored")
    missed = [(await post(sandbox, "/sandbox/incoming", {"from": ANA, "text": f"while disconnected {n}",
                                                         "lid": False}))["id"] for n in range(5)]
    await sandbox.deliveries.wait()
    await post(sandbox, "/sandbox/fault", {"kind": "none"})
    return missed


async def connected_again(wuzapi: SessionClient) -> None:
    """WuzAPI's way back after a network loss: disconnect, then connect again (its Connected event follows)."""
    await wuzapi.disconnect()
    await wuzapi.connect(subscribe=SUBSCRIBED)


async def test_what_was_sent_while_the_account_was_disconnected_is_recovered_once(tmp_path) -> None:
    sandbox = SandboxGateway(instance_id="outage", instance_token="i-token", client_token="c-token",
                             session_token=SESSION_TOKEN, delivery_delay=0.0, webhook_format="json",
                             instance_dialect=InstanceDialect.SPEC, session_dialect=SessionDialect.WUZAPI)
    await sandbox.start()
    sandbox.state.hmac_key = HMAC_KEY
    config.save_profile(config.Profile(name="shop", session_url=sandbox.url, session_dialect=SessionDialect.WUZAPI))
    db, env = tmp_path / "events.sqlite3", {"GATEWAY_TUI_SESSION_TOKEN": SESSION_TOKEN}
    http = GatewayHttp(timeout=5.0)
    wuzapi = SessionClient(http, SessionCredentials(sandbox.url, SESSION_TOKEN), SessionDialect.WUZAPI)
    process = None
    try:
        process, url = await start_headless(db, "--profile", "shop", key=HMAC_KEY, extra_env=env)
        await wuzapi.update_webhook(WebhookUpdate(webhook=f"{url}/session", events=SUBSCRIBED, active=True))
        live = await post(sandbox, "/sandbox/incoming", {"from": ANA, "text": "before the disconnect", "lid": False})
        await until(lambda: rows(db, "SELECT count(*) FROM chat_messages")[0][0] == 1, "the live message stored")

        missed = await five_missed_while_disconnected(sandbox, db)
        assert rows(db, "SELECT count(*) FROM chat_messages")[0][0] == 1  # the webhook never delivered them
        await connected_again(wuzapi)
        said = ""
        async with asyncio.timeout(30):
            while "recovered" not in said:
                said = (await process.stderr.readline()).decode()
                assert said, "listen ended before saying what it recovered"
        assert "5 messages recovered from " in said and "(shop, WuzAPI)" in said, said
        stored = rows(db, f"SELECT message_id, event_id FROM chat_messages WHERE chat_id = '{ANA}' ORDER BY at_us")
        assert [message_id for message_id, _ in stored] == [live["id"], *missed]
        assert all(event_id is None for message_id, event_id in stored if message_id in missed)  # never as events
        assert {row[0] for row in rows(db, "SELECT message_id FROM recovered_messages")} == set(missed)
        periods = rows(db, "SELECT account, family, down_us < up_us FROM account_outages")
        assert periods == [("", "session", 1)]

        # WuzAPI delivers three of them again: stored as events, not as messages twice.
        events_before = rows(db, "SELECT count(*) FROM events")[0][0]
        await post(sandbox, "/sandbox/redeliver", {"ids": missed[:3]})
        await until(lambda: rows(db, "SELECT count(*) FROM events")[0][0] >= events_before + 3, "the 3 re-delivered")
        stored_again = rows(db, f"SELECT message_id FROM chat_messages WHERE chat_id = '{ANA}'")
        assert sorted(message_id for (message_id,) in stored_again) == sorted([live["id"], *missed])
        await stop(process)
        process = None
    finally:
        await http.aclose()
        await sandbox.stop()
