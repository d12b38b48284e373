"""The footer follows a running call: `esc Cancel call` while a section's call runs (the focus waits on the section
while the call covers its form), gone when it ends (the snapshots capture after the call, and under load they
caught a stale `Cancel call`); Escape then cancels, and the focus goes back to the field."""

from __future__ import annotations

import asyncio

from tui.ui.textual_compat import FooterKey

from tests.harness import open_chat_form, running_sandbox_app, settle, show_section, wait_until
from tui.sandbox.state import LAUNCH_ID

RECIPIENT = "5511999999999"


def footer_keys(app) -> list[str]:
    return [key.description for key in app.screen.query(FooterKey)]


async def test_the_footer_shows_cancel_during_a_call_and_drops_it_when_the_call_ends(monkeypatch):
    async with running_sandbox_app() as pilot:
        app = pilot.app
        release = asyncio.Event()
        started = asyncio.Event()
        real = app.runtime.instance.group_metadata

        async def held(group_id: str):
            started.set()
            await release.wait()  # the gateway answers when the test says so
            return await real(group_id)

        monkeypatch.setattr(app.runtime.instance, "group_metadata", held)
        await show_section(pilot, "groups")
        field = app.screen.query_one("#lookup-id")
        field.value = f"{LAUNCH_ID}-group"
        field.focus()
        await pilot.press("ctrl+s")
        await wait_until(pilot, started.is_set, what="the look-up to reach the gateway")
        await wait_until(pilot, lambda: "Cancel call" in footer_keys(app), what="esc Cancel call in the footer")
        assert "Run" not in footer_keys(app)  # the covered form's keys wait for the answer
        release.set()
        await settle(pilot)
        assert "Cancel call" not in footer_keys(app)
        assert app.focused is field and "Looked up" in str(app.screen.query_one("#group-status").render())


async def test_escape_in_the_footer_cancels_a_send_and_gives_the_field_back():
    async with running_sandbox_app() as pilot:
        app = pilot.app
        started = asyncio.Event()

        async def never(*args, **kwargs):
            started.set()
            await asyncio.Event().wait()  # the gateway never answers

        app.runtime.instance.request = never
        await open_chat_form(pilot)  # Chats opens on the conversations
        app.screen.query_one("#recipient").value = RECIPIENT
        message = app.screen.query_one("#text-message")
        message.load_text("held")
        message.focus()
        await pilot.press("ctrl+s")
        await wait_until(pilot, started.is_set, what="the send to reach the gateway")
        await wait_until(pilot, lambda: "Cancel call" in footer_keys(app), what="esc Cancel call in the footer")
        assert app.focused is app.screen.section("chats")
        await pilot.press("escape")
        await wait_until(pilot, lambda: "cancelled" in str(app.screen.query_one("#chat-status").render()),
                         what="the cancel")
        await settle(pilot)
        assert app.focused is message and "Cancel call" not in footer_keys(app)
