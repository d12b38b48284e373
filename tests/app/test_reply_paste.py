"""Issue 21, item 7: a paste of several lines into the reply line keeps every line. Textual's Input kept only the
first and dropped the rest silently; now the whole text moves to the full form's message box, to the open chat,
and nothing is sent until ctrl+s."""

from __future__ import annotations

from textual import events
from textual.widgets import Input

from tests.harness import running_sandbox_app, screen_text, settle, wait_until

PASTED = "Order 1182:\r\n- 2 blue cases\r\n- 1 charger\r\n\r\nThanks!\n"


async def open_reply(pilot) -> str:
    app = pilot.app
    await pilot.press("escape")  # the list
    await wait_until(pilot, lambda: getattr(app.focused, "id", None) == "conversations", what="the list")
    await pilot.press("enter")  # reply to the chosen chat
    await wait_until(pilot, lambda: getattr(app.focused, "id", None) == "reply", what="the reply line")
    chat = app.screen.query_one("#inbox").open_chat_id
    assert chat
    return chat


async def test_a_multi_line_paste_into_the_reply_moves_whole_to_the_form_unsent():
    async with running_sandbox_app(size=(80, 24), notifications=True) as pilot:
        app = pilot.app
        chat = await open_reply(pilot)
        await pilot.press(*"Hi! ")
        sent_before = len(app.runtime.sandbox.state.sent)
        app.post_message(events.Paste(PASTED))  # as the terminal delivers a bracketed paste
        await wait_until(pilot, lambda: getattr(app.focused, "id", None) == "text-message", what="the message box")
        box = app.focused
        assert box.text == "Hi! Order 1182:\n- 2 blue cases\n- 1 charger\n\nThanks!"  # every line, in order
        assert app.screen.query_one("#recipient", Input).value == chat
        assert str(app.screen.query_one("#kind").value) == "text"
        assert app.screen.query_one("#reply", Input).value == ""  # not left half in the reply line either
        await settle(pilot)
        assert len(app.runtime.sandbox.state.sent) == sent_before  # the paste sent nothing
        assert "Moved to the full form" in screen_text(app)
        await pilot.press("ctrl+s")  # sending is the user's step
        await wait_until(pilot, lambda: len(app.runtime.sandbox.state.sent) == sent_before + 1, what="the send")
        assert app.runtime.sandbox.state.sent[-1].text == box.text


async def test_a_one_line_paste_stays_in_the_reply_line():
    async with running_sandbox_app(size=(80, 24)) as pilot:
        app = pilot.app
        await open_reply(pilot)
        app.post_message(events.Paste("see you at 18h\n"))
        await wait_until(pilot, lambda: app.screen.query_one("#reply", Input).value == "see you at 18h",
                         what="the pasted line")
        assert app.screen.query_one("#chat-views").current == "inbox"


async def test_a_reply_longer_than_whatsapp_takes_is_refused_and_kept():
    # a 100,000-character paste on one line: WhatsApp takes at most 65,536 characters in a message
    async with running_sandbox_app(size=(80, 24)) as pilot:
        app = pilot.app
        await open_reply(pilot)
        sent_before = len(app.runtime.sandbox.state.sent)
        app.post_message(events.Paste("x" * 100_000))
        await wait_until(pilot, lambda: len(app.screen.query_one("#reply", Input).value) == 100_000,
                         what="the pasted line")
        await pilot.press("enter")
        await wait_until(pilot, lambda: "65,536" in screen_text(app), what="the refusal")
        assert "nothing was sent" in screen_text(app)
        await settle(pilot)
        assert len(app.runtime.sandbox.state.sent) == sent_before
        assert len(app.screen.query_one("#reply", Input).value) == 100_000  # kept, to shorten


async def test_a_message_longer_than_whatsapp_takes_is_refused_in_the_full_form_and_kept():
    """Issue 38 item 16, the full form: its message box refuses 100,000 characters under the field, before sending."""
    from tests.harness import fill, open_chat_form, show_section
    from tui.ui.widgets.forms import FieldRow

    async with running_sandbox_app(size=(80, 24)) as pilot:
        app = pilot.app
        await show_section(pilot, "chats")
        await open_chat_form(pilot)
        sent_before = len(app.runtime.sandbox.state.sent)
        fill(app.screen, {"recipient": "5511999999999", "text-message": "x" * 100_000})
        await pilot.press("ctrl+s")
        await settle(pilot)
        errors = {row.fields[0]: row.error for row in app.screen.query(FieldRow) if row.error}
        assert errors.get("message") == "is 100,000 characters long; WhatsApp takes at most 65,536 in one message", \
            errors
        assert len(app.runtime.sandbox.state.sent) == sent_before
        assert len(app.screen.query_one("#text-message").text) == 100_000  # kept, to shorten
