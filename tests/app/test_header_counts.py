"""Issue 21 item 11: after a restart on the same store, the header counts what the events panel shows (it counted
only the events of this run, "0 events" over a panel full of them)."""

from __future__ import annotations

from tests.app.test_inbox import ANA, incoming, post
from tests.harness import running_sandbox_app, settle, wait_until
from tui.ui.widgets.events_panel import EventsPanel
from tui.ui.widgets.header import GatewayHeader


def header_listener_text(app) -> str:
    return str(app.screen.query_one(GatewayHeader).query_one("#header-listener").render())


async def test_after_a_restart_the_header_counts_the_events_the_panel_shows():
    async with running_sandbox_app() as pilot:
        assert await post(pilot, "/session", incoming(ANA, "3EB0C0C1", "one", "Ana")) == 200
        assert await post(pilot, "/session", incoming(ANA, "3EB0C0C2", "two", "Ana")) == 200
        assert await post(pilot, "/session", incoming(ANA, "3EB0C0C3", "forged", "Ana"), signed=False) == 401
        await settle(pilot)
        first = pilot.app.runtime.store.count()
        assert f"· {first} events" in header_listener_text(pilot.app)
    async with running_sandbox_app() as pilot:
        app = pilot.app
        panel = app.screen.query_one(EventsPanel)
        await wait_until(pilot, lambda: len(panel.visible_events()) >= first, what="the panel's history")
        await settle(pilot)
        shown = len(panel.visible_events())
        assert shown == first == app.runtime.store.count()
        text = header_listener_text(app)
        assert f"· {shown} events" in text and "last ✗" in text, text  # the forged one, rejected, came last
