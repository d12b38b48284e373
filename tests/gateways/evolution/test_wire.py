"""Evolution API's wire, checked against the LITERAL requests and answers in this folder (requests.json,
answers.json: written by hand from Evolution 2.3.6's routers, schemas and controllers, each entry with its
source). Our models build the request; the fixture says what Evolution takes. Where a fixture carries an optional
field our request model has no way to say (a send's `delay`, a quoted message), the test names the key it leaves
out of the comparison."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from tui.api import connection as c
from tui.api import models as m
from tui.api import operations as ops
from tui.api.answers import error_for_status
from tui.api.client import InstanceClient
from tui.api.credentials import InstanceCredentials
from tui.api.dialects import InstanceDialect
from tui.api.errors import GatewayError
from tui.api.operations import DialectRefusal, Operation
from tui.gateways import adapter_for

HERE = Path(__file__).parent
INSTANCE = "office"
API_KEY = "B6D711FC-DE4D-4FD5-9365-44120E713976"
EVOLUTION = adapter_for(InstanceDialect.EVOLUTION)


def _entries(name: str) -> dict[str, dict[str, Any]]:
    return {entry["name"]: entry for entry in json.loads((HERE / name).read_text())["entries"]}


REQUESTS = _entries("requests.json")
ANSWERS = _entries("answers.json")

# (fixture name, operation, request, fixture body keys our request model cannot carry)
CASES: list[tuple[str, Operation[Any, Any], m.Request, tuple[str, ...]]] = [
    ("send-text", ops.SEND_TEXT, m.SendText(phone="5511999999999", message="Hello from gateway-tui"), ("delay",)),
    ("send-text-to-group-quoting", ops.SEND_TEXT, m.SendText(phone="120363041234567890-group", message="Agreed"),
     ("quoted",)),
    ("send-link-as-text", ops.SEND_LINK,
     m.SendLink(phone="5511999999999", message="Our price list", linkUrl="https://example.com/prices"), ()),
    ("send-image-by-url", ops.SEND_IMAGE,
     m.SendImage(phone="5511999999999", image="https://example.com/photo.png", caption="The shop front"), ()),
    ("send-document-base64", ops.SEND_DOCUMENT,
     m.SendDocument(phone="5511999999999", extension="pdf", fileName="invoice-2026-12.pdf",
                    document="data:application/pdf;base64,JVBERi0xLjQKJcOkw7zDtsOfCg==", caption="December invoice"),
     ()),
    ("send-video-by-url", ops.SEND_VIDEO,
     m.SendVideo(phone="5511999999999", video="https://example.com/clip.mp4", caption="Opening day"), ()),
    ("send-voice-note", ops.SEND_AUDIO, m.SendAudio(phone="5511999999999", audio="https://example.com/note.ogg"), ()),
    ("send-sticker", ops.SEND_STICKER,
     m.SendSticker(phone="5511999999999", sticker="https://example.com/sticker.webp"), ()),
    ("send-location", ops.SEND_LOCATION,
     m.SendLocation(phone="5511999999999", title="Avenida Paulista office", address="Av. Paulista, 1000, Sao Paulo",
                    lat=-23.5613, lng=-46.6565), ()),
    ("send-poll", ops.SEND_POLL,
     m.SendPoll(phone="5511999999999", message="Lunch on Friday?", selectableCount=1,
                poll=[m.PollOption(name="Yes"), m.PollOption(name="No"), m.PollOption(name="Maybe")]), ()),
    ("send-reply-buttons", ops.SEND_BUTTON_ACTIONS,
     m.SendButtonActions(phone="5511999999999", title="Your order", message="Confirm the delivery time",
                         footer="gateway-tui", buttons=[m.Button(id="am", text="Morning"),
                                                        m.Button(id="pm", text="Afternoon")]), ()),
    ("group-info", ops.GROUP_METADATA, m.GroupMetadataQuery(GROUP_PHONE_NUMBER="120363041234567890-group"), ()),
    ("groups", ops.LIST_GROUPS, m.ListPage(), ()),  # the instance family's: the same call, no paging, no members
    ("group-add-participants", ops.ADD_PARTICIPANT,
     m.AddParticipant(groupId="120363041234567890-group", phones=["5511966665555"]), ()),
    ("community-promote-admins", ops.ADD_ADMIN,
     m.AddAdmin(communityId="120363099988877766", phones=["5511988887777"]), ()),
    ("group-rename", ops.UPDATE_GROUP_NAME,
     m.UpdateGroupName(groupId="120363041234567890-group", groupName="Shop team 2027"), ()),
    ("group-revoke-invite", ops.REDEFINE_INVITATION_LINK, m.RedefineInvitationLink(communityId="120363099988877766"),
     ()),
    ("profile-about", ops.PROFILE_DESCRIPTION, m.ProfileDescription(value="Open Monday to Saturday"), ()),
    ("list-chats", ops.LIST_CHATS, m.ListPage(page=1, pageSize=50), ()),
    ("list-contacts", ops.LIST_CONTACTS, m.ListPage(page=1, pageSize=100), ()),
    ("webhook-set", ops.UPDATE_EVERY_WEBHOOKS, c.EveryCallback(value="https://listener.example.com/evolution"),
     ("headers",)),
    ("webhook-read", ops.INSTANCE_DATA, m.NoBody(), ()),
    ("connection-state", ops.STATUS, m.NoBody(), ()),
    ("connect-for-qr", ops.QR_CODE, m.NoBody(), ()),
    ("connect-for-qr", ops.QR_CODE_IMAGE, m.NoBody(), ()),
    ("connect-for-pairing-code", ops.PHONE_CODE, c.PhoneCodeQuery(phone="5511999999999"), ()),
    ("restart", ops.RESTART, m.NoBody(), ()),
    ("logout", ops.DISCONNECT, m.NoBody(), ()),
]


def _on_the_wire(op: Operation[Any, Any], request: m.Request) -> tuple[str, str, dict[str, str], Any]:
    wire = EVOLUTION.wire(op, request)
    filled = EVOLUTION.instance_endpoint(InstanceCredentials("https://evo.example.com", INSTANCE, API_KEY, ""))
    path = "/" + "/".join(filled.placeholders.get(part[1:-1], part) if part.startswith("{") else part
                          for part in wire.path)
    return wire.method or op.method, path, wire.query, wire.body


@pytest.mark.parametrize(("name", "op", "request_", "unsaid"), CASES, ids=[f"{case[0]}:{case[1].id}" for case in CASES])
def test_each_operation_is_written_as_evolution_takes_it(name: str, op: Operation[Any, Any], request_: m.Request,
                                                         unsaid: tuple[str, ...]) -> None:
    literal = REQUESTS[name]
    expected_body = literal["body"]
    if expected_body is not None:
        expected_body = {key: value for key, value in expected_body.items() if key not in unsaid}
        if "webhook" in expected_body:
            expected_body["webhook"] = {k: v for k, v in expected_body["webhook"].items() if k not in unsaid}
    assert _on_the_wire(op, request_) == (literal["method"], literal["path"], literal.get("query", {}),
                                         expected_body)


def test_the_own_instance_row_is_read_without_naming_it_in_the_query() -> None:
    # fetch-instances-own sends `?instanceName=office`; with the instance's key Evolution lists only that instance
    # anyway (§3.4, auth.guard.ts), so the query, which the request cannot fill, is left out.
    literal = REQUESTS["fetch-instances-own"]
    assert _on_the_wire(ops.DEVICE, m.NoBody()) == (literal["method"], literal["path"], {}, None)


def test_the_webhook_is_turned_off_whole() -> None:
    literal = REQUESTS["webhook-off"]
    method, path, _query, body = _on_the_wire(ops.UPDATE_WEBHOOK_DELIVERY, m.DeliveryWebhook(value=""))
    assert (method, path, body["webhook"]["enabled"]) == (literal["method"], literal["path"], False)


@pytest.mark.parametrize(("op", "request_", "field"), [
    (ops.FORWARD_MESSAGE, m.ForwardMessage(phone="5511999999999", messageId="3EB0C431", messagePhone="5511988887777"),
     "messageId"),
    (ops.PRODUCTS, m.ProductQuery(PRODUCT_ID="p1"), "PRODUCT_ID"),
])
def test_what_evolution_cannot_say_is_refused_before_sending(op: Operation[Any, Any], request_: m.Request,
                                                             field: str) -> None:
    with pytest.raises(DialectRefusal) as refused:
        EVOLUTION.wire(op, request_)
    assert refused.value.field == field and "Evolution" in refused.value.problem


def test_a_links_preview_fields_are_left_to_evolution() -> None:
    # send-link-as-text: no route takes a preview's title or image; Evolution makes the preview from the URL.
    literal = REQUESTS["send-link-as-text"]
    request_ = m.SendLink(phone="5511999999999", message="Our price list", linkUrl="https://example.com/prices",
                          image="https://example.com/p.png", title="Prices", linkDescription="This year's")
    assert _on_the_wire(ops.SEND_LINK, request_) == (literal["method"], literal["path"], {}, literal["body"])


def test_media_never_goes_as_a_data_url() -> None:
    _m, _p, _q, body = _on_the_wire(ops.SEND_IMAGE, m.SendImage(
        phone="5511999999999", image="data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="))
    # The literal base64 of requests.json's send-image-base64: raw, no `data:` prefix, a file name with its extension.
    assert body["media"] == REQUESTS["send-image-base64"]["body"]["media"]
    assert (body["mimetype"], body["fileName"].rsplit(".", 1)[-1]) == ("image/png", "png")


async def test_the_instance_name_is_in_the_path_and_the_key_in_apikey(http, gateway) -> None:
    gateway.reply("POST", "/message/sendText/office", 201, json_body=ANSWERS["send-text-created"]["body"])
    client = InstanceClient(http, InstanceCredentials(gateway.url, INSTANCE, API_KEY, ""), EVOLUTION)
    result = await client.request(ops.SEND_TEXT, m.SendText(phone="5511999999999", message="Hello from gateway-tui"))
    assert result.message_id == ANSWERS["send-text-created"]["body"]["key"]["id"]
    seen, literal = gateway.last, REQUESTS["send-text"]
    assert (seen.method, seen.raw_path) == (literal["method"], literal["path"])
    assert seen.headers["apikey"] == literal["headers"]["apikey"]
    assert "client-token" not in {name.lower() for name in seen.headers}


# -- answers --------------------------------------------------------------------------------------------------


def _read(name: str, op: Operation[Any, Any]) -> BaseModel:
    answer = ANSWERS[name]
    result: BaseModel = EVOLUTION.read_answer(op.result, answer["status"], json.dumps(answer["body"]), op.id.value)
    return result


@pytest.mark.parametrize("name", ["send-text-created", "send-image-created"])
def test_a_send_answers_its_message_id_under_key_id(name: str) -> None:
    result = _read(name, ops.SEND_TEXT)
    assert isinstance(result, m.SendResult) and result.message_id == ANSWERS[name]["body"]["key"]["id"]


@pytest.mark.parametrize(("name", "connected"), [
    ("connection-state-open", True), ("connection-state-connecting", False), ("connection-state-close", False),
    ("connection-state-while-evolution-starts", False)])
def test_the_connection_state_reads_as_the_status(name: str, connected: bool) -> None:
    status = _read(name, ops.STATUS)
    assert isinstance(status, c.InstanceStatus) and status.state.connected is connected


def test_a_state_not_yet_known_is_not_read_as_closed() -> None:
    status = _read("connection-state-while-evolution-starts", ops.STATUS)
    assert isinstance(status, c.InstanceStatus) and "not started" in (status.state.reason or "")


def test_the_qr_answers_its_text_and_its_image() -> None:
    body = ANSWERS["connect-qr"]["body"]
    text, image = _read("connect-qr", ops.QR_CODE), _read("connect-qr", ops.QR_CODE_IMAGE)
    assert isinstance(text, c.ZapiQr) and isinstance(image, c.ZapiQr)
    assert (text.value, image.value, image.is_image) == (body["code"], body["base64"], True)


def test_no_code_yet_is_an_empty_qr_to_ask_again() -> None:
    qr = _read("connect-no-code-yet", ops.QR_CODE_IMAGE)
    assert isinstance(qr, c.ZapiQr) and qr.value == ""


def test_the_pairing_code_and_its_absence() -> None:
    code = _read("connect-pairing-code", ops.PHONE_CODE)
    # Baileys' 8 characters ("K7QW2M9D" on the wire), shown as the phone shows them
    assert isinstance(code, c.ZapiPhoneCode) and code.code == "K7QW-2M9D"
    with pytest.raises(GatewayError, match="no pairing code yet"):
        _read("connect-counted-before-code", ops.PHONE_CODE)


@pytest.mark.parametrize(("name", "op"), [("connect-failed", ops.QR_CODE), ("restart-when-closed", ops.RESTART)])
def test_error_true_on_a_200_is_a_failure(name: str, op: Operation[Any, Any]) -> None:
    with pytest.raises(GatewayError, match=r"\[object Object\]") as failed:
        _read(name, op)
    assert failed.value.status == 200


def test_logout_reads_as_done() -> None:
    result = _read("logout-done", ops.DISCONNECT)
    assert isinstance(result, m.OperationResult) and result.ok


def test_participants_read_as_added_and_failed() -> None:
    result = _read("group-update-participant-created", ops.ADD_PARTICIPANT)
    assert isinstance(result, m.AddParticipantResult)
    assert (result.added, result.failed) == (["5511966665555"], ["5511955554444"])


def test_a_revoked_invite_reads_as_the_new_link() -> None:
    result = _read("group-invite-revoked", ops.REDEFINE_INVITATION_LINK)
    assert isinstance(result, m.InviteLink) and result.inviteLink == "https://chat.whatsapp.com/Hq2XbN7vRk4mT9sLd0PwYc"


def test_group_info_reads_as_the_groups_metadata() -> None:
    result = _read("group-info", ops.GROUP_METADATA)
    assert isinstance(result, m.GroupMetadata)
    assert (result.groupId, result.groupName) == ("120363041234567890@g.us", "Shop team")


def test_the_webhook_row_reads_as_the_instances_callbacks() -> None:
    result = _read("webhook-find", ops.INSTANCE_DATA)
    assert isinstance(result, c.ZapiInstanceData)
    url = ANSWERS["webhook-find"]["body"]["url"]
    assert (result.receivedCallbackUrl, result.messageStatusCallbackUrl, result.deliveryCallbackUrl) == (
        url, url, None)  # SEND_MESSAGE is not among its events
    never = _read("webhook-find-never-set", ops.INSTANCE_DATA)
    assert isinstance(never, c.ZapiInstanceData) and never.receivedCallbackUrl is None


def test_chats_read_from_the_bare_array() -> None:
    result = _read("find-chats", ops.LIST_CHATS)
    assert isinstance(result, m.ChatList) and result.items[0].phone == "5511999999999"


@pytest.mark.parametrize(("name", "said"), [
    ("send-text-missing-text", 'instance requires property "text"'),
    ("send-text-blank", "Text is required"),
    ("send-when-not-connected", "Connection Closed"),
    ("group-update-participant-bad-action", "action is not one of enum values"),
    ("unknown-instance", 'The "warehouse" instance does not exist'),
])
def test_the_error_envelope_says_evolutions_reason(name: str, said: str) -> None:
    answer = ANSWERS[name]
    error = error_for_status(answer["status"], json.dumps(answer["body"]))
    assert said in str(error)
