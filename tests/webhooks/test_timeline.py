"""Each sent message's timeline (tui/webhooks/receipts.py, conversations.py `message_steps`): the steps the
gateways' events said, each with when this app learned it (the 2xx, the event's arrival), one mapping for both
gateways; never more than the events said.

Payloads are literal JSON written from:
* Z-API/docs `en/webhooks/on-message-send.mdx` (DeliveryCallback: zaapId, messageId, phone, `momment` in epoch
  milliseconds, `error`/`errorCode` only on failure; docs/gateways/zapi.md §5.1) and
  `en/webhooks/on-whatsapp-message-status-changes.mdx` (MessageStatusCallback: status SENT|RECEIVED|READ|
  READ_BY_ME|PLAYED, `ids` array, `momment`; §5.2);
* asternic/wuzapi `wmiau.go` (79ee4cd) `case *events.Receipt`: type "ReadReceipt", state "Delivered" for whatsmeow's
  Type "" and "Read" for "read", the whatsmeow event as Go marshals it, `Timestamp` an RFC 3339 time with
  nanoseconds and an offset (docs/gateways/wuzapi.md §4.3).
Each event is stored as arriving at a given time (`arriving`), as the listener stamps it.
"""

from __future__ import annotations

import dataclasses
import json
import sqlite3
from datetime import UTC, datetime

import pytest

from tests.webhooks.conftest import record
from tui.webhooks.classify import classify
from tui.webhooks.conversations import Inbox, Status, Step
from tui.webhooks.inbox_changes import NewMessage
from tui.webhooks.store import EventStore

ANA = "5544999999999"
T0 = 1_790_000_000_000_000  # 2026-09-21T14:13:20Z, in microseconds: when the gateway answered 2xx
SECOND = 1_000_000
MINUTE = 60 * SECOND


def stored(body: str, path: str = "/delivery", *, at_us: int | None = None):
    """The event as the listener hands it to the store; arriving at `at_us` when given (else now)."""
    payload = json.loads(body)
    kind, summary, ids = classify(payload)
    event = record(payload, body=body.encode(), kind=kind, summary=summary, message_ids=ids, path=path)
    if at_us is None:
        return event
    return dataclasses.replace(event, received_at=datetime.fromtimestamp(at_us / 1_000_000, UTC))


def zapi_delivery(message_id: str, momment_ms: int, error: str = "", code: str = "") -> str:
    extra = (f',"error":"{error}"' if error else "") + (f',"errorCode":"{code}"' if code else "")
    return ('{"phone":"5544999999999","zaapId":"A20DA9C0183A2D35A260F53F5D2B9244","messageId":"' + message_id + '",'
            '"instanceId":"instance.id","momment":' + str(momment_ms) + ',"type":"DeliveryCallback"' + extra + '}')


def zapi_status(status: str, message_id: str, momment_ms: int) -> str:
    return ('{"instanceId":"instance.id","status":"' + status + '","ids":["' + message_id + '"],'
            '"momment":' + str(momment_ms) + ',"phoneDevice":0,"phone":"5544999999999",'
            '"type":"MessageStatusCallback","isGroup":false}')


def wuzapi_receipt(state: str, receipt_type: str, message_id: str, timestamp: str) -> str:
    return ('{"event":{"AddressingMode":"","BroadcastListOwner":"","BroadcastRecipients":null,'
            '"Chat":"5544999999999@s.whatsapp.net","IsFromMe":false,"IsGroup":false,"MessageIDs":["' + message_id + '"],'
            '"MessageSender":"","RecipientAlt":"","Sender":"5544999999999@s.whatsapp.net","SenderAlt":"",'
            '"Timestamp":"' + timestamp + '","Type":"' + receipt_type + '"},"instanceName":"acme",'
            '"state":"' + state + '","type":"ReadReceipt","userID":"0a1b2c3d4e5f60718293a4b5c6d7e8f9"}')


def ms(at_us: int) -> int:
    return at_us // 1000


@pytest.fixture
def inbox(store) -> Inbox:
    return Inbox(store)


def sent(inbox: Inbox, message_id: str, at_us: int = T0) -> None:
    inbox.record(NewMessage(ANA, True, "text", f"sent {message_id}", message_id), at_us)


def steps(inbox: Inbox, message_id: str) -> list[tuple[Status, int | None]]:
    timeline = inbox.timeline(message_id)
    assert timeline is not None
    return [(step.status, step.at_us) for step in timeline.steps]


async def test_zapi_every_step_at_the_time_its_event_came(store, inbox):
    sent(inbox, "3EB0Z1")
    await store.append(stored(zapi_delivery("3EB0Z1", ms(T0 + SECOND)), at_us=T0 + SECOND))
    await store.append(stored(zapi_status("RECEIVED", "3EB0Z1", ms(T0 + 3 * SECOND)), at_us=T0 + 3 * SECOND))
    await store.append(stored(zapi_status("READ", "3EB0Z1", ms(T0 + MINUTE)), at_us=T0 + MINUTE))
    await store.append(stored(zapi_status("PLAYED", "3EB0Z1", ms(T0 + 2 * MINUTE)), at_us=T0 + 2 * MINUTE))
    assert steps(inbox, "3EB0Z1") == [
        (Status.SENT, T0), (Status.HANDED, T0 + SECOND), (Status.DELIVERED, T0 + 3 * SECOND),
        (Status.READ, T0 + MINUTE), (Status.PLAYED, T0 + 2 * MINUTE),
    ]
    timeline = inbox.timeline("3EB0Z1")
    assert timeline is not None and timeline.status is Status.PLAYED
    assert timeline.message is not None and timeline.message.body == "sent 3EB0Z1"


async def test_wuzapi_delivered_then_read(store, inbox):
    sent(inbox, "3EB0W1")
    await store.append(stored(wuzapi_receipt("Delivered", "", "3EB0W1", "2026-09-21T11:13:25.500000123-03:00"),
                              "/session", at_us=T0 + 5 * SECOND + 500_000))
    await store.append(stored(wuzapi_receipt("Read", "read", "3EB0W1", "2026-09-21T14:14:20Z"), "/session",
                              at_us=T0 + MINUTE))
    assert steps(inbox, "3EB0W1") == [
        (Status.SENT, T0), (Status.DELIVERED, T0 + 5 * SECOND + 500_000), (Status.READ, T0 + MINUTE),
    ]


async def test_a_read_with_no_delivered_never_invents_delivered(store, inbox):
    sent(inbox, "3EB0R1")
    await store.append(stored(zapi_status("READ", "3EB0R1", ms(T0 + MINUTE)), at_us=T0 + MINUTE))
    timeline = inbox.timeline("3EB0R1")
    assert timeline is not None and timeline.status is Status.READ
    assert timeline.step(Status.DELIVERED) is None and timeline.step(Status.HANDED) is None
    lines = timeline.lines(lambda at: f"t+{(at - T0) // SECOND}s", T0 + 2 * MINUTE, 10)
    assert lines == [
        "sent                   t+0s",
        "handed to the network  — no event said so",
        "delivered              — no event said so",
        "read                   t+60s",
    ]


async def test_out_of_order_events_never_move_a_status_back_or_a_time_later(store, inbox):
    sent(inbox, "3EB0O1")
    await store.append(stored(zapi_status("READ", "3EB0O1", ms(T0 + MINUTE)), at_us=T0 + MINUTE))
    await store.append(stored(zapi_status("RECEIVED", "3EB0O1", ms(T0 + 10 * SECOND)), at_us=T0 + 2 * MINUTE))
    await store.append(stored(zapi_delivery("3EB0O1", ms(T0 + 2 * SECOND)), at_us=T0 + 3 * MINUTE))
    await store.append(stored(wuzapi_receipt("Delivered", "", "3EB0O1", "2026-09-21T14:13:25Z"), "/session",
                              at_us=T0 + 4 * MINUTE))  # delivered again, later
    await store.append(stored(zapi_status("READ", "3EB0O1", ms(T0 + 5 * MINUTE)), at_us=T0 + 5 * MINUTE))
    timeline = inbox.timeline("3EB0O1")
    assert timeline is not None and timeline.status is Status.READ
    # each step when it was first learned: late steps are shown late (as they came), repeats change nothing
    assert [(step.status, step.at_us) for step in timeline.steps] == [
        (Status.SENT, T0), (Status.HANDED, T0 + 3 * MINUTE), (Status.DELIVERED, T0 + 2 * MINUTE),
        (Status.READ, T0 + MINUTE),
    ]
    assert inbox.thread(ANA, 10)[0].status is Status.READ


async def test_a_failed_delivery_keeps_the_gateways_words(store, inbox):
    sent(inbox, "3EB0F1")
    await store.append(stored(zapi_delivery("3EB0F1", ms(T0 + SECOND), "The message was not sent due to a likely "
                                            "shadow ban", "SHADOW_BAN"), at_us=T0 + SECOND))
    timeline = inbox.timeline("3EB0F1")
    assert timeline is not None and timeline.status is Status.FAILED
    assert timeline.step(Status.FAILED) == Step(
        Status.FAILED, T0 + SECOND, "The message was not sent due to a likely shadow ban (SHADOW_BAN)")
    assert timeline.lines(lambda at: "t", T0 + MINUTE, 10)[-1] == (
        "failed                 t  The message was not sent due to a likely shadow ban (SHADOW_BAN)")


async def test_a_gateways_own_time_is_not_trusted(store, inbox):
    """`momment` 1 (1970) or a clock ahead: the step is when the event came, on the clock stuck is measured on."""
    sent(inbox, "3EB0N1")
    await store.append(stored(zapi_delivery("3EB0N1", 1), at_us=T0 + SECOND))
    await store.append(stored(zapi_status("RECEIVED", "3EB0N1", ms(T0 + 86_400 * SECOND)), at_us=T0 + 2 * SECOND))
    assert steps(inbox, "3EB0N1") == [(Status.SENT, T0), (Status.HANDED, T0 + SECOND), (Status.DELIVERED, T0 + 2 * SECOND)]
    event = await store.append(stored(zapi_status("READ", "3EB0N1", ms(T0))))  # the listener's own stamp: now
    assert steps(inbox, "3EB0N1")[-1] == (Status.READ, int(event.received_at.timestamp() * SECOND))


@pytest.mark.parametrize(("waited", "status", "marked"), [
    (9 * MINUTE, Status.SENT, False),
    (10 * MINUTE, Status.SENT, True),
    (11 * MINUTE, Status.HANDED, True),
    (60 * MINUTE, Status.DELIVERED, False),  # delivered waits for its reader: never stuck
])
async def test_a_message_waiting_too_long_at_a_step_is_stuck(store, inbox, waited, status, marked):
    sent(inbox, "3EB0S1")
    if status is Status.HANDED:
        await store.append(stored(zapi_delivery("3EB0S1", ms(T0)), at_us=T0))
    elif status is Status.DELIVERED:
        await store.append(stored(zapi_status("RECEIVED", "3EB0S1", ms(T0)), at_us=T0))
    timeline = inbox.timeline("3EB0S1")
    assert timeline is not None and timeline.status is status
    stuck = timeline.stuck(T0 + waited, 10)
    assert (stuck is not None) is marked
    lines = timeline.lines(lambda at: "t", T0 + waited, 10)
    assert (lines[-1] == f"⚠ stuck at {status.word} for {waited // MINUTE} min (the mark comes after 10 min)") is marked
    assert timeline.stuck(T0 + waited, 0) is None  # 0 minutes: the mark is off


async def test_a_store_from_before_the_timeline_is_renumbered_and_its_steps_derived(tmp_path):
    path = tmp_path / "events.sqlite3"
    with EventStore(path) as store:
        sent(Inbox(store), "3EB0OLD")
        await store.append(stored(zapi_status("RECEIVED", "3EB0OLD", ms(T0 + SECOND)), at_us=T0 + SECOND))
    # what an older version left: no steps table, statuses numbered 1, 2, 3, 9, and the events that said them
    connection = sqlite3.connect(path)
    connection.execute("DROP TABLE message_steps")
    connection.execute("UPDATE message_status SET status = 2")
    connection.execute("INSERT INTO message_status VALUES ('3EB0GONE', 9)")
    connection.commit()
    connection.close()
    with EventStore(path) as store:
        inbox = Inbox(store)
        assert inbox.statuses(["3EB0OLD", "3EB0GONE"]) == {
            "3EB0OLD": Step(Status.DELIVERED, T0 + SECOND), "3EB0GONE": Step(Status.FAILED, None)}
        assert steps(inbox, "3EB0OLD") == [(Status.SENT, T0), (Status.DELIVERED, T0 + SECOND)]
