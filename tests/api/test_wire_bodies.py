"""Every client method over real loopback HTTP: method, raw path, headers and the body as the server saw it.

Expected bodies are literal JSON written from the spec (§4), never produced by the models, so a model bug
cannot hide on both sides of the comparison.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.api.conftest import CLIENT_TOKEN, SESSION_TOKEN
from tests.api.spec_cases import INSTANCE_CASES, SESSION_CASES, Case
from tui.api.models import SendText


async def _drive(case: Case, client: Any, gateway) -> Any:
    status, body = case.reply
    gateway.reply(case.method, case.path, status, json_body=body)
    result = await case.call(client)
    assert len(gateway.requests) == 1
    seen = gateway.last
    assert (seen.method, seen.raw_path) == (case.method, case.path)
    assert seen.headers["Content-Type"] == "application/json"  # Z-API answers 415 without it, even on GETs
    if case.body is None:
        assert seen.body == b""
    else:
        assert json.loads(seen.body.decode("utf-8")) == case.body
    assert seen.query == (case.query or {})
    assert case.check(result), result
    return seen


@pytest.mark.parametrize("case", INSTANCE_CASES, ids=lambda case: case.name)
async def test_instance_operation_on_the_wire(case: Case, instance, gateway) -> None:
    seen = await _drive(case, instance, gateway)
    assert seen.headers["Client-Token"] == CLIENT_TOKEN
    assert "token" not in {name.lower() for name in seen.headers}


@pytest.mark.parametrize("case", SESSION_CASES, ids=lambda case: case.name)
async def test_session_operation_on_the_wire(case: Case, session, gateway) -> None:
    seen = await _drive(case, session, gateway)
    assert seen.headers["token"] == SESSION_TOKEN
    assert "client-token" not in {name.lower() for name in seen.headers}


def test_every_client_method_has_a_wire_case() -> None:
    from tui.api.client import InstanceClient, SessionClient

    def public_methods(cls: type) -> set[str]:
        named = {name for name in vars(cls) if not name.startswith("_") and callable(getattr(cls, name))}
        return named - {"request"}  # the generic path every named method goes through

    covered = {case.name for case in INSTANCE_CASES + SESSION_CASES}
    covered |= {name.rsplit("_", 1)[0] for name in covered}  # e.g. set_proxy_disable covers set_proxy
    assert public_methods(InstanceClient) <= covered
    assert public_methods(SessionClient) <= covered
    # operations 1–16 + send-text, send-button-list, forward, status + Z-API's three lists + its five pairing calls
    # + issue 24's reads and setting of the callback URLs (GET /me, PUT /update-every-webhooks) + four media sends
    assert len(public_methods(InstanceClient)) == 34
    # operations 17–24 + WuzAPI's two lists + its six pairing calls + issue 24's GET /webhook + four media sends
    assert len(public_methods(SessionClient)) == 21


async def test_the_body_is_utf8_json_not_ascii_escaped(instance, gateway) -> None:
    gateway.reply("POST", "/send-text", 202, json_body={"messageId": "m"})
    await instance.send_text(SendText(phone="5511999999999", message="Olá 👋"))
    assert "Olá 👋".encode() in gateway.last.body


async def test_instance_id_is_url_quoted_in_the_path(http, gateway) -> None:
    from tui.api.client import InstanceCredentials
    from tui.gateways.clients import InstanceClient

    client = InstanceClient(http, InstanceCredentials(gateway.url + "/", "my inst/1", "tok/en?x", CLIENT_TOKEN))
    gateway.reply("GET", "/status", json_body={"connected": False})
    await client.status()
    assert gateway.last.raw_path == "/instances/my%20inst%2F1/token/tok%2Fen%3Fx/status"


async def test_one_connection_is_reused_across_calls(instance, gateway) -> None:
    gateway.reply("GET", "/status", json_body={"connected": True})
    for _ in range(3):
        await instance.status()
    assert len({r.peer for r in gateway.requests}) == 1
