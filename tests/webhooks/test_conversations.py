"""The inbox tables, derived from stored events at append time: the payloads are literal JSON in the shapes of
docs/gateways/wuzapi.md §4.3 (whatsmeow events) and docs/gateways/zapi.md §5 (Z-API callbacks)."""

from __future__ import annotations

import base64
import json
import sqlite3

import pytest

from tests.webhooks.conftest import record
from tui.api.models import SendButtonActions, SendLocation, SendText
from tui.webhooks import store_schema
from tui.webhooks.classify import classify
from tui.webhooks.conversations import Inbox, Status
from tui.webhooks.inbox_changes import NameSource
from tui.webhooks.sent import sent_message
from tui.api.signing import Verdict
from tui.webhooks.store import EventStore

ANA = "5511987654321"
GROUP = "120363041982375610@g.us"


def event(payload: dict, *, verdict: Verdict = Verdict.VALID, rejected: bool = False, path: str = "/session"):
    kind, summary, ids = classify(payload)
    return record(payload, kind=kind, summary=summary, message_ids=ids, verdict=verdict, rejected=rejected, path=path)


def wuzapi_message(message_id: str, content: dict, *, chat: str = f"{ANA}@s.whatsapp.net", sender: str | None = None,
                   push_name: str = "Ana Souza", from_me: bool = False) -> dict:
    return json.loads(json.dumps({
        "type": "Message",
        "event": {
            "Info": {"Chat": chat, "Sender": sender or chat, "IsFromMe": from_me, "IsGroup": chat.endswith("@g.us"),
                     "ID": message_id, "PushName": push_name, "Timestamp": "2025-01-01T12:00:00Z"},
            "Message": content,
        },
    }))


@pytest.fixture
def inbox(store) -> Inbox:
    return Inbox(store)


async def test_a_text_from_a_contact_becomes_an_unread_conversation(store, inbox):
    await store.append(event(wuzapi_message("3EB0A1", {"conversation": "Is the charger in stock?"})))
    [chat] = inbox.conversations()
    assert (chat.chat_id, chat.title, chat.last_body, chat.unread, chat.last_outgoing) == (
        ANA, "Ana Souza", "Is the charger in stock?", 1, False)
    [message] = inbox.thread(ANA, 10)
    assert (message.outgoing, message.kind, message.body, message.message_id, message.sender) == (
        False, "text", "Is the charger in stock?", "3EB0A1", None)


async def test_a_send_then_delivery_and_read_receipt_mark_it(store, inbox):
    inbox.record(sent_message("send-text", SendText(phone=ANA, message="hello"), "SBX1"), 1)
    assert inbox.thread(ANA, 10)[0].status is Status.SENT
    await store.append(event({"type": "DeliveryCallback", "instanceId": "i", "phone": ANA, "zaapId": "Z",
                              "messageId": "SBX1", "momment": 1777494009341}, path="/delivery"))
    assert inbox.thread(ANA, 10)[0].status is Status.HANDED  # handed to WhatsApp: the phone has not said it got it
    await store.append(event({"type": "ReadReceipt", "state": "Delivered", "event": {
        "Chat": f"{ANA}@s.whatsapp.net", "Sender": f"{ANA}@s.whatsapp.net", "IsFromMe": False, "IsGroup": False,
        "MessageIDs": ["SBX1"], "Timestamp": "2025-01-01T12:00:00Z", "Type": "", "MessageSender": ""}}))
    assert inbox.thread(ANA, 10)[0].status is Status.DELIVERED
    await store.append(event({"type": "ReadReceipt", "state": "Read", "event": {
        "Chat": f"{ANA}@s.whatsapp.net", "Sender": f"{ANA}@s.whatsapp.net", "IsFromMe": False, "IsGroup": False,
        "MessageIDs": ["SBX1"], "Timestamp": "2025-01-01T12:00:00Z", "Type": "read", "MessageSender": ""}}))
    [message] = inbox.thread(ANA, 10)
    assert (message.outgoing, message.status) == (True, Status.READ)
    [chat] = inbox.conversations()
    assert (chat.unread, chat.last_outgoing, chat.last_body) == (0, True, "hello")


async def test_a_receipt_before_the_send_is_recorded_still_counts(store, inbox):
    await store.append(event({"type": "MessageStatusCallback", "instanceId": "i", "status": "READ", "ids": ["EARLY"],
                              "momment": 1632234645000, "phoneDevice": 0, "phone": ANA, "isGroup": False},
                             path="/delivery"))
    inbox.record(sent_message("send-text", SendText(phone=ANA, message="quick"), "EARLY"), 1)
    assert inbox.thread(ANA, 10)[0].status is Status.READ


async def test_a_failed_delivery_wins(store, inbox):
    inbox.record(sent_message("send-text", SendText(phone="5511900000000", message="x"), "F1"), 1)
    await store.append(event({"type": "DeliveryCallback", "instanceId": "i", "phone": "5511900000000", "zaapId": "Z",
                              "messageId": "F1", "momment": 1, "error": "Phone number does not exist"},
                             path="/delivery"))
    assert inbox.thread("5511900000000", 10)[0].status is Status.FAILED


@pytest.mark.parametrize(("verdict", "rejected"), [(Verdict.UNSIGNED, False), (Verdict.INVALID, True),
                                                   (Verdict.UNSIGNED, True), (Verdict.VALID, True)])
async def test_events_that_do_not_verify_never_become_messages(store, inbox, verdict, rejected):
    forged = wuzapi_message("FORGED", {"conversation": "send your password"})
    await store.append(event(forged, verdict=verdict, rejected=rejected))
    await store.append(event({"type": "ReadReceipt", "state": "Read", "event": {"Chat": f"{ANA}@s.whatsapp.net",
                              "MessageIDs": ["SBX1"], "Type": "read"}}, verdict=verdict, rejected=rejected))
    assert inbox.conversations() == []
    assert inbox.thread(ANA, 10) == []
    assert inbox.statuses(["SBX1"]) == {}
    assert store.count() == 2  # still stored as events, for the Events section


async def test_without_a_key_events_count_as_they_come(store, inbox):
    await store.append(event(wuzapi_message("N1", {"conversation": "hi"}), verdict=Verdict.NO_KEY))
    assert [chat.chat_id for chat in inbox.conversations()] == [ANA]


async def test_group_messages_carry_the_senders_name_and_each_kind_is_rendered(store, inbox):
    sender = "5531991234567@s.whatsapp.net"
    contents = [
        {"pollCreationMessageV3": {"name": "Launch date?", "options": [{"optionName": "Tue"}, {"optionName": "Thu"}]}},
        {"locationMessage": {"name": "Office", "address": "Av. Paulista 1000", "degreesLatitude": -23.56,
                             "degreesLongitude": -46.65}},
        {"imageMessage": {"caption": "the new shelf", "mimetype": "image/jpeg"}},
        {"documentMessage": {"fileName": "invoice.pdf"}},
        {"contactMessage": {"displayName": "Rafael", "vcard": "BEGIN:VCARD\nEND:VCARD"}},
        {"buttonsResponseMessage": {"selectedButtonID": "1", "selectedDisplayText": "Yes"}},
        {"listResponseMessage": {"title": "Blue", "singleSelectReply": {"selectedRowID": "2"}}},
        {"extendedTextMessage": {"text": "see https://acme.example", "matchedText": "https://acme.example",
                                 "title": "Acme", "description": "Store"}},
        {"stickerMessage": {"mimetype": "image/webp"}},
    ]
    for index, content in enumerate(contents):
        await store.append(event(wuzapi_message(f"G{index}", content, chat=GROUP, sender=sender, push_name="Diego")))
    messages = inbox.thread(GROUP, 50)
    assert {message.sender for message in messages} == {"Diego"}
    assert [(message.kind, message.body) for message in messages] == [
        ("poll", "[poll] Launch date?\n  ○ Tue\n  ○ Thu"),
        ("location", "[location] Office\n  Av. Paulista 1000 (-23.56, -46.65)"),
        ("image", "[image] the new shelf"),
        ("document", "[document] invoice.pdf"),
        ("contact", "[contact] Rafael"),
        ("buttons", "[pressed] Yes"),
        ("list", "[chose] Blue"),
        ("link", "see https://acme.example\n  ⧉ Acme\n  Store"),
        ("sticker", "[sticker]"),
    ]
    [chat] = inbox.conversations()
    assert (chat.chat_id, chat.name, chat.unread) == (GROUP, None, len(contents))  # no group name in these events


async def test_zapi_received_callbacks_and_presence(store, inbox):
    base = {"type": "ReceivedCallback", "instanceId": "i", "fromMe": False, "momment": 1632228638000,
            "status": "RECEIVED", "isGroup": False, "isNewsletter": False, "connectedPhone": "5511912345678"}
    await store.append(event({"type": "PresenceChatCallback", "instanceId": "i", "phone": ANA, "status": "COMPOSING",
                              "lastSeen": None}, path="/delivery"))
    assert inbox.conversation(ANA).typing_us is not None
    await store.append(event({**base, "messageId": "Z1", "phone": ANA, "chatName": "Ana", "senderName": "Ana Souza",
                              "text": {"message": "oi"}}, path="/delivery"))
    await store.append(event({**base, "messageId": "Z2", "phone": "120363041982375610-group", "isGroup": True,
                              "chatName": "Product Launch Q3", "senderName": "Priya", "participantPhone": "12125550187",
                              "poll": {"question": "Lunch?", "pollMaxOptions": 1,
                                       "options": [{"name": "Pizza"}, {"name": "Sushi"}]}}, path="/delivery"))
    await store.append(event({**base, "messageId": "Z3", "phone": ANA, "senderName": "Ana Souza",
                              "pollVote": {"pollMessageId": "Z2", "options": [{"name": "Pizza"}]}}, path="/delivery"))
    ana = inbox.conversation(ANA)
    assert (ana.title, ana.typing_us, ana.unread) == ("Ana Souza", None, 2)  # a message ends "typing…"
    group = inbox.conversation(GROUP)
    assert (group.title, group.last_body) == ("Product Launch Q3", "[poll] Lunch? ○ Pizza ○ Sushi")
    assert inbox.thread(GROUP, 5)[0].sender == "Priya"
    assert [m.body for m in inbox.thread(ANA, 5)] == ["oi", "voted: Pizza"]


async def test_the_list_is_newest_first_and_search_finds_names_numbers_and_words(store, inbox):
    inbox.name(ANA, "Ana Souza", NameSource.LIST)
    inbox.record(sent_message("send-text", SendText(phone=ANA, message="your order shipped"), "A1"), 10)
    inbox.record(sent_message("send-location", SendLocation(phone="5521998877665", title="Shop", address="Rua 1",
                                                            lat=1, lng=2), "C1"), 20)
    inbox.record(sent_message("send-button-actions", SendButtonActions(
        phone=GROUP, message="Confirm?", buttons=[{"id": "1", "text": "Yes"}]), "G1"), 30)
    assert [chat.chat_id for chat in inbox.conversations()] == [GROUP, "5521998877665", ANA]
    assert [chat.chat_id for chat in inbox.conversations(search="souza")] == [ANA]
    assert [chat.chat_id for chat in inbox.conversations(search="99887")] == ["5521998877665"]
    assert [chat.chat_id for chat in inbox.conversations(search="shipped")] == [ANA]
    assert [chat.chat_id for chat in inbox.conversations(search="100%_")] == []  # LIKE wildcards taken literally
    assert inbox.thread(GROUP, 1)[0].body == "Confirm?\n[ Yes ]"


async def test_a_long_thread_pages_from_the_newest(store, inbox):
    for index in range(25):
        inbox.record(sent_message("send-text", SendText(phone=ANA, message=f"m{index}"), f"P{index}"), 100 + index)
    newest = inbox.thread(ANA, 10)
    assert [m.body for m in newest] == [f"m{i}" for i in range(15, 25)]
    older = inbox.thread(ANA, 10, (newest[0].at_us, newest[0].id))
    assert [m.body for m in older] == [f"m{i}" for i in range(5, 15)]
    assert [m.body for m in inbox.thread_after(ANA, newest[-3].id)] == ["m23", "m24"]


def test_the_thread_and_list_queries_use_their_indexes(store):
    plans = store.read(lambda c: [
        " ".join(str(row[-1]) for row in c.execute("EXPLAIN QUERY PLAN " + sql, args))
        for sql, args in (
            ("SELECT * FROM chat_messages WHERE chat_id = ? AND account = ? ORDER BY at_us DESC, id DESC LIMIT 10",
             (ANA, "")),
            ("SELECT * FROM conversations WHERE account = ? AND (messages > 0 OR listed) ORDER BY last_us DESC LIMIT 10",
             ("",)),
        )
    ])
    assert "chat_messages_by_chat" in plans[0] and "TEMP B-TREE" not in plans[0]
    assert "conversations_by_account_time" in plans[1] and "TEMP B-TREE" not in plans[1]


async def test_a_schema_2_store_gets_its_inbox_from_the_events_already_stored(tmp_path):
    path = tmp_path / "v2.sqlite3"
    with EventStore(path) as store:
        await store.append(event(wuzapi_message("OLD1", {"conversation": "from before the upgrade"})))
        await store.append(event(wuzapi_message("OLD2", {"conversation": "forged"}), verdict=Verdict.UNSIGNED))
    with sqlite3.connect(path) as raw:  # back to schema 2: no inbox tables
        for table in ("chat_messages", "message_status", "conversations"):
            raw.execute(f"DROP TABLE {table}")
        raw.execute("PRAGMA user_version=2")
    with EventStore(path) as upgraded:
        assert [m.body for m in Inbox(upgraded).thread(ANA, 10)] == ["from before the upgrade"]
    with sqlite3.connect(path) as raw:
        assert raw.execute("PRAGMA user_version").fetchone()[0] == store_schema.SCHEMA_VERSION == 3


async def test_an_inbox_failure_inside_a_batch_loses_no_event_and_spares_its_neighbours(store, inbox, monkeypatch):
    """A batch has no savepoint per event (two statements each on the hot path): when the inbox fails for one of
    its events, the batch is stored again one by one, so every event is kept and only that one misses the inbox."""
    import asyncio
    import threading

    from tui.webhooks import inbox_sql

    real_add = inbox_sql.add_message

    def fails_for_bad(connection, message, *args):
        if message.message_id == "BAD":
            raise sqlite3.IntegrityError("odd event (simulated)")
        return real_add(connection, message, *args)

    monkeypatch.setattr(inbox_sql, "add_message", fails_for_bad)
    entered, hold = threading.Event(), threading.Event()

    def hold_the_writer(_connection) -> None:
        entered.set()
        hold.wait(30)

    blocked = asyncio.ensure_future(asyncio.to_thread(store.on_writer, hold_the_writer))
    assert await asyncio.to_thread(entered.wait, 30)  # the writer is busy: what is appended now waits, together
    appends = [
        asyncio.ensure_future(store.append(event(wuzapi_message(message_id, {"conversation": message_id}, chat=chat))))
        for message_id, chat in (("OK1", f"{ANA}@s.whatsapp.net"), ("BAD", "5511000000001@s.whatsapp.net"),
                                 ("OK2", "5511000000002@s.whatsapp.net"))
    ]
    await asyncio.sleep(0)  # each append has queued its record
    hold.set()
    await blocked
    stored = await asyncio.gather(*appends)
    assert [store.get(event.id) is not None for event in stored] == [True, True, True]
    assert sorted(c.chat_id for c in inbox.conversations()) == ["5511000000002", ANA]


async def test_an_inbox_failure_never_loses_the_event(store, inbox, monkeypatch):
    from tui.webhooks import inbox_sql

    def broken(*_args):
        raise sqlite3.OperationalError("disk I/O error (simulated)")

    monkeypatch.setattr(inbox_sql, "add_message", broken)
    stored = await store.append(event(wuzapi_message("X1", {"conversation": "kept"})))
    assert store.get(stored.id) is not None
    assert inbox.conversations() == []


async def test_chats_the_gateway_lists_show_without_history_with_the_phones_unread_count(store, inbox):
    """Z-API's /chats (docs/gateways/zapi.md §3.6, literal): a chat with no message stored here is listed in its place
    by its last message time, with the phone's unread count; a chat with history keeps its own preview."""
    from tui.api.models import ChatList, ContactList
    from tui.webhooks.inbox_changes import chats_from_chat_list, names_from_chats, names_from_contacts

    await store.append(event(wuzapi_message("3EB0A1", {"conversation": "Is the charger in stock?"})))  # at 12:00
    answer = ChatList.model_validate([
        {"archived": "false", "pinned": "true", "messagesUnread": 0, "phone": "5511976543219", "unread": "4",
         "name": "Bruno Lima", "lastMessageTime": "1622991687", "muteEndTime": 1655953774000, "isMuted": "0",
         "isMarkedSpam": "false"},
        {"isGroup": True, "name": "Team", "phone": "120363041982375610-group", "unread": "0",
         "lastMessageTime": "1730918668000", "isMuted": "0", "isMarkedSpam": "false", "archived": "false",
         "pinned": "false", "muteEndTime": None, "messagesUnread": "2"},
        {"archived": "false", "pinned": "false", "messagesUnread": 0, "phone": ANA, "unread": "0", "name": "Ana",
         "lastMessageTime": "1622991000", "isMuted": "0"},
    ])
    contacts = ContactList.model_validate([{"name": "Carla Dias", "phone": "5511900001111"}])  # a name, no chat
    inbox.enrich(names_from_chats(answer.items) + names_from_contacts(contacts.items),
                 chats_from_chat_list(answer.items))

    rows = {row.chat_id: row for row in inbox.conversations()}
    assert list(rows) == [ANA, GROUP, "5511976543219"]  # newest first: 2025, 2024-11-06, 2021-06-06
    bruno, team, ana = rows["5511976543219"], rows[GROUP], rows[ANA]
    assert (bruno.title, bruno.unread, bruno.messages, bruno.last_body, bruno.last_us) == (
        "Bruno Lima", 4, 0, "", 1622991687 * 1_000_000)
    assert (team.title, team.unread, team.last_us) == ("Team", 2, 1730918668 * 1_000_000)
    assert (ana.last_body, ana.unread, ana.messages) == ("Is the charger in stock?", 1, 1)  # its own history
    assert "5511900001111" not in rows  # a contact is a name, not a chat
    assert [row.chat_id for row in inbox.conversations(search="bruno")] == ["5511976543219"]
    assert inbox.thread("5511976543219", 10) == []


async def test_a_store_from_before_listed_chats_is_upgraded_in_place(tmp_path):
    path = tmp_path / "v3.sqlite3"
    with EventStore(path) as store:
        await store.append(event(wuzapi_message("OLD1", {"conversation": "kept"})))
    with sqlite3.connect(path) as raw:  # the conversations table as first released: no `listed` column
        raw.execute("ALTER TABLE conversations DROP COLUMN listed")
    with EventStore(path) as upgraded:
        inbox = Inbox(upgraded)
        assert [row.last_body for row in inbox.conversations()] == ["kept"]
        from tui.webhooks.inbox_changes import ListedChat
        inbox.enrich([], [ListedChat("5511976543219", 5, 1)])
        assert [row.chat_id for row in inbox.conversations()] == [ANA, "5511976543219"]


def test_a_live_sandbox_seeds_its_history_as_this_mornings_chats(store, inbox):
    """Deterministic runs keep the history's own times (snapshots); a live sandbox moves it to end a few minutes
    before now, spacing kept, so the inbox is not a list of chats from 1 January 2025."""
    from tui.core.sandbox_host import SEEDED_HISTORY_ENDS_BEFORE_US, seed_sandbox_inbox
    from tui.sandbox.state import demo_history, seed_demo_state

    now_us = 1_795_000_000 * 1_000_000
    seed_sandbox_inbox(store, seed_demo_state(), ends_before_us=now_us)
    history = demo_history()
    original = {item.chat: int(item.at.timestamp() * 1_000_000) for item in history}  # each chat's newest
    rows = inbox.conversations()
    assert max(row.last_us for row in rows) == now_us - SEEDED_HISTORY_ENDS_BEFORE_US
    shifts = {row.last_us - original[row.chat_id] for row in rows if row.chat_id in original}
    assert len(shifts) == 1  # every chat moved by the same amount: the spacing is the history's own


async def test_an_undecryptable_message_waits_in_its_chat_until_its_content_arrives(store, inbox):
    # whatsmeow's UndecryptableMessage as WuzAPI sends it (wuzapi `case *events.UndecryptableMessage`)
    undecryptable = json.loads(
        '{"event":{"Info":{"Chat":"' + ANA + '@s.whatsapp.net","Sender":"' + ANA + '@s.whatsapp.net","IsFromMe":false,'
        '"IsGroup":false,"ID":"3EB0LATE","Type":"text","PushName":"Ana Souza","Timestamp":"2025-01-01T12:00:00Z"},'
        '"IsUnavailable":false,"UnavailableType":"","DecryptFailMode":""},"type":"UndecryptableMessage"}')
    await store.append(event(undecryptable))
    [waiting] = inbox.thread(ANA, 10)
    assert (waiting.kind, waiting.body, waiting.message_id) == ("waiting", "[waiting for this message]", "3EB0LATE")
    assert [e.id for e in store.find_by_message_id("3EB0LATE")]  # the detail's id finds the event
    await store.append(event(wuzapi_message("3EB0LATE", {"conversation": "here it is"})))
    [message] = inbox.thread(ANA, 10)
    assert (message.kind, message.body, message.message_id) == ("text", "here it is", "3EB0LATE")
    [chat] = inbox.conversations()
    assert (chat.unread, chat.last_body, chat.title) == (1, "here it is", "Ana Souza")  # counted once


async def test_a_media_message_carries_its_file_kind_name_size_and_link(store, inbox):
    """Issue 25: the thread's media messages say what their event says of the file. WuzAPI's inline base64 (the
    payload the store indexes holds only a note of its length, as the listener trims it) with whatsmeow's
    documentMessage; Z-API's image with its storage URL (docs/gateways/zapi.md §5.3: no size); a text has no media."""
    from tui.webhooks.bodies import without_inline_media

    pdf = b"%PDF-1.4\n" + b"x" * 3000
    wuz = wuzapi_message("3EB0D1", {"documentMessage": {"fileName": "invoice.pdf", "mimetype": "application/pdf",
                                                        "fileLength": "3009"}})
    wuz.update({"base64": base64.b64encode(pdf).decode(), "mimeType": "application/pdf", "fileName": "invoice.pdf"})
    body = json.dumps(wuz, separators=(",", ":")).encode()
    kind, summary, ids = classify(wuz)
    await store.append(record(without_inline_media(wuz), body=body, kind=kind, summary=summary, message_ids=ids,
                              path="/session"))
    zapi = {"type": "ReceivedCallback", "instanceId": "I", "messageId": "Z1", "phone": ANA, "fromMe": False,
            "momment": 1777494009341, "status": "RECEIVED", "senderName": "Ana Souza", "isGroup": False,
            "image": {"mimeType": "image/jpeg", "imageUrl": "https://storage.z-api.io/a.jpeg",
                      "thumbnailUrl": "https://storage.z-api.io/a.jpeg", "caption": "the shelf"}}
    await store.append(event(zapi, path="/delivery"))
    await store.append(event(wuzapi_message("3EB0A2", {"conversation": "thanks"})))
    document, image, text = inbox.thread(ANA, 10)
    assert document.kind == "document" and document.event_id is not None
    assert document.media is not None
    assert (document.media.file_name, document.media.size, document.media.mime_type, document.media.inline,
            document.media.url) == ("invoice.pdf", 3009, "application/pdf", True, None)
    assert document.media.describe() == "document · invoice.pdf · 3 KB · application/pdf"
    assert image.media is not None
    assert (image.media.kind, image.media.caption, image.media.url, image.media.size, image.media.inline) == (
        "image", "the shelf", "https://storage.z-api.io/a.jpeg", None, False)
    assert image.media.describe() == "image · size not known until fetched · image/jpeg"
    assert text.media is None


async def test_inline_media_without_whatsmeows_length_is_sized_from_its_base64(store, inbox):
    from tui.webhooks.bodies import without_inline_media

    png = b"\x89PNG\r\n\x1a\n" + b"y" * 5000
    wuz = wuzapi_message("3EB0E1", {"imageMessage": {"caption": "look", "mimetype": "image/png"}})
    wuz.update({"base64": base64.b64encode(png).decode(), "mimeType": "image/png", "fileName": "3EB0E1.png"})
    kind, summary, ids = classify(wuz)
    await store.append(record(without_inline_media(wuz), body=json.dumps(wuz).encode(), kind=kind, summary=summary,
                              message_ids=ids, path="/session"))
    [image] = inbox.thread(ANA, 10)
    assert image.media is not None and abs((image.media.size or 0) - len(png)) <= 2
    assert image.media.file_name == "3EB0E1.png" and image.media.caption == "look"


async def test_each_account_path_feeds_its_own_inbox_and_the_old_paths_the_store_of_one(store):
    """Several accounts in one store (issue 26): the same contact writing to two accounts is two conversations,
    each in the inbox of the account whose `/a/<profile>/` path the event came on; the old paths feed "" (the
    store of one account), as before; a send, a read and a forget stay in their account's inbox."""
    shop1, shop2, single = Inbox(store, "shop-1"), Inbox(store, "shop-2"), Inbox(store)
    await store.append(event(wuzapi_message("A1", {"conversation": "to shop one"}), path="/a/shop-1/session"))
    await store.append(event(wuzapi_message("A2", {"conversation": "to shop two"}), path="/a/shop-2/session"))
    await store.append(event(wuzapi_message("A3", {"conversation": "to the old path"}), path="/session"))
    assert [(row.chat_id, row.last_body, row.unread) for row in shop1.conversations()] == [(ANA, "to shop one", 1)]
    assert [(row.chat_id, row.last_body, row.unread) for row in shop2.conversations()] == [(ANA, "to shop two", 1)]
    assert [row.last_body for row in single.conversations()] == ["to the old path"]
    assert [message.body for message in shop2.thread(ANA, 10)] == ["to shop two"]
    shop2.record(sent_message("send-text", SendText(phone=ANA, message="answer from two"), "S2"), 10**17)
    shop2.mark_seen(ANA)
    assert [message.body for message in shop2.thread(ANA, 10)] == ["to shop two", "answer from two"]
    assert [message.body for message in shop1.thread(ANA, 10)] == ["to shop one"]
    assert shop1.conversation(ANA).unread == 1 and shop2.conversation(ANA).unread == 0
    assert shop2.forget(ANA) and shop2.conversations() == []
    assert [row.last_body for row in shop1.conversations()] == ["to shop one"]


def test_a_store_from_before_accounts_keeps_its_chats_in_the_inbox_of_one(tmp_path):
    """A store whose inbox had no account (conversations keyed by chat alone) opens with every chat in the store
    of one account's inbox (""), and takes accounts' chats beside them from then on."""
    path = tmp_path / "events.sqlite3"
    with EventStore(path) as opened:
        Inbox(opened).record(sent_message("send-text", SendText(phone=ANA, message="from before"), "OLD1"), 5)
    connection = sqlite3.connect(path)
    columns = "chat_id, name, name_source, last_us, last_body, last_outgoing, unread, typing_us, messages, listed"
    connection.executescript(f"""
        ALTER TABLE conversations RENAME TO newer;
        DROP INDEX conversations_by_account_time;
        CREATE TABLE conversations (chat_id TEXT PRIMARY KEY, name TEXT, name_source INTEGER NOT NULL DEFAULT 0,
            last_us INTEGER NOT NULL, last_body TEXT NOT NULL, last_outgoing INTEGER NOT NULL DEFAULT 0,
            unread INTEGER NOT NULL DEFAULT 0, typing_us INTEGER, messages INTEGER NOT NULL DEFAULT 0,
            listed INTEGER NOT NULL DEFAULT 0);
        CREATE INDEX conversations_by_time ON conversations(last_us DESC);
        INSERT INTO conversations({columns}) SELECT {columns} FROM newer;
        DROP TABLE newer;
        ALTER TABLE chat_messages DROP COLUMN account;
    """)
    connection.close()
    with EventStore(path) as reopened:
        assert [(row.chat_id, row.last_body) for row in Inbox(reopened).conversations()] == [(ANA, "from before")]
        Inbox(reopened, "shop-1").record(sent_message("send-text", SendText(phone=ANA, message="new"), "N1"), 6)
        assert [message.body for message in Inbox(reopened).thread(ANA, 10)] == ["from before"]
        assert [message.body for message in Inbox(reopened, "shop-1").thread(ANA, 10)] == ["new"]
