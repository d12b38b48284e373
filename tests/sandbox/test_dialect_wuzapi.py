"""The sandbox in WuzAPI's session dialect: literal WuzAPI requests (docs/gateways/wuzapi.md §2) answered in WuzAPI's
shapes (bare HMAC answers, Unix-seconds Timestamp, 500 with success:true, PUT /webhook zeroing what is omitted);
the spec's GET /group/info body is refused naming groupJID. Raw httpx, no client models."""

from __future__ import annotations

import httpx
import pytest

from tests.sandbox.conftest import CLIENT_TOKEN, INSTANCE_ID, INSTANCE_TOKEN, SESSION_TOKEN
from tui.gateways.sandbox import SandboxGateway
from tui.sandbox.state import LAUNCH_ID, NEIGHBOURS_ID

KEY = "wuzapi-dialect-key-0123456789abcdef"
VCARD = "BEGIN:VCARD\nVERSION:3.0\nN:Souza;Ana;;;\nFN:Ana Souza\nTEL;TYPE=CELL:+5511987654321\nEND:VCARD"


@pytest.fixture
async def wuzapi():
    gateway = SandboxGateway(
        instance_id=INSTANCE_ID, instance_token=INSTANCE_TOKEN, client_token=CLIENT_TOKEN,
        session_token=SESSION_TOKEN, delivery_delay=0.0, session_dialect="wuzapi",
    )
    await gateway.start()
    async with httpx.AsyncClient(base_url=gateway.url, headers={"token": SESSION_TOKEN}, trust_env=False) as client:
        yield gateway, client
    await gateway.stop()


async def test_hmac_answers_are_bare(wuzapi):
    _, client = wuzapi
    assert (await client.get("/session/hmac/config")).json() == {"hmac_key": ""}
    saved = await client.post("/session/hmac/config", json={"hmac_key": KEY})
    assert (saved.status_code, saved.json()) == (200, {"Details": "HMAC configuration saved successfully"})
    assert (await client.get("/session/hmac/config")).json() == {"hmac_key": "***"}
    deleted = await client.delete("/session/hmac/config")
    assert (deleted.status_code, deleted.json()) == (200, {"Details": "HMAC configuration deleted successfully"})
    short = await client.post("/session/hmac/config", json={"hmac_key": "short"})
    assert (short.status_code, short.json()) == (
        400, {"code": 400, "error": "HMAC key must be at least 32 characters long", "success": False})


async def test_proxy_in_the_envelope_with_wuzapi_checks(wuzapi):
    _, client = wuzapi
    response = await client.post("/session/proxy", json={"proxy_url": "socks5://10.0.0.1:1080", "enable": True})
    assert response.json() == {"code": 200, "data": {"Details": "Proxy configured successfully",
                                                     "ProxyURL": "socks5://10.0.0.1:1080"}, "success": True}
    https = await client.post("/session/proxy", json={"proxy_url": "https://10.0.0.1:443", "enable": True})
    assert (https.status_code, https.json()["error"]) == (400, "only HTTP and SOCKS5 proxies are supported")
    # `enable` defaults to false: a body without it disables the proxy even with a URL.
    off = await client.post("/session/proxy", json={"proxy_url": "socks5://10.0.0.1:1080"})
    assert off.json()["data"] == {"Details": "Proxy disabled successfully"}


async def test_group_info_reads_the_query_and_refuses_the_spec_body(wuzapi):
    _, client = wuzapi
    spec_shape = await client.request("GET", "/group/info", json={"GroupJID": f"{LAUNCH_ID}@g.us"})
    assert (spec_shape.status_code, spec_shape.json()) == (
        400, {"code": 400, "error": "missing groupJID parameter", "success": False})
    response = await client.get("/group/info", params={"groupJID": f"{LAUNCH_ID}@g.us"})
    assert response.status_code == 200
    data = response.json()["data"]
    assert data["JID"] == f"{LAUNCH_ID}@g.us" and data["Name"] == "Product Launch Q3"
    assert list(data)[:4] == ["JID", "OwnerJID", "OwnerPN", "Name"]  # whatsmeow's field order
    assert {"JID", "PhoneNumber", "LID", "IsAdmin", "IsSuperAdmin", "DisplayName", "Error", "AddRequest"} == set(
        data["Participants"][0])


async def test_whatsapp_failures_are_500_with_success_true(wuzapi):
    _, client = wuzapi
    for jid in ("120363999999999999@g.us", f"{NEIGHBOURS_ID}1@g.us"):
        response = await client.get("/group/info", params={"groupJID": jid})
        assert (response.status_code, response.json()) == (500, {"code": 500, "success": True})


async def test_group_create_answers_group_info_and_checks_like_wuzapi(wuzapi):
    gateway, client = wuzapi
    created = await client.post("/group/create", json={"name": "Launch crew", "participants": ["5511987654321"]})
    assert created.status_code == 200
    data = created.json()["data"]
    assert data["Name"] == "Launch crew" and data["JID"].endswith("@g.us")
    assert [p["JID"] for p in data["Participants"]] == ["5511912345678@s.whatsapp.net", "5511987654321@s.whatsapp.net"]
    for body, error in [({"participants": ["5511987654321"]}, "missing Name in Payload"),
                        ({"name": "x", "participants": []}, "missing Participants in Payload"),
                        ({"name": "x", "participants": ["not a phone"]}, "could not parse Participant Phone")]:
        response = await client.post("/group/create", json=body)
        assert (response.status_code, response.json()) == (400, {"code": 400, "error": error, "success": False})
    empty = await client.post("/group/create", content=b"")
    assert empty.json()["error"] == "could not decode Payload"  # Go cannot decode an empty body


async def test_send_contact_timestamp_is_unix_seconds(wuzapi):
    _, client = wuzapi
    response = await client.post("/chat/send/contact", json={"Phone": "5511987654321", "Name": "Ana Souza",
                                                             "Vcard": VCARD, "Id": "3EB0CUSTOM"})
    assert response.status_code == 200
    data = response.json()["data"]
    assert data["Details"] == "Sent" and data["Id"] == "3EB0CUSTOM"
    assert isinstance(data["Timestamp"], int) and data["Timestamp"] > 1_600_000_000
    missing = await client.post("/chat/send/contact", json={"Phone": "5511987654321", "Name": "Ana"})
    assert missing.json() == {"code": 400, "error": "missing Vcard in Payload", "success": False}


async def test_put_webhook_zeroes_what_it_is_not_sent_and_get_reads_webhook_subscribe(wuzapi):
    gateway, client = wuzapi
    whole = await client.put("/webhook", json={"webhook": "https://hooks.example/s", "events": ["Message", "Nope"],
                                               "active": True})
    assert whole.json()["data"] == {"webhook": "https://hooks.example/s", "events": ["Message"], "active": True}
    read = await client.get("/webhook")
    assert read.json() == {"code": 200, "data": {"webhook": "https://hooks.example/s", "subscribe": ["Message"]},
                           "success": True}
    # The spec's partial update {"events": [...]} means, to WuzAPI, active=false: URL and events cleared.
    partial = await client.put("/webhook", json={"events": ["ReadReceipt"]})
    assert partial.json()["data"] == {"webhook": "", "events": None, "active": False}
    assert (await client.get("/webhook")).json()["data"] == {"webhook": "", "subscribe": [""]}
    assert not gateway.state.session_webhook.wants("ReadReceipt")


async def test_no_session_is_500(wuzapi):
    gateway, client = wuzapi
    gateway.state.connected = False
    response = await client.get("/group/info", params={"groupJID": f"{LAUNCH_ID}@g.us"})
    assert (response.status_code, response.json()) == (500, {"code": 500, "error": "no session", "success": False})


def test_dialect_flags_on_the_sandbox_command_and_on_the_app():
    from tui.cli.main import build_parser

    parser = build_parser()
    args = parser.parse_args(["sandbox", "--instance-dialect", "zapi", "--session-dialect", "wuzapi"])
    assert (args.instance_dialect, args.session_dialect, args.webhook_format) == ("zapi", "wuzapi", None)
    before = parser.parse_args(["--instance-dialect", "zapi", "sandbox"])  # not reset by the subcommand
    assert (before.instance_dialect, before.session_dialect) == ("zapi", "spec")
    app = parser.parse_args(["--sandbox", "--session-dialect", "wuzapi"])
    assert (app.sandbox, app.instance_dialect, app.session_dialect) == (True, "spec", "wuzapi")
