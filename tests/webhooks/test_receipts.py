"""Ticks from the gateways' own status events, one mapping for both (tui/webhooks/receipts.py).

Payloads are literal JSON written from:
* Z-API/docs (github.com/Z-API/docs @ e3df549) `en/webhooks/on-message-send.mdx` (DeliveryCallback example) and
  `en/webhooks/on-whatsapp-message-status-changes.mdx` (MessageStatusCallback example; status SENT, RECEIVED, READ,
  READ_BY_ME or PLAYED);
* asternic/wuzapi `wmiau.go` `case *events.Receipt` (type "ReadReceipt", state Read / ReadSelf / Delivered) with
  whatsmeow's `events.Receipt` as Go marshals it (docs/gateways/wuzapi.md §4.3).
"""

from __future__ import annotations

import json

import pytest

from tests.webhooks.conftest import record
from tui.webhooks.classify import classify
from tui.webhooks.conversations import Inbox, Status
from tui.webhooks.inbox_changes import NewMessage
from tui.webhooks.receipts import RECEIPTS, Receipt, receipt_of

ANA = "5544999999999"
GROUP = "120363019502650977@g.us"


def stored(body: str, path: str = "/delivery"):
    payload = json.loads(body)
    kind, summary, ids = classify(payload)
    return record(payload, body=body.encode(), kind=kind, summary=summary, message_ids=ids, path=path)


def delivery(message_id: str, error: str = "") -> str:
    extra = f',"error":"{error}"' if error else ""
    return ('{"phone":"5544999999999","zaapId":"A20DA9C0183A2D35A260F53F5D2B9244","messageId":"' + message_id + '",'
            '"instanceId":"instance.id","momment":1777494009341,"type":"DeliveryCallback"' + extra + '}')


def zapi_status(status: str, *ids: str, phone: str = ANA, group: bool = False) -> str:
    return ('{"instanceId":"instance.id","status":"' + status + '","ids":' + json.dumps(list(ids)) + ','
            '"momment":1632234645000,"phoneDevice":0,"phone":"' + phone + '","type":"MessageStatusCallback",'
            '"isGroup":' + ("true" if group else "false") + '}')


def wuzapi_receipt(state: str, receipt_type: str, *ids: str, chat: str = f"{ANA}@s.whatsapp.net") -> str:
    return ('{"event":{"AddressingMode":"","BroadcastListOwner":"","BroadcastRecipients":null,"Chat":"' + chat + '",'
            '"IsFromMe":false,"IsGroup":false,"MessageIDs":' + json.dumps(list(ids)) + ',"MessageSender":"",'
            '"RecipientAlt":"","Sender":"' + ANA + '@s.whatsapp.net","SenderAlt":"",'
            '"Timestamp":"2026-05-19T10:40:13-03:00","Type":"' + receipt_type + '"},"instanceName":"acme",'
            '"state":"' + state + '","type":"ReadReceipt","userID":"0a1b2c3d4e5f60718293a4b5c6d7e8f9"}')


@pytest.fixture
def inbox(store) -> Inbox:
    return Inbox(store)


def sent(inbox: Inbox, message_id: str, at: int = 1) -> None:
    inbox.record(NewMessage(ANA, True, "text", f"sent {message_id}", message_id), at)


def status(inbox: Inbox, message_id: str) -> Status | None:
    return {m.message_id: m.status for m in inbox.thread(ANA, 50)}[message_id]


async def test_zapi_delivery_is_one_tick_and_received_two(store, inbox):
    sent(inbox, "3EB0S1")
    await store.append(stored(delivery("3EB0S1")))
    assert status(inbox, "3EB0S1") is Status.HANDED  # handed to WhatsApp, not on the phone: ✓, never ✓✓
    await store.append(stored(zapi_status("RECEIVED", "3EB0S1")))
    assert status(inbox, "3EB0S1") is Status.DELIVERED
    await store.append(stored(zapi_status("READ", "3EB0S1")))
    assert status(inbox, "3EB0S1") is Status.READ


async def test_zapi_played_and_a_failed_delivery_fails(store, inbox):
    sent(inbox, "3EB0V1")
    sent(inbox, "3EB0F1")
    await store.append(stored(zapi_status("PLAYED", "3EB0V1")))
    await store.append(stored(delivery("3EB0F1", "Phone number does not exist")))
    assert (status(inbox, "3EB0V1"), status(inbox, "3EB0F1")) == (Status.PLAYED, Status.FAILED)


async def test_ticks_never_go_back_when_events_arrive_out_of_order(store, inbox):
    sent(inbox, "3EB0O1")
    await store.append(stored(zapi_status("READ", "3EB0O1")))
    await store.append(stored(zapi_status("RECEIVED", "3EB0O1")))
    await store.append(stored(delivery("3EB0O1")))
    await store.append(stored(zapi_status("SENT", "3EB0O1")))
    await store.append(stored(wuzapi_receipt("Delivered", "", "3EB0O1"), "/session"))
    assert status(inbox, "3EB0O1") is Status.READ


async def test_read_by_me_clears_unread_up_to_the_message_and_never_marks_a_sent_one(store, inbox):
    sent(inbox, "3EB0MINE", 5)
    for n in (1, 2, 3):
        inbox.record(NewMessage(ANA, False, "text", f"in {n}", f"3EB0IN{n}"), n * 10)
    assert inbox.conversation(ANA).unread == 3
    # the account read the chat on its phone up to the second message; the third came after
    await store.append(stored(zapi_status("READ_BY_ME", "3EB0IN2", "3EB0MINE")))
    assert inbox.conversation(ANA).unread == 1
    assert status(inbox, "3EB0MINE") is Status.SENT  # READ_BY_ME is about what we received, not what we sent
    # a late READ_BY_ME for an older message never raises the count again
    await store.append(stored(zapi_status("READ_BY_ME", "3EB0IN1")))
    assert inbox.conversation(ANA).unread == 1
    # ids the inbox never saw: the phone read the chat, so all of it
    await store.append(stored(zapi_status("READ_BY_ME", "3EB0ELSEWHERE")))
    assert inbox.conversation(ANA).unread == 0


async def test_read_by_me_in_a_group_clears_that_group(store, inbox):
    inbox.record(NewMessage(GROUP, False, "text", "hi all", "3EB0G1", "Bia"), 1)
    await store.append(stored(zapi_status("READ_BY_ME", "3EB0G1", phone="120363019502650977-group", group=True)))
    assert inbox.conversation(GROUP).unread == 0


async def test_wuzapi_delivered_then_read(store, inbox):
    sent(inbox, "3EB0W1")
    await store.append(stored(wuzapi_receipt("Delivered", "", "3EB0W1"), "/session"))
    assert status(inbox, "3EB0W1") is Status.DELIVERED
    await store.append(stored(wuzapi_receipt("Read", "read", "3EB0W1"), "/session"))
    assert status(inbox, "3EB0W1") is Status.READ


async def test_wuzapi_read_self_clears_unread_and_never_marks_a_sent_message(store, inbox):
    sent(inbox, "3EB0MINE", 5)
    inbox.record(NewMessage(ANA, False, "text", "in", "3EB0IN"), 10)
    assert inbox.conversation(ANA).unread == 1
    await store.append(stored(wuzapi_receipt("ReadSelf", "read-self", "3EB0IN", "3EB0MINE"), "/session"))
    assert inbox.conversation(ANA).unread == 0
    assert status(inbox, "3EB0MINE") is Status.SENT


@pytest.mark.parametrize(("kind", "body", "receipt"), [
    ("Delivery", delivery("M"), Receipt.HANDED),
    ("Delivery", delivery("M", "Timeout on send message"), Receipt.FAILED),
    ("MessageStatusCallback", zapi_status("SENT", "M"), Receipt.HANDED),
    ("MessageStatusCallback", zapi_status("RECEIVED", "M"), Receipt.DELIVERED),
    ("MessageStatusCallback", zapi_status("READ", "M"), Receipt.READ),
    ("MessageStatusCallback", zapi_status("PLAYED", "M"), Receipt.PLAYED),
    ("MessageStatusCallback", zapi_status("READ_BY_ME", "M"), Receipt.READ_BY_ME),
    ("MessageStatusCallback", zapi_status("READ-SELF", "M"), Receipt.READ_BY_ME),  # the docs' older word
    ("ReadReceipt", wuzapi_receipt("Delivered", "", "M"), Receipt.DELIVERED),
    ("ReadReceipt", wuzapi_receipt("Read", "read", "M"), Receipt.READ),
    ("ReadReceipt", wuzapi_receipt("ReadSelf", "read-self", "M"), Receipt.READ_BY_ME),
])
def test_one_table_for_both_gateways(kind, body, receipt):
    payload = json.loads(body)
    assert classify(payload)[0] == kind
    assert receipt_of(kind, payload) is receipt
    assert receipt in RECEIPTS.values()


def test_ticks_claim_no_more_than_the_receipt():
    assert [r.status for r in Receipt] == [Status.HANDED, Status.DELIVERED, Status.READ, Status.PLAYED, Status.FAILED, None]
    assert receipt_of("MessageStatusCallback", json.loads(zapi_status("PENDING", "M"))) is None
    assert receipt_of("ReadReceipt", {"type": "ReadReceipt", "event": {"MessageIDs": ["M"]}}) is None  # says nothing
