"""Issue 21, item 11: "Generate" asks before it replaces the HMAC key and lets the user copy the new one (shown
masked); the proxy URL shows its host and masks only the password; the message box wraps long text."""

from __future__ import annotations

from textual.widgets import Input

from tests.harness import open_chat_form, running_sandbox_app, screen_text, settle, show_section, wait_until
from tui.ui.widgets.section import CopyableValue


async def test_generate_asks_first_and_the_new_key_can_be_copied(monkeypatch):
    copied: list[str] = []
    monkeypatch.setattr("tui.ui.widgets.section.copy_text", lambda app, text, what, **_: copied.append(text))
    async with running_sandbox_app(size=(80, 24)) as pilot:
        app = pilot.app
        await show_section(pilot, "settings")
        await settle(pilot)
        before = app.runtime.sandbox.state.hmac_key
        button = app.screen.query_one("#hmac-generate")
        button.focus()
        await pilot.press("enter")
        await wait_until(pilot, lambda: type(app.screen).__name__ == "ConfirmScreen", what="the question")
        await pilot.press("n")
        await settle(pilot)
        assert app.runtime.sandbox.state.hmac_key == before, "No replaced the key"
        assert "Not generated" in str(app.screen.query_one("#hmac-form .block-status").render())
        await wait_until(pilot, lambda: app.focused is button, what="the focus back on Generate")
        await pilot.press("enter")
        await wait_until(pilot, lambda: type(app.screen).__name__ == "ConfirmScreen", what="the question")
        await pilot.press("y")
        await wait_until(pilot, lambda: app.runtime.sandbox.state.hmac_key != before, what="the new key")
        await settle(pilot)
        key = app.runtime.sandbox.state.hmac_key
        new_key = app.screen.query_one("#hmac-new-key", CopyableValue)
        assert new_key.has_class("-shown") and new_key.value == key
        assert key not in app.export_screenshot()  # shown masked only
        assert key[-4:] in screen_text(app), screen_text(app)
        new_key.query_one(".copy").press()
        await pilot.pause()
        assert copied == [key]


def test_password_span():
    from tui.ui.sections.settings.proxy import password_span

    url = "socks5://bob:hunter2@proxy.example:1080"
    start, end = password_span(url)
    assert url[start:end] == "hunter2"
    assert password_span("socks5://proxy.example:1080") == (0, 0)
    assert password_span("http://host:80/path") == (0, 0)
    typed = "socks5://bob:hunt"  # the @ not typed yet: masked already
    start, end = password_span(typed)
    assert typed[start:end] == "hunt"


async def test_the_proxy_url_shows_its_host_and_masks_only_the_password():
    async with running_sandbox_app(size=(80, 24)) as pilot:
        app = pilot.app
        await show_section(pilot, "settings")
        await settle(pilot)
        field = app.screen.query_one("#proxy-url", Input)
        field.value = "socks5://bob:hunter2@proxy.example:1080"
        field.focus()
        await settle(pilot)
        shown = screen_text(app)
        assert "socks5://bob:•••••••@proxy.example:1080" in shown, shown
        assert "hunter2" not in app.export_screenshot()


async def test_the_message_box_wraps_long_text():
    async with running_sandbox_app(size=(80, 24)) as pilot:
        app = pilot.app
        await open_chat_form(pilot)
        box = app.screen.query_one("#text-message")
        box.focus()
        await pilot.press(*("word " * 30))
        await settle(pilot)
        assert box.max_scroll_x == 0 and box.scroll_x == 0, "the message scrolls sideways"
        assert box.wrapped_document.height > 1
        assert box.text.count("\n") == 0  # wrapped on screen, one line of text
