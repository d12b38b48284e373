"""The thread view on its own (no store, no sandbox): where its scrollbar's thumb is after it scrolls to the newest
message, and that it shows the newest messages at once while it lays out the rest of a long window."""

from __future__ import annotations

from textual.app import App, ComposeResult

from tui.runtime import MessageRow, Status
from tui.widgets.thread_view import ThreadView


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


async def test_the_thumb_is_at_the_bottom_after_a_scroll_made_before_the_layout_that_shows_the_scrollbar():
    """The snapshot flake: the thread at its newest message, its scrollbar's thumb drawn at the top."""
    app = ThreadApp()
    async with app.run_test(size=(60, 12)) as pilot:
        view = app.query_one(ThreadView)
        await pilot.pause()
        view.show(rows(40), has_older=False)
        view.scroll_end(animate=False, immediate=True, force=True)  # before the layout, as under load
        assert view.scroll_y > 0 and not view.show_vertical_scrollbar
        await pilot.pause()
        assert view.show_vertical_scrollbar
        assert view.vertical_scrollbar.position == view.scroll_y == view.max_scroll_y
        assert view.scrollbar_in_step and view.at_newest
