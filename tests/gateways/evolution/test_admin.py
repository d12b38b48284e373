"""Evolution's instance list with the global key (tui.gateways.evolution.admin), read from the LITERAL answers of
fetch_instances.json (written by hand from instance.controller.ts fetchInstances and monitor.service.ts
instanceInfo at Evolution 2.3.6; v1 from branch v1.8), and the key sent as Evolution's `apikey` header."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from tui.api.admin import AdminCredentials
from tui.api.errors import GatewayError
from tui.api.gateway_http import GatewayHttp
from tui.gateways.evolution.admin import EvolutionAdminClient

HERE = Path(__file__).parent
GLOBAL_KEY = "global-key-for-tests"
ENTRIES = {entry["name"]: entry for entry in json.loads((HERE / "fetch_instances.json").read_text())["entries"]}
UNAUTHORIZED = {entry["name"]: entry for entry in json.loads((HERE / "answers.json").read_text())["entries"]}[
    "missing-or-wrong-apikey"]


async def _fetched(status: int, body: object, seen: list[httpx.Request]):
    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(status, json=body)

    async with GatewayHttp(transport=httpx.MockTransport(answer)) as http:
        return await EvolutionAdminClient(http, AdminCredentials("http://evolution.example:8080/", GLOBAL_KEY)
                                          ).fetch_instances()


async def test_v2_rows_give_each_instance_its_name_key_state_and_number() -> None:
    seen: list[httpx.Request] = []
    entry = ENTRIES["v2-global-key-three-instances"]
    rows = await _fetched(entry["status"], entry["body"], seen)
    assert [(row.name, row.connectionStatus, row.connected, row.number) for row in rows] == [
        ("office", "open", True, "5511911112222"), ("warehouse", "connecting", False, ""),
        ("old-number", "close", False, "5511955556666")]  # a closed row keeps its last owner
    assert rows[0].token == "B6D711FC-DE4D-4FD5-9365-44120E713976"
    assert "B6D711FC" not in repr(rows[0])  # the instance key never in a repr
    (request,) = seen
    assert (request.method, str(request.url)) == ("GET", "http://evolution.example:8080/instance/fetchInstances")
    assert request.headers["apikey"] == GLOBAL_KEY and "authorization" not in request.headers


async def test_v1_rows_are_read_and_a_hidden_key_is_empty() -> None:
    rows = await _fetched(200, ENTRIES["v1-list"]["body"], [])
    assert rows[0].name == "office" and rows[0].number == "5511911112222" and rows[0].token == ""
    exposed = await _fetched(200, ENTRIES["v1-list-exposed"]["body"], [])
    assert exposed[0].token
    assert [row.name for row in await _fetched(200, ENTRIES["v1-single-by-name"]["body"], [])] == ["office"]
    assert await _fetched(200, ENTRIES["v2-no-instances"]["body"], []) == []


async def test_a_wrong_global_key_is_refused_in_evolutions_words() -> None:
    with pytest.raises(GatewayError) as refused:
        await _fetched(UNAUTHORIZED["status"], UNAUTHORIZED["body"], [])
    assert "401" in refused.value.message and GLOBAL_KEY not in refused.value.message
