"""While the user types, the events panel's, the listener counts' and the inbox's redraws wait for the moment just
after the next key is drawn (tui.ui.widgets.typing_pace): a typed key no longer waits behind them. Without a key,
they still show within HELD_AT_MOST."""

from __future__ import annotations

import dataclasses

import pytest

from textual.coordinate import Coordinate
from textual.widgets import DataTable

from tests.app.test_events_panel_follows import delivery, post
from tests.harness import running_sandbox_app, settle, wait_until
from tui.ui.widgets import typing_pace
from tui.ui.widgets.events_panel import EventsPanel
from tui.ui.widgets.header import GatewayHeader


def top_id(app) -> str | None:
    table = app.screen.query_one("#events-panel-table", DataTable)
    return table.coordinate_to_cell_key(Coordinate(0, 0)).row_key.value


async def _stored_copy(pilot, index: int):
    """A stored event handed over again as a new one (an id past the store's), as the listener's batches are."""
    app = pilot.app
    assert await post(app, delivery(f"PACE{index}")) == 200
    await settle(pilot)
    newest = app.runtime.store.newest(1)[0]
    return dataclasses.replace(newest, id=newest.id + 1000 + index)


@pytest.fixture
def slow_machine(monkeypatch):
    """The pace's clocks long enough that no wait of a busy machine ends the typing or a hold on its own: what a
    test sees is what the keys and the user did (the test without another key shortens the hold again)."""
    monkeypatch.setattr(typing_pace, "TYPING_WINDOW", 600.0)
    monkeypatch.setattr(typing_pace, "HELD_AT_MOST", 600.0)


async def _typed_then_an_event(pilot, index: int, holds: int = 1):
    """A key typed, then an event came: its redraws held. The event."""
    app = pilot.app
    event = await _stored_copy(pilot, index)
    await pilot.press("a")  # into the Chats field that has the focus
    app._publish_event(event)
    await wait_until(pilot, lambda: app.state.pace.held >= holds, what="the events' redraws held")
    return event


async def test_an_event_while_the_user_types_is_drawn_after_the_next_keys_frame(slow_machine):
    async with running_sandbox_app(size=(80, 24)) as pilot:
        app = pilot.app
        panel = app.screen.query_one(EventsPanel)
        header = app.screen.query_one(GatewayHeader)
        event = await _typed_then_an_event(pilot, 1, holds=2)  # the panel's and the counts'
        assert panel.redraw_pending and header.counts_pending and top_id(app) != str(event.id)
        await pilot.press("b")  # the next key: its frame first, then what was held
        await wait_until(pilot, lambda: not panel.redraw_pending and not header.counts_pending,
                         what="the held redraws run after the key's frame")
        assert app.state.pace.held == 0
        assert top_id(app) == str(event.id)


async def test_held_redraws_run_without_another_key(slow_machine, monkeypatch):
    monkeypatch.setattr(typing_pace, "HELD_AT_MOST", 0.3)
    async with running_sandbox_app(size=(80, 24)) as pilot:
        app = pilot.app
        panel = app.screen.query_one(EventsPanel)
        event = await _typed_then_an_event(pilot, 2)
        await wait_until(pilot, lambda: not panel.redraw_pending, what="the held redraw, on its own")
        assert top_id(app) == str(event.id)


async def test_without_keys_nothing_is_held():
    async with running_sandbox_app(size=(80, 24)) as pilot:
        app = pilot.app
        panel = app.screen.query_one(EventsPanel)
        event = await _stored_copy(pilot, 3)
        app._publish_event(event)
        await wait_until(pilot, lambda: top_id(app) == str(event.id), what="the event's row")
        assert app.state.pace.held == 0 and not app.state.pace.typing and not panel.redraw_pending


async def test_what_the_user_asks_for_is_never_held_while_they_type(slow_machine):
    async with running_sandbox_app(size=(80, 24)) as pilot:
        app = pilot.app
        panel = app.screen.query_one(EventsPanel)
        event = await _typed_then_an_event(pilot, 4)
        panel.show_message(event.message_ids[0])  # the user's own change: drawn now, the events' with it
        await wait_until(pilot, lambda: not panel.redraw_pending, what="the user's redraw")
        assert app.state.pace.held >= 1  # drawn while the events' redraw is still held: it did not wait for it
        assert top_id(app) == str(event.id)
