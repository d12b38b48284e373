"""What a third gateway needs from the interface, shown with a toy adapter written here (no gateway of ours): its
own method and path for an operation (the instance name inside the path, as Evolution API's
`POST /message/sendText/{instance}`), its own authentication header instead of Client-Token, its own body, all
and its own answer shape (the message id under `key.id`), without the client asking which gateway it is."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TypeVar

from pydantic import BaseModel

from tui.api import models as m
from tui.api import operations as ops
from tui.api.adapter import Endpoint, FamilyAdapter, WireForms
from tui.api.answers import decode_success
from tui.api.client import InstanceClient
from tui.api.credentials import InstanceCredentials, SessionCredentials
from tui.api.dialects import Family, InstanceDialect
from tui.api.operations import Body

API_KEY = "toy-apikey-SECRET-9f2"
Res = TypeVar("Res", bound=BaseModel)


def _read(model: type[Res], status: int, text: str, operation: str) -> Res:
    """The toy's sends answer `{"key": {"id": …}}` (Evolution's shape): its message id, read by its own reader."""
    body = json.loads(text)
    if isinstance(body, dict) and isinstance(body.get("key"), dict):
        text = json.dumps({"messageId": body["key"]["id"]})
    return decode_success(model, status, text, operation)


def _send_text(request: m.SendText) -> Body:
    return {"number": request.phone, "text": request.message}


@dataclass(frozen=True)
class ToyAdapter(FamilyAdapter):
    def instance_endpoint(self, credentials: InstanceCredentials) -> Endpoint:
        url = credentials.base_url.rstrip("/")
        return Endpoint(url=url, shown_url=url,
                        headers={"apikey": credentials.instance_token, "Content-Type": "application/json"},
                        placeholders={"instance": credentials.instance_id})

    def session_endpoint(self, credentials: SessionCredentials) -> Endpoint:
        raise NotImplementedError


def _toy() -> ToyAdapter:
    forms = WireForms("Toy")
    forms.route(ops.SEND_TEXT, "POST", "message/sendText/{instance}", _send_text)
    forms.route(ops.STATUS, "GET", "instance/connectionState/{instance}")
    return ToyAdapter(name="Toy", dialects={Family.INSTANCE: InstanceDialect.SPEC}, forms=forms, read_answer=_read)


async def test_an_operation_goes_on_the_gateways_own_route_with_its_own_header(http, gateway) -> None:
    gateway.reply("POST", "/message/sendText/my%20inst", 201, json_body={"key": {"id": "3EB0TOY"}})
    client = InstanceClient(http, InstanceCredentials(gateway.url, "my inst", API_KEY, "unused"), _toy())
    result = await client.request(ops.SEND_TEXT, m.SendText(phone="5511999999999", message="hi"))
    assert result.message_id == "3EB0TOY"
    seen = gateway.last
    assert (seen.method, seen.raw_path) == ("POST", "/message/sendText/my%20inst")
    assert seen.headers["apikey"] == API_KEY and "client-token" not in {name.lower() for name in seen.headers}
    assert json.loads(seen.body) == {"number": "5511999999999", "text": "hi"}


async def test_a_read_on_its_own_route_sends_no_body(http, gateway) -> None:
    gateway.reply("GET", "/instance/connectionState/inst", 200, json_body={"connected": True})
    client = InstanceClient(http, InstanceCredentials(gateway.url, "inst", API_KEY, "unused"), _toy())
    await client.request(ops.STATUS, m.NoBody())
    assert (gateway.last.method, gateway.last.raw_path, gateway.last.body) == (
        "GET", "/instance/connectionState/inst", b"")
