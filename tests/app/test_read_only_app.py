"""Issue 26: the app on a read-only profile, against a sandbox gateway that counts what it is sent. The forms of
writing operations answer with the refusal in their answer line and nothing reaches the gateway; reads still work;
the header marks the profile; the palette still lists the writes (choosing one shows why it is refused)."""

from __future__ import annotations

import pytest

from tests.config.test_read_only_call import TOKENS, CountingSandbox
from textual.widgets import Input

from tests.harness import (
    SIZE, fill, highlighted, open_chat_form, screen_text, settle, show_section, wait_ready, wait_until,
)
from tui.local import config
from tui.ui.app import build_app
from tui.ui.widgets.forms import set_cursor_blink

REFUSAL = ("This profile (ops-view) is read-only; nothing was sent. Make it writable with "
           "`gateway-tui profile add ops-view --no-read-only`.")
WRITING_METHODS = ("POST", "PUT", "DELETE")


@pytest.fixture
async def sandbox():
    gateway = CountingSandbox(
        instance_id="roapp", instance_token=TOKENS["GATEWAY_TUI_INSTANCE_TOKEN"],
        client_token=TOKENS["GATEWAY_TUI_CLIENT_TOKEN"], session_token=TOKENS["GATEWAY_TUI_SESSION_TOKEN"],
        delivery_delay=0.0,
    )
    await gateway.start()
    yield gateway
    await gateway.stop()


@pytest.fixture
def app(sandbox, monkeypatch):
    for name, value in TOKENS.items():
        monkeypatch.setenv(name, value)
    base = sandbox.url.rstrip("/")
    config.save_profile(config.Profile(name="ops-view", base_url=base, instance_id="roapp", session_url=base,
                                       listener_port=0, read_only=True))
    set_cursor_blink(False)
    return build_app(profile="ops-view")


def writes_seen(sandbox: CountingSandbox) -> list[str]:
    return [seen for seen in sandbox.seen if seen.startswith(WRITING_METHODS)]


def shown(app) -> str:
    return " ".join(screen_text(app).split())


async def test_a_chats_send_is_refused_in_its_answer_line_and_nothing_is_sent(app, sandbox):
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        assert sandbox.seen, "the app read the gateway's status at start: reads still work"
        assert "profile ops-view read-only" in shown(app)  # the header, in full at 120 columns
        await show_section(pilot, "chats")
        await open_chat_form(pilot)
        fill(app.screen, {"recipient": "5511999999999", "kind": "text"})
        await pilot.pause()
        fill(app.screen, {"text-message": "hello"})
        app.screen.query_one("#send").press()
        await settle(pilot)
        assert REFUSAL in str(app.screen.query_one("#chat-status").render())
        assert writes_seen(sandbox) == [] and list(sandbox.state.sent) == []
        assert app.last_sent_id is None or app.last_sent_id == ""


async def test_a_settings_write_is_refused_and_a_read_still_answers(app, sandbox):
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        await show_section(pilot, "settings")
        fill(app.screen, {"description": "Open 9-18h"})
        app.screen.query_one("#description-apply").press()
        await settle(pilot)
        assert REFUSAL in str(app.screen.query_one("#description-form .block-status").render())
        assert writes_seen(sandbox) == []
        await show_section(pilot, "groups")
        group = next(iter(sandbox.state.groups.values()))
        fill(app.screen, {"lookup-id": group.group_id})
        app.screen.query_one("#lookup").press()
        await settle(pilot)
        assert "read-only" not in str(app.screen.query_one("#group-status").render())
        assert any("group-metadata" in seen for seen in sandbox.seen)


async def test_the_header_marks_it_and_the_palette_still_lists_the_writes(app, sandbox):
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_ready(pilot)
        assert shown(app).startswith("ops-view r/o ● connected")  # compact at 80 columns
        await pilot.press("ctrl+p")
        await wait_until(pilot, lambda: type(app.screen).__name__ == "CommandPalette", what="the palette")
        app.screen.query_one(Input).value = "Send poll"
        await wait_until(pilot, lambda: highlighted(app).startswith("Send poll"), what="Send poll listed")
        await wait_until(pilot, lambda: "refused: this profile is read-only" in shown(app), what="marked refused")
        await pilot.press("enter")  # chosen, it opens its form as for any profile
        await settle(pilot)
        assert type(app.screen).__name__ != "CommandPalette"
        assert writes_seen(sandbox) == []


async def test_a_pairing_action_is_refused_in_the_profiles_words(monkeypatch):
    """Log out (a pairing action) on WuzAPI: asked, then refused before anything is sent; still connected."""
    from tui.api.dialects import SessionDialect
    from tui.api.operations import Family

    gateway = CountingSandbox(
        instance_id="roapp", instance_token=TOKENS["GATEWAY_TUI_INSTANCE_TOKEN"],
        client_token=TOKENS["GATEWAY_TUI_CLIENT_TOKEN"], session_token=TOKENS["GATEWAY_TUI_SESSION_TOKEN"],
        delivery_delay=0.0, session_dialect=SessionDialect.WUZAPI,
    )
    await gateway.start()
    try:
        for name, value in TOKENS.items():
            monkeypatch.setenv(name, value)
        config.save_profile(config.Profile(name="ops-view", session_url=gateway.url, listener_port=0,
                                           session_dialect=SessionDialect.WUZAPI, read_only=True))
        set_cursor_blink(False)
        app = build_app(profile="ops-view")
        async with app.run_test(size=SIZE) as pilot:
            await wait_ready(pilot)
            await pilot.press("f9", "alt+8")
            account = app.runtime.current
            assert account is not None
            await wait_until(pilot, lambda: bool(account.watch.state(Family.SESSION).connected),
                             what="connected (a status read works)")
            await pilot.press("l")
            await wait_until(pilot, lambda: "Log the phone out of the session" in screen_text(app), what="the question")
            await pilot.press("y")
            await wait_until(pilot, lambda: "is read-only; nothing was sent" in screen_text(app),
                             what="the refusal")
            assert "would not" not in shown(app)  # the profile refused it, not the gateway
            assert writes_seen(gateway) == [] and account.watch.state(Family.SESSION).connected
    finally:
        await gateway.stop()
