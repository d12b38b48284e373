"""`gateway-tui sandbox --accounts N --instance-dialect evolution`: one Evolution server with N instances, listed by
`GET /instance/fetchInstances` with the server's global key (the sandbox's admin token) and each opened by its own
instance key. Shapes checked against this folder's literal fixtures (fetch_instances.json, answers.json: written
by hand from Evolution 2.3.6's instance.controller.ts fetchInstances, monitor.service.ts instanceInfo and
auth.guard.ts apikey)."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from tui.gateways.sandbox import SandboxFleet
from tui.sandbox.dialect import InstanceDialect

HERE = Path(__file__).parent
GLOBAL_KEY = "global-key-for-tests"


def _entries(name: str) -> dict[str, dict]:
    return {entry["name"]: entry for entry in json.loads((HERE / name).read_text())["entries"]}


ROW_KEYS = set(_entries("fetch_instances.json")["v2-global-key-three-instances"]["body"][0])
UNAUTHORIZED = _entries("answers.json")["missing-or-wrong-apikey"]


@pytest.fixture
async def fleet():
    gateway = SandboxFleet(accounts=3, admin_token=GLOBAL_KEY, client_token="unused-client-token",
                           instance_dialect=InstanceDialect.EVOLUTION, delivery_delay=0.0)
    await gateway.start()
    yield gateway
    await gateway.stop()


async def test_the_global_key_lists_every_instance_in_one_call(fleet) -> None:
    async with httpx.AsyncClient(base_url=fleet.url, timeout=10) as http:
        answer = await http.get("/instance/fetchInstances", headers={"apikey": GLOBAL_KEY})
        assert answer.status_code == 200
        rows = answer.json()
        assert isinstance(rows, list) and len(rows) == 3  # v2: a bare array, one row per instance
        assert all(set(row) == ROW_KEYS for row in rows)
        assert [row["name"] for row in rows] == ["sandbox-01", "sandbox-02", "sandbox-03"]
        assert all(row["connectionStatus"] == "open" for row in rows)
        assert [row["ownerJid"] for row in rows] == [
            "5511912345678@s.whatsapp.net", "5511912345679@s.whatsapp.net", "5511912345680@s.whatsapp.net"]
        tokens = [row["token"] for row in rows]
        assert len(set(tokens)) == 3 and GLOBAL_KEY not in tokens  # each instance's own key, never the global one

        # each instance opens with its own key, and only its own
        second, first = rows[1], rows[0]
        state = await http.get(f"/instance/connectionState/{second['name']}", headers={"apikey": second["token"]})
        assert state.json() == {"instance": {"instanceName": "sandbox-02", "state": "open"}}
        other = await http.get(f"/instance/connectionState/{second['name']}", headers={"apikey": first["token"]})
        assert (other.status_code, other.json()) == (401, UNAUTHORIZED["body"])

        # an instance key lists its own row only; ?instanceName= narrows the global list
        own = (await http.get("/instance/fetchInstances", headers={"apikey": second["token"]})).json()
        assert [row["name"] for row in own] == ["sandbox-02"]
        named = (await http.get("/instance/fetchInstances", params={"instanceName": "sandbox-03"},
                                headers={"apikey": GLOBAL_KEY})).json()
        assert [row["name"] for row in named] == ["sandbox-03"]


async def test_a_wrong_or_missing_key_is_evolutions_401(fleet) -> None:
    async with httpx.AsyncClient(base_url=fleet.url, timeout=10) as http:
        for headers in ({"apikey": "not-the-key"}, {}):
            answer = await http.get("/instance/fetchInstances", headers=headers)
            assert (answer.status_code, answer.json()) == (401, UNAUTHORIZED["body"])
