"""Result lines never go stale (issue 21, item 10): each answers for one form and one recipient and is cleared when
they change. A "Marked read" line never shows under another chat, a success never stays under a new validation error
as if the invalid message had been sent, and "New chat" starts with no recipient."""

from __future__ import annotations

from textual.widgets import Input

from tests.app.test_inbox import choose, open_inbox
from tests.harness import fill, open_chat_form, running_sandbox_app, settle, show_section, wait_until
from tui.sandbox.state import COMMUNITY_ID
from tui.ui.widgets.section import CopyableValue

ANA, BRUNO = "5511987654321", "5511976543219"


def text_of(app, selector: str) -> str:
    widget = app.screen.query_one(selector)
    return str(widget.render()) if widget.has_class("-shown") else ""


async def test_marked_read_does_not_show_under_another_chat():
    async with running_sandbox_app(size=(80, 24)) as pilot:
        app = pilot.app
        view = await open_inbox(pilot)
        await choose(pilot, view, ANA)
        await pilot.press("m")
        await wait_until(pilot, lambda: "Marked read" in text_of(app, "#inbox-status"), what="marked read")
        await choose(pilot, view, BRUNO)
        assert view.open_chat_id == BRUNO
        assert "Marked read" not in text_of(app, "#inbox-status")


async def test_a_success_does_not_stay_under_a_new_validation_error():
    async with running_sandbox_app(size=(80, 24)) as pilot:
        app = pilot.app
        await open_chat_form(pilot)
        fill(app.screen, {"recipient": ANA, "text-message": "first"})
        sent = app.last_sent_id
        app.screen.query_one("#text-message").focus()
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: app.last_sent_id != sent, what="the send")
        await settle(pilot)
        assert app.screen.query_one("#sent-id", CopyableValue).value == app.last_sent_id
        fill(app.screen, {"text-message": ""})  # invalid: an empty message
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert app.screen.query_one("#text-message").parent.has_class("-invalid")
        assert app.screen.query_one("#sent-id", CopyableValue).value is None, "the last id still shows as if sent"
        assert not app.screen.query_one("#sent-id").has_class("-shown")
        assert text_of(app, "#chat-status") == "" or "Sent" not in text_of(app, "#chat-status")


async def test_a_chat_action_answer_is_cleared_when_the_recipient_changes():
    async with running_sandbox_app(size=(80, 24)) as pilot:
        app = pilot.app
        await open_chat_form(pilot)
        fill(app.screen, {"recipient": ANA})
        app.screen.query_one("#chat-action").focus()
        await pilot.press("ctrl+g")
        await wait_until(pilot, lambda: "done for" in text_of(app, "#chat-action-status"), what="the action")
        recipient = app.screen.query_one("#recipient", Input)
        recipient.focus()
        await pilot.press("end", "backspace")
        await settle(pilot)
        assert text_of(app, "#chat-action-status") == ""


async def test_new_chat_starts_with_no_recipient():
    async with running_sandbox_app(size=(80, 24)) as pilot:
        app = pilot.app
        view = await open_inbox(pilot)
        await choose(pilot, view, ANA)
        await pilot.press("k")  # the full form for Ana
        await wait_until(pilot, lambda: app.screen.query_one("#recipient", Input).value == ANA, what="Ana's form")
        await pilot.press("ctrl+l")  # back to the conversations
        await wait_until(pilot, lambda: view.display, what="the conversations")
        await pilot.press("ctrl+n")  # New chat
        await wait_until(pilot, lambda: getattr(app.focused, "id", None) == "recipient", what="the new chat form")
        assert app.screen.query_one("#recipient", Input).value == ""


async def test_communities_answer_is_cleared_by_a_new_attempt_that_fails_validation():
    async with running_sandbox_app(size=(80, 24)) as pilot:
        app = pilot.app
        await show_section(pilot, "communities")
        await settle(pilot)
        fill(app.screen, {"community-id": COMMUNITY_ID, "promote-phones": ANA})
        app.screen.query_one("#promote-phones").focus()
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: "Promoted" in text_of(app, "#promote-status"), what="promoted")
        fill(app.screen, {"promote-phones": "12"})
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert "Promoted" not in text_of(app, "#promote-status")
