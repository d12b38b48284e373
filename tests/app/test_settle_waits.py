"""`settle` (tests/harness.py) covers the views that redraw a moment after events, to take a burst in one go: the
Events section (0.3 s after an event), the events panel and the inbox (50 ms). A screenshot after `settle` showed
whatever those timers had done by then: the Events section's snapshots depended on a 0.3 s timer beating the few
pauses after the last delivery. Here the delays are long, so a `settle` that does not wait for them fails."""

from __future__ import annotations

from textual.widgets import DataTable

from tests.app.test_snapshots import send_text
from tests.harness import running_sandbox_app, settle, show_section
from tui.ui.sections import events as events_module
from tui.ui.sections.chats import inbox as inbox_module
from tui.ui.widgets import events_panel as panel_module


async def test_settle_waits_for_the_events_sections_refresh(monkeypatch):
    monkeypatch.setattr(events_module, "LIVE_REFRESH_DELAY", 1.5)
    async with running_sandbox_app() as pilot:
        await send_text(pilot)
        await show_section(pilot, "events")
        await settle(pilot)
        table = pilot.app.screen.query_one("#events-table", DataTable)
        assert table.row_count == 4


async def test_settle_waits_for_the_panels_redraw(monkeypatch):
    monkeypatch.setattr(panel_module, "REDRAW_DELAY", 1.5)
    async with running_sandbox_app() as pilot:
        await send_text(pilot)
        assert pilot.app.screen.query_one("#events-panel-table", DataTable).row_count == 4


async def test_settle_waits_for_the_inboxs_refresh(monkeypatch):
    monkeypatch.setattr(inbox_module, "REFRESH_DELAY", 1.5)
    # The inbox's own tick schedules a refresh too: one landing after `settle` returned made this test fail in CI
    # (a refresh the test did not ask for). Out of the way, only the refresh the test schedules is waited for.
    monkeypatch.setattr(inbox_module, "TICK_INTERVAL", 3600.0)
    async with running_sandbox_app() as pilot:
        await show_section(pilot, "chats")
        await settle(pilot)
        view = pilot.app.screen.query_one(inbox_module.InboxView)
        view.schedule_refresh()  # what an event does while the inbox shows
        await settle(pilot)
        assert view.idle
