"""Evolution API's deliveries in the inbox (issue 33): a message sent from the account and the `messages.update`
acks that follow become the thread's ticks and the message's timeline, through the one status table
(tui/webhooks/receipts.py); incoming messages, reads of received messages and typing notices as for the others.

Bodies are literal JSON written by hand from Evolution API 2.3.6's code (github EvolutionAPI/evolution-api): the
envelope from src/api/integrations/event/webhook/webhook.controller.ts `emit`; each `data` from
src/api/integrations/channel/whatsapp/whatsapp.baileys.service.ts (the handler named above it); the ack words from
src/utils/renderStatus.ts (0 ERROR, 1 PENDING, 2 SERVER_ACK, 3 DELIVERY_ACK, 4 READ, 5 PLAYED). Made-up values.
"""

from __future__ import annotations

import dataclasses
import json
from datetime import UTC, datetime

import pytest

from tests.webhooks.conftest import record
from tui.webhooks.classify import classify
from tui.webhooks.conversations import Inbox, Status
from tui.webhooks.inbox_changes import NewMessage
from tui.webhooks.receipts import Receipt, receipt_of
from tui.webhooks.rows import MediaInfo

MARIA = "5511999999999"
T0 = 1_790_000_000_000_000
SECOND = 1_000_000


def delivery(event: str, data: str, *, at_us: int):
    body = ('{"event":"' + event + '","instance":"office","data":' + data + ','
            '"destination":"https://listener.example.com/evolution","date_time":"2026-12-07T09:12:45.020Z",'
            '"sender":"5511911112222@s.whatsapp.net","server_url":"https://evo.example.com","apikey":null}')
    payload = json.loads(body)
    kind, summary, ids = classify(payload)
    event_record = record(payload, body=body.encode(), kind=kind, summary=summary, message_ids=ids, path="/evolution")
    return dataclasses.replace(event_record, received_at=datetime.fromtimestamp(at_us / 1_000_000, UTC))


# messages.upsert handler -> prepareMessage: a message the account wrote on its phone (fromMe, SERVER_ACK)
FROM_THE_PHONE = ('{"key":{"remoteJid":"5511999999999@s.whatsapp.net","fromMe":true,"id":"3EB0C431C26A1916B1A2F3"},'
                  '"pushName":"Você","status":"SERVER_ACK","message":{"conversation":"See you at 10"},'
                  '"messageType":"conversation","messageTimestamp":1765098764,'
                  '"instanceId":"6f0d9c2e-4b1a-4c55-9d7e-2a8b1f3c4d5e","source":"android"}')

# sendMessageWithTyping: send.message, the send route's own answer (status PENDING)
SENT_BY_THE_API = ('{"key":{"remoteJid":"5511999999999@s.whatsapp.net","fromMe":true,"id":"3EB0AB12CD34EF56AB78"},'
                   '"pushName":"Você","status":"PENDING","message":{"conversation":"Hello from gateway-tui"},'
                   '"messageType":"conversation","messageTimestamp":1765098764,'
                   '"instanceId":"6f0d9c2e-4b1a-4c55-9d7e-2a8b1f3c4d5e","source":"web"}')

# messages.upsert handler: an incoming text (status DELIVERY_ACK for incoming messages)
INCOMING = ('{"key":{"remoteJid":"5511999999999@s.whatsapp.net","fromMe":false,"id":"A5F1D0C1E2B3A4958677"},'
            '"pushName":"Maria","status":"DELIVERY_ACK","message":{"conversation":"Is the shop open today?"},'
            '"messageType":"conversation","messageTimestamp":1765098900,'
            '"instanceId":"6f0d9c2e-4b1a-4c55-9d7e-2a8b1f3c4d5e","source":"android"}')


def ack(message_id: str, status: str, *, from_me: bool = True, chat: str = "5511999999999@s.whatsapp.net") -> str:
    """messages.update handler: `keyId` is WhatsApp's id; `messageId` is Evolution's database row, never ours."""
    return ('{"keyId":"' + message_id + '","remoteJid":"' + chat + '","fromMe":' + json.dumps(from_me) + ','
            '"status":"' + status + '","instanceId":"6f0d9c2e-4b1a-4c55-9d7e-2a8b1f3c4d5e",'
            '"messageId":"cmh4r6z1m0002qz8l5t6y7u8i"}')


@pytest.fixture
def inbox(store) -> Inbox:
    return Inbox(store)


def steps(inbox: Inbox, message_id: str) -> list[tuple[Status, int | None]]:
    timeline = inbox.timeline(message_id)
    assert timeline is not None
    return [(step.status, step.at_us) for step in timeline.steps]


async def test_a_message_sent_from_the_phone_then_its_acks_become_ticks(store, inbox):
    await store.append(delivery("messages.upsert", FROM_THE_PHONE, at_us=T0))
    [message] = inbox.thread(MARIA, 10)
    assert (message.outgoing, message.body, message.message_id) == (True, "See you at 10", "3EB0C431C26A1916B1A2F3")
    assert message.status is Status.SENT
    await store.append(delivery("messages.update", ack("3EB0C431C26A1916B1A2F3", "SERVER_ACK"), at_us=T0 + SECOND))
    await store.append(delivery("messages.update", ack("3EB0C431C26A1916B1A2F3", "DELIVERY_ACK"),
                                at_us=T0 + 2 * SECOND))
    # the read may name the chat by its LID: the ack is matched by keyId
    await store.append(delivery("messages.update", ack("3EB0C431C26A1916B1A2F3", "READ", chat="203050607080901@lid"),
                                at_us=T0 + 3 * SECOND))
    assert steps(inbox, "3EB0C431C26A1916B1A2F3") == [
        (Status.SENT, T0), (Status.HANDED, T0 + SECOND), (Status.DELIVERED, T0 + 2 * SECOND),
        (Status.READ, T0 + 3 * SECOND),
    ]
    assert inbox.thread(MARIA, 10)[0].status is Status.READ
    assert inbox.timeline("cmh4r6z1m0002qz8l5t6y7u8i") is None  # Evolution's database id names nothing here


async def test_an_api_send_recorded_by_the_app_is_not_doubled_by_send_message_and_is_played(store, inbox):
    inbox.record(NewMessage(MARIA, True, "text", "Hello from gateway-tui", "3EB0AB12CD34EF56AB78"), T0)
    await store.append(delivery("send.message", SENT_BY_THE_API, at_us=T0 + SECOND))
    await store.append(delivery("messages.update", ack("3EB0AB12CD34EF56AB78", "PENDING"), at_us=T0 + SECOND))
    await store.append(delivery("messages.update", ack("3EB0AB12CD34EF56AB78", "PLAYED"), at_us=T0 + 9 * SECOND))
    [message] = inbox.thread(MARIA, 10)
    assert message.status is Status.PLAYED
    assert steps(inbox, "3EB0AB12CD34EF56AB78") == [(Status.SENT, T0), (Status.PLAYED, T0 + 9 * SECOND)]


async def test_an_error_ack_fails_the_message(store, inbox):
    await store.append(delivery("send.message", SENT_BY_THE_API, at_us=T0))
    await store.append(delivery("messages.update", ack("3EB0AB12CD34EF56AB78", "ERROR"), at_us=T0 + SECOND))
    assert inbox.thread(MARIA, 10)[0].status is Status.FAILED


async def test_an_incoming_message_read_on_the_phone_clears_the_unread_count_and_marks_nothing(store, inbox):
    await store.append(delivery("messages.upsert", INCOMING, at_us=T0))
    [message] = inbox.thread(MARIA, 10)
    assert (message.outgoing, message.body, message.status) == (False, "Is the shop open today?", None)
    conversation = inbox.conversation(MARIA)
    assert conversation is not None and conversation.unread == 1
    await store.append(delivery("messages.update", ack("A5F1D0C1E2B3A4958677", "READ", from_me=False),
                                at_us=T0 + SECOND))
    conversation = inbox.conversation(MARIA)
    assert conversation is not None and conversation.unread == 0
    assert inbox.thread(MARIA, 10)[0].status is None


async def test_a_typing_notice_shows_in_the_chat(store, inbox):
    await store.append(delivery("messages.upsert", INCOMING, at_us=T0))
    # eventHandler: presence.update as Baileys emits it
    await store.append(delivery("presence.update", '{"id":"5511999999999@s.whatsapp.net","presences":{'
                                '"5511999999999@s.whatsapp.net":{"lastKnownPresence":"composing"}}}',
                                at_us=T0 + SECOND))
    conversation = inbox.conversation(MARIA)
    assert conversation is not None and conversation.typing_us is not None


@pytest.mark.parametrize(("status", "from_me", "receipt"), [
    ("ERROR", True, Receipt.FAILED),
    ("PENDING", True, None),  # still in Evolution's hands: the send's 2xx said so already
    ("SERVER_ACK", True, Receipt.HANDED),
    ("DELIVERY_ACK", True, Receipt.DELIVERED),
    ("READ", True, Receipt.READ),
    ("PLAYED", True, Receipt.PLAYED),
    ("DELETED", True, None),  # an update without a status
    ("READ", False, Receipt.READ_BY_ME),  # a message the account received, read on its phone
    ("PLAYED", False, Receipt.READ_BY_ME),
    ("DELIVERY_ACK", False, None),
])
def test_evolutions_ack_words_in_the_one_table(status, from_me, receipt):
    event = delivery("messages.update", ack("3EB0C431C26A1916B1A2F3", status, from_me=from_me), at_us=T0)
    assert event.kind == "messages.update"
    assert receipt_of(event.kind, event.payload) is receipt


async def test_a_photo_shows_its_caption_and_its_file_as_the_event_describes_it(store, inbox):
    # messages.upsert handler with webhookBase64 on (message.base64); deserializeMessageBuffers writes bytes as
    # {"0": …} objects; fileLength is a uint64 Long; mediaUrl only when Evolution uploaded it to its S3
    image = ('{"key":{"remoteJid":"5511999999999@s.whatsapp.net","fromMe":false,"id":"A5F1D0C1E2B3A4958678"},'
             '"pushName":"Maria","status":"DELIVERY_ACK","message":{"imageMessage":{'
             '"url":"https://mmg.whatsapp.net/v/t62.7118-24/11111111_222222_n.enc?ccb=11-4","mimetype":"image/jpeg",'
             '"caption":"This one?","fileSha256":{"0":161,"1":22,"2":3,"3":48},'
             '"fileLength":{"low":87421,"high":0,"unsigned":true},"mediaKey":{"0":5,"1":99,"2":210,"3":17}},'
             '"mediaUrl":"https://s3.example.com/evolution/office/photo.jpeg",'
             '"base64":"/9j/4AAQSkZJRgABAQAAAQABAAD/2Q=="},"messageType":"imageMessage",'
             '"messageTimestamp":1765099200,"instanceId":"6f0d9c2e-4b1a-4c55-9d7e-2a8b1f3c4d5e","source":"android"}')
    await store.append(delivery("messages.upsert", image, at_us=T0))
    [message] = inbox.thread(MARIA, 10)
    assert (message.kind, message.body) == ("image", "[image] This one?")
    assert message.media == MediaInfo("image", "image/jpeg", None, "This one?", 87421,
                                      "https://s3.example.com/evolution/office/photo.jpeg", True)


def test_a_64_bit_number_as_evolution_writes_it():
    from tui.gateways.evolution.deliveries import long_value

    # upsert-reaction's senderTimestampMs: 1765099500000 ms as protobufjs' Long (signed halves)
    assert long_value({"low": -132058656, "high": 410, "unsigned": False}) == 1765099500000
    assert long_value({"low": 87421, "high": 0, "unsigned": True}) == 87421
    assert long_value({"low": -1, "high": -1, "unsigned": True}) == 2**64 - 1
    assert long_value({"low": -1, "high": -1, "unsigned": False}) == -1
    assert long_value(5) == 5 and long_value("5") is None and long_value({"low": True, "high": 0}) is None
