"""Every operation x dialect over real loopback HTTP through the generic `request(op, model)` path, compared with the
literal JSON of `dialect_cases`; plus what a dialect refuses (nothing sent) and WuzAPI's whole-webhook update."""

from __future__ import annotations

import json

import pytest

from tests.api.conftest import CLIENT_TOKEN, INSTANCE_TOKEN, SESSION_TOKEN
from tests.api.dialect_cases import CASES, WireCase
from tui.api import models as m
from tui.api.client import InstanceCredentials, SessionCredentials
from tui.gateways.clients import InstanceClient, SessionClient
from tui.api.errors import NotFound
from tui.api.operations import (
    OPERATIONS,
    DialectRefusal,
    Family,
    InstanceDialect,
    OperationId,
    SessionDialect,
)

P = f"/instances/inst-1/token/{INSTANCE_TOKEN}"


def _client(case: WireCase, http, gateway):
    if OPERATIONS[case.op].family is Family.INSTANCE:
        credentials = InstanceCredentials(gateway.url, "inst-1", INSTANCE_TOKEN, CLIENT_TOKEN)
        # Evolution's routes hang off the server's root, the instance's name inside each case's path.
        prefix = "" if case.dialect is InstanceDialect.EVOLUTION else P
        return InstanceClient(http, credentials, InstanceDialect(case.dialect)), prefix
    return SessionClient(http, SessionCredentials(gateway.url, SESSION_TOKEN), SessionDialect(case.dialect)), ""


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.id)
async def test_operation_in_dialect_on_the_wire(case: WireCase, http, gateway) -> None:
    client, prefix = _client(case, http, gateway)
    if case.refused is not None:
        with pytest.raises(DialectRefusal) as refused:
            await client.request(OPERATIONS[case.op], case.request())
        assert refused.value.field == case.refused
        assert ("Evolution" if case.dialect is InstanceDialect.EVOLUTION else "spec dialect") in refused.value.message
        assert gateway.requests == []
        return
    status, reply = case.reply
    gateway.reply(case.method, prefix + case.path, status, json_body=reply)
    result = await client.request(OPERATIONS[case.op], case.request())
    assert len(gateway.requests) == 1
    seen = gateway.last
    assert (seen.method, seen.raw_path) == (case.method, prefix + case.path)
    assert seen.headers["Content-Type"] == "application/json"
    if case.body is None:
        assert seen.body == b""
    else:
        assert json.loads(seen.body) == case.body
    assert seen.query == (case.query or {})
    assert case.check(result), result


def test_every_operation_has_a_literal_case_in_every_dialect() -> None:
    covered = {(case.op, case.dialect) for case in CASES}
    missing = [f"{op.id}[{dialect}]" for op in OPERATIONS.values() for dialect in op.dialects if (op.id, dialect) not in covered]
    assert not missing, f"no literal wire case for {missing}"


# -- what Z-API cannot say is refused before anything is sent -------------------------------------------------


@pytest.mark.parametrize(
    ("op_id", "request_", "field", "words"),
    [
        (OperationId.SEND_LOCATION,
         m.SendLocation(phone="5511999999999", title="t", address="a", lat=1, lng=2, delayMessage=1500),
         "delayMessage", "whole seconds from 1 to 15"),
        (OperationId.SEND_STICKER, m.SendSticker(phone="5511999999999", sticker="https://e.com/s.webp", delayMessage=16000),
         "delayMessage", "whole seconds from 1 to 15"),
        (OperationId.SEND_STICKER, m.SendSticker(phone="5511999999999", sticker="https://e.com/s.webp", delayMessage=0),
         "delayMessage", "whole seconds from 1 to 15"),
        (OperationId.SEND_LINK, m.SendLink(phone="5511999999999", message="x https://e.com", linkUrl="https://e.com",
                                           title="T", linkDescription="D"),
         "image", "requires image, title and linkDescription"),
        (OperationId.SEND_LINK, m.SendLink(phone="5511999999999", message="x https://e.com", linkUrl="https://e.com",
                                           image="https://e.com/i.png", title="T"),
         "linkDescription", "requires image, title and linkDescription"),
        (OperationId.PRIVACY_GROUP_ADD, m.PrivacyGroupAdd(type="NONE"), "type", "cannot be NONE"),
        (OperationId.REDEFINE_INVITATION_LINK,
         m.RedefineInvitationLink(communityId="1203", groupsPhones=["120363019502650977-group"]),
         "groupsPhones", "must be empty"),
    ],
)
async def test_zapi_refuses_what_it_cannot_say_and_sends_nothing(op_id, request_, field, words, http, gateway) -> None:
    client = InstanceClient(http, InstanceCredentials(gateway.url, "inst-1", INSTANCE_TOKEN, CLIENT_TOKEN), InstanceDialect.ZAPI)
    with pytest.raises(DialectRefusal) as refused:
        await client.request(OPERATIONS[op_id], request_)
    assert refused.value.field == field
    assert words in refused.value.message and field in refused.value.message
    assert gateway.requests == []


# -- WuzAPI: PUT /webhook zeroes what it is not sent, so a partial update sends the merged whole ----------------


async def test_wuzapi_partial_webhook_update_reads_then_sends_the_whole(http, gateway) -> None:
    client = SessionClient(http, SessionCredentials(gateway.url, SESSION_TOKEN), SessionDialect.WUZAPI)
    gateway.reply("GET", "/webhook", json_body={"code": 200, "data": {
        "webhook": "https://hooks.example.com/s", "subscribe": ["Message", "ReadReceipt"]}, "success": True})
    gateway.reply("PUT", "/webhook", json_body={"code": 200, "data": {
        "webhook": "https://hooks.example.com/new", "events": ["Message", "ReadReceipt"], "active": True},
        "success": True})
    result = await client.update_webhook(m.WebhookUpdate(webhook="https://hooks.example.com/new"))
    assert [(r.method, r.raw_path) for r in gateway.requests] == [("GET", "/webhook"), ("PUT", "/webhook")]
    assert gateway.requests[0].body == b""
    assert json.loads(gateway.requests[1].body) == {
        "webhook": "https://hooks.example.com/new", "events": ["Message", "ReadReceipt"], "active": True}
    assert result.webhook == "https://hooks.example.com/new"


async def test_wuzapi_no_events_reads_as_one_empty_string_and_stays_empty(http, gateway) -> None:
    client = SessionClient(http, SessionCredentials(gateway.url, SESSION_TOKEN), SessionDialect.WUZAPI)
    gateway.reply("GET", "/webhook", json_body={"webhook": "https://hooks.example.com/s", "subscribe": [""]})
    gateway.reply("PUT", "/webhook", json_body={"webhook": "https://hooks.example.com/s", "events": None, "active": False})
    await client.update_webhook(m.WebhookUpdate(active=False))
    assert json.loads(gateway.requests[1].body) == {"webhook": "https://hooks.example.com/s", "events": [], "active": False}


async def test_wuzapi_partial_update_is_refused_when_the_current_webhook_cannot_be_read(http, gateway) -> None:
    client = SessionClient(http, SessionCredentials(gateway.url, SESSION_TOKEN), SessionDialect.WUZAPI)
    gateway.reply("GET", "/webhook", 404, text="404 page not found", headers={"Content-Type": "text/plain"})
    with pytest.raises(NotFound) as refused:
        await client.update_webhook(m.WebhookUpdate(events=["Message"]))
    assert "Not sent" in refused.value.message and "GET /webhook" in refused.value.message
    assert [(r.method, r.raw_path) for r in gateway.requests] == [("GET", "/webhook")]


async def test_spec_dialect_sends_a_partial_webhook_update_as_is(http, gateway) -> None:
    client = SessionClient(http, SessionCredentials(gateway.url, SESSION_TOKEN))
    gateway.reply("PUT", "/webhook", json_body={"code": 200, "data": {"webhook": ""}, "success": True})
    await client.update_webhook(m.WebhookUpdate(events=["Message"]))
    assert [(r.method, json.loads(r.body)) for r in gateway.requests] == [("PUT", {"events": ["Message"]})]


async def test_wuzapi_update_without_any_url_is_refused_before_the_put(http, gateway) -> None:
    client = SessionClient(http, SessionCredentials(gateway.url, SESSION_TOKEN), SessionDialect.WUZAPI)
    gateway.reply("GET", "/webhook", json_body={"webhook": "", "subscribe": [""]})
    with pytest.raises(DialectRefusal) as refused:
        await client.update_webhook(m.WebhookUpdate(events=["Message"]))
    assert refused.value.field == "webhook" and "no webhook URL yet" in refused.value.message
    assert [(r.method, r.raw_path) for r in gateway.requests] == [("GET", "/webhook")]
