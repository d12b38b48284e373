"""An answer that Chats gives at once (the profile lacks the family, the clients are not ready) stays under the
form: the recipient's change events still on their way when the send is asked for speak of the value it was
sent to, and must not clear what the send answered."""

from __future__ import annotations

import pytest

from tests.harness import SIZE, fill, screen_text, settle, show_section, wait_ready, wait_until
from tui.local import config
from tui.ui.app import build_app
from tui.ui.widgets.forms import set_cursor_blink

NOWHERE = "http://127.0.0.1:9"  # nothing listens: no test reaches a gateway
MISSING = "This profile (one) has no instance family (Z-API)"


def session_only(monkeypatch: pytest.MonkeyPatch) -> None:
    profile = config.Profile(name="one", session_url=NOWHERE, listener_port=0)
    monkeypatch.setattr(config, "load_profiles", lambda: [profile])


def shown(app) -> str:
    return " ".join(screen_text(app).split())


async def test_the_missing_family_stays_said_after_a_send_typed_fast(monkeypatch):
    session_only(monkeypatch)
    set_cursor_blink(False)
    app = build_app(profile="one")
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        await show_section(pilot, "chats")
        section = app.screen.section("chats")
        section.open_operation("send-text")  # as the palette's entry does
        await wait_until(pilot, lambda: app.focused is not None and app.focused.id == "recipient",
                         what="the recipient field")
        # Typed and sent in the same turn: Send's Pressed reaches the section (4 levels up) before the
        # recipient's Changed (5 levels up), so the immediate answer is shown first, then the late Changed came.
        # (Pilot's press("ctrl+s") waits for idle first, so the Changed is handled before it: no race to show.)
        fill(app.screen, {"recipient": "5511999999999", "text-message": "hello"})
        app.screen.query_one("#send").press()
        await settle(pilot)
        assert MISSING in shown(app)
        assert app.screen.query_one("#chat-status").display  # the answer line shows it, under the form


async def test_a_changed_recipient_still_clears_the_answer(monkeypatch):
    """The fix keeps the rule: a recipient changed after the answer clears it (the answer spoke of another)."""
    session_only(monkeypatch)
    set_cursor_blink(False)
    app = build_app(profile="one")
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        await show_section(pilot, "chats")
        section = app.screen.section("chats")
        section.open_operation("send-text")
        await wait_until(pilot, lambda: app.focused is not None and app.focused.id == "recipient",
                         what="the recipient field")
        fill(app.screen, {"recipient": "5511999999999", "text-message": "hello"})
        await pilot.press("ctrl+s")
        await settle(pilot)
        await wait_until(pilot, lambda: MISSING in shown(app), what="the missing family")
        await pilot.click("#recipient")
        await pilot.press("end", "backspace")
        await settle(pilot)
        assert MISSING not in shown(app)
