"""Issue 35 item 4 in the app: started after a run of its listener that ended a while ago, the app reads the gap's
messages from the gateway's history in the background (WuzAPI's dialect of the sandbox), after its first screen; the
inbox says what it recovered in one line and the thread marks each recovered message."""

from __future__ import annotations

import json
import time
from pathlib import Path

import httpx
import pytest

from tests.harness import SIZE, screen_text, show_section, wait_ready, wait_until
from tui.api.operations import InstanceDialect, SessionDialect
from tui.core.catchup import listener_started, listener_stopped
from tui.gateways.sandbox import SandboxGateway
from tui.local import config
from tui.local.paths import profile_events_path
from tui.ui.app import build_app
from tui.ui.widgets.forms import set_cursor_blink
from tui.ui.widgets.thread_view import ThreadView
from tui.webhooks.store import EventStore

SESSION_TOKEN = "catch-up-app-session-token"
ANA = "5511987654321"


@pytest.fixture
async def sandbox():
    gateway = SandboxGateway(instance_id="catchapp", instance_token="i-tk", client_token="c-tk",
                             session_token=SESSION_TOKEN, delivery_delay=0.0, instance_dialect=InstanceDialect.SPEC,
                             session_dialect=SessionDialect.WUZAPI)
    await gateway.start()
    yield gateway
    await gateway.stop()


def a_run_that_ended_a_minute_ago(store_path: Path) -> None:
    now = time.time_ns() // 1000
    with EventStore(store_path) as store:
        run, _ = store.write(lambda connection: listener_started(connection, now - 120_000_000))
        store.write(lambda connection: listener_stopped(connection, run, now - 60_000_000))


async def test_the_app_recovers_the_gap_in_the_background_and_marks_it(sandbox, monkeypatch) -> None:
    monkeypatch.setenv("GATEWAY_TUI_SESSION_TOKEN", SESSION_TOKEN)
    config.save_profile(config.Profile(name="shop", session_url=sandbox.url, session_dialect=SessionDialect.WUZAPI,
                                       listener_port=0))
    a_run_that_ended_a_minute_ago(profile_events_path("shop"))
    async with httpx.AsyncClient(trust_env=False) as client:
        missed = [(await client.post(f"{sandbox.url}/sandbox/incoming", content=json.dumps(
            {"from": ANA, "text": f"while the app was closed {n}", "lid": False}))).json()["id"] for n in range(3)]
    set_cursor_blink(False)
    app = build_app(profile="shop")
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        await show_section(pilot, "chats")
        await wait_until(pilot, lambda: "3 messages recovered from " in screen_text(app), what="the inbox's line")
        inbox = app.screen.query_one("InboxView")
        inbox.reload(select=ANA)
        view = app.screen.query_one(ThreadView)
        await wait_until(pilot, lambda: set(missed) <= {row.message_id for row in view.rows}, what="the thread")
        await pilot.pause()
        assert view.text().count("recovered") == 3  # one mark per recovered message, none on the others
    with EventStore(profile_events_path("shop")) as store:
        runs = store.read(lambda c: c.execute("SELECT started_us, stopped_us FROM listener_runs ORDER BY id").fetchall())
    assert len(runs) == 2 and runs[1][1] is not None  # the app's own run, its end recorded at its stop
