"""The main flows end to end through the UI against the embedded sandbox: each message kind is sent from Chats
and its events arrive, verified, linked to the sent id; groups, communities and privacy change the gateway."""

from __future__ import annotations

import asyncio

import pytest
from textual.widgets import DataTable

from tests.harness import fill, open_chat_form, running_sandbox_app, screen_text, settle, show_section
from tui.sandbox.state import COMMUNITY_ID, LAUNCH_ID
from tui.api.signing import Verdict

RECIPIENT = "5511999999999"

KIND_FIELDS = {
    "text": {"text-message": "hello from the test"},
    "buttons": {"buttons-message": "Confirm?", "buttons-labels": "Yes\nNo\nLater"},
    "list": {"list-message": "Pick", "list-labels": "A\nB"},
    "link": {"link-message": "see this", "link-url": "https://example.com", "link-title": "Example"},
    "poll": {"poll-question": "Lunch?", "poll-options": "Pizza\nSushi\nSalad", "poll-count": "2"},
    "location": {"location-title": "Office", "location-address": "Av. Paulista 1000", "location-lat": "-23.56",
                 "location-lng": "-46.65"},
    "sticker": {"sticker-url": "https://example.com/s.webp"},
    "contact": {"contact-name": "Ana Souza", "contact-phone": "5511955551111", "contact-email": "ana@example.com",
                "contact-organization": "Acme"},
}


async def send(pilot, kind: str, values: dict[str, str], recipient: str = RECIPIENT) -> str:
    screen = pilot.app.screen
    await show_section(pilot, "chats")
    await open_chat_form(pilot)  # Chats opens on the conversations
    fill(screen, {"recipient": recipient, "kind": kind})
    await pilot.pause()
    fill(screen, values)
    before = pilot.app.last_sent_id
    screen.query_one("#send").press()
    await settle(pilot)
    assert pilot.app.last_sent_id and pilot.app.last_sent_id != before, screen.query_one("#chat-status").render()
    return pilot.app.last_sent_id


@pytest.mark.parametrize("kind", sorted(KIND_FIELDS))
async def test_each_kind_is_sent_and_its_events_arrive_verified(kind):
    async with running_sandbox_app() as pilot:
        app = pilot.app
        message_id = await send(pilot, kind, KIND_FIELDS[kind])
        events = app.runtime.store.find_by_message_id(message_id)
        if kind == "contact":  # session family: no delivery notification (op 16 is the instance family's)
            assert app.runtime.sandbox.state.sent[-1].message_id == message_id
        else:
            assert events, "no webhook event refers to the sent message"
            assert {str(event.verdict) for event in events} == {str(Verdict.VALID)}
        table = app.screen.query_one("#events-panel-table", DataTable)
        assert table.row_count >= len(events)
        assert message_id in str(app.screen.query_one("#sent-id").query_one(".value").render())


async def test_forward_a_sent_message():
    async with running_sandbox_app() as pilot:
        first = await send(pilot, "text", KIND_FIELDS["text"])
        forwarded = await send(pilot, "forward", {"forward-id": first, "forward-phone": RECIPIENT},
                               recipient="5511988887777")
        assert forwarded != first


async def test_invalid_form_sends_nothing():
    async with running_sandbox_app() as pilot:
        app = pilot.app
        await show_section(pilot, "chats")
        await open_chat_form(pilot)  # Chats opens on the conversations
        before = len(list(app.runtime.request_log))
        fill(app.screen, {"recipient": "+55 (11) 9999", "kind": "poll"})
        await pilot.pause()
        fill(app.screen, {"poll-question": "Q", "poll-options": "Only one", "poll-count": "3"})
        app.screen.query_one("#send").press()
        await settle(pilot)
        assert len(list(app.runtime.request_log)) == before
        assert app.last_sent_id is None
        errors = [row.error for row in app.screen.query("FieldRow") if row.error]
        assert len(errors) >= 2


async def test_group_create_look_up_rename():
    async with running_sandbox_app() as pilot:
        app = pilot.app
        state = app.runtime.sandbox.state
        await show_section(pilot, "groups")
        fill(app.screen, {"create-name": "Test crew", "create-participants": "5511944443333"})
        app.screen.query_one("#create").press()
        await settle(pilot)
        created = [g for g in state.groups.values() if g.name == "Test crew"]
        assert len(created) == 1

        fill(app.screen, {"lookup-id": f"{LAUNCH_ID}-group"})
        app.screen.query_one("#lookup").press()
        await settle(pilot)
        table = app.screen.query_one("#participants", DataTable)
        assert table.row_count == len(state.groups[LAUNCH_ID].participants)
        assert screen_text(app).count(state.groups[LAUNCH_ID].name) >= 2  # metadata and information panels

        fill(app.screen, {"rename-group": f"{LAUNCH_ID}-group", "rename-name": "Launch crew renamed"})
        app.screen.query_one("#rename").press()
        await settle(pilot)
        assert state.groups[LAUNCH_ID].name == "Launch crew renamed"


async def test_reset_community_link_after_confirmation():
    async with running_sandbox_app() as pilot:
        app = pilot.app
        community = app.runtime.sandbox.state.communities[COMMUNITY_ID]
        generation = community.invite_generation
        await show_section(pilot, "communities")
        fill(app.screen, {"community-id": COMMUNITY_ID})
        app.screen.query_one("#reset").press()
        await pilot.pause()
        await pilot.press("n")  # declined: nothing changes
        await settle(pilot)
        assert community.invite_generation == generation
        app.screen.query_one("#reset").press()
        await pilot.pause()
        await pilot.press("y")
        await settle(pilot)
        assert community.invite_generation == generation + 1
        shown = str(app.screen.query_one("#invite-link").query_one(".value").render())
        assert shown.startswith("https://chat.whatsapp.com/")


async def test_privacy_setting_with_blacklist():
    async with running_sandbox_app() as pilot:
        app = pilot.app
        await show_section(pilot, "privacy")
        fill(app.screen, {"group-add-scope": "CONTACT_BLACKLIST"})
        await pilot.pause()
        fill(app.screen, {"group-add-phone": "5511977776666"})
        app.screen.query_one("#group-add-bl-add").press()
        await pilot.pause()
        app.screen.query_one("#group-add-apply").press()
        await settle(pilot)
        assert "5511977776666" in repr(app.runtime.sandbox.state.privacy)
        assert "CONTACT_BLACKLIST" in repr(app.runtime.sandbox.state.privacy)


@pytest.mark.parametrize("action, confirm", [("archive", None), ("pin", None), ("mute", None),
                                             ("clear", "n"), ("clear", "y"), ("delete", "y")])
async def test_chat_actions_with_confirmation_for_clear_and_delete(action, confirm):
    async with running_sandbox_app() as pilot:
        app = pilot.app
        await show_section(pilot, "chats")
        await open_chat_form(pilot)  # Chats opens on the conversations
        fill(app.screen, {"recipient": RECIPIENT, "chat-action": action})
        app.screen.query_one("#apply-action").press()
        await pilot.pause()
        if confirm is not None:
            assert type(app.screen).__name__ == "ConfirmScreen"
            await pilot.press(confirm)
        await settle(pilot)
        requests = [exchange for exchange in app.runtime.request_log if "modify-chat" in exchange.url]
        assert len(requests) == (0 if confirm == "n" else 1)
        if requests:
            assert f'"action":"{action}"' in requests[0].request_body.replace(" ", "")


async def test_add_participants_lists_each_failed_number():
    async with running_sandbox_app() as pilot:
        app = pilot.app
        await show_section(pilot, "groups")
        app.screen.query_one("#group-tabs").active = "tab-add"
        await pilot.pause()
        fill(app.screen, {"add-group": f"{LAUNCH_ID}-group", "add-phones": "5511955554444, 5511955550000"})
        app.screen.query_one("#add").press()
        await settle(pilot)
        shown = screen_text(app)
        assert "5511955550000" in shown and "failed" in shown.lower()
        assert any(p == "5511955554444" for p in app.runtime.sandbox.state.groups[LAUNCH_ID].participants)


async def test_promote_community_admins():
    async with running_sandbox_app() as pilot:
        app = pilot.app
        await show_section(pilot, "communities")
        fill(app.screen, {"community-id": COMMUNITY_ID, "promote-phones": "5511987654321"})
        app.screen.query_one("#promote").press()
        await settle(pilot)
        assert "5511987654321" in app.runtime.sandbox.state.communities[COMMUNITY_ID].admins
        assert "Promoted 5511987654321" in screen_text(app)


async def test_server_text_with_markup_is_shown_literally():
    async with running_sandbox_app() as pilot:
        app = pilot.app
        app.runtime.sandbox.state.groups[LAUNCH_ID].name = "[bold red]Launch[/] [link=x]crew[/link]"
        await show_section(pilot, "groups")
        fill(app.screen, {"lookup-id": f"{LAUNCH_ID}-group"})
        app.screen.query_one("#lookup").press()
        await settle(pilot)
        assert "[bold red]Launch[/] [link=x]crew[/link]" in screen_text(app)


async def test_escape_cancels_a_running_call():
    async with running_sandbox_app() as pilot:
        app = pilot.app
        started = asyncio.Event()

        async def slow_request(op, request):  # every section sends through the client's generic path
            started.set()
            await asyncio.sleep(30)

        app.runtime.instance.request = slow_request
        await show_section(pilot, "catalog")
        fill(app.screen, {"product-id": "6814402216592341"})
        app.screen.query_one("#lookup-product").press()
        await asyncio.wait_for(started.wait(), 10)
        app.screen.set_focus(None)
        await pilot.press("escape")
        await settle(pilot)
        assert "cancelled" in screen_text(app)
