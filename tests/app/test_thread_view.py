"""The thread view on its own (no store, no sandbox): where its scrollbar's thumb is after it scrolls to the newest
message, and that it shows the newest messages at once while it lays out the rest of a long window."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

from textual.app import App, ComposeResult
from textual.pilot import Pilot

from tests.harness import wait_until
from tui.core.runtime import MessageRow, Status
from tui.ui.widgets.thread_view import ThreadView


def rows(count: int, *, start: int = 1) -> list[MessageRow]:
    return [
        MessageRow(id=n, chat_id="5511987654321", at_us=n * 1_000_000, outgoing=n % 3 == 0, kind="text",
                   body=f"message {n}: " + "lorem ipsum dolor sit amet " * (1 + n % 4),
                   message_id=f"M{n}", sender=None, status=Status.READ if n % 3 == 0 else None)
        for n in range(start, start + count)
    ]


class ThreadApp(App[None]):
    def compose(self) -> ComposeResult:
        yield ThreadView(id="thread")


@contextlib.asynccontextmanager
async def thread_view() -> AsyncIterator[tuple[Pilot, ThreadView]]:
    """A 60×12 app holding only a thread view, mounted and empty."""
    app = ThreadApp()
    async with app.run_test(size=(60, 12)) as pilot:
        view = app.query_one(ThreadView)
        await pilot.pause()
        yield pilot, view


async def test_the_thumb_is_at_the_bottom_after_a_scroll_made_before_the_layout_that_shows_the_scrollbar():
    """The snapshot flake: the thread at its newest message, its scrollbar's thumb drawn at the top."""
    async with thread_view() as (pilot, view):
        view.show(rows(40), has_older=False)
        view.scroll_end(animate=False, immediate=True, force=True)  # before the layout, as under load
        assert view.scroll_y > 0 and not view.show_vertical_scrollbar
        await wait_until(pilot, lambda: view.settled and view.show_vertical_scrollbar, what="the layout")  # not one pause
        assert view.show_vertical_scrollbar
        assert view.vertical_scrollbar.position == view.scroll_y == view.max_scroll_y
        assert view.settled and view.at_newest


def bottom_text(view: ThreadView) -> str:
    """The last message line on screen (the very last line is the blank after it)."""
    return view.render_line(view.scrollable_content_region.height - 2).text.strip()


async def test_a_long_window_shows_its_newest_messages_at_once_and_lays_out_the_rest_after_that_frame():
    async with thread_view() as (pilot, view):
        view.show(rows(200), has_older=True)
        partial = view.virtual_size.height
        assert view.at_newest and bottom_text(view).startswith("message 200:")  # on screen at once
        assert partial < 100  # a few screens, not the 200 messages
        await wait_until(pilot, lambda: view.settled, what="the rest laid out")
        assert view.at_newest and view.virtual_size.height > 4 * partial
        assert bottom_text(view).startswith("message 200:")
        text = view.text()
        assert text.splitlines()[0].strip() == "↑ older messages: scroll up"
        assert all(f"message {n}:" in text for n in range(1, 201))


async def test_an_older_page_goes_above_and_the_view_stays_on_the_same_lines():
    async with thread_view() as (pilot, view):
        view.show(rows(200, start=201), has_older=True)
        await pilot.pause()
        view.scroll_to(y=5, animate=False, immediate=True)
        shown = [view.render_line(y).text for y in range(10)]
        view.prepend(rows(200, start=1), has_older=False)
        assert [view.render_line(y).text for y in range(10)] == shown
        text = view.text()
        assert "older messages" not in text and text.index("message 200:") < text.index("message 201:")


async def test_a_new_message_is_added_below_and_the_view_follows_it():
    async with thread_view() as (pilot, view):
        view.show(rows(50), has_older=False)
        await pilot.pause()
        view.extend(rows(1, start=52))  # one line long
        await wait_until(pilot, lambda: view.settled and view.at_newest, what="the new message laid out")
        assert bottom_text(view).startswith("message 52:")
        assert view.text().count("message 52:") == 1


async def test_a_media_message_shows_its_kind_file_name_size_and_caption():
    """Issue 25: a received document shows its file line; the keys to open, save and preview it are in force only
    while the thread holds media."""
    from tui.webhooks.conversations import MediaInfo

    document = MediaInfo("document", "application/pdf", "invoice.pdf", None, 3009, None, True)
    image = MediaInfo("image", "image/jpeg", None, "the shelf", None, "https://storage.z-api.io/a.jpeg")
    async with thread_view() as (pilot, view):
        view.show(rows(1), has_older=False)
        await pilot.pause()
        assert view.check_action("open_media", ()) is False and view.media_row() is None
        view.show([
            MessageRow(id=1, chat_id="5511987654321", at_us=1_000_000, outgoing=False, kind="document",
                       body="[document] invoice.pdf", message_id="M1", sender=None, status=None, event_id=7,
                       media=document),
            MessageRow(id=2, chat_id="5511987654321", at_us=2_000_000, outgoing=False, kind="image",
                       body="[image] the shelf", message_id="M2", sender=None, status=None, event_id=8, media=image),
        ], has_older=False)
        await pilot.pause()
        text = " ".join(view.text().split())  # wrapped at the bubble's width
        assert "▤ document · invoice.pdf · 3 KB · application/pdf" in text
        assert "▤ image · size not known until fetched · image/jpeg" in text
        assert view.check_action("open_media", ()) is True
        chosen = view.media_row()
        assert chosen is not None and chosen.id == 2  # the newest media message in view
