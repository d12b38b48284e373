"""Evolution API's webhook deliveries classified and summarised like the other gateways' (issue 33): kind, one
line, the WhatsApp message ids they name.

Every body is literal JSON written by hand from Evolution API's code at tag 2.3.6 (github EvolutionAPI/evolution-api,
the envelope from src/api/integrations/event/webhook/webhook.controller.ts `emit`; each `data` from
src/api/integrations/channel/whatsapp/whatsapp.baileys.service.ts, the handler named above it; statuses from
src/utils/renderStatus.ts; event names from src/api/types/wa.types.ts `Events`). Values are made up.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tui.webhooks.classify import classify

ENVELOPE = ('"instance":"office","destination":"https://listener.example.com/evolution",'
            '"date_time":"2026-12-07T09:15:00.412Z","sender":"5511911112222@s.whatsapp.net",'
            '"server_url":"https://evo.example.com","apikey":null')


def delivery(event: str, data: str) -> dict:
    return json.loads('{"event":"' + event + '",' + ENVELOPE + ',"data":' + data + '}')


# messages.upsert handler -> prepareMessage: an incoming text (extended texts are rewritten to `conversation`);
# the key's remoteJidAlt is the sender's other address (Baileys src/Utils/decode-wa-message.ts)
TEXT = ('{"key":{"remoteJid":"5511999999999@s.whatsapp.net","remoteJidAlt":"203050607080901@lid","fromMe":false,'
        '"id":"A5F1D0C1E2B3A4958677","addressingMode":"pn"},"pushName":"Maria","status":"DELIVERY_ACK",'
        '"message":{"conversation":"Is the shop open today?","messageContextInfo":{"deviceListMetadataVersion":2,'
        '"deviceListMetadata":{"senderKeyHash":{"0":17,"1":204,"2":9},'
        '"senderTimestamp":{"low":1764000000,"high":0,"unsigned":true}}}},"messageType":"conversation",'
        '"messageTimestamp":1765098900,"instanceId":"6f0d9c2e-4b1a-4c55-9d7e-2a8b1f3c4d5e","source":"android"}')

# messages.upsert handler: a group member known by a LID, the phone in participantAlt
GROUP_TEXT = ('{"key":{"remoteJid":"120363041234567890@g.us","fromMe":false,"id":"3EB05D8F2C1A9B7E6D5C4B",'
              '"participant":"11223344556677@lid","participantAlt":"5511988887777@s.whatsapp.net",'
              '"addressingMode":"lid"},"pushName":"Joao","status":"DELIVERY_ACK",'
              '"message":{"conversation":"I can cover Saturday"},"messageType":"conversation",'
              '"messageTimestamp":1765099100,"instanceId":"6f0d9c2e-4b1a-4c55-9d7e-2a8b1f3c4d5e","source":"web"}')

# messages.upsert handler with webhookBase64 on (message.base64), deserializeMessageBuffers ({"0": …} bytes),
# fileLength a Long
IMAGE = ('{"key":{"remoteJid":"5511999999999@s.whatsapp.net","fromMe":false,"id":"A5F1D0C1E2B3A4958678",'
         '"addressingMode":"pn"},"pushName":"Maria","status":"DELIVERY_ACK","message":{"imageMessage":{'
         '"url":"https://mmg.whatsapp.net/v/t62.7118-24/11111111_222222_n.enc?ccb=11-4","mimetype":"image/jpeg",'
         '"caption":"This one?","fileSha256":{"0":161,"1":22,"2":3,"3":48},'
         '"fileLength":{"low":87421,"high":0,"unsigned":true},"height":1280,"width":960,'
         '"mediaKey":{"0":5,"1":99,"2":210,"3":17},"jpegThumbnail":{"0":255,"1":216,"2":255,"3":224}},'
         '"base64":"/9j/4AAQSkZJRgABAQAAAQABAAD/2Q=="},"messageType":"imageMessage","messageTimestamp":1765099200,'
         '"instanceId":"6f0d9c2e-4b1a-4c55-9d7e-2a8b1f3c4d5e","source":"android"}')

# messages.upsert handler: reactions are ordinary upserts; senderTimestampMs is an int64 Long
REACTION = ('{"key":{"remoteJid":"5511999999999@s.whatsapp.net","fromMe":false,"id":"A5F1D0C1E2B3A4958681"},'
            '"pushName":"Maria","status":"DELIVERY_ACK","message":{"reactionMessage":{"key":{'
            '"remoteJid":"5511911112222@s.whatsapp.net","fromMe":true,"id":"3EB0C431C26A1916B1A2F3"},"text":"❤️",'
            '"senderTimestampMs":{"low":-132058656,"high":410,"unsigned":false}}},"messageType":"reactionMessage",'
            '"messageTimestamp":1765099500,"instanceId":"6f0d9c2e-4b1a-4c55-9d7e-2a8b1f3c4d5e","source":"android"}')

# prepareMessage: a poll as Baileys writes it (messageType is the content's key)
POLL = ('{"key":{"remoteJid":"5511999999999@s.whatsapp.net","fromMe":false,"id":"3EB0AA11BB22CC33DD44EE"},'
        '"pushName":"Maria","status":"DELIVERY_ACK","message":{"pollCreationMessageV3":{"name":"Pizza or sushi?",'
        '"options":[{"optionName":"Pizza"},{"optionName":"Sushi"}],"selectableOptionsCount":1},'
        '"messageContextInfo":{"messageSecret":{"0":200,"1":13,"2":77,"3":4}}},"messageType":"pollCreationMessageV3",'
        '"messageTimestamp":1765099600,"instanceId":"6f0d9c2e-4b1a-4c55-9d7e-2a8b1f3c4d5e","source":"web"}')

# sendMessageWithTyping: SEND_MESSAGE carries the object the send route answers (status PENDING)
SENT = ('{"key":{"remoteJid":"5511999999999@s.whatsapp.net","fromMe":true,"id":"3EB0C431C26A1916B1A2F3"},'
        '"pushName":"Você","status":"PENDING","message":{"conversation":"Hello from gateway-tui"},'
        '"contextInfo":{"mentionedJid":[],"groupMentions":[],'
        '"ephemeralSettingTimestamp":{"low":1764925964,"high":0,"unsigned":false},"disappearingMode":{"initiator":0}},'
        '"messageType":"conversation","messageTimestamp":1765098764,'
        '"instanceId":"6f0d9c2e-4b1a-4c55-9d7e-2a8b1f3c4d5e","source":"web"}')


def ack(status: str, *, from_me: bool = True, chat: str = "5511999999999@s.whatsapp.net") -> str:
    """messages.update handler: `keyId` is WhatsApp's id, `messageId` Evolution's database row."""
    return ('{"keyId":"3EB0C431C26A1916B1A2F3","remoteJid":"' + chat + '","fromMe":' + json.dumps(from_me) + ','
            '"status":"' + status + '","instanceId":"6f0d9c2e-4b1a-4c55-9d7e-2a8b1f3c4d5e",'
            '"messageId":"cmh4r6z1m0002qz8l5t6y7u8i"}')


@pytest.mark.parametrize(("event", "data", "kind", "summary", "ids"), [
    ("messages.upsert", TEXT, "messages.upsert", "messages.upsert from Maria (5511999999999): Is the shop open today?",
     ("A5F1D0C1E2B3A4958677",)),
    ("messages.upsert", GROUP_TEXT, "messages.upsert",
     "messages.upsert from Joao (+5511988887777) in 120363041234567890@g.us: I can cover Saturday",
     ("3EB05D8F2C1A9B7E6D5C4B",)),
    ("messages.upsert", IMAGE, "messages.upsert", "messages.upsert from Maria (5511999999999): [image] This one?",
     ("A5F1D0C1E2B3A4958678",)),
    ("messages.upsert", REACTION, "messages.upsert",
     "messages.upsert from Maria (5511999999999): [reaction] ❤️ to 3EB0C431C26A1916B1A2F3",
     ("A5F1D0C1E2B3A4958681", "3EB0C431C26A1916B1A2F3")),
    ("messages.upsert", POLL, "messages.upsert",
     "messages.upsert from Maria (5511999999999): [poll] Pizza or sushi? (Pizza, Sushi)", ("3EB0AA11BB22CC33DD44EE",)),
    ("send.message", SENT, "send.message", "send.message to 5511999999999: Hello from gateway-tui",
     ("3EB0C431C26A1916B1A2F3",)),
    ("messages.update", ack("SERVER_ACK"), "messages.update", "messages.update SERVER_ACK to 5511999999999 (1 message)",
     ("3EB0C431C26A1916B1A2F3",)),
    ("messages.update", ack("READ", chat="203050607080901@lid"), "messages.update",
     "messages.update READ to unknown number (lid 203050607080901@lid) (1 message)", ("3EB0C431C26A1916B1A2F3",)),
    # eventHandler: presence.update passed as Baileys emits it
    ("presence.update", '{"id":"5511999999999@s.whatsapp.net","presences":{"5511999999999@s.whatsapp.net":'
     '{"lastKnownPresence":"composing"}}}', "presence.update", "presence.update 5511999999999 composing", ()),
    # connectionUpdate: open (wuid, profileName), close after a logout (statusReason 401)
    ("connection.update", '{"instance":"office","wuid":"5511911112222@s.whatsapp.net","profileName":"Loja Centro",'
     '"profilePictureUrl":null,"state":"open","statusReason":200}', "connection.update",
     "connection.update open 5511911112222 (Loja Centro)", ()),
    ("connection.update", '{"instance":"office","state":"close","statusReason":401}', "connection.update",
     "connection.update close reason 401", ()),
    # connectionUpdate: QRCODE_UPDATED with the new code, and the limit's message
    ("qrcode.updated", '{"qrcode":{"instance":"office","pairingCode":"WZYEH1YY","code":"2@Yq3vVb1NQm6r0dS9wz8E2xLk,'
     'ZmFrZSBub2lzZSBrZXk=","base64":"data:image/png;base64,iVBORw0KGgo="}}', "qrcode.updated",
     "qrcode.updated: new QR code and pairing code", ()),
    ("qrcode.updated", '{"message":"QR code limit reached, please login again","statusCode":500}', "qrcode.updated",
     "qrcode.updated: QR code limit reached, please login again", ()),
    # groupHandler: groups.upsert is Baileys' metadata list as is
    ("groups.upsert", '[{"id":"120363041234567890@g.us","addressingMode":"lid","subject":"Shop team",'
     '"owner":"98765432109876@lid","ownerPn":"5511911112222@s.whatsapp.net","participants":['
     '{"id":"98765432109876@lid","phoneNumber":"5511911112222@s.whatsapp.net","admin":"superadmin"},'
     '{"id":"11223344556677@lid","phoneNumber":"5511988887777@s.whatsapp.net","admin":null}]}]', "groups.upsert",
     "groups.upsert Shop team (120363041234567890@g.us, 2 participants)", ()),
    # group-participants.update: Baileys 7's participants are objects (the handler falls back to the event as is)
    ("group-participants.update", '{"id":"120363041234567890@g.us","author":"98765432109876@lid",'
     '"authorPn":"5511911112222@s.whatsapp.net","participants":[{"id":"33445566778899@lid",'
     '"phoneNumber":"5511966665555@s.whatsapp.net","admin":null}],"action":"add"}', "group-participants.update",
     "group-participants.update 120363041234567890@g.us: add 5511966665555 (by 5511911112222)", ()),
    # before Baileys 7 (and the handler's own form): participants as JID texts
    ("group-participants.update", '{"id":"120363041234567890@g.us","participants":["5511966665555@s.whatsapp.net"],'
     '"action":"remove"}', "group-participants.update",
     "group-participants.update 120363041234567890@g.us: remove 5511966665555", ()),
])
def test_each_kind_is_named_and_said_in_one_line(event, data, kind, summary, ids):
    assert classify(delivery(event, data)) == (kind, summary, ids)


def test_an_ack_names_the_whatsapp_id_never_evolutions_database_id():
    kind, _summary, ids = classify(delivery("messages.update", ack("DELIVERY_ACK")))
    assert kind == "messages.update" and ids == ("3EB0C431C26A1916B1A2F3",)
    assert "cmh4r6z1m0002qz8l5t6y7u8i" not in ids


def test_the_codes_that_pair_a_phone_are_not_in_the_summary():
    _kind, summary, _ids = classify(delivery("qrcode.updated", '{"qrcode":{"instance":"office","pairingCode":"WZYEH1YY",'
                                             '"code":"2@Yq3vVb1NQm6r0dS9wz8E2xLk","base64":"data:image/png;base64,iV"}}'))
    assert "WZYEH1YY" not in summary and "2@Yq3v" not in summary


def test_an_event_without_words_of_its_own_keeps_its_name():
    # messages.update handler: a chats.upsert follows an ack
    kind, summary, _ids = classify(delivery("chats.upsert", '[{"remoteJid":"5511999999999@s.whatsapp.net",'
                                            '"instanceId":"6f0d9c2e-4b1a-4c55-9d7e-2a8b1f3c4d5e","unreadMessages":0}]'))
    assert (kind, summary) == ("chats.upsert", "chats.upsert")
    # monitor.service.ts: logout.instance carries data null
    assert classify(delivery("logout.instance", "null"))[:2] == ("logout.instance", "logout.instance")
    # JSON.stringify leaves out a `data` that is undefined: the envelope's `instance` still says whose it is
    without_data = delivery("logout.instance", "null")
    del without_data["data"]
    assert classify(without_data)[:2] == ("logout.instance", "logout.instance")


def test_the_other_gateways_deliveries_are_not_taken_for_evolutions():
    """Z-API's callbacks name their kind in `type`; WuzAPI's `event` is an object: both keep their own kinds."""
    assert classify({"type": "ReceivedCallback", "phone": "5511999999999", "event": "x", "data": {}})[0] == (
        "ReceivedCallback")
    assert classify({"type": "Message", "event": {"Info": {"ID": "M1"}}})[0] == "Message"


def test_every_fixture_delivery_is_one_of_evolutions_kinds():
    """The hand-written deliveries beside this test (webhooks.json): each classified under its own event name."""
    entries = json.loads((Path(__file__).parent / "webhooks.json").read_text())["entries"]
    for entry in entries:
        body = entry["body"]
        kind, summary, _ids = classify(body)
        assert kind == body["event"], entry["name"]
        assert summary.startswith(body["event"]) and "\n" not in summary, entry["name"]


def test_the_numbers_behind_lids_are_learned_from_acks_and_group_changes():
    from tui.webhooks.identities import Identity, identities_in

    changed = delivery("group-participants.update", '{"id":"120363041234567890@g.us","author":"98765432109876@lid",'
                       '"authorPn":"5511911112222@s.whatsapp.net","participants":[{"id":"33445566778899@lid",'
                       '"phoneNumber":"5511966665555@s.whatsapp.net","admin":null}],"action":"add"}')
    assert identities_in(changed) == [Identity("33445566778899@lid", "5511966665555", ""),
                                      Identity("98765432109876@lid", "5511911112222", "")]
    assert identities_in(delivery("messages.update", ack("READ", chat="203050607080901@lid"))) == [
        Identity("203050607080901@lid", "", "")]
