"""Issue 26 (keys under a flow of events): the hidden events panel (F9) is not rebuilt while events arrive (each
rebuild re-adds its 200 rows on the main thread); shown again, it is redrawn once and has every event that came."""

from __future__ import annotations

from collections import deque

from textual.coordinate import Coordinate
from textual.widgets import DataTable

from tests.app.test_events_panel_follows import delivery, post
from tests.harness import running_sandbox_app, settle, wait_until
from tui.ui.widgets.events_panel import EventsPanel


def count_calls(owner: object, name: str) -> list[int]:
    """Wrap `owner.name` (a method of that one object) so that each call is counted; the list grows by one a call."""
    calls: list[int] = []
    original = getattr(owner, name)

    def counting(*args: object) -> object:
        calls.append(1)
        return original(*args)

    setattr(owner, name, counting)
    return calls


async def test_a_hidden_panel_is_not_redrawn_and_shows_what_came_when_shown_again():
    async with running_sandbox_app(size=(80, 24)) as pilot:
        app = pilot.app
        panel = app.screen.query_one(EventsPanel)
        table = app.screen.query_one("#events-panel-table", DataTable)
        assert await post(app, delivery("BEFORE")) == 200
        await wait_until(pilot, lambda: table.row_count >= 1, what="the first event")
        shown_rows = table.row_count

        drawn = count_calls(panel, "_draw")
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


async def test_new_events_are_added_on_top_without_rebuilding_the_panel():
    """While it follows, a redraw adds the new events' rows and orders the table (newest first), the oldest leaving
    at the bottom at the panel's size: it does not clear and re-add every row (20 times a second under a flow)."""
    async with running_sandbox_app(size=(80, 24)) as pilot:
        app = pilot.app
        panel = app.screen.query_one(EventsPanel)
        table = app.screen.query_one("#events-panel-table", DataTable)
        assert await post(app, delivery("FIRST")) == 200
        await wait_until(pilot, lambda: table.row_count >= 1, what="the first event")
        await settle(pilot)
        panel.events = deque(panel.events, maxlen=4)  # a small panel: the oldest leave soon
        cleared = count_calls(table, "clear")

        def keys() -> list[str | None]:
            return [table.coordinate_to_cell_key(Coordinate(row, 0)).row_key.value for row in range(table.row_count)]

        for index in range(6):
            assert await post(app, delivery(f"NEXT{index}")) == 200
            await wait_until(pilot, lambda: keys() == [str(event.id) for event in panel.events],
                             what="the newest on top, the panel's events in order")
        assert table.row_count == 4 and cleared == []
        assert table.cursor_row == 0 and table.scroll_y == 0

        await pilot.resize_terminal(100, 30)  # a new layout: the rows are drawn again, whole
        await wait_until(pilot, lambda: cleared != [], what="a full redraw after a resize")
        await settle(pilot)
        assert keys() == [str(event.id) for event in panel.events]
