"""Issue 38, item 10 (several accounts): after another account becomes current, the header counts that account's
events (not the previous one's), and the reply line no longer says "Sent" for a send made from another account."""

from __future__ import annotations

from tui.ui.sections.chats.inbox import InboxView
from tests.fleet.test_sandbox_accounts import sandbox_accounts_app
from tests.harness import READY_TIMEOUT, screen_text, wait_until
from tui.api.models import SendText


def stored(store, account: str) -> int:
    return len(store.newest(1000, account=account))


def header_line(app) -> str:
    return screen_text(app).splitlines()[0]


async def test_after_a_switch_the_header_counts_and_the_reply_line_are_the_new_accounts():
    async with sandbox_accounts_app(3) as pilot:
        app, runtime = pilot.app, pilot.app.runtime
        await wait_until(pilot, lambda: getattr(app.screen, "all_sections_mounted", False), timeout=READY_TIMEOUT,
                         what="every section mounted")
        screen = app.screen.query_one(InboxView)
        await wait_until(pilot, lambda: screen.open_chat_id is not None, what="the first chat")
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.focused is screen.query_one("#conversations"), what="the list")
        await pilot.press("enter")
        await pilot.press(*"from the first")
        await pilot.press("enter")  # a reply from sandbox-01: its events come to sandbox-01
        await wait_until(pilot, lambda: "Sent, message id" in screen_text(app), what="the reply sent")
        store = runtime.store
        await wait_until(pilot, lambda: bool(store.newest(10, account="sandbox-01")), what="its events")
        await wait_until(pilot, lambda: f" · {stored(store, 'sandbox-01')} events" in header_line(app),
                         what="sandbox-01's count")  # the same as its stored events, however many have come
        await app.screen.make_current("sandbox-02")
        await wait_until(pilot, lambda: "profile sandbox-02" in header_line(app), what="sandbox-02 current")
        await pilot.pause()
        line = header_line(app)
        assert " · 0 events · 0/min" in line, line  # sandbox-02 had none
        assert "Sent, message id" not in screen_text(app)  # the reply was sandbox-01's
        assert runtime.current is not None and runtime.instance is not None
        await runtime.instance.send_text(SendText(phone="5511999999999", message="from the second"))
        await wait_until(pilot, lambda: bool(store.newest(10, account="sandbox-02")), what="sandbox-02's events")
        await wait_until(pilot, lambda: f" · {stored(store, 'sandbox-02')} events" in header_line(app),
                         what="sandbox-02's count")
