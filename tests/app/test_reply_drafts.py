"""Issue 38, item 11: each chat keeps its own reply draft (a draft typed for one chat was sent to the next one
opened), and Escape from the events panel goes to the conversations' list, not into a reply line."""

from __future__ import annotations

from textual.widgets import Input

from tests.app.test_inbox import ANA, BRUNO, JORDAN, choose, inbox_settled, open_inbox
from tests.harness import running_sandbox_app, wait_until
from tui.ui.widgets.events_panel import EventsPanel


async def test_each_chat_keeps_its_own_reply_draft():
    async with running_sandbox_app(size=(80, 24)) as pilot:
        screen = await open_inbox(pilot)
        reply = screen.query_one("#reply", Input)
        await choose(pilot, screen, JORDAN)
        await pilot.press("enter")
        await pilot.press(*"for jordan")
        await pilot.press("escape")  # back to the list, the draft unsent
        await wait_until(pilot, lambda: pilot.app.focused is screen.query_one("#conversations"), what="the list")
        await choose(pilot, screen, BRUNO)
        await pilot.press("enter")
        assert pilot.app.focused is reply and reply.value == ""  # Bruno's reply is his own: empty
        await pilot.press(*"for bruno")
        await pilot.press("escape")
        await choose(pilot, screen, JORDAN)
        await pilot.press("enter")
        assert reply.value == "for jordan"  # Jordan's draft is where it was left
        await choose(pilot, screen, BRUNO)
        await pilot.press("enter")
        assert reply.value == "for bruno"
        await pilot.press("enter")  # sent to Bruno, the chat it was written for
        await inbox_settled(pilot)
        [sent] = pilot.app.runtime.sandbox.state.sent
        assert (sent.recipient, sent.text) == (BRUNO, "for bruno")
        await choose(pilot, screen, JORDAN)
        await pilot.press("enter")
        assert reply.value == "for jordan"  # a send to another chat leaves this draft alone
        await choose(pilot, screen, ANA)
        await pilot.press("enter")
        assert reply.value == ""


async def test_escape_from_the_events_panel_goes_to_the_conversations_list():
    async with running_sandbox_app(size=(80, 24)) as pilot:
        screen = await open_inbox(pilot)
        await choose(pilot, screen, JORDAN)
        await pilot.press("enter")  # the reply line
        assert pilot.app.focused is screen.query_one("#reply")
        panel = pilot.app.screen.query_one(EventsPanel)
        await pilot.press("tab")  # from the reply line to the events panel
        await wait_until(pilot, lambda: panel in pilot.app.focused.ancestors_with_self, what="the panel focused")
        await pilot.press("escape")
        await wait_until(pilot, lambda: panel not in pilot.app.focused.ancestors_with_self, what="the panel left")
        assert pilot.app.focused is screen.query_one("#conversations")
        await pilot.press("x")  # a key typed now is no text in a reply
        assert screen.query_one("#reply", Input).value == ""
