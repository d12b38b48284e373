"""Issue 26 (keys under a flow of events): the Events section (7) does not re-read and rebuild its newest page while
another section shows; shown again, it reads it once and has every event that came. Behind a screen on top (an
event's detail) it catches up when that closes."""

from __future__ import annotations

from tests.app.test_events_panel_follows import delivery, post
from tests.app.test_events_panel_hidden import count_calls
from tests.harness import running_sandbox_app, settle, show_section, wait_until
from tui.ui.sections.events import EventsSection


async def test_the_events_section_reads_its_page_only_while_shown():
    async with running_sandbox_app(size=(80, 24)) as pilot:
        app = pilot.app
        section = app.screen.query_one(EventsSection)
        await settle(pilot)
        await wait_until(pilot, lambda: not section._live_pending, what="the first page")
        before = [row.id for row in section.rows]

        shown = count_calls(section, "_show_page")
        for index in range(3):  # Chats shows
            assert await post(app, delivery(f"BEHIND{index}")) == 200
        await settle(pilot)
        await pilot.pause(0.5)  # past the live refresh's delay: nothing read for a section nobody sees
        assert shown == [] and [row.id for row in section.rows] == before

        await show_section(pilot, "events")
        newest = app.runtime.store.newest(1)[0].id
        await wait_until(pilot, lambda: section.rows and section.rows[0].id == newest, what="the page once shown")
        assert len(shown) == 1

        await pilot.press("enter")  # the newest event's detail, on top of the section
        await wait_until(pilot, lambda: type(app.screen).__name__ != "MainScreen", what="the detail")
        assert await post(app, delivery("UNDERDETAIL")) == 200
        await settle(pilot)
        await pilot.pause(0.5)
        await pilot.press("escape")
        await wait_until(pilot, lambda: type(app.screen).__name__ == "MainScreen", what="back")
        newest = app.runtime.store.newest(1)[0].id
        await wait_until(pilot, lambda: section.rows[0].id == newest, what="the event that came under the detail")
