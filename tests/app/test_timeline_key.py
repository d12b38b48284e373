"""The thread's timeline key and its stuck marks, in the app against the sandbox at 80×24: enter on the thread shows
the newest sent message's timeline (what the events said, nothing more), ↑/↓ move between sent messages, escape
closes; a message waiting at "sent" past the threshold is marked in the thread (the view's clock is injected).

Status events are literal Z-API callbacks (Z-API/docs `en/webhooks/on-message-send.mdx`,
`on-whatsapp-message-status-changes.mdx`; docs/gateways/zapi.md §5.1-5.2), posted to the app's listener."""

from __future__ import annotations

from tests.app.test_inbox import JORDAN, _dedent, _Result, _text, choose, inbox_settled, open_inbox, post
from tests.harness import running_sandbox_app, sandbox_app, screen_text, settle, wait_ready, wait_until
from tui.core.runtime import DETERMINISTIC_EPOCH
from tui.ui.screens.timeline import TimelineScreen
from tui.ui.widgets.thread_view import ThreadView

SIZE = (80, 24)
EPOCH_MS = int(DETERMINISTIC_EPOCH.timestamp() * 1000)


async def sent_and_read_without_delivered(pilot, screen) -> None:
    """Two sends to Jordan (after the seeded history's one): EXT1 handed to the network then read (no delivered ever said), EXT2 only sent."""
    await choose(pilot, screen, JORDAN)
    await pilot.app.runtime.inbox_service.record_sent("send-text", _text(JORDAN, "first, read"), _Result("EXT1"))
    assert await post(pilot, "/delivery", {"type": "DeliveryCallback", "instanceId": "sandbox", "phone": JORDAN,
                                           "zaapId": "Z1", "messageId": "EXT1", "momment": EPOCH_MS + 1000}) == 200
    assert await post(pilot, "/delivery", {"type": "MessageStatusCallback", "instanceId": "sandbox", "status": "READ",
                                           "ids": ["EXT1"], "momment": EPOCH_MS + 60_000, "phoneDevice": 0,
                                           "phone": JORDAN, "isGroup": False}) == 200
    await pilot.app.runtime.inbox_service.record_sent("send-text", _text(JORDAN, "second, only sent"), _Result("EXT2"))
    await inbox_settled(pilot)


def timeline_text(pilot) -> str:
    return _dedent(screen_text(pilot.app))


async def test_enter_on_the_thread_shows_the_newest_sent_message_and_arrows_move():
    async with running_sandbox_app(SIZE) as pilot:
        screen = await open_inbox(pilot)
        await sent_and_read_without_delivered(pilot, screen)
        screen.query_one(ThreadView).focus()
        await settle(pilot)
        assert "⏎ Timeline" in screen_text(pilot.app).splitlines()[-1]
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, TimelineScreen), what="the timeline")
        await settle(pilot)
        shown = timeline_text(pilot)
        assert "Timeline · EXT2 · 3 of 3 sent" in shown and "second, only sent" in shown, shown
        assert "sent                   12:00" in shown and "handed to the network  — not yet" in shown
        await pilot.press("up")
        await settle(pilot)
        shown = timeline_text(pilot)
        assert "Timeline · EXT1 · 2 of 3 sent" in shown and "first, read" in shown
        for line in ("handed to the network  12:00", "delivered              — no event said so", "read                   12:00"):
            assert line in shown, shown
        await pilot.press("up", "up")  # the seeded history's own message, then the first: a bell, nothing moves
        await settle(pilot)
        assert " · 1 of 3 sent" in timeline_text(pilot)
        await pilot.press("down", "down")
        await settle(pilot)
        assert "Timeline · EXT2 · 3 of 3 sent" in timeline_text(pilot)
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(pilot.app.screen, TimelineScreen), what="closed")
        assert pilot.app.focused is screen.query_one(ThreadView)


async def test_a_message_stuck_at_sent_is_marked_in_the_thread():
    async with running_sandbox_app(SIZE) as pilot:
        screen = await open_inbox(pilot)
        await sent_and_read_without_delivered(pilot, screen)
        view = screen.query_one(ThreadView)
        assert "⚠" not in view.text()
        real = view.clock
        assert real is not None and view.stuck_after_minutes == 10
        view.clock = lambda: real() + 11 * 60_000_000  # eleven minutes later
        screen.schedule_refresh()  # what the five-second tick does
        await inbox_settled(pilot)
        text = _dedent(view.text())
        assert "You · 12:00 ✓ ⚠ 11 min at sent\nsecond, only sent" in text, text
        assert "You · 12:00 ✓✓ read\nfirst, read" in text  # read: never stuck
        view.clock = real
        screen.schedule_refresh()
        await inbox_settled(pilot)
        assert "⚠" not in view.text()


def test_snapshot_timeline_80x24(snap_compare):
    async def run_before(pilot):
        await wait_ready(pilot)
        screen = await open_inbox(pilot)
        await sent_and_read_without_delivered(pilot, screen)
        screen.query_one(ThreadView).focus()
        await pilot.press("enter", "up")
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, TimelineScreen), what="the timeline")
        await settle(pilot)

    assert snap_compare(sandbox_app(), terminal_size=SIZE, run_before=run_before)
