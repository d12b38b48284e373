"""Issue 26 (keys under a flow of events): the hidden events panel (F9) is not rebuilt while events arrive (each
rebuild re-adds its 200 rows on the main thread); shown again, it is redrawn once and has every event that came."""

from __future__ import annotations

from textual.coordinate import Coordinate
from textual.widgets import DataTable

from tests.app.test_events_panel_follows import delivery, post
from tests.harness import running_sandbox_app, settle, wait_until
from tui.widgets.events_panel import EventsPanel


async def test_a_hidden_panel_is_not_redrawn_and_shows_what_came_when_shown_again():
    async with running_sandbox_app(size=(80, 24)) as pilot:
        app = pilot.app
        panel = app.screen.query_one(EventsPanel)
        table = app.screen.query_one("#events-panel-table", DataTable)
        assert await post(app, delivery("BEFORE")) == 200
        await wait_until(pilot, lambda: table.row_count >= 1, what="the first event")
        shown_rows = table.row_count

        drawn: list[int] = []
        original = panel._draw

        def counting_draw() -> None:
            drawn.append(len(panel.events))
            original()

        panel._draw = counting_draw  # type: ignore[method-assign]
        await pilot.press("f9")
        await settle(pilot)
        assert not panel.display
        for index in range(5):
            assert await post(app, delivery(f"HIDDEN{index}")) == 200
        await wait_until(pilot, lambda: len(panel.events) >= shown_rows + 5, what="the events reach the panel")
        await settle(pilot)
        await pilot.pause(0.2)  # several redraw delays: none may rebuild the hidden table
        assert drawn == [] and table.row_count == shown_rows

        await pilot.press("f9")
        await wait_until(pilot, lambda: table.row_count == len(panel.events), what="the events once shown")
        newest = table.coordinate_to_cell_key(Coordinate(0, 0)).row_key.value
        assert newest == str(panel.events[0].id) and len(drawn) == 1
