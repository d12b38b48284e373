"""`gateway-tui sandbox --accounts N`: N accounts on one port, each answering as itself, behind WuzAPI's admin API
and Z-API's partner API (tui/sandbox/fleet.py). The answers' shapes are checked against literal JSON keys from
docs/gateways/wuzapi.md §2.10 and developer.z-api.io/en/partner/list-instances."""

from __future__ import annotations

import os
import subprocess
import sys

import httpx
import pytest

from tests.sandbox.test_cli import start as start_sandbox
from tests.sandbox.test_cli import stop
from tui.sandbox.dialect import InstanceDialect, SessionDialect
from tui.gateways.sandbox import SandboxFleet

ADMIN = "fleet-admin-SECRET-0001"
PARTNER = "fleet-partner-SECRET-0002"
CLIENT = "fleet-client-SECRET-0003"
ENV = {"GATEWAY_TUI_ADMIN_TOKEN": ADMIN, "GATEWAY_TUI_PARTNER_TOKEN": PARTNER, "GATEWAY_TUI_CLIENT_TOKEN": CLIENT}
# WuzAPI's user keys (docs/gateways/wuzapi.md §2.10: the keys of a user in the list)
USER_KEYS = {"id", "name", "token", "webhook", "jid", "qrcode", "connected", "loggedIn", "expiration", "proxy_url",
             "events", "proxy_config", "s3_config"}
# Z-API's instance keys (developer.z-api.io/en/partner/list-instances, the 200 example)
INSTANCE_KEYS = {"token", "tenant", "created", "due", "paymentStatus", "deliveryCallbackUrl", "phoneConnected",
                 "whatsappConnected", "middleware", "name", "id"}


def start(*args: str, env: dict[str, str]) -> tuple[subprocess.Popen, str, str]:
    return start_sandbox(env, args, last_line="  Sandbox 03")  # the banner's last line with three accounts


def admin_users(url: str) -> list[dict]:
    return httpx.get(f"{url}/admin/users", headers={"Authorization": ADMIN}, timeout=10).json()["data"]


def test_three_accounts_each_answering_as_itself() -> None:
    process, url, banner = start("--accounts", "3", "--session-dialect", "wuzapi", "--instance-dialect", "zapi",
                                 env=dict(os.environ, **ENV))
    try:
        assert ADMIN not in banner and PARTNER not in banner and CLIENT not in banner  # from the environment
        with httpx.Client(base_url=url, timeout=10) as http:
            assert http.get("/admin/users").status_code == 401
            listing = http.get("/admin/users", headers={"Authorization": ADMIN})
            assert listing.status_code == 200
            body = listing.json()
            assert (body["code"], body["success"]) == (200, True)
            users = body["data"]
            assert [user["name"] for user in users] == ["Sandbox 01", "Sandbox 02", "Sandbox 03"]
            assert all(set(user) == USER_KEYS for user in users)
            assert all(user["connected"] and user["loggedIn"] for user in users)  # all paired
            assert len({user["token"] for user in users}) == 3 and len({user["id"] for user in users}) == 3
            # each WuzAPI user answers with its own number (the token header picks the account)
            numbers = []
            for user in users:
                status = http.get("/session/status", headers={"token": user["token"]}).json()["data"]
                numbers.append(status["jid"].split(".")[0].split(":")[0])
            assert numbers == ["5511912345678", "5511912345679", "5511912345680"]
            assert http.get("/session/status", headers={"token": "not-a-user"}).status_code == 401

            assert http.get("/instances", params={"page": 1, "pageSize": 15}).status_code == 401
            page = http.get("/instances", params={"page": 1, "pageSize": 2},
                            headers={"Authorization": f"Bearer {PARTNER}"}).json()
            assert (page["total"], page["totalPage"], page["pageSize"], page["page"]) == (3, 2, 2, 1)
            assert all(set(instance) == INSTANCE_KEYS for instance in page["content"])
            second = page["content"][1]
            instance = f"/instances/{second['id']}/token/{second['token']}"
            assert http.get(f"{instance}/status", headers={"Client-Token": CLIENT}).json()["connected"] is True
            sent = http.post(f"{instance}/send-text", json={"phone": "5511999999999", "message": "hi"},
                             headers={"Client-Token": CLIENT})
            assert sent.status_code == 200 and sent.json()["messageId"]
            # another instance's token does not open this one
            first = page["content"][0]
            assert http.get(f"/instances/{second['id']}/token/{first['token']}/status",
                            headers={"Client-Token": CLIENT}).status_code == 401
    finally:
        assert stop(process) == 0


def test_without_the_admin_token_it_says_which_variable() -> None:
    env = {key: value for key, value in os.environ.items() if key not in ENV}
    result = subprocess.run([sys.executable, "-m", "tui", "sandbox", "--port", "0", "--accounts", "3"], env=env,
                            stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=30)
    assert result.returncode == 2
    assert "set GATEWAY_TUI_ADMIN_TOKEN" in result.stderr and "listening" not in result.stdout


@pytest.fixture
async def fleet():
    gateway = SandboxFleet(accounts=3, admin_token=ADMIN, partner_token=PARTNER, client_token=CLIENT,
                           instance_dialect=InstanceDialect.ZAPI, session_dialect=SessionDialect.WUZAPI,
                           delivery_delay=0.0)
    await gateway.start()
    yield gateway
    await gateway.stop()


async def test_each_account_has_its_own_traffic(fleet) -> None:
    second = fleet.accounts[1].gateway
    async with httpx.AsyncClient(base_url=fleet.url, timeout=10) as http:
        answer = await http.post(f"/instances/{second.instance_id}/token/{second.instance_token}/send-text",
                                 json={"phone": "5511988887777", "message": "only here"},
                                 headers={"Client-Token": CLIENT})
        assert answer.status_code == 200, answer.text
    assert [sent.text for sent in second.state.sent] == ["only here"]
    assert not fleet.accounts[0].gateway.state.sent and not fleet.accounts[2].gateway.state.sent


async def test_users_created_and_deleted_through_the_admin_api(fleet) -> None:
    async with httpx.AsyncClient(base_url=fleet.url, timeout=10) as http:
        admin = {"Authorization": ADMIN}
        created = await http.post("/admin/users", headers=admin, json={
            "name": "Support", "token": "support-token-1", "webhook": "http://127.0.0.1:9/hook",
            "events": "Message,ReadReceipt"})
        assert created.status_code == 201
        data = created.json()["data"]
        assert (data["name"], data["token"], data["webhook"], data["events"], data["hmac_key"]) == (
            "Support", "support-token-1", "http://127.0.0.1:9/hook", "Message,ReadReceipt", False)
        taken = await http.post("/admin/users", headers=admin, json={"name": "Again", "token": "support-token-1"})
        assert taken.status_code == 409 and taken.json() == {
            "code": 409, "error": "user with this token already exists", "success": False}
        # the new user answers on the session family, unpaired as a new WuzAPI user is
        status = (await http.get("/session/status", headers={"token": "support-token-1"})).json()["data"]
        assert status["loggedIn"] is False
        deleted = await http.delete(f"/admin/users/{data['id']}", headers=admin)
        assert deleted.json() == {"code": 200, "data": {"id": data["id"]}, "details": "user deleted successfully",
                                  "success": True}
        assert (await http.get("/session/status", headers={"token": "support-token-1"})).status_code == 401
        missing = await http.delete("/admin/users/nope", headers=admin)
        assert missing.status_code == 404 and missing.json()["details"] == "No user found with ID: nope"


async def test_instances_created_through_the_partner_api(fleet) -> None:
    async with httpx.AsyncClient(base_url=fleet.url, timeout=10) as http:
        bearer = {"Authorization": f"Bearer {PARTNER}"}
        assert (await http.post("/instances/integrator/on-demand", json={"name": "x"})).status_code == 401
        created = await http.post("/instances/integrator/on-demand", headers=bearer, json={"name": "Loja Norte"})
        assert created.status_code == 200 and set(created.json()) == {"id", "token", "due"}
        new = created.json()
        found = (await http.get("/instances", headers=bearer, params={"page": 1, "pageSize": 10,
                                                                      "query": "norte"})).json()
        assert [instance["id"] for instance in found["content"]] == [new["id"]]
        status = await http.get(f"/instances/{new['id']}/token/{new['token']}/status",
                                headers={"Client-Token": CLIENT})
        assert status.status_code == 200 and status.json()["connected"] is False  # a new instance is not paired
