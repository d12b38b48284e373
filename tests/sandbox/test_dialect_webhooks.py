"""Webhooks as each gateway delivers them: Z-API's unsigned JSON callbacks (docs/gateways/zapi.md §5) and WuzAPI's
form-encoded `jsonData` in Go's key order, signed over the exact body (docs/gateways/wuzapi.md §3). Signatures are
checked with hmac directly; bodies are read raw."""

from __future__ import annotations

import hashlib
import hmac
import json
from urllib.parse import parse_qsl

import httpx

from tests.sandbox.conftest import CLIENT_TOKEN, INSTANCE_ID, INSTANCE_TOKEN, SESSION_TOKEN, Receiver
from tui.gateways.sandbox import SandboxGateway

KEY = "dialect-webhook-key-0123456789abcdef"
PHONE = "5511987654321"


def signature(headers: dict[str, str]) -> str | None:
    return next((value for name, value in headers.items() if name.lower() == "x-hmac-signature"), None)


async def dialect_gateway(receiver: Receiver, **dialects: str) -> tuple[SandboxGateway, httpx.AsyncClient]:
    gateway = SandboxGateway(
        instance_id=INSTANCE_ID, instance_token=INSTANCE_TOKEN, client_token=CLIENT_TOKEN,
        session_token=SESSION_TOKEN, delivery_delay=0.0, **dialects,
    )
    await gateway.start()
    client = httpx.AsyncClient(trust_env=False)
    instance = {"Client-Token": CLIENT_TOKEN}
    session = {"token": SESSION_TOKEN}
    await client.put(f"{gateway.instance_url}/update-webhook-delivery", headers=instance,
                     json={"value": receiver.url + "/delivery"})
    await client.put(f"{gateway.url}/webhook", headers=session, json={
        "webhook": receiver.url + "/session", "events": ["Message", "ReadReceipt", "ChatPresence"], "active": True})
    await client.post(f"{gateway.url}/session/hmac/config", headers=session, json={"hmac_key": KEY})
    return gateway, client


async def test_z_api_callbacks_are_unsigned_json_with_real_fields(receiver):
    gateway, client = await dialect_gateway(receiver, instance_dialect="zapi")
    try:
        sent = (await client.post(f"{gateway.instance_url}/send-button-actions", headers={"Client-Token": CLIENT_TOKEN},
                                  json={"phone": PHONE, "message": "Pick", "buttonActions": [
                                      {"id": "yes-1", "type": "REPLY", "label": "Yes"}]})).json()
        await gateway.wait_for_deliveries()
    finally:
        await client.aclose()
        await gateway.stop()
    callbacks = receiver.at("/delivery")
    for headers, _ in callbacks:
        assert "x-hmac-signature" not in {name.lower() for name in headers}  # Z-API never signs
        assert headers["Content-Type"] == "application/json"
    bodies = [json.loads(body) for _, body in callbacks]
    assert [body["type"] for body in bodies] == [
        "DeliveryCallback", "MessageStatusCallback", "MessageStatusCallback", "PresenceChatCallback", "ReceivedCallback"]
    delivery, received, read, presence, reply = bodies
    assert set(delivery) == {"type", "instanceId", "phone", "zaapId", "messageId", "momment"}
    assert (delivery["messageId"], delivery["zaapId"], delivery["phone"]) == (sent["messageId"], sent["zaapId"], PHONE)
    assert (received["status"], read["status"], read["ids"]) == ("RECEIVED", "READ", [sent["messageId"]])
    assert {"momment", "phoneDevice", "phone", "isGroup", "instanceId"} <= set(read)
    assert (presence["status"], presence["phone"], presence["lastSeen"]) == ("COMPOSING", PHONE, None)
    assert reply["buttonsResponseMessage"] == {"buttonId": "yes-1", "message": "Yes"}
    assert (reply["referenceMessageId"], reply["fromMe"], reply["phone"]) == (sent["messageId"], False, PHONE)
    # The session family (spec dialect here) still gets its signed events.
    assert [json.loads(body)["type"] for _, body in receiver.at("/session")] == ["ReadReceipt", "ChatPresence", "Message"]


async def test_z_api_failed_send_reports_error_and_nothing_after(receiver):
    gateway, client = await dialect_gateway(receiver, instance_dialect="zapi")
    try:
        await client.post(f"{gateway.instance_url}/send-text", headers={"Client-Token": CLIENT_TOKEN},
                          json={"phone": "5511912340000", "message": "hi"})
        await gateway.wait_for_deliveries()
    finally:
        await client.aclose()
        await gateway.stop()
    [(_, body)] = receiver.at("/delivery")
    assert json.loads(body)["error"] == "Phone number does not exist"
    assert receiver.at("/session") == []


async def test_wuzapi_form_body_in_go_order_signed_over_the_exact_bytes(receiver):
    gateway, client = await dialect_gateway(receiver, session_dialect="wuzapi")
    try:
        await client.post(f"{gateway.instance_url}/send-text", headers={"Client-Token": CLIENT_TOKEN},
                          json={"phone": PHONE, "message": "hi <there> & you"})
        await gateway.wait_for_deliveries()
    finally:
        await client.aclose()
        await gateway.stop()
    events = receiver.at("/session")
    assert len(events) == 3  # ReadReceipt, ChatPresence, the contact's text answer (Message)
    assert [json.loads(dict(parse_qsl(body.decode()))["jsonData"])["type"] for _, body in events] == [
        "ReadReceipt", "ChatPresence", "Message"]
    for headers, body in events:
        assert headers["Content-Type"] == "application/x-www-form-urlencoded"  # WuzAPI's default
        assert signature(headers) == hmac.new(KEY.encode(), body, hashlib.sha256).hexdigest()
        assert [key for key, _ in parse_qsl(body.decode())] == ["instanceName", "jsonData", "userID"]
    receipt_text = dict(parse_qsl(events[0][1].decode()))["jsonData"]
    assert receipt_text.startswith('{"event":{"Chat":"5511987654321@s.whatsapp.net","Sender":')
    # postmap's keys are sorted (event, state, type); the struct keeps whatsmeow's field order.
    receipt = json.loads(receipt_text)
    assert list(receipt) == ["event", "state", "type"] and receipt["state"] == "Read"
    assert list(receipt["event"]) == ["Chat", "Sender", "IsFromMe", "IsGroup", "AddressingMode", "SenderAlt",
                                      "RecipientAlt", "BroadcastListOwner", "BroadcastRecipients", "MessageIDs",
                                      "Timestamp", "Type", "MessageSender"]
    assert ", " not in receipt_text and '": ' not in receipt_text  # compact, as Go writes it
    # The delivery callback of the spec instance dialect is unchanged (signed JSON).
    [(headers, body)] = receiver.at("/delivery")
    assert signature(headers) == hmac.new(KEY.encode(), body, hashlib.sha256).hexdigest()


async def test_wuzapi_json_mode_sorts_every_level(receiver):
    gateway, client = await dialect_gateway(receiver, session_dialect="wuzapi", webhook_format="json")
    try:
        await client.post(f"{gateway.instance_url}/send-text", headers={"Client-Token": CLIENT_TOKEN},
                          json={"phone": PHONE, "message": "hi"})
        await gateway.wait_for_deliveries()
    finally:
        await client.aclose()
        await gateway.stop()
    headers, body = receiver.at("/session")[0]
    assert headers["Content-Type"] == "application/json"
    assert signature(headers) == hmac.new(KEY.encode(), body, hashlib.sha256).hexdigest()
    event = json.loads(body)
    assert list(event) == ["event", "instanceName", "state", "type", "userID"]
    assert list(event["event"]) == sorted(event["event"])
