"""The sandbox speaks Evolution API (`--instance-dialect evolution`), checked against the LITERAL requests and
answers of this folder (requests.json, answers.json: written by hand from Evolution 2.3.6's routers, schemas,
controllers and error handler, never from our models): every request there that our table sends is taken with
the status Evolution answers it with, and each error Evolution documents is answered byte for byte (the body's
JSON equal to the fixture's). Then our own client, speaking Evolution, against it."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from tui.api import connection as c
from tui.api import models as m
from tui.api import operations as ops
from tui.api.client import GatewayHttp
from tui.api.credentials import InstanceCredentials
from tui.api.dialects import InstanceDialect
from tui.api.operations import DialectRefusal
from tui.gateways.clients import InstanceClient
from tui.gateways.sandbox import SandboxGateway
from tui.sandbox.state import LAUNCH_ID

HERE = Path(__file__).parent
INSTANCE = "office"
API_KEY = "B6D711FC-DE4D-4FD5-9365-44120E713976"
GROUPS = ("120363041234567890", "120363099988877766")  # the groups the fixtures name


def _entries(name: str) -> dict[str, dict[str, Any]]:
    return {entry["name"]: entry for entry in json.loads((HERE / name).read_text())["entries"]}


REQUESTS = _entries("requests.json")
ANSWERS = _entries("answers.json")
# The fixtures' requests the sandbox serves (those our table sends), and the answer whose status Evolution gives.
SERVED = {
    "send-text": 201, "send-text-to-group-quoting": 201, "send-link-as-text": 201, "send-image-by-url": 201,
    "send-image-base64": 201, "send-document-base64": 201, "send-video-by-url": 201, "send-voice-note": 201,
    "send-sticker": 201, "send-location": 201, "send-contact": 201, "send-poll": 201, "send-reply-buttons": 201, "send-list": 201,
    "group-info": 200, "group-list": 200, "group-add-participants": 201, "community-promote-admins": 201,
    "group-rename": 201, "group-revoke-invite": 201, "profile-about": 200, "list-chats": 200, "list-contacts": 200,
    "webhook-set": 201, "webhook-off": 201, "webhook-read": 200, "connection-state": 200, "fetch-instances-own": 200,
    "privacy-read": 200, "privacy-last-seen-contacts": 201, "privacy-group-add-contacts": 201,
    # The session family's operations, which an Evolution profile sends through its instance (issue 33).
    "group-create": 201, "proxy-set": 201, "proxy-off": 201, "proxy-read": 200,
}


@pytest.fixture
async def evolution():
    gateway = SandboxGateway(instance_id=INSTANCE, instance_token=API_KEY, client_token="unused-client-token",
                             session_token="unused-session-token", instance_dialect=InstanceDialect.EVOLUTION,
                             delivery_delay=0.0)
    launch = gateway.state.groups[LAUNCH_ID]
    for digits in GROUPS:  # the fixtures' groups, as copies of the demo's launch group
        gateway.state.groups[digits] = dataclasses.replace(launch, digits=digits, participants=dict(launch.participants))
    await gateway.start()
    try:
        yield gateway
    finally:
        await gateway.stop()


async def send(gateway: SandboxGateway, method: str, path: str, body: Any = None, *, query: dict[str, str] | None = None,
               key: str | None = API_KEY, raw: bytes | None = None) -> httpx.Response:
    headers = {"Content-Type": "application/json"}
    if key is not None:
        headers["apikey"] = key
    content = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
    async with httpx.AsyncClient(base_url=gateway.url, timeout=10) as http:
        return await http.request(method, path, params=query, headers=headers, content=content)


@pytest.mark.parametrize("name", sorted(SERVED))
async def test_each_request_evolution_takes_is_taken_with_its_status(evolution, name):
    entry = REQUESTS[name]
    answer = await send(evolution, entry["method"], entry["path"], entry.get("body"), query=entry.get("query"),
                        key=entry["headers"]["apikey"])
    assert answer.status_code == SERVED[name], answer.text


async def test_a_send_answers_the_stored_message_with_its_id_in_key_id(evolution):
    entry = REQUESTS["send-text"]
    answer = await send(evolution, "POST", entry["path"], entry["body"])
    documented = ANSWERS["send-text-created"]["body"]
    body = answer.json()
    assert answer.status_code == 201 and set(body) == set(documented)
    assert body["key"] == {"remoteJid": "5511999999999@s.whatsapp.net", "fromMe": True,
                           "id": evolution.state.sent[-1].message_id}
    assert (body["pushName"], body["status"], body["message"], body["messageType"], body["source"]) == (
        "Você", "PENDING", {"conversation": "Hello from gateway-tui"}, "conversation", "web")


# (fixture answer, method, path, body or raw bytes, query, key): requests written here to meet each documented error.
ERRORS: list[tuple[str, str, str, Any, dict[str, str] | None, str | None]] = [
    ("group-create-missing-participants", "POST", "/group/create/office", {"subject": "Shop team"}, None, API_KEY),
    ("send-not-on-whatsapp", "POST", "/message/sendText/office", {"number": "5511900000000", "text": "hi"}, None, API_KEY),
    ("send-text-missing-text", "POST", "/message/sendText/office", {"number": "5511999999999"}, None, API_KEY),
    ("send-text-empty-body", "POST", "/message/sendText/office", {}, None, API_KEY),
    ("send-text-number-as-json-number", "POST", "/message/sendText/office", {"number": 5511999999999, "text": "hi"},
     None, API_KEY),
    ("send-text-blank", "POST", "/message/sendText/office", {"number": "5511999999999", "text": "   "}, None, API_KEY),
    ("send-location-coordinates-as-text", "POST", "/message/sendLocation/office",
     {"number": "5511999999999", "latitude": "-23.56", "longitude": "-46.65", "name": "Office", "address": "Av."},
     None, API_KEY),
    ("send-location-title-instead-of-name", "POST", "/message/sendLocation/office",
     {"number": "5511999999999", "latitude": -23.56, "longitude": -46.65, "title": "Office", "address": "Av."},
     None, API_KEY),
    ("send-contact-as-vcard", "POST", "/message/sendContact/office",
     {"number": "5511999999999", "contact": [{"fullName": "Maria Souza", "vcard": "BEGIN:VCARD\nVERSION:3.0\nEND:VCARD"}]},
     None, API_KEY),
    ("send-poll-without-selectable-count", "POST", "/message/sendPoll/office",
     {"number": "5511999999999", "name": "Lunch?", "values": ["Yes", "No"]}, None, API_KEY),
    ("send-poll-one-option", "POST", "/message/sendPoll/office",
     {"number": "5511999999999", "name": "Lunch?", "selectableCount": 1, "values": ["Yes"]}, None, API_KEY),
    ("send-media-data-url", "POST", "/message/sendMedia/office",
     {"number": "5511999999999", "mediatype": "image", "media": "data:image/png;base64,iVBORw0KGgo=",
      "fileName": "a.png"}, None, API_KEY),
    ("send-media-bad-mediatype", "POST", "/message/sendMedia/office",
     {"number": "5511999999999", "mediatype": "sticker", "media": "https://example.com/a.webp"}, None, API_KEY),
    ("send-document-base64-without-file-name", "POST", "/message/sendMedia/office",
     {"number": "5511999999999", "mediatype": "document", "media": "JVBERi0xLjQK"}, None, API_KEY),
    ("send-buttons-four-replies", "POST", "/message/sendButtons/office",
     {"number": "5511999999999", "title": "Pick", "buttons": [
         {"type": "reply", "displayText": str(n), "id": str(n)} for n in range(4)]}, None, API_KEY),
    ("send-to-unknown-group", "POST", "/message/sendText/office", {"number": "120363000000000001@g.us", "text": "hi"},
     None, API_KEY),
    ("missing-or-wrong-apikey", "POST", "/message/sendText/office", {"number": "5511999999999", "text": "hi"}, None,
     None),
    ("missing-or-wrong-apikey", "GET", "/instance/connectionState/office", None, None, "not-the-key"),
    ("unknown-instance", "GET", "/instance/connectionState/warehouse", None, None, None),  # 404 before the key
    ("unknown-route-or-method", "PUT", "/instance/restart/office", None, None, API_KEY),
    ("invalid-json-body", "POST", "/message/sendText/office", b'{"number": }', None, API_KEY),
    ("webhook-set-enabled-without-events", "POST", "/webhook/set/office",
     {"webhook": {"enabled": True, "url": "https://listener.example.com/evolution"}}, None, API_KEY),
    ("webhook-set-flat-body", "POST", "/webhook/set/office",
     {"enabled": True, "url": "https://listener.example.com/evolution", "events": ["MESSAGES_UPSERT"]}, None, API_KEY),
    ("webhook-set-unknown-event", "POST", "/webhook/set/office",
     {"webhook": {"enabled": True, "url": "https://listener.example.com/evolution", "events": ["MESSAGE_RECEIVED"]}},
     None, API_KEY),
    ("webhook-find-never-set", "GET", "/webhook/find/office", None, None, API_KEY),
    ("connection-state-open", "GET", "/instance/connectionState/office", None, None, API_KEY),
    ("connect-when-open", "GET", "/instance/connect/office", None, None, API_KEY),
    ("fetch-instances-unknown-name", "GET", "/instance/fetchInstances", None, {"instanceName": "warehouse"}, API_KEY),
    ("privacy-one-setting-only", "POST", "/chat/updatePrivacySettings/office", {"last": "contacts"}, None, API_KEY),
    ("group-route-without-group", "GET", "/group/findGroupInfos/office", None, None, API_KEY),
    ("group-update-participant-bad-action", "POST", "/group/updateParticipant/office",
     {"groupJid": "120363041234567890@g.us", "action": "kick", "participants": ["5511999999999"]}, None, API_KEY),
]


@pytest.mark.parametrize(("name", "method", "path", "body", "query", "key"), ERRORS,
                         ids=[f"{case[0]}-{index}" for index, case in enumerate(ERRORS)])
async def test_each_documented_error_is_answered_as_evolution_answers_it(evolution, name, method, path, body, query, key):
    raw = body if isinstance(body, bytes) else None
    answer = await send(evolution, method, path, None if raw else body, query=query, key=key, raw=raw)
    documented = ANSWERS[name]
    assert (answer.status_code, answer.json()) == (documented["status"], documented["body"])
    assert list(evolution.state.sent) == []  # nothing refused was sent


async def test_a_closed_instance_pairs_by_asking_connect_again_then_answers_as_evolution_does(evolution):
    """A send while not open is Evolution's 500; `connect` first answers no code (`{"count": 0}`), then the QR
    object; `restart` of a closed instance is a 200 carrying an error; logout twice: done, then 400."""
    assert (await send(evolution, "DELETE", "/instance/logout/office")).json() == ANSWERS["logout-done"]["body"]
    logged_out = await send(evolution, "DELETE", "/instance/logout/office")
    assert (logged_out.status_code, logged_out.json()) == (400, ANSWERS["logout-when-closed"]["body"])
    closed = await send(evolution, "GET", "/instance/connectionState/office")
    assert closed.json() == ANSWERS["connection-state-close"]["body"]
    restart = await send(evolution, "POST", "/instance/restart/office")
    assert (restart.status_code, restart.json()) == (200, ANSWERS["restart-when-closed"]["body"])
    not_open = await send(evolution, "POST", "/message/sendText/office", {"number": "5511999999999", "text": "hi"})
    assert (not_open.status_code, not_open.json()) == (500, ANSWERS["send-when-not-connected"]["body"])
    first = await send(evolution, "GET", "/instance/connect/office", query={"number": "5511999999999"})
    assert first.json() == ANSWERS["connect-no-code-yet"]["body"]
    assert (await send(evolution, "GET", "/instance/connectionState/office")).json() == \
        ANSWERS["connection-state-connecting"]["body"]
    again = (await send(evolution, "GET", "/instance/connect/office")).json()
    assert set(again) == set(ANSWERS["connect-pairing-code"]["body"])
    assert again["base64"].startswith("data:image/png;base64,") and again["code"].startswith("2@")
    assert len(again["pairingCode"]) == 8 and again["count"] >= 1


async def test_our_client_speaks_evolution_to_the_sandbox(evolution):
    """The app's client in the evolution dialect: a text, a photo and a document, the state, a poll, a group's
    rename and metadata, the webhook set and read back; each answered and read."""
    photo = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
    async with GatewayHttp(timeout=5.0) as http:
        client = InstanceClient(http, InstanceCredentials(evolution.url, INSTANCE, API_KEY, ""),
                                InstanceDialect.EVOLUTION)
        text = await client.request(ops.SEND_TEXT, m.SendText(phone="5511987654321", message="Olá"))
        image = await client.request(ops.SEND_IMAGE, m.SendImage(phone="5511987654321", image=photo, caption="Loja"))
        document = await client.request(ops.SEND_DOCUMENT, m.SendDocument(
            phone="5511987654321", extension="pdf", fileName="invoice", document="data:application/pdf;base64,JVBERi0xLjQK"))
        poll = await client.request(ops.SEND_POLL, m.SendPoll(
            phone="5511987654321", message="Lunch?", poll=[m.PollOption(name="Yes"), m.PollOption(name="No")],
            selectableCount=1))
        status = await client.request(ops.STATUS, m.NoBody())
        renamed = await client.request(ops.UPDATE_GROUP_NAME, m.UpdateGroupName(groupId=f"{LAUNCH_ID}-group",
                                                                               groupName="Launch Q4"))
        metadata = await client.request(ops.GROUP_METADATA, m.GroupMetadataQuery(GROUP_PHONE_NUMBER=f"{LAUNCH_ID}-group"))
        hooked = await client.request(ops.UPDATE_EVERY_WEBHOOKS, c.EveryCallback(value="http://127.0.0.1:9/evolution"))
        webhooks = await client.request(ops.INSTANCE_DATA, m.NoBody())
    sent = evolution.state.sent
    assert [result.message_id for result in (text, image, document, poll)] == [item.message_id for item in sent]
    assert [item.operation for item in sent] == ["send-text", "send-image", "send-document", "send-poll"]
    assert sent[1].media is not None and sent[1].media.startswith(b"\x89PNG") and sent[2].file_name == "invoice.pdf"
    assert status.connected and renamed.ok and metadata.groupName == "Launch Q4"
    assert hooked.ok and evolution.state.evolution_webhook is not None
    assert evolution.state.evolution_webhook["url"] == "http://127.0.0.1:9/evolution"
    assert webhooks.receivedCallbackUrl == "http://127.0.0.1:9/evolution"



async def test_a_privacy_setting_is_written_with_the_other_five_read_first(evolution):
    """Evolution takes all six settings at once (§2.7): our client reads them (GET fetchPrivacySettings, answered as
    the fixture's `privacy-read`), then sends the six with the one changed: the bodies on the wire are the
    fixtures' `privacy-last-seen-contacts`, then `privacy-group-add-contacts`. Excepted contacts cannot be said."""
    evolution.state.privacy.last_seen = evolution.state.privacy.group_add = "ALL"  # as the fixture's account has them
    exchanges: list[Any] = []
    async with GatewayHttp(timeout=5.0, on_exchange=exchanges.append) as http:
        client = InstanceClient(http, InstanceCredentials(evolution.url, INSTANCE, API_KEY, ""),
                                InstanceDialect.EVOLUTION)
        read = await send(evolution, "GET", "/chat/fetchPrivacySettings/office")
        assert read.json() == ANSWERS["privacy-read"]["body"]
        assert (await client.request(ops.PRIVACY_LAST_SEEN, m.PrivacyLastSeen(visualizationType=m.PrivacyScope.CONTACT))).ok
        assert (await client.request(ops.PRIVACY_GROUP_ADD, m.PrivacyGroupAdd(type=m.PrivacyScope.CONTACT))).ok
        with pytest.raises(DialectRefusal, match="contactsBlacklist"):
            await client.request(ops.PRIVACY_GROUP_ADD, m.PrivacyGroupAdd(
                type=m.PrivacyScope.CONTACT_BLACKLIST, contactsBlacklist=[m.BlacklistEntry(action="add", phone="5511999999999")]))
    wire = [(exchange.method, exchange.url.split(evolution.url)[1], exchange.request_body) for exchange in exchanges]
    assert [(method, path) for method, path, _ in wire] == [
        ("GET", "/chat/fetchPrivacySettings/office"), ("POST", "/chat/updatePrivacySettings/office")] * 2
    assert json.loads(wire[1][2]) == REQUESTS["privacy-last-seen-contacts"]["body"]
    assert json.loads(wire[3][2]) == REQUESTS["privacy-group-add-contacts"]["body"]
    assert evolution.state.privacy.last_seen == "CONTACT"  # the other dialects read it in the spec's words
