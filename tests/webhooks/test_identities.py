"""Who wrote: the account's `@lid` identifiers mapped to phone numbers and names, learned from every event that
carries both forms, kept in the store, and shown wherever a chat or a sender is named.

The payloads are literal JSON written by hand from each gateway's own code and docs:

* WuzAPI forwards whatsmeow's events as they are: `MessageSource` (github.com/tulir/whatsmeow types/message.go)
  has `Chat`, `Sender`, `IsFromMe`, `IsGroup`, `AddressingMode` ("pn" | "lid"), `SenderAlt` ("the alternative
  address of the user who sent the message") and `RecipientAlt` ("the alternative address of the recipient of the
  message for DMs"); WuzAPI's wmiau.go puts the event under `event` with `type` "Message" / "ReadReceipt".
* Z-API's docs, webhooks/on-message-received ("Exemplo de retorno de texto"): `"senderLid": "81896604192873@lid"`
  beside `"phone": "5544999999999"`, and for a group `"participantPhone"` / `"participantLid"`; a chat Z-API
  only knows by its LID arrives with `"phone": "<lid>@lid"` and `"chatLid"` (a published capture of a
  ReceivedCallback).
* Evolution API 2.3.6 (src/api/integrations/channel/whatsapp/whatsapp.baileys.service.ts, `ExtendedIMessageKey`
  and prepareMessage): `data.key` is Baileys' key as it came, with `remoteJidAlt` / `participantAlt` and
  `addressingMode`; tests/gateways/evolution/webhooks.json has the whole delivery.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from tests.webhooks.conftest import record
from tui.webhooks.classify import classify
from tui.webhooks.conversations import Inbox
from tui.webhooks.identities import Identity, identities_in, who
from tui.webhooks.sent import sent_message
from tui.api.models import SendText

LID, PHONE = "81896604192873@lid", "5544999999999"

# WuzAPI: a message whose chat and sender are the contact's LID, the phone number in SenderAlt (whatsmeow
# MessageSource; AddressingMode "lid").
WUZAPI_LID_MESSAGE = json.loads("""
{"type": "Message", "instanceName": "office", "userID": "1",
 "event": {
   "Info": {"Chat": "81896604192873@lid", "Sender": "81896604192873@lid", "IsFromMe": false, "IsGroup": false,
            "AddressingMode": "lid", "SenderAlt": "5544999999999@s.whatsapp.net", "RecipientAlt": "",
            "BroadcastListOwner": "", "BroadcastRecipients": null,
            "ID": "3EB0C4D2A1F0", "ServerID": 0, "Type": "text", "PushName": "Maria",
            "Timestamp": "2026-12-07T10:40:13-03:00", "Category": "", "Multicast": false, "MediaType": "", "Edit": ""},
   "Message": {"conversation": "hello from a lid"},
   "IsEphemeral": false, "IsViewOnce": false, "IsEdit": false}}
""")

# WuzAPI: a group message from a member known by LID (whatsmeow: Sender is the LID, SenderAlt its phone JID).
WUZAPI_GROUP_LID_MESSAGE = json.loads("""
{"type": "Message",
 "event": {
   "Info": {"Chat": "120363041982375610@g.us", "Sender": "77001122334455@lid", "IsFromMe": false, "IsGroup": true,
            "AddressingMode": "lid", "SenderAlt": "5511976543219@s.whatsapp.net", "RecipientAlt": "",
            "ID": "3EB0C4D2A1F1", "Type": "text", "PushName": "Bruno"},
   "Message": {"conversation": "group hello"}}}
""")

# WuzAPI: a read receipt carries the same MessageSource at the top of `event`.
WUZAPI_READ_RECEIPT = json.loads("""
{"type": "ReadReceipt", "state": "Read",
 "event": {"Chat": "81896604192873@lid", "Sender": "81896604192873@lid", "IsFromMe": false, "IsGroup": false,
           "AddressingMode": "lid", "SenderAlt": "5544999999999@s.whatsapp.net", "RecipientAlt": "",
           "BroadcastListOwner": "", "BroadcastRecipients": null,
           "MessageIDs": ["3EB0AAAA"], "Timestamp": "2026-12-07T10:41:00-03:00", "Type": "read", "MessageSender": ""}}
""")

# Z-API docs, on-message-received, text example (as published, less the trailing comma).
ZAPI_TEXT = json.loads("""
{"isStatusReply": false, "senderLid": "81896604192873@lid", "connectedPhone": "554499999999",
 "waitingMessage": false, "isEdit": false, "isGroup": false, "isNewsletter": false,
 "instanceId": "A20DA9C0183A2D35A260F53F5D2B9244", "messageId": "A20DA9C0183A2D35A260F53F5D2B9244",
 "phone": "5544999999999", "fromMe": false, "momment": 1632228638000, "status": "RECEIVED",
 "chatName": "name", "senderPhoto": "https://", "senderName": "name", "participantPhone": null,
 "participantLid": null, "photo": "https://", "broadcast": false, "type": "ReceivedCallback",
 "text": {"message": "teste"}}
""")

# Z-API docs, on-message-received, a group message: the member's phone and LID side by side.
ZAPI_GROUP = json.loads("""
{"isGroup": true, "phone": "120363019502650977-group", "participantPhone": "5544999999999",
 "participantLid": "81896604192873@lid", "chatName": "Group Name", "senderName": "Participant Name",
 "senderLid": "81896604192873@lid", "connectedPhone": "554499999999", "messageId": "3A8BB653A45850550DE4",
 "fromMe": false, "momment": 1632228638000, "type": "ReceivedCallback", "text": {"message": "teste"}}
""")

# Z-API: a chat it knows only by LID (a published ReceivedCallback capture: `phone` and `chatLid` both the LID).
ZAPI_LID_ONLY = json.loads("""
{"isStatusReply": false, "chatLid": "216183051673677@lid", "connectedPhone": "558591575525",
 "waitingMessage": false, "isEdit": false, "isGroup": false, "isNewsletter": false,
 "instanceId": "3E02D99CD208F05F0BC8FA8592F99CB9", "messageId": "AC15186B9CE0DC6F8A73C4217D7EDBC9",
 "phone": "216183051673677@lid", "fromMe": false, "momment": 1786422848000, "status": "RECEIVED",
 "chatName": "Ronald", "senderPhoto": null, "senderName": "Ronald", "photo": null, "broadcast": false,
 "participantPhone": null, "participantLid": null, "forwarded": false, "type": "ReceivedCallback",
 "fromApi": false, "text": {"message": "Tetse"}}
""")

EVOLUTION_FIXTURES = Path(__file__).parents[1] / "gateways" / "evolution" / "webhooks.json"


def _evolution(name: str) -> dict:
    entries = json.loads(EVOLUTION_FIXTURES.read_text())["entries"]
    return next(entry["body"] for entry in entries if entry["name"] == name)


def event(payload: dict, path: str = "/session"):
    kind, summary, ids = classify(payload)
    return record(payload, kind=kind, summary=summary, message_ids=ids, path=path)


# -- what each gateway's payload says -------------------------------------------------------------------------


def test_wuzapi_sender_alt_maps_the_lid_to_the_phone_and_push_name():
    assert identities_in(WUZAPI_LID_MESSAGE) == [Identity(LID, PHONE, "Maria")]


def test_wuzapi_group_member_by_lid_maps_to_the_phone():
    assert identities_in(WUZAPI_GROUP_LID_MESSAGE) == [Identity("77001122334455@lid", "5511976543219", "Bruno")]


def test_wuzapi_receipt_carries_the_pair_without_a_name():
    assert identities_in(WUZAPI_READ_RECEIPT) == [Identity(LID, PHONE, "")]


def test_zapi_sender_lid_beside_the_phone():
    assert identities_in(ZAPI_TEXT) == [Identity(LID, PHONE, "name")]


def test_zapi_group_participant_lid_and_phone():
    assert identities_in(ZAPI_GROUP) == [Identity(LID, PHONE, "Participant Name")]


def test_zapi_chat_known_only_by_lid_keeps_its_name_and_no_phone():
    assert identities_in(ZAPI_LID_ONLY) == [Identity("216183051673677@lid", "", "Ronald")]


def test_evolution_remote_jid_alt_both_ways():
    assert identities_in(_evolution("upsert-text-from-lid-with-apikey")) == [
        Identity("203050607080901@lid", "5511999999999", "Maria")]
    assert identities_in(_evolution("upsert-text-from-phone-number")) == [
        Identity("203050607080901@lid", "5511999999999", "Maria")]


def test_a_payload_without_lids_says_nothing():
    assert identities_in({"type": "Message", "event": {"Info": {
        "Chat": "5511987654321@s.whatsapp.net", "Sender": "5511987654321@s.whatsapp.net", "SenderAlt": ""}}}) == []
    assert identities_in("not a dict") == []


# -- how a JID reads ----------------------------------------------------------------------------------------------


def test_who_reads_a_known_lid_as_its_phone_and_name_and_an_unknown_one_as_such():
    assert who(LID, Identity(LID, PHONE, "Maria")) == "Maria (+5544999999999)"
    assert who(LID, Identity(LID, PHONE, "")) == "+5544999999999"
    assert who(LID, None) == "unknown number (lid 81896604192873@lid)"
    assert who(LID, Identity(LID, "", "Ronald")) == "Ronald (unknown number, lid 81896604192873@lid)"
    assert who("5511987654321", None) == "5511987654321"


# -- kept in the store, shown in the inbox ---------------------------------------------------------------------


async def test_an_lid_chat_shows_the_phone_learned_from_its_event(store):
    inbox = Inbox(store)
    await store.append(event(WUZAPI_LID_MESSAGE))
    [chat] = inbox.conversations()
    assert chat.chat_id == LID
    assert chat.phone == PHONE
    assert chat.title == "Maria (+5544999999999)"
    assert chat.reply_to == PHONE
    assert inbox.identity(LID) == Identity(LID, PHONE, "Maria")
    assert inbox.identity_by_phone(PHONE) == Identity(LID, PHONE, "Maria")


async def test_an_lid_chat_with_no_phone_says_unknown_number_and_replies_to_the_lid(store):
    inbox = Inbox(store)
    await store.append(event(ZAPI_LID_ONLY, path="/received"))
    [chat] = inbox.conversations()
    assert chat.phone is None
    assert chat.title == "Ronald (unknown number, lid 216183051673677@lid)"
    assert chat.reply_to == "216183051673677@lid"


async def test_a_pair_learned_later_fills_in_the_phone_and_keeps_the_name(store):
    inbox = Inbox(store)
    await store.append(event(WUZAPI_LID_MESSAGE | {"event": WUZAPI_LID_MESSAGE["event"] | {"Info": {
        **WUZAPI_LID_MESSAGE["event"]["Info"], "SenderAlt": ""}}}))
    assert inbox.conversations()[0].phone is None
    await store.append(event(WUZAPI_READ_RECEIPT))
    assert inbox.identity(LID) == Identity(LID, PHONE, "Maria")
    assert inbox.conversations()[0].title == "Maria (+5544999999999)"


async def test_a_reply_sent_to_the_phone_lands_in_the_lid_chat(store):
    inbox = Inbox(store)
    await store.append(event(WUZAPI_LID_MESSAGE))
    inbox.record(sent_message("send-text", SendText(phone=PHONE, message="hi back"), "SBX1"), time.time_ns() // 1000 + 1)
    [chat] = inbox.conversations()
    assert chat.chat_id == LID and chat.messages == 2
    assert [m.body for m in inbox.thread(LID, 10)] == ["hello from a lid", "hi back"]


def test_a_send_model_takes_an_lid_recipient():
    assert SendText(phone="81896604192873@lid", message="x").phone == "81896604192873@lid"


# -- the summaries: listen's lines, events list (plain and --json), events show, forwarded events --------------


WUZAPI_LID_NO_ALT = json.loads(json.dumps(WUZAPI_LID_MESSAGE).replace('"SenderAlt": "5544999999999@s.whatsapp.net"',
                                                                        '"SenderAlt": ""'))


def test_the_summary_names_the_phone_and_name_of_a_lid_sender():
    assert classify(WUZAPI_LID_MESSAGE)[1] == "Message from Maria (+5544999999999): hello from a lid"
    assert classify(WUZAPI_LID_NO_ALT)[1] == (
        "Message from Maria (unknown number, lid 81896604192873@lid): hello from a lid")


def test_a_forwarded_event_carries_the_sender_phone_and_its_body_unchanged():
    from tui.webhooks.forwarder import SENDER_PHONE_HEADER, forward_headers

    stored = _stored(WUZAPI_LID_MESSAGE, 7)
    headers = forward_headers(stored)
    assert SENDER_PHONE_HEADER == "X-Gateway-Tui-Sender-Phone"
    assert headers[SENDER_PHONE_HEADER] == "5544999999999"
    assert SENDER_PHONE_HEADER not in forward_headers(_stored(WUZAPI_LID_NO_ALT, 8))
    assert json.loads(stored.body) == WUZAPI_LID_MESSAGE


def _stored(payload: dict, event_id: int):
    from tui.webhooks.events import StoredEvent

    rec = event(payload)
    return StoredEvent(event_id, rec.received_at, rec.path, rec.headers, rec.body, rec.payload, rec.kind,
                       rec.summary, rec.verdict, rec.rejected, rec.reason, rec.message_ids)


async def _filled(path) -> None:
    from tui.webhooks.store import EventStore

    with EventStore(path) as store:
        await store.append(event(WUZAPI_READ_RECEIPT))  # teaches the phone
        await store.append(event(WUZAPI_LID_NO_ALT))  # names the LID alone


def test_events_list_and_show_name_the_phone_the_store_learned(capsys, tmp_path):
    import asyncio

    from tui.cli.main import main

    db = tmp_path / "events.sqlite3"
    asyncio.run(_filled(db))
    assert main(["events", "list", "--db", str(db), "--json"]) == 0
    newest = json.loads(capsys.readouterr().out)[0]
    assert newest["sender"] == {"lid": LID, "phone": PHONE, "name": "Maria"}
    assert main(["events", "list", "--db", str(db), "--kind", "Message"]) == 0
    assert "Message from Maria (+5544999999999): hello from a lid" in capsys.readouterr().out
    assert main(["events", "show", "--db", str(db), "2"]) == 0
    out = capsys.readouterr().out
    assert "summary: Message from Maria (+5544999999999): hello from a lid" in out
    assert "sender: Maria (+5544999999999)" in out


# -- group members -------------------------------------------------------------------------------------------------


def test_group_members_known_by_lid_read_as_their_phone_and_name():
    """WuzAPI's GET /group/info `Participants`: whatsmeow's GroupParticipant (types/group.go: `JID`, "always equals
    either the LID or phone number", `PhoneNumber`, `LID`, `IsAdmin`, `IsSuperAdmin`, `DisplayName`)."""
    from tui.api.models import GroupInfo
    from tui.ui.sections.groups import participant_rows

    info = GroupInfo.model_validate(json.loads("""
    {"JID": "120363041982375610@g.us", "Name": "Team", "Participants": [
      {"JID": "81896604192873@lid", "PhoneNumber": "5544999999999@s.whatsapp.net", "LID": "81896604192873@lid",
       "IsAdmin": true, "IsSuperAdmin": false, "DisplayName": "", "Error": 0, "AddRequest": null},
      {"JID": "77001122334455@lid", "PhoneNumber": "", "LID": "77001122334455@lid",
       "IsAdmin": false, "IsSuperAdmin": false, "DisplayName": "Bruno", "Error": 0, "AddRequest": null},
      {"JID": "5511987654321@s.whatsapp.net", "PhoneNumber": "5511987654321@s.whatsapp.net", "LID": "",
       "IsAdmin": false, "IsSuperAdmin": true, "DisplayName": "", "Error": 0, "AddRequest": null}]}
    """))
    assert participant_rows(None, info) == [
        ("+5544999999999", "admin"),
        ("Bruno (unknown number, lid 77001122334455@lid)", "member"),
        ("5511987654321@s.whatsapp.net", "super admin"),
    ]


async def test_a_group_message_from_a_lid_member_names_their_phone_in_the_thread(store):
    inbox = Inbox(store)
    await store.append(event(WUZAPI_GROUP_LID_MESSAGE))
    [message] = inbox.thread("120363041982375610@g.us", 10)
    assert message.sender == "Bruno (+5511976543219)"


async def test_a_store_from_before_the_identities_learns_them_from_its_events_when_opened(tmp_path):
    import sqlite3

    from tui.webhooks.store import EventStore

    path = tmp_path / "events.sqlite3"
    with EventStore(path) as store:
        await store.append(event(WUZAPI_LID_MESSAGE))
    with sqlite3.connect(path) as connection:  # as a store written before the table was
        connection.execute("DROP TABLE identities")
    with EventStore(path) as store:
        assert Inbox(store).identity(LID) == Identity(LID, PHONE, "Maria")
        assert Inbox(store).conversations()[0].phone == PHONE


async def test_listen_lines_name_the_phone_the_store_learned(tmp_path):
    import asyncio

    from tui.cli.listen import LinePrinter, known_names
    from tui.webhooks.store import EventStore

    with EventStore(tmp_path / "events.sqlite3") as store:
        await store.append(event(WUZAPI_READ_RECEIPT))  # teaches the phone
        stored = await store.append(event(WUZAPI_LID_NO_ALT))  # names the LID alone
        printer = LinePrinter(asyncio.get_running_loop(), rename=known_names(store))
        printer(stored)
        assert "Message from Maria (+5544999999999): hello from a lid" in printer._lines[0]
        printer.broken = True


async def _filled_for_one_profile(path) -> None:
    """As a listener of one profile stores them on the old paths (`/session`): each event names its account, the
    identities are the store's one inbox's ("")."""
    import dataclasses

    from tui.webhooks.store import EventStore

    with EventStore(path) as store:
        for payload in (WUZAPI_READ_RECEIPT, WUZAPI_LID_NO_ALT):
            await store.append(dataclasses.replace(event(payload), account="office"))


def test_events_list_names_the_learned_phone_for_a_profile_on_the_old_paths(capsys, tmp_path):
    import asyncio

    from tui.cli.main import main

    db = tmp_path / "events.sqlite3"
    asyncio.run(_filled_for_one_profile(db))
    assert main(["events", "list", "--db", str(db), "--json"]) == 0
    newest = json.loads(capsys.readouterr().out)[0]
    assert newest["account"] == "office"
    assert newest["sender"] == {"lid": LID, "phone": PHONE, "name": "Maria"}
    assert main(["events", "list", "--db", str(db), "--kind", "Message"]) == 0
    assert "Message from Maria (+5544999999999): hello from a lid" in capsys.readouterr().out


# -- group members: what the gateway's group information says of them --------------------------------------------

# WuzAPI's GET /group/info `data` (whatsmeow types/group.go GroupParticipant): in a group whose AddressingMode is
# "pn" the JID is the phone JID and `LID` the member's LID; in a "lid" group the JID is the LID and `PhoneNumber`
# the phone JID.
WUZAPI_GROUP_INFO = json.loads("""
{"JID": "120363041982375610@g.us", "Name": "Team", "AddressingMode": "lid", "Participants": [
  {"JID": "77001122334455@lid", "PhoneNumber": "5511976543219@s.whatsapp.net", "LID": "77001122334455@lid",
   "IsAdmin": false, "IsSuperAdmin": false, "DisplayName": "Bruno", "Error": 0, "AddRequest": null},
  {"JID": "5544999999999@s.whatsapp.net", "PhoneNumber": "", "LID": "81896604192873@lid",
   "IsAdmin": true, "IsSuperAdmin": false, "DisplayName": "", "Error": 0, "AddRequest": null},
  {"JID": "5511987654321@s.whatsapp.net", "PhoneNumber": "5511987654321@s.whatsapp.net", "LID": "",
   "IsAdmin": false, "IsSuperAdmin": true, "DisplayName": "", "Error": 0, "AddRequest": null}]}
""")

WUZAPI_GROUP_LID_NO_ALT = json.loads(json.dumps(WUZAPI_GROUP_LID_MESSAGE).replace(
    '"SenderAlt": "5511976543219@s.whatsapp.net"', '"SenderAlt": ""'))


def test_group_information_names_each_members_lid_and_phone():
    from tui.api.models import GroupInfo
    from tui.webhooks.identities import member_identities

    info = GroupInfo.model_validate(WUZAPI_GROUP_INFO)
    assert member_identities(info.Participants) == [
        Identity("77001122334455@lid", "5511976543219", "Bruno"),
        Identity(LID, PHONE, ""),
    ]


async def test_members_kept_from_the_group_information_name_a_later_message_in_the_thread(store):
    from tui.api.models import GroupInfo
    from tui.webhooks.identities import member_identities

    inbox = Inbox(store)
    await store.append(event(WUZAPI_GROUP_LID_NO_ALT))
    [message] = inbox.thread("120363041982375610@g.us", 10)
    assert message.sender == "Bruno (unknown number, lid 77001122334455@lid)"
    inbox.learn_all(member_identities(GroupInfo.model_validate(WUZAPI_GROUP_INFO).Participants))
    assert inbox.identity(LID) == Identity(LID, PHONE, "")
    [message] = inbox.thread("120363041982375610@g.us", 10)
    assert message.sender == "Bruno (+5511976543219)"
    assert [m.sender for m in inbox.thread_after("120363041982375610@g.us", 0)] == ["Bruno (+5511976543219)"]


async def test_a_forward_carries_the_sender_phone_the_store_learned_before_the_event(tmp_path):
    """An event that names its sender by LID alone is forwarded with the number the store already knows (an earlier
    event taught it): X-Gateway-Tui-Sender-Phone, the body as received."""
    from tests.webhooks.recording_app import RecordingApp
    from tui.webhooks.forwarder import SENDER_PHONE_HEADER, Forwarder, ForwardLog
    from tui.webhooks.store import EventStore

    app = await RecordingApp().start()
    path = tmp_path / "events.sqlite3"
    try:
        with EventStore(path) as store, ForwardLog(path) as log:
            await store.append(event(WUZAPI_READ_RECEIPT))  # teaches the phone
            forwarder = Forwarder(app.url, log, store=store)
            await forwarder.start()
            stored = await store.append(event(WUZAPI_LID_NO_ALT))  # names the LID alone
            forwarder.submit(stored)
            await forwarder.wait_idle()
            await forwarder.stop()
    finally:
        await app.stop()
    [received] = [r for r in app.received if r.body == stored.body]
    assert {name.lower(): value for name, value in received.headers.items()}[SENDER_PHONE_HEADER.lower()] == PHONE


async def test_a_lid_chat_is_found_by_its_number_once_known(store):
    """The inbox's search finds a chat WhatsApp names by a LID by the number it shows (seen in tmux: typing the
    number the list showed found nothing)."""
    inbox = Inbox(store)
    await store.append(event(WUZAPI_LID_MESSAGE))
    assert [chat.chat_id for chat in inbox.conversations(search="5544999")] == [LID]
    assert [chat.chat_id for chat in inbox.conversations(search="+5544999999999")] == [LID]
