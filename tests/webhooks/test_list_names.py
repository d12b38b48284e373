"""Names from the gateways' lists: when the inbox first opens (its first subscriber) the runtime reads Z-API's
/contacts and /chats and WuzAPI's /user/contacts and /group/list in the background and names the conversations
from them; a saved contact name beats a push name from the history. Without the lists (the spec dialect, or a
gateway that fails) the history's names stay and nothing breaks."""

from __future__ import annotations

import asyncio
from contextlib import asynccontextmanager

from tui.core.feed.bus import InboxChanged
from tui.core.runtime import Runtime
from tui.sandbox.state import LAUNCH_ID, Contact
from tui.webhooks.inbox_changes import NewMessage

ANA = "5511987654321"
RITA = "5511955551234"  # writes before the account saved her; the history knows only her push name
LAUNCH = f"{LAUNCH_ID}@g.us"
LIST_PATHS = ("/contacts", "/chats", "/user/contacts", "/group/list")


@asynccontextmanager
async def started(dialects: tuple[str, str]):
    runtime = Runtime(sandbox=True, deterministic=True, sandbox_dialects=dialects)
    await runtime.start()
    try:
        yield runtime
    finally:
        await runtime.stop()


async def open_inbox(runtime: Runtime) -> asyncio.Event:
    """Subscribe as the inbox does when it opens; the event is set when the runtime says names changed."""
    told = asyncio.Event()
    runtime.bus.subscribe(InboxChanged, lambda _changed: told.set())
    runtime.inbox_service.ask_names()
    return told


async def names_read(runtime: Runtime) -> None:
    task = runtime.inbox_service._names_task
    assert task is not None, "opening the inbox did not start reading the lists"
    await asyncio.wait_for(asyncio.shield(task), 10)


async def name_of(runtime: Runtime, chat_id: str) -> str | None:
    inbox = runtime.inbox
    assert inbox is not None
    row = await asyncio.to_thread(inbox.conversation, chat_id)
    return row.name if row else None


async def write_from_rita(runtime: Runtime) -> None:
    inbox = runtime.inbox
    assert inbox is not None
    await asyncio.to_thread(inbox.record, NewMessage(RITA, False, "text", "hi, is the shop open?", "RITA1",
                                                     push_name="Rita"), runtime.display.now_us())


def list_requests(runtime: Runtime) -> list[str]:
    return [exchange.url for exchange in runtime.request_log
            if any(path in exchange.url.split("?")[0] for path in LIST_PATHS)]


async def test_zapi_and_wuzapi_lists_name_the_conversations() -> None:
    async with started(("zapi", "wuzapi")) as runtime:
        state = runtime.sandbox.state
        await write_from_rita(runtime)
        assert await name_of(runtime, RITA) == "Rita"  # the push name, from the history
        state.contacts[RITA] = Contact(RITA, "Rita Gomes")  # saved in the phone's address book
        state.contacts[ANA].name = "Ana Paula Souza"
        state.group(LAUNCH).name = "Launch war room"

        told = await open_inbox(runtime)
        await names_read(runtime)
        await asyncio.wait_for(told.wait(), 10)

        assert await name_of(runtime, RITA) == "Rita Gomes"  # the saved name beats the push name
        assert await name_of(runtime, ANA) == "Ana Paula Souza"
        assert await name_of(runtime, LAUNCH) == "Launch war room"  # from /chats and /group/list
        inbox = runtime.inbox
        assert inbox is not None
        rows = {row.chat_id: row for row in await asyncio.to_thread(inbox.conversations)}
        assert rows[RITA].title == "Rita Gomes"  # what the inbox's list shows, no UI change
        assert "names from" in (runtime.inbox_service.names_note or "")
        requested = list_requests(runtime)
        assert any("/contacts?page=1&pageSize=" in url for url in requested)
        assert any(url.endswith("/group/list") for url in requested)

        # a push name arriving later never replaces the saved one
        await asyncio.to_thread(inbox.record, NewMessage(RITA, False, "text", "thanks!", "RITA2", push_name="R"),
                                runtime.display.now_us())
        assert await name_of(runtime, RITA) == "Rita Gomes"


async def test_chats_the_gateway_lists_are_in_the_inbox_without_history() -> None:
    """A chat on the phone with no message stored here (the listener was not running) is listed from /chats, with
    the phone's unread count; WuzAPI's /group/list lists the account's groups the same way."""
    async with started(("zapi", "wuzapi")) as runtime:
        state = runtime.sandbox.state
        state.contacts[RITA] = Contact(RITA, "Rita Gomes")
        state.chat(RITA).unread = 2
        inbox = runtime.inbox
        assert inbox is not None
        assert RITA not in {row.chat_id for row in await asyncio.to_thread(inbox.conversations)}
        told = await open_inbox(runtime)
        await names_read(runtime)
        await asyncio.wait_for(told.wait(), 10)
        rows = {row.chat_id: row for row in await asyncio.to_thread(inbox.conversations)}
        assert (rows[RITA].title, rows[RITA].unread, rows[RITA].messages) == ("Rita Gomes", 2, 0)
        assert "chats listed" in (runtime.inbox_service.names_note or "")


async def test_an_explicit_refresh_reads_the_lists_again() -> None:
    async with started(("zapi", "wuzapi")) as runtime:
        await open_inbox(runtime)
        await names_read(runtime)
        runtime.sandbox.state.contacts[ANA].name = "Ana (VIP)"
        runtime.inbox_service.refresh_names()
        await names_read(runtime)
        assert await name_of(runtime, ANA) == "Ana (VIP)"


async def test_the_spec_dialect_has_no_lists_and_the_history_names_stay() -> None:
    async with started(("spec", "spec")) as runtime:
        await write_from_rita(runtime)
        runtime.sandbox.state.contacts[RITA] = Contact(RITA, "Rita Gomes")
        await open_inbox(runtime)
        await names_read(runtime)
        assert await name_of(runtime, RITA) == "Rita"
        assert list_requests(runtime) == []  # refused before sending: nothing on the wire
        assert runtime.inbox_service.names_note == "no lists in these dialects: names come from the history"


async def test_a_failing_gateway_leaves_the_history_names() -> None:
    async with started(("zapi", "wuzapi")) as runtime:
        await write_from_rita(runtime)
        runtime.sandbox.state.contacts[RITA] = Contact(RITA, "Rita Gomes")
        runtime.sandbox.state.connected = False  # Z-API answers 409, WuzAPI 500 "no session"
        await open_inbox(runtime)
        await names_read(runtime)
        assert await name_of(runtime, RITA) == "Rita"
        note = runtime.inbox_service.names_note or ""
        assert "List contacts (Z-API)" in note and "List groups (WuzAPI)" in note
        assert "409" in note and "no session" in note
        assert runtime.instance is not None and runtime.instance.credentials.instance_token not in note


# -- the lists' entries as chat names (literal answers from docs/gateways/, through the client's result models) --


def test_contacts_give_saved_names_over_push_names() -> None:
    from tui.api.models import ContactList
    from tui.webhooks.inbox_changes import NameSource, names_from_contacts

    zapi = ContactList.model_validate([
        {"name": "Ana Souza", "short": "Ana", "notify": "Aninha", "vname": "", "phone": "5511987654321"},
        {"name": None, "short": "", "notify": "Bruno L.", "vname": "", "phone": "5511976543219"},
        {"name": "", "short": "", "notify": "", "vname": "Acme Ltda", "phone": "5511900001111"},
        {"name": "", "notify": "", "phone": "5511900002222"},  # nothing to call them: no name at all
    ])
    assert [(n.chat_id, n.name, n.source) for n in names_from_contacts(zapi.items)] == [
        ("5511987654321", "Ana Souza", NameSource.LIST),
        ("5511976543219", "Bruno L.", NameSource.PUSH_NAME),
        ("5511900001111", "Acme Ltda", NameSource.PUSH_NAME),
    ]
    wuzapi = ContactList.model_validate({
        "5491122223333@s.whatsapp.net": {"BusinessName": "", "FirstName": "", "Found": True, "FullName": "",
                                         "PushName": "FOP2"},
        "81896604192873@lid": {"BusinessName": "", "FirstName": "Rita", "Found": True, "FullName": "Rita Gomes",
                               "PushName": "R"},
    })
    assert [(n.chat_id, n.name, n.source) for n in names_from_contacts(wuzapi.items)] == [
        ("5491122223333", "FOP2", NameSource.PUSH_NAME),
        ("81896604192873@lid", "Rita Gomes", NameSource.LIST),
    ]


def test_chats_name_groups_and_skip_bare_numbers() -> None:
    from tui.api.models import ChatList
    from tui.webhooks.inbox_changes import NameSource, names_from_chats

    chats = ChatList.model_validate([
        {"phone": "120363019502650977-group", "name": "Team", "isGroup": True, "unread": "0"},
        {"phone": "5511987654321", "name": "Ana", "isGroup": False, "unread": "3"},
        {"phone": "5511976543219", "name": "5511976543219", "isGroup": "false"},  # only the number: no name
        {"phone": "120363000000000001", "name": "Old style", "isGroup": "true"},  # a group without -group
        {"phone": "5511900001111", "name": None},
    ])
    assert [(n.chat_id, n.name, n.source) for n in names_from_chats(chats.items)] == [
        ("120363019502650977@g.us", "Team", NameSource.LIST),
        ("5511987654321", "Ana", NameSource.PUSH_NAME),
        ("120363000000000001@g.us", "Old style", NameSource.LIST),
    ]


def test_group_list_names_each_group() -> None:
    from tui.api.models import GroupList
    from tui.webhooks.inbox_changes import NameSource, names_from_groups

    groups = GroupList.model_validate({"Groups": [
        {"JID": "120363019502650977@g.us", "Name": "Team", "Participants": None},
        {"JID": "120363000000000001@g.us", "Name": ""},
    ]})
    assert [(n.chat_id, n.name, n.source) for n in names_from_groups(groups.items)] == [
        ("120363019502650977@g.us", "Team", NameSource.LIST)]
