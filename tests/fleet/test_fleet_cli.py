"""`gateway-tui fleet [--json]` as a user runs it: a real process, three profiles on three sandbox gateways (one of
them logged out), secrets in the private file. The JSON's keys and values are written here by hand."""

from __future__ import annotations

import json

import httpx

from tests.fleet.fleet_harness import sandbox_fleet
from tests.harness import run_gateway_tui


def _row(profile: str, number: str, connected: bool) -> dict[str, object]:
    """One profile's object as `fleet --json` prints it for a sandbox account nobody checked or read yet."""
    return {"profile": profile, "number": number, "connected": connected, "health": "unchecked", "unread": None,
            "last_event_at": None}


async def test_fleet_json_is_one_object_per_profile_with_exactly_the_boards_keys() -> None:
    async with sandbox_fleet(3) as gateways:
        async with httpx.AsyncClient(trust_env=False) as client:  # shop-3's phone unpaired on both families
            for family in ("instance", "session"):
                answer = await client.post(f"{gateways[2].url.rstrip('/')}/sandbox/disconnect",
                                           content=json.dumps({"family": family, "reason": "logged_out"}))
                assert answer.status_code == 200, answer.text
        code, out, err = await run_gateway_tui("fleet", "--json", env={})
    assert (code, err) == (0, "")
    assert json.loads(out) == [
        _row("shop-1", "5511900000001", True), _row("shop-2", "5511900000002", True), _row("shop-3", "", False)]


async def test_fleet_json_shows_the_number_of_z_api_accounts_read_from_their_device() -> None:
    """Z-API's status never says the number: the watch reads GET /device once the instance is connected."""
    async with sandbox_fleet(2, instance_only=True):
        code, out, err = await run_gateway_tui("fleet", "--json", env={})
    assert (code, err) == (0, "")
    assert json.loads(out) == [_row("shop-1", "5511900000001", True), _row("shop-2", "5511900000002", True)]


async def test_fleet_names_the_profiles_it_reads_and_refuses_an_unknown_one() -> None:
    async with sandbox_fleet(2):
        code, out, err = await run_gateway_tui("fleet", "--profiles", "shop-2", env={})
        assert (code, err) == (0, "")
        lines = out.splitlines()
        assert lines[0].split() == ["PROFILE", "NUMBER", "CONNECTED", "HEALTH", "UNREAD", "LAST", "EVENT"]
        assert lines[1].split() == ["shop-2", "5511900000002", "yes", "unchecked", "–", "–"]
        assert len(lines) == 2
        code, out, err = await run_gateway_tui("fleet", "--profiles", "shop-2,nope", env={})
    assert (code, out) == (2, "")
    assert err == ("gateway-tui fleet: no profile named nope (known: shop-1, shop-2); see `gateway-tui profile "
                   "list`\n")
