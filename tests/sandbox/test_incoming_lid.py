"""A contact writes first from a LID, in the Z-API instance dialect: `POST /sandbox/incoming` with `"family":
"instance"` sends Z-API's `ReceivedCallback` as Z-API writes one for a contact WhatsApp names by a LID, so the app's
identity mapping is tried end to end on Z-API's fields too (issue 35).

The expected bodies are literal JSON from Z-API's docs (webhooks/on-message-received, "text" example: `phone` the
number beside `senderLid`; `chatLid`, `participantPhone` and `participantLid` among the callback's attributes) and,
for a contact Z-API knows only by its LID, a published capture where `phone` and `chatLid` are both the LID."""

from __future__ import annotations

import json

import httpx

from tests.sandbox.conftest import CLIENT_TOKEN, Receiver
from tests.sandbox.test_dialect_webhooks import dialect_gateway
from tui.sandbox.incoming import lid_of

NUMBER = "5521955554444"  # on WhatsApp, no contact name

# Z-API's docs, on-message-received, the text example (its values are the docs' own; those the sandbox chooses are
# compared apart below).
ZAPI_DOCS_TEXT = json.loads("""
{"isStatusReply": false, "senderLid": "81896604192873@lid", "connectedPhone": "554499999999",
 "waitingMessage": false, "isEdit": false, "isGroup": false, "isNewsletter": false,
 "instanceId": "A20DA9C0183A2D35A260F53F5D2B9244", "messageId": "A20DA9C0183A2D35A260F53F5D2B9244",
 "phone": "5544999999999", "fromMe": false, "momment": 1632228638000, "status": "RECEIVED",
 "chatName": "name", "senderPhoto": "https://", "senderName": "name", "participantPhone": null,
 "participantLid": null, "photo": "https://", "broadcast": false, "type": "ReceivedCallback",
 "text": {"message": "teste"}}
""")
# A published ReceivedCallback from a chat Z-API knows only by its LID.
ZAPI_LID_ONLY = json.loads("""
{"isStatusReply": false, "chatLid": "216183051673677@lid", "connectedPhone": "558591575525",
 "waitingMessage": false, "isEdit": false, "isGroup": false, "isNewsletter": false,
 "instanceId": "3E02D99CD208F05F0BC8FA8592F99CB9", "messageId": "AC15186B9CE0DC6F8A73C4217D7EDBC9",
 "phone": "216183051673677@lid", "fromMe": false, "momment": 1786422848000, "status": "RECEIVED",
 "chatName": "Ronald", "senderPhoto": null, "senderName": "Ronald", "photo": null, "broadcast": false,
 "participantPhone": null, "participantLid": null, "forwarded": false, "type": "ReceivedCallback",
 "fromApi": false, "text": {"message": "Tetse"}}
""")


async def incoming(receiver: Receiver, **body: object) -> tuple[httpx.Response, list[dict]]:
    gateway, client = await dialect_gateway(receiver, instance_dialect="zapi")
    try:
        await client.put(f"{gateway.instance_url}/update-webhook-received", headers={"Client-Token": CLIENT_TOKEN},
                         json={"value": receiver.url + "/received"})
        answer = await client.post(f"{gateway.url}/sandbox/incoming", json=body)
        await gateway.wait_for_deliveries()
    finally:
        await client.aclose()
        await gateway.stop()
    return answer, [json.loads(raw) for _, raw in receiver.at("/received")]


async def test_a_lid_contact_writes_with_its_number_beside_the_lid(receiver):
    answer, [callback] = await incoming(receiver, **{"from": NUMBER, "text": "hi", "family": "instance"})
    assert answer.status_code == 200, answer.text
    lid = lid_of(NUMBER)
    assert answer.json()["lid"] == lid
    assert set(ZAPI_DOCS_TEXT) <= set(callback)
    assert (callback["type"], callback["phone"], callback["senderLid"], callback["chatLid"]) == (
        "ReceivedCallback", NUMBER, lid, lid)
    assert (callback["fromMe"], callback["isGroup"], callback["text"]) == (False, False, {"message": "hi"})
    assert (callback["participantPhone"], callback["participantLid"]) == (None, None)
    assert receiver.at("/session") == []  # the instance family's callback only


async def test_a_contact_known_only_by_its_lid_has_the_lid_as_phone(receiver):
    answer, [callback] = await incoming(receiver, **{"from": NUMBER, "text": "hi", "family": "instance",
                                                     "alt": False})
    assert answer.status_code == 200, answer.text
    lid = lid_of(NUMBER)
    assert set(ZAPI_LID_ONLY) <= set(callback)
    assert (callback["phone"], callback["chatLid"], callback["senderLid"]) == (lid, lid, lid)


async def test_the_instance_family_of_the_spec_has_no_incoming_callback(receiver):
    gateway, client = await dialect_gateway(receiver)
    try:
        answer = await client.post(f"{gateway.url}/sandbox/incoming",
                                   json={"from": NUMBER, "text": "hi", "family": "instance"})
        bad = await client.post(f"{gateway.url}/sandbox/incoming", json={"from": NUMBER, "text": "hi", "family": "x"})
    finally:
        await client.aclose()
        await gateway.stop()
    assert answer.status_code == 400
    assert "Z-API" in answer.json()["error"]
    assert bad.status_code == 400 and "family" in bad.json()["error"]
