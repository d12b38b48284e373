"""The Evolution sandbox posts Evolution's webhooks (issue 33) to the URL `/webhook/set` stored: the envelope of
webhook.controller.ts `emit` (its keys in that order; `apikey` the instance's key, or null), `webhookByEvents` ->
`<url>/<event-path>`, `events` filtering, `enabled`, `webhookBase64`; `send.message` and `messages.update` acks
after a send, a contact's `messages.upsert` answer, `connection.update` and `qrcode.updated` while pairing.

The expected bodies are literal JSON written from Evolution's code (whatsapp.baileys.service.ts; the same shapes
as webhooks.json), with the sandbox's fixed clock and ids filled in."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import httpx
import pytest

from tests.sandbox.conftest import Receiver
from tui.api.dialects import InstanceDialect
from tui.gateways.sandbox import SandboxGateway

INSTANCE = "office"
API_KEY = "B6D711FC-DE4D-4FD5-9365-44120E713976"
MINUS_THREE = timezone(timedelta(hours=-3))
NOW = datetime(2026, 12, 7, 6, 15, 0, 412000, tzinfo=MINUS_THREE)  # São Paulo's 06:15:00.412
CONTACT = "5511987654321"


def fixed_ids():
    numbers = iter(range(1, 1000))
    return lambda: f"3EB0{next(numbers):016X}"


@pytest.fixture
async def receiver():
    target = Receiver()
    await target.start()
    yield target
    await target.stop()


@pytest.fixture
async def evolution():
    gateway = SandboxGateway(instance_id=INSTANCE, instance_token=API_KEY, client_token="unused-client-token",
                             session_token="unused-session-token", instance_dialect=InstanceDialect.EVOLUTION,
                             delivery_delay=0.0, clock=lambda: NOW, id_factory=fixed_ids())
    await gateway.start()
    try:
        yield gateway
    finally:
        await gateway.stop()


async def call(gateway: SandboxGateway, method: str, path: str, body: object = None,
               query: dict[str, str] | None = None) -> httpx.Response:
    async with httpx.AsyncClient(base_url=gateway.url, timeout=10, trust_env=False) as http:
        return await http.request(method, path, json=body, params=query, headers={"apikey": API_KEY})


async def set_webhook(gateway: SandboxGateway, url: str, **webhook: object) -> None:
    answer = await call(gateway, "POST", f"/webhook/set/{INSTANCE}", {"webhook": {"enabled": True, "url": url,
                                                                                  **webhook}})
    assert answer.status_code == 201, answer.text


def bodies(receiver: Receiver) -> list[tuple[str, dict]]:
    return [(path, json.loads(body)) for path, _headers, body in receiver.requests]


async def test_a_send_posts_send_message_then_each_ack_then_the_contacts_answer_by_events(evolution, receiver):
    await set_webhook(evolution, receiver.url + "/evolution", byEvents=True,
                      events=["SEND_MESSAGE", "MESSAGES_UPDATE", "MESSAGES_UPSERT"])
    sent = await call(evolution, "POST", f"/message/sendText/{INSTANCE}", {"number": CONTACT, "text": "Hello there"})
    assert sent.status_code == 201
    await evolution.wait_for_deliveries()
    posts = bodies(receiver)
    assert [path for path, _ in posts] == ["/evolution/send-message", "/evolution/messages-update",
                                           "/evolution/messages-update", "/evolution/messages-update",
                                           "/evolution/messages-upsert"]
    message_id = sent.json()["key"]["id"]
    instance_id = sent.json()["instanceId"]
    envelope = {"instance": INSTANCE, "destination": receiver.url + "/evolution",
                "date_time": "2026-12-07T06:15:00.412Z",  # local time labelled Z, as Evolution writes it
                "sender": f"{evolution.state.own_phone}@s.whatsapp.net", "server_url": evolution.url, "apikey": API_KEY}
    first = posts[0][1]
    assert list(first) == ["event", "instance", "data", "destination", "date_time", "sender", "server_url", "apikey"]
    assert first == {"event": "send.message", "data": sent.json(), **envelope}
    acks = [body for path, body in posts if path == "/evolution/messages-update"]
    for ack, status in zip(acks, ["SERVER_ACK", "DELIVERY_ACK", "READ"], strict=True):
        assert ack["event"] == "messages.update"
        assert list(ack["data"]) == ["keyId", "remoteJid", "fromMe", "status", "instanceId", "messageId"]
        assert ack["data"]["keyId"] == message_id and ack["data"]["status"] == status
        assert ack["data"]["remoteJid"] == f"{CONTACT}@s.whatsapp.net" and ack["data"]["fromMe"] is True
        assert ack["data"]["instanceId"] == instance_id and len(ack["data"]["messageId"]) == 25
    answer = posts[-1][1]
    assert answer["event"] == "messages.upsert"
    assert answer["data"]["key"] == {"remoteJid": f"{CONTACT}@s.whatsapp.net", "fromMe": False,
                                     "id": answer["data"]["key"]["id"]}
    assert answer["data"]["status"] == "DELIVERY_ACK" and answer["data"]["messageType"] == "conversation"
    assert set(answer["data"]["message"]) == {"conversation"} and answer["data"]["source"] == "android"
    assert answer["data"]["messageTimestamp"] == int(NOW.timestamp())
    for _path, body in posts:
        assert body["sender"] == first["sender"] and body["apikey"] == API_KEY


async def test_only_the_events_asked_for_go_out_and_nothing_while_disabled(evolution, receiver):
    await set_webhook(evolution, receiver.url + "/hook", events=["MESSAGES_UPDATE"])
    await call(evolution, "POST", f"/message/sendText/{INSTANCE}", {"number": CONTACT, "text": "Hi"})
    await evolution.wait_for_deliveries()
    assert {(path, body["event"]) for path, body in bodies(receiver)} == {("/hook", "messages.update")}
    receiver.requests.clear()
    await call(evolution, "POST", f"/webhook/set/{INSTANCE}", {"webhook": {"enabled": False, "url": receiver.url}})
    await call(evolution, "POST", f"/message/sendText/{INSTANCE}", {"number": CONTACT, "text": "Hi again"})
    await evolution.wait_for_deliveries()
    assert receiver.requests == []


async def test_a_photo_asked_for_comes_with_its_base64_when_the_webhook_wants_it(evolution, receiver):
    await set_webhook(evolution, receiver.url, events=["MESSAGES_UPSERT"], base64=True)
    await call(evolution, "POST", f"/message/sendText/{INSTANCE}", {"number": CONTACT, "text": "Send me a photo?"})
    await evolution.wait_for_deliveries()
    (upsert,) = [body for _path, body in bodies(receiver)]
    assert upsert["data"]["messageType"] == "imageMessage"
    image = upsert["data"]["message"]["imageMessage"]
    assert image["mimetype"] == "image/png" and set(image["fileLength"]) == {"low", "high", "unsigned"}
    assert upsert["data"]["message"]["base64"].startswith("iVBORw0KGgo")  # a PNG


async def test_without_exposure_the_apikey_is_null(evolution, receiver):
    async with httpx.AsyncClient(base_url=evolution.url, trust_env=False) as http:
        assert (await http.post("/sandbox/evolution", json={"expose_apikey": False})).json() == {"expose_apikey": False}
        assert (await http.post("/sandbox/evolution", json={"expose_apikey": "no"})).status_code == 400
    await set_webhook(evolution, receiver.url, events=["SEND_MESSAGE"])
    await call(evolution, "POST", f"/message/sendText/{INSTANCE}", {"number": CONTACT, "text": "Hi"})
    await evolution.wait_for_deliveries()
    (body,) = [body for _path, body in bodies(receiver)]
    assert body["apikey"] is None and list(body)[-1] == "apikey"
    assert API_KEY.encode() not in receiver.requests[0][2]


async def test_pairing_posts_connecting_each_new_qrcode_then_open_and_a_logout_posts_close(evolution, receiver):
    await set_webhook(evolution, receiver.url + "/evolution", byEvents=True,
                      events=["CONNECTION_UPDATE", "QRCODE_UPDATED"])
    assert (await call(evolution, "DELETE", f"/instance/logout/{INSTANCE}")).status_code == 200
    await evolution.wait_for_deliveries()
    assert [(path, body["data"]) for path, body in bodies(receiver)] == [
        ("/evolution/connection-update", {"instance": INSTANCE, "state": "close", "statusReason": 401})]
    receiver.requests.clear()
    assert (await call(evolution, "GET", f"/instance/connect/{INSTANCE}", query={"number": CONTACT})).json() == \
        {"count": 0}
    code = (await call(evolution, "GET", f"/instance/connect/{INSTANCE}")).json()
    await call(evolution, "GET", f"/instance/connect/{INSTANCE}")  # the same code: no second qrcode.updated
    await evolution.wait_for_deliveries()
    posts = bodies(receiver)
    assert [(path, body["event"]) for path, body in posts] == [("/evolution/connection-update", "connection.update"),
                                                               ("/evolution/qrcode-updated", "qrcode.updated")]
    assert posts[0][1]["data"] == {"instance": INSTANCE, "state": "connecting", "statusReason": 200}
    assert "sender" not in posts[0][1]  # not paired: Evolution's wuid is undefined, JSON.stringify leaves it out
    assert posts[1][1]["data"] == {"qrcode": {"instance": INSTANCE, "pairingCode": code["pairingCode"],
                                              "code": code["code"], "base64": code["base64"]}}
    receiver.requests.clear()
    async with httpx.AsyncClient(base_url=evolution.url, trust_env=False) as http:
        assert (await http.post("/sandbox/scan", json={"code": code["code"]})).status_code == 200
    await evolution.wait_for_deliveries()
    (opened,) = bodies(receiver)
    assert opened[1]["data"] == {"instance": INSTANCE, "wuid": opened[1]["data"]["wuid"],
                                 "profileName": evolution.state.own_name, "profilePictureUrl": None, "state": "open",
                                 "statusReason": 200}
    assert opened[1]["data"]["wuid"].endswith("@s.whatsapp.net") and opened[1]["sender"] == opened[1]["data"]["wuid"]


async def test_a_dropped_network_says_connecting(evolution, receiver):
    await set_webhook(evolution, receiver.url, events=["CONNECTION_UPDATE"])
    async with httpx.AsyncClient(base_url=evolution.url, trust_env=False) as http:
        assert (await http.post("/sandbox/disconnect", json={"family": "instance", "reason": "network"})).is_success
    await evolution.wait_for_deliveries()
    assert [body["data"] for _path, body in bodies(receiver)] == [
        {"instance": INSTANCE, "state": "connecting", "statusReason": 200}]


async def test_each_account_of_a_fleet_posts_its_own_deliveries(receiver):
    """`sandbox --accounts N --instance-dialect evolution`: each account is its own instance (its name in the path,
    its own key), and its deliveries name it, carry its key and the fleet's URL as `server_url`."""
    from tui.gateways.sandbox import SandboxFleet

    fleet = SandboxFleet(accounts=2, admin_token="fleet-admin-token-0001", client_token="unused-client-token",
                         instance_dialect=InstanceDialect.EVOLUTION, delivery_delay=0.0, clock=lambda: NOW)
    await fleet.start()
    try:
        second = fleet.accounts[1].gateway
        name, key = second.instance_id, second.instance_token
        async with httpx.AsyncClient(base_url=fleet.url, timeout=10, trust_env=False) as http:
            answer = await http.post(f"/webhook/set/{name}", headers={"apikey": key}, json={"webhook": {
                "enabled": True, "url": receiver.url + "/a/second/evolution", "byEvents": True,
                "events": ["SEND_MESSAGE"]}})
            assert answer.status_code == 201, answer.text
            sent = await http.post(f"/message/sendText/{name}", headers={"apikey": key},
                                   json={"number": CONTACT, "text": "Hi from the second"})
            assert sent.status_code == 201, sent.text
        await second.wait_for_deliveries()
    finally:
        await fleet.stop()
    ((path, body),) = bodies(receiver)
    assert path == "/a/second/evolution/send-message"
    assert (body["instance"], body["apikey"], body["server_url"]) == (name, key, fleet.url)
    assert body["data"]["key"]["id"] == sent.json()["key"]["id"]
    assert fleet.accounts[0].gateway.state.evolution_webhook is None  # the first account's is its own


async def test_a_contact_writing_first_from_a_lid_is_a_messages_upsert(evolution, receiver):
    """`/sandbox/incoming`: the key as webhooks.json's `upsert-text-from-lid-with-apikey` has it (Baileys gives the
    LID as remoteJid and the phone as remoteJidAlt)."""
    await set_webhook(evolution, receiver.url, events=["MESSAGES_UPSERT"])
    async with httpx.AsyncClient(base_url=evolution.url, trust_env=False) as http:
        answer = (await http.post("/sandbox/incoming", json={"from": CONTACT, "text": "Sent from the new phone"})).json()
    await evolution.wait_for_deliveries()
    ((_path, body),) = bodies(receiver)
    data = body["data"]
    assert data["key"] == {"remoteJid": answer["lid"], "remoteJidAlt": f"{CONTACT}@s.whatsapp.net", "fromMe": False,
                           "id": answer["id"], "addressingMode": "lid"}
    assert list(data) == ["key", "pushName", "status", "message", "messageType", "messageTimestamp", "instanceId",
                          "source"]
    assert (data["status"], data["message"], data["messageType"]) == (
        "DELIVERY_ACK", {"conversation": "Sent from the new phone"}, "conversation")
