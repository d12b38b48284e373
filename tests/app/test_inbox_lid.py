"""Who wrote, in the app: a contact writes from a LID (the sandbox's `POST /sandbox/incoming`, a whatsmeow
Message with `AddressingMode` "lid" and the phone in `SenderAlt`), the inbox shows the phone, and a reply from
the thread goes to the phone number on the wire; with no phone known it says "unknown number (lid …)" and the
reply goes to the LID. The sandbox's request bodies are read as received (a middleware records them)."""

from __future__ import annotations

import json

import httpx
import pytest
from aiohttp import web

from tests.app.test_inbox import choose, inbox_settled, open_inbox, row, thread_text
from tests.harness import running_sandbox_app, screen_text, wait_until
from tui.sandbox.incoming import lid_of
from tui.sandbox.server import SandboxGateway, _json_errors
from tui.ui.sections.chats.inbox import InboxView

NEW_NUMBER = "5521955554444"  # on WhatsApp, in no seeded chat, no contact name


@pytest.fixture
def received(monkeypatch) -> list[tuple[str, bytes]]:
    """(path, body) of every request the sandbox gets, as received."""
    seen: list[tuple[str, bytes]] = []

    @web.middleware
    async def record(request: web.Request, handler):
        seen.append((request.path, await request.read()))
        return await handler(request)

    def build_app(self: SandboxGateway) -> web.Application:
        app = web.Application(middlewares=[record, _json_errors])
        app.add_routes(self.routes())
        return app

    monkeypatch.setattr(SandboxGateway, "build_app", build_app)
    return seen


async def write_from_lid(pilot, phone: str, text: str, *, alt: bool = True) -> str:
    async with httpx.AsyncClient(trust_env=False) as client:
        answer = await client.post(pilot.app.runtime.sandbox.url + "/sandbox/incoming",
                                   json={"from": phone, "text": text, "alt": alt})
    assert answer.status_code == 200, answer.text
    lid = answer.json()["lid"]
    view = pilot.app.screen.query_one(InboxView)
    await wait_until(pilot, lambda: any(r.chat_id == lid for r in view.rows), what="the LID's chat")
    await inbox_settled(pilot)
    return lid


def sends(received: list[tuple[str, bytes]]) -> list[dict]:
    return [json.loads(body) for path, body in received if path.endswith("/send-text")]


async def test_a_lid_chat_shows_the_phone_and_a_reply_goes_to_the_phone(received):
    async with running_sandbox_app() as pilot:
        screen = await open_inbox(pilot)
        lid = await write_from_lid(pilot, NEW_NUMBER, "hello from a lid")
        assert lid == lid_of(NEW_NUMBER)
        assert row(screen, lid).title == f"+{NEW_NUMBER}"
        assert f"+{NEW_NUMBER}" in screen_text(pilot.app)
        await choose(pilot, screen, lid)
        assert "hello from a lid" in thread_text(screen)
        assert f"+{NEW_NUMBER} · {lid}" in screen_text(pilot.app)  # the thread's title: the number, then the LID
        await pilot.press("enter", *"hi back", "enter")
        await inbox_settled(pilot)
        assert sends(received) == [{"phone": NEW_NUMBER, "message": "hi back"}]
        assert "hi back" in thread_text(screen)  # the reply stays in the LID's thread


async def test_a_lid_with_no_phone_says_unknown_number_and_a_reply_goes_to_the_lid(received):
    async with running_sandbox_app() as pilot:
        screen = await open_inbox(pilot)
        lid = await write_from_lid(pilot, NEW_NUMBER, "who am I", alt=False)
        assert row(screen, lid).title == f"unknown number (lid {lid})"
        await choose(pilot, screen, lid)
        await pilot.press("enter", *"hi", "enter")
        await inbox_settled(pilot)
        assert sends(received) == [{"phone": lid, "message": "hi"}]


async def test_the_answer_to_a_reply_sent_to_a_lid_comes_back_in_its_chat(received):
    async with running_sandbox_app() as pilot:
        screen = await open_inbox(pilot)
        lid = await write_from_lid(pilot, NEW_NUMBER, "who am I", alt=False)
        await choose(pilot, screen, lid)
        await pilot.press("enter", *"hi", "enter")
        await inbox_settled(pilot)
        assert not [r.chat_id for r in screen.rows if "@lid@" in r.chat_id]
        assert row(screen, lid).messages == 3  # theirs, the reply, their answer


GROUP_MEMBER = "5511900001234"  # in the sandbox's all-hands group only: no chat, no contact, no name


async def test_a_group_member_listed_at_start_names_their_lid_chat(received):
    """WuzAPI's group list names each member's phone and LID (whatsmeow GroupParticipant: a "pn" group's JID is
    the phone JID, `LID` its LID): read with the inbox's names at start, kept in the mapping, so a message the member
    later sends from their LID alone shows their number, and a reply goes to it."""
    from tests.harness import wait_ready
    from tui.ui.app import build_app

    app = build_app(sandbox=True, deterministic=True, sandbox_dialects=("zapi", "wuzapi"))
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_ready(pilot)
        screen = await open_inbox(pilot)
        await wait_until(pilot, lambda: app.services.inbox.names_note is not None, what="the names read")
        lid = await write_from_lid(pilot, GROUP_MEMBER, "hi from the all-hands", alt=False)
        await wait_until(pilot, lambda: row(screen, lid).title == f"+{GROUP_MEMBER}", what="the member's number")
        await choose(pilot, screen, lid)
        await pilot.press("enter", *"hi", "enter")
        await inbox_settled(pilot)
        assert sends(received)[-1] == {"phone": GROUP_MEMBER, "message": "hi"}


async def write_from_zapi_lid(pilot, phone: str, text: str, *, alt: bool = True) -> str:
    """Z-API's ReceivedCallback from a contact WhatsApp names by a LID (the sandbox's `"family": "instance"`)."""
    async with httpx.AsyncClient(trust_env=False) as client:
        answer = await client.post(pilot.app.runtime.sandbox.url + "/sandbox/incoming",
                                   json={"from": phone, "text": text, "alt": alt, "family": "instance"})
    assert answer.status_code == 200, answer.text
    return answer.json()["lid"]


async def test_z_api_a_lid_chat_shows_the_phone_and_a_reply_goes_to_the_phone(received):
    """Z-API's fields end to end: a contact first known only by its LID (`phone` and `chatLid` the LID) reads
    "unknown number (lid …)"; their next callback (`phone` the number beside `chatLid`/`senderLid`) teaches the
    number: the chat shows it, and a reply from its thread goes to the number on the wire (Z-API's send-text).
    Z-API cannot sign its callbacks, so this is a Z-API account without an HMAC key (a key would leave its unsigned
    callbacks out of the inbox)."""
    from tests.harness import wait_ready
    from tui.ui.app import build_app

    app = build_app(sandbox=True, deterministic=True, sandbox_dialects=("zapi", "wuzapi"))
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_ready(pilot)
        app.services.feed.listener.set_hmac_key(None)
        screen = await open_inbox(pilot)
        lid = await write_from_zapi_lid(pilot, NEW_NUMBER, "who am I", alt=False)
        view = pilot.app.screen.query_one(InboxView)
        await wait_until(pilot, lambda: any(r.chat_id == lid for r in view.rows), what="the LID's chat")
        await inbox_settled(pilot)
        assert row(screen, lid).title == f"unknown number (lid {lid})"
        await write_from_zapi_lid(pilot, NEW_NUMBER, "it is me")
        await wait_until(pilot, lambda: row(screen, lid).title == f"+{NEW_NUMBER}", what="the number learned")
        assert not any(r.chat_id == NEW_NUMBER for r in screen.rows)  # one person, one chat
        # Z-API's callbacks taught it (on its secret URL, kept masked: /delivery/secret/***), not a session event.
        assert {event.kind for event in app.services.feed.store.newest(10)
                if event.path.startswith("/delivery")} >= {"ReceivedCallback"}
        assert not [event for event in app.services.feed.store.newest(10)
                    if event.path == "/session" and event.kind == "Message"]
        await choose(pilot, screen, lid)
        assert "who am I" in thread_text(screen) and "it is me" in thread_text(screen)
        await pilot.press("enter", *"hi back", "enter")
        await inbox_settled(pilot)
        assert sends(received)[-1] == {"phone": NEW_NUMBER, "message": "hi back"}
