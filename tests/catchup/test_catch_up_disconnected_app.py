"""Issue 35 item 4 in the app: the embedded sandbox's WuzAPI session is dropped (`POST /sandbox/disconnect`), a
contact writes three messages its webhook never delivers (drop-events on Message), the session is reconnected: the
app's own listener reads WuzAPI's history of the disconnected period, the inbox says what it recovered and the
thread marks each of them. Every wait is on a condition."""

from __future__ import annotations

import json

import httpx

from tests.alerts.test_app_alerts import post
from tests.harness import SIZE, screen_text, show_section, wait_ready, wait_until
from tui.api.operations import Family
from tui.core.pairing import PairingActions
from tui.ui.app import build_app
from tui.ui.widgets.forms import set_cursor_blink
from tui.ui.widgets.thread_view import ThreadView

ANA = "5511987654321"


def stored(app, sql: str) -> list[tuple]:
    store = app.services.feed.store
    return store.read(lambda connection: connection.execute(sql).fetchall())


async def test_the_app_recovers_what_came_while_the_session_was_disconnected() -> None:
    set_cursor_blink(False)
    app = build_app(sandbox=True, sandbox_dialects=("spec", "wuzapi"))
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        await post(app, "/sandbox/fault", {"kind": "drop-events", "events": ["Message"]})
        await post(app, "/sandbox/disconnect", {"family": "session", "reason": "network"})
        await wait_until(pilot, lambda: stored(app, "SELECT count(*) FROM events WHERE kind = 'Disconnected'")[0][0]
                         == 1, what="the Disconnected event")
        missed = []
        async with httpx.AsyncClient(trust_env=False) as client:
            for n in range(3):
                answer = await client.post(f"{app.runtime.sandbox.url.rstrip('/')}/sandbox/incoming",  # type: ignore[union-attr]
                                           content=json.dumps({"from": ANA, "text": f"while disconnected {n}",
                                                               "lid": False}))
                missed.append(answer.json()["id"])
        await app.runtime.sandbox.wait_for_deliveries()  # type: ignore[union-attr]
        await post(app, "/sandbox/fault", {"kind": "none"})
        account = app.runtime.current
        assert account is not None
        await PairingActions(account, Family.SESSION).reconnect()
        await show_section(pilot, "chats")
        await wait_until(pilot, lambda: "3 messages recovered from " in screen_text(app), what="the inbox's line")
        app.screen.query_one("InboxView").reload(select=ANA)
        view = app.screen.query_one(ThreadView)
        await wait_until(pilot, lambda: set(missed) <= {row.message_id for row in view.rows}, what="the thread")
        await pilot.pause()
        assert view.text().count("recovered") == 3
