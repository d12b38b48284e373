"""An Evolution profile is one gateway (issue 33): the operations the spec puts in the session family (groups, proxy,
webhook, contacts) go through the instance's own endpoint with its `apikey`, written and read as Evolution 2.3.6
does. Checked against the LITERAL requests and answers of this folder (requests.json, answers.json: written by hand
from Evolution's routers, schemas and services, each with its source) and, where those have no entry, literal JSON
below naming the file it comes from. What Evolution cannot say is refused before anything is sent."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tui.api import models as m
from tui.api import operations as ops
from tui.api.client import SessionClient
from tui.api.credentials import InstanceCredentials
from tui.api.dialects import InstanceDialect
from tui.api.operations import DialectRefusal, Family, Operation, OperationId
from tui.core.accounts.account import sandbox_profile
from tui.gateways import adapter_for

HERE = Path(__file__).parent
INSTANCE = "office"
API_KEY = "B6D711FC-DE4D-4FD5-9365-44120E713976"
EVOLUTION = adapter_for(InstanceDialect.EVOLUTION)


def _entries(name: str) -> dict[str, dict[str, Any]]:
    return {entry["name"]: entry for entry in json.loads((HERE / name).read_text())["entries"]}


REQUESTS = _entries("requests.json")
ANSWERS = _entries("answers.json")

# src/api/integrations/channel/whatsapp/whatsapp.baileys.service.ts fetchAllGroups (getParticipants=false: the row
# without `participants`; pictureUrl from profilePicture, null without one).
FETCH_ALL_GROUPS = """[{"id": "120363041234567890@g.us", "subject": "Shop team",
  "subjectOwner": "5511911112222@s.whatsapp.net", "subjectTime": 1765098800, "pictureUrl": null, "size": 3,
  "creation": 1765098800, "owner": "5511911112222@s.whatsapp.net", "desc": "Shifts and deliveries",
  "descId": "3EB0F00DCAFE1234567890", "restrict": false, "announce": true, "isCommunity": false,
  "isCommunityAnnounce": false}]"""

# src/api/services/proxy.service.ts create: `{ proxy: { ...instance, proxy: data } }`, the password as sent.
PROXY_SET = """{"proxy": {"instanceName": "office", "proxy": {"enabled": true, "host": "proxy.example.net",
  "port": "3128", "protocol": "http", "username": "shop", "password": "s3cret"}}}"""


def _on_the_wire(op: Operation[Any, Any], request: m.Request) -> tuple[str, str, dict[str, str], Any]:
    wire = EVOLUTION.wire(op, request)
    filled = EVOLUTION.instance_endpoint(InstanceCredentials("https://evo.example.com", INSTANCE, API_KEY, ""))
    path = "/" + "/".join(filled.placeholders.get(part[1:-1], part) if part.startswith("{") else part
                          for part in wire.path)
    return wire.method or op.method, path, wire.query, wire.body


# The card the fixture's fields come from (requests.json send-contact): Evolution writes its own card from them.
MARIA = ("BEGIN:VCARD\nVERSION:3.0\nN:Souza;Maria;;;\nFN:Maria Souza\nORG:Souza Ltda\n"
         "TEL;TYPE=CELL;WAID=5511988887777:+55 11 98888-7777\nEMAIL:maria@example.com\nURL:https://example.com\n"
         "END:VCARD")

# (fixture name, operation, request, fixture body keys our request model cannot carry)
CASES: list[tuple[str, Operation[Any, Any], m.Request, tuple[str, ...]]] = [
    ("group-create", ops.GROUP_CREATE, m.GroupCreate(name="Shop team", participants=["5511988887777", "5511977776666"]),
     ("description",)),
    ("group-list", ops.GROUP_LIST, m.NoBody(), ()),
    ("send-contact", ops.SEND_CONTACT, m.ContactCard(Phone="5511999999999", Name="Maria Souza", Vcard=MARIA), ()),
    ("webhook-read", ops.WEBHOOK_READ, m.NoBody(), ()),
    ("proxy-set", ops.PROXY, m.ProxyConfig(enable=True, proxy_url="http://shop:s3cret@proxy.example.net:3128"), ()),
    ("proxy-off", ops.PROXY, m.ProxyConfig(enable=False), ()),
]


@pytest.mark.parametrize(("name", "op", "request_", "unsaid"), CASES, ids=[case[0] for case in CASES])
def test_each_session_operation_is_written_as_evolution_takes_it(name: str, op: Operation[Any, Any],
                                                                 request_: m.Request, unsaid: tuple[str, ...]) -> None:
    literal = REQUESTS[name]
    body = literal["body"]
    if body is not None:
        body = {key: value for key, value in body.items() if key not in unsaid}
    assert _on_the_wire(op, request_) == (literal["method"], literal["path"], literal.get("query", {}), body)


def test_group_info_asks_findgroupinfos_for_the_group() -> None:
    literal = REQUESTS["group-info"]  # the same route and query as group-metadata's
    request_ = m.GroupInfoRequest(GroupJID="120363041234567890@g.us")
    assert _on_the_wire(ops.GROUP_INFO, request_) == (literal["method"], literal["path"], literal["query"], None)


def test_the_users_contacts_are_every_contact_findcontacts_keeps() -> None:
    # src/api/services/channel.service.ts fetchContacts: no `offset` (take) and no `page`: every row of the instance.
    assert _on_the_wire(ops.USER_CONTACTS, m.NoBody()) == ("POST", "/chat/findContacts/office", {}, {"where": {}})


def _read(op: Operation[Any, Any], status: int, body: str) -> Any:
    return EVOLUTION.read_answer(op.result, status, body, op.id.value)


def test_a_created_group_reads_as_the_groups_info() -> None:
    info = _read(ops.GROUP_CREATE, 201, json.dumps(ANSWERS["group-create-created"]["body"]))
    assert (info.JID, info.Name, info.OwnerJID, info.Topic) == (
        "120363041234567890@g.us", "Shop team", "5511911112222@s.whatsapp.net", "Shifts and deliveries")
    owner = info.Participants[0]
    assert (owner.JID, owner.LID, owner.PhoneNumber, owner.IsAdmin, owner.IsSuperAdmin) == (
        "98765432109876@lid", "98765432109876@lid", "5511911112222@s.whatsapp.net", True, True)
    assert [p.role for p in info.Participants] == ["super admin", "member", "member"]


def test_group_info_reads_findgroupinfos_row() -> None:
    info = _read(ops.GROUP_INFO, 200, json.dumps(ANSWERS["group-info"]["body"]))
    assert (info.JID, info.Name, len(info.Participants)) == ("120363041234567890@g.us", "Shop team", 2)


def test_the_group_list_reads_the_bare_array() -> None:
    groups = _read(ops.GROUP_LIST, 200, FETCH_ALL_GROUPS)
    [group] = groups.items
    assert (group.JID, group.Name, group.IsAnnounce, group.Participants) == (
        "120363041234567890@g.us", "Shop team", True, [])


# The same row asked with getParticipants=true (what group-list asks): fetchAllGroups adds `participants` as Baileys'
# groupFetchAllParticipating gives them (src/Socket/groups.ts extractGroupMetadata: id, phoneNumber or lid, admin).
FETCH_ALL_GROUPS_WITH_PARTICIPANTS = """[{"id": "120363041234567890@g.us", "subject": "Shop team",
  "subjectOwner": "5511911112222@s.whatsapp.net", "subjectTime": 1765098800, "pictureUrl": null, "size": 2,
  "creation": 1765098800, "owner": "5511911112222@s.whatsapp.net", "desc": "Shifts and deliveries",
  "descId": "3EB0F00DCAFE1234567890", "restrict": false, "announce": true, "isCommunity": false,
  "isCommunityAnnounce": false, "participants": [
    {"id": "98765432109876@lid", "phoneNumber": "5511911112222@s.whatsapp.net", "admin": "superadmin"},
    {"id": "5511988887777@s.whatsapp.net", "admin": null}]}]"""


def test_the_group_list_names_each_group_s_members() -> None:
    [group] = _read(ops.GROUP_LIST, 200, FETCH_ALL_GROUPS_WITH_PARTICIPANTS).items
    assert [(p.JID, p.PhoneNumber, p.IsSuperAdmin) for p in group.Participants] == [
        ("98765432109876@lid", "5511911112222@s.whatsapp.net", True), ("5511988887777@s.whatsapp.net", "", False)]


def test_the_webhook_row_reads_as_the_session_webhook() -> None:
    config = _read(ops.WEBHOOK_READ, 200, json.dumps(ANSWERS["webhook-find"]["body"]))
    assert (config.webhook, config.events, config.active) == (
        "https://listener.example.com/evolution", ["MESSAGES_UPSERT", "MESSAGES_UPDATE", "CONNECTION_UPDATE"], True)
    never = _read(ops.WEBHOOK_READ, 200, json.dumps(ANSWERS["webhook-find-never-set"]["body"]))
    assert (never.webhook, never.active) == ("", False)


@pytest.mark.parametrize("answer", [PROXY_SET, json.dumps(ANSWERS["proxy-set-created"]["body"])],
                         ids=["proxy.service.ts", "the stored row"])
def test_the_proxy_answer_never_repeats_its_password(answer: str) -> None:
    details = _read(ops.PROXY, 201, answer)
    assert "s3cret" not in details.model_dump_json()
    assert details.Details == "proxy set: http://proxy.example.net:3128"


@pytest.mark.parametrize(("op", "request_", "field", "instead"), [
    (ops.SESSION_STATUS, m.NoBody(), "session", "status"),
    (ops.SESSION_CONNECT, m.NoBody(), "session", "qr-code"),
    (ops.SESSION_QR, m.NoBody(), "session", "qr-code"),
    (ops.SESSION_LOGOUT, m.NoBody(), "session", "disconnect"),
    (ops.MESSAGE_HISTORY, None, "chat_jid", "chat-messages"),
    (ops.CHAT_SEND_IMAGE, None, "Image", "send-image"),
    (ops.WEBHOOK, m.WebhookUpdate(webhook="https://listener.example.com/evolution"), "webhook",
     "update-every-webhooks"),
])
def test_what_evolution_cannot_say_in_the_session_family_is_refused_naming_why(
        op: Operation[Any, Any], request_: m.Request | None, field: str, instead: str) -> None:
    refusal = EVOLUTION.refusal(op.id)
    assert refusal is not None, op.id
    assert refusal.field == field and "Evolution" in refusal.problem and instead in refusal.problem


def test_every_session_operation_is_written_or_refused() -> None:
    # None goes out in the spec's session shapes to an Evolution server, which has no such routes.
    routed = {OperationId.GROUP_CREATE, OperationId.GROUP_INFO, OperationId.GROUP_LIST, OperationId.PROXY,
              OperationId.WEBHOOK_READ, OperationId.USER_CONTACTS, OperationId.SEND_CONTACT}
    for op in ops.TABLE:
        if op.family is Family.SESSION and op.id not in routed:
            assert EVOLUTION.refusal(op.id) is not None, op.id


async def test_a_session_operation_goes_to_the_instance_endpoint_with_its_apikey(http, gateway) -> None:
    gateway.reply("POST", "/group/create/office", 201, json_body=ANSWERS["group-create-created"]["body"])
    client = SessionClient(http, InstanceCredentials(gateway.url, INSTANCE, API_KEY, ""), EVOLUTION)
    info = await client.create_group(m.GroupCreate(name="Shop team", participants=["5511988887777"]))
    assert info.JID == "120363041234567890@g.us"
    seen = gateway.last
    assert seen.headers["apikey"] == API_KEY and "token" not in seen.headers
    assert json.loads(seen.body) == {"subject": "Shop team", "participants": ["5511988887777"]}


def test_the_evolution_sandbox_profile_is_one_family_that_serves_both() -> None:
    profile = sandbox_profile("http://127.0.0.1:9", ("evolution", "spec"))
    assert profile.families == (Family.INSTANCE,)
    assert profile.serves(Family.SESSION) and profile.session is None
    zapi = sandbox_profile("http://127.0.0.1:9", ("zapi", "wuzapi"))
    assert zapi.families == (Family.INSTANCE, Family.SESSION)


def test_refusals_are_said_before_sending() -> None:
    with pytest.raises(DialectRefusal):
        EVOLUTION.wire(ops.SESSION_STATUS, m.NoBody())


async def test_the_proxy_password_reaches_no_log(http, gateway, request_log) -> None:
    # Evolution takes the password as a field of its own and echoes it (proxy.service.ts create): masked both ways.
    gateway.reply("POST", "/proxy/set/office", 201, text=PROXY_SET)
    client = SessionClient(http, InstanceCredentials(gateway.url, INSTANCE, API_KEY, ""), EVOLUTION)
    await client.set_proxy(m.ProxyConfig(enable=True, proxy_url="http://shop:s3cret@proxy.example.net:3128"))
    assert json.loads(gateway.last.body)["password"] == "s3cret"
    logged = [exchange.request_body or "" for exchange in request_log] + [
        exchange.response_body or "" for exchange in request_log]
    assert logged and not any("s3cret" in text for text in logged)


@pytest.mark.parametrize(("card", "said"), [
    (MARIA.replace("ORG:Souza Ltda\n", "TITLE:Owner\n"), "has TITLE"),
    (MARIA.replace("END:VCARD", "TEL;TYPE=WORK:+55 11 3333-4444\nEND:VCARD"), "a second TEL"),
    (MARIA.replace("TEL;TYPE=CELL;WAID=5511988887777:+55 11 98888-7777\n", ""), "names no phone"),
    (MARIA.replace("+55 11 98888-7777", "+55 11"), "shorter than Evolution API takes"),
    ("not a card", "is not a vCard"),
], ids=["title", "two phones", "no phone", "short phone", "not a card"])
def test_a_card_evolution_would_change_is_refused_before_sending(card: str, said: str) -> None:
    # Evolution writes the card from one name, one phone, organization, email and url: what else a card says would be
    # lost on the way, so nothing is sent and the field says why.
    from tui.api.operations import DialectRefusal

    try:
        request_ = m.ContactCard(Phone="5511999999999", Name="Maria Souza", Vcard=card)
    except ValueError:
        assert said == "is not a vCard"  # our own model already refuses it
        return
    with pytest.raises(DialectRefusal) as refused:
        EVOLUTION.wire(ops.SEND_CONTACT, request_)
    assert refused.value.field == "Vcard" and said in refused.value.problem


def test_a_sent_contact_reads_as_the_session_family_s_answer() -> None:
    # whatsapp.baileys.service.ts sendMessageWithTyping: the stored message, 201 (as every send; key.id its id).
    answer = {"key": {"remoteJid": "5511999999999@s.whatsapp.net", "fromMe": True, "id": "3EB0C767D26A1D5E9F8B"},
              "pushName": "", "status": "PENDING", "message": {"contactMessage": {"displayName": "Maria Souza"}},
              "messageType": "contactMessage", "messageTimestamp": 1765098800, "instanceId": "a1b2", "source": "web"}
    sent = _read(ops.SEND_CONTACT, 201, json.dumps(answer))
    assert (sent.Id, sent.Details) == ("3EB0C767D26A1D5E9F8B", "Sent")
