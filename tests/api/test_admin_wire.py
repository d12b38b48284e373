"""Wire tests of the admin client (tui/api/admin.py) against literal JSON written by hand from the gateways' docs,
never from our models.

Where each shape comes from:
* WuzAPI `/admin/users`: docs/gateways/wuzapi.md §2.10 (asternic/wuzapi handlers.go ListUsers/AddUser/DeleteUser) and
  tests/api/wuzapi-openapi/spec.yml `/admin/users` (the list example, `{"code":200,"data":[…],"success":true}`),
  auth `Authorization: <admin token>` (spec.yml info: "Use the Authorization header with the admin token").
* Z-API partner: developer.z-api.io/en/partner/list-instances (the `{total,totalPage,pageSize,page,content}`
  example, `Authorization: Bearer <Partner-Token>`, no Client-Token) and docs/gateways/zapi.md §7 /
  developer.z-api.io/en/partner/create-instance (`POST /instances/integrator/on-demand` -> `{id, token, due}`).
"""

from __future__ import annotations

import json

import pytest

from tui.api.admin import AdminCredentials
from tui.gateways.wuzapi.admin import NewUser, WuzapiAdminClient
from tui.gateways.zapi.admin import NewInstance, ZapiPartnerClient
from tui.api.errors import GatewayError

ADMIN_TOKEN = "admin-tok-SECRET-9f8e7d"
PARTNER_TOKEN = "partner-tok-SECRET-1a2b3c"
USER_TOKEN = "d030sl9aDL39sl3075zz"  # spec.yml's example user token
INSTANCE_TOKEN = "F0A1B2C3D4E5F6A7B8C9D0E1"

# spec.yml GET /admin/users example (one user), as WuzAPI sends it
LIST_USERS = {"code": 200, "data": [{"connected": True, "events": "All", "expiration": 0,
                                     "id": "bec45bb93cbd24cbec32941ec3c93a12",
                                     "jid": "5491155551122:12@s.whatsapp.net", "loggedIn": True,
                                     "name": "Some User", "proxy_url": "", "qrcode": "", "token": USER_TOKEN,
                                     "webhook": "https://some.domain/webhook"}], "success": True}
# docs/gateways/wuzapi.md §2.10 POST /admin/users: 201 with the new user
CREATED_USER = {"code": 201, "data": {"id": "5663e0c52063ec35d0ba45f7c2011c06", "name": "John Doe",
                                      "token": "1234ABCD", "webhook": "https://example.net/hook", "expiration": 0,
                                      "events": "Message,ReadReceipt",
                                      "proxy_config": {"enabled": False, "proxy_url": ""},
                                      "s3_config": {"enabled": False, "endpoint": "", "region": "", "bucket": "",
                                                    "access_key": "***", "path_style": False, "public_url": "",
                                                    "media_delivery": "base64", "retention_days": 30},
                                      "hmac_key": False}, "success": True}
# docs/gateways/wuzapi.md §2.10 DELETE /admin/users/{id}
DELETED_USER = {"code": 200, "data": {"id": "4e4942c7dee1deef99ab8fd9f7350de5"}, "details": "user deleted successfully",
                "success": True}
# developer.z-api.io/en/partner/list-instances, 200
LIST_INSTANCES = {"total": 1, "totalPage": 1, "pageSize": 1, "page": 1, "content": [{
    "token": INSTANCE_TOKEN, "tenant": "", "created": "", "due": 1648565999675, "paymentStatus": "",
    "deliveryCallbackUrl": "", "phoneConnected": False, "whatsappConnected": False, "middleware": "web",
    "name": "Loja Centro", "id": "3C67AB641C8AA0412F6A2242B4E23AC7"}]}
# developer.z-api.io/en/partner/create-instance, 200
CREATED_INSTANCE = {"id": "3C67AB641C8AA0412F6A2242B4E23AC8", "token": INSTANCE_TOKEN, "due": 1648565999675}


def wuzapi(http, gateway) -> WuzapiAdminClient:
    return WuzapiAdminClient(http, AdminCredentials(gateway.url, ADMIN_TOKEN))


def partner(http, gateway) -> ZapiPartnerClient:
    return ZapiPartnerClient(http, AdminCredentials(gateway.url, PARTNER_TOKEN))


async def test_list_users(gateway, http, request_log) -> None:
    gateway.reply("GET", "/admin/users", json_body=LIST_USERS)
    [user] = await wuzapi(http, gateway).list_users()
    seen = gateway.last
    assert (seen.method, seen.raw_path, seen.body) == ("GET", "/admin/users", b"")
    assert seen.headers["Authorization"] == ADMIN_TOKEN  # the bare token, no "Bearer"
    assert "token" not in {name.lower() for name in seen.headers} and "Client-Token" not in seen.headers
    assert (user.id, user.name, user.token, user.connected, user.loggedIn, user.events) == (
        "bec45bb93cbd24cbec32941ec3c93a12", "Some User", USER_TOKEN, True, True, "All")
    assert USER_TOKEN not in repr(user)
    # the request log never holds the admin token nor any user's token
    [exchange] = list(request_log)
    recorded = json.dumps(exchange.__dict__, default=str)
    assert ADMIN_TOKEN not in recorded and USER_TOKEN not in recorded
    assert '"Some User"' in (exchange.response_body or "")


async def test_list_users_empty(gateway, http) -> None:
    gateway.reply("GET", "/admin/users", json_body={"code": 200, "data": [], "success": True})
    assert await wuzapi(http, gateway).list_users() == []


async def test_create_user(gateway, http, request_log) -> None:
    gateway.reply("POST", "/admin/users", 201, json_body=CREATED_USER)
    created = await wuzapi(http, gateway).create_user(
        NewUser(name="John Doe", token="1234ABCD", webhook="https://example.net/hook",
                events=("Message", "ReadReceipt")))
    seen = gateway.last
    assert (seen.method, seen.raw_path) == ("POST", "/admin/users")
    assert seen.headers["Authorization"] == ADMIN_TOKEN
    # the admin API takes events as a comma string; no hmacKey (WuzAPI would not sign with it until a restart)
    assert seen.json() == {"name": "John Doe", "token": "1234ABCD", "webhook": "https://example.net/hook",
                           "events": "Message,ReadReceipt"}
    assert (created.id, created.token, created.events) == ("5663e0c52063ec35d0ba45f7c2011c06", "1234ABCD",
                                                           "Message,ReadReceipt")
    recorded = json.dumps([exchange.__dict__ for exchange in request_log], default=str)
    assert "1234ABCD" not in recorded and ADMIN_TOKEN not in recorded


async def test_create_user_with_a_taken_token_is_a_clear_error(gateway, http) -> None:
    gateway.reply("POST", "/admin/users", 409,
                  json_body={"code": 409, "error": "user with this token already exists", "success": False})
    with pytest.raises(GatewayError, match="409 Conflict: user with this token already exists") as raised:
        await wuzapi(http, gateway).create_user(NewUser(name="x", token="taken-token"))
    assert "taken-token" not in str(raised.value)


async def test_delete_user(gateway, http) -> None:
    gateway.reply("DELETE", "/admin/users/4e4942c7dee1deef99ab8fd9f7350de5", json_body=DELETED_USER)
    deleted = await wuzapi(http, gateway).delete_user("4e4942c7dee1deef99ab8fd9f7350de5")
    seen = gateway.last
    assert (seen.method, seen.raw_path, seen.body) == ("DELETE", "/admin/users/4e4942c7dee1deef99ab8fd9f7350de5", b"")
    assert deleted.id == "4e4942c7dee1deef99ab8fd9f7350de5"


async def test_delete_unknown_user(gateway, http) -> None:
    gateway.reply("DELETE", "/admin/users/nope", 404, json_body={
        "code": 404, "error": "user not found", "details": "No user found with ID: nope", "success": False})
    with pytest.raises(GatewayError, match="404"):
        await wuzapi(http, gateway).delete_user("nope")


async def test_wrong_admin_token(gateway, http) -> None:
    gateway.reply("GET", "/admin/users", 401, json_body={"code": 401, "error": "unauthorized", "success": False})
    with pytest.raises(GatewayError, match="401 Unauthorized: unauthorized") as raised:
        await wuzapi(http, gateway).list_users()
    assert ADMIN_TOKEN not in str(raised.value)


async def test_list_instances(gateway, http, request_log) -> None:
    gateway.reply("GET", "/instances", json_body=LIST_INSTANCES)
    page = await partner(http, gateway).list_instances(page=1, page_size=15, query="Loja")
    seen = gateway.last
    assert (seen.method, seen.raw_path, seen.query) == ("GET", "/instances",
                                                        {"page": "1", "pageSize": "15", "query": "Loja"})
    assert seen.headers["Authorization"] == f"Bearer {PARTNER_TOKEN}"
    assert "Client-Token" not in seen.headers
    assert (page.total, page.totalPage, page.page) == (1, 1, 1)
    [instance] = page.content
    assert (instance.id, instance.name, instance.token, instance.whatsappConnected, instance.due) == (
        "3C67AB641C8AA0412F6A2242B4E23AC7", "Loja Centro", INSTANCE_TOKEN, False, 1648565999675)
    recorded = json.dumps([exchange.__dict__ for exchange in request_log], default=str)
    assert INSTANCE_TOKEN not in recorded and PARTNER_TOKEN not in recorded


async def test_all_instances_reads_every_page(gateway, http) -> None:
    first = {"total": 2, "totalPage": 2, "pageSize": 1, "page": 1, "content": [
        {"id": "A1", "token": "T1", "name": "one", "due": 1648565999675, "phoneConnected": True,
         "whatsappConnected": True, "middleware": "web"}]}
    second = {"total": 2, "totalPage": 2, "pageSize": 1, "page": 2, "content": [
        {"id": "A2", "token": "T2", "name": "two", "due": "1648565999675", "phoneConnected": False,
         "whatsappConnected": False, "middleware": "mobile"}]}
    gateway.reply("GET", "/instances", json_body=first)
    gateway.reply("GET", "/instances", json_body=second)
    found = await partner(http, gateway).all_instances()
    assert [(instance.id, instance.token) for instance in found] == [("A1", "T1"), ("A2", "T2")]
    assert [request.query["page"] for request in gateway.requests] == ["1", "2"]


async def test_create_instance(gateway, http) -> None:
    gateway.reply("POST", "/instances/integrator/on-demand", json_body=CREATED_INSTANCE)
    created = await partner(http, gateway).create_instance(
        NewInstance(name="Loja Norte", callback_url="https://hooks.example.com/a/loja-norte/delivery"))
    seen = gateway.last
    assert (seen.method, seen.raw_path) == ("POST", "/instances/integrator/on-demand")
    assert seen.headers["Authorization"] == f"Bearer {PARTNER_TOKEN}" and "Client-Token" not in seen.headers
    hook = "https://hooks.example.com/a/loja-norte/delivery"
    assert seen.json() == {"name": "Loja Norte", "deliveryCallbackUrl": hook, "receivedCallbackUrl": hook,
                           "disconnectedCallbackUrl": hook, "connectedCallbackUrl": hook,
                           "messageStatusCallbackUrl": hook, "presenceChatCallbackUrl": hook}
    assert (created.id, created.token, created.due) == ("3C67AB641C8AA0412F6A2242B4E23AC8", INSTANCE_TOKEN,
                                                        1648565999675)


async def test_wrong_partner_token(gateway, http) -> None:
    gateway.reply("GET", "/instances", 401, text="")
    with pytest.raises(GatewayError, match="401") as raised:
        await partner(http, gateway).list_instances()
    assert PARTNER_TOKEN not in str(raised.value)


def test_reprs_hide_the_tokens() -> None:
    credentials = AdminCredentials("http://127.0.0.1:1", ADMIN_TOKEN)
    assert ADMIN_TOKEN not in repr(credentials) and ADMIN_TOKEN not in str(credentials)
    assert "1234ABCD" not in repr(NewUser(name="n", token="1234ABCD"))


# Every shape WuzAPI's `GET /admin/users` has answered with (docs/gateways/wuzapi.md §2.10): the id was a
# number (SQLite's integer key) until the newest code made it text, and the list was bare until 2025-05.
# API.md's example, to this day: a bare array, numeric ids, no `loggedIn`
LIST_USERS_API_MD = [{"id": 1, "name": "admin", "token": "H4Zbhwr72PBrtKdTIgS",
                      "webhook": "https://example.com/webhook", "jid": "5491155553934@s.whatsapp.net",
                      "qrcode": "", "connected": True, "expiration": 0, "events": "Message,ReadReceipt"}]
# handlers.go of 2025-05 (ListUsers answering through Respond): the envelope, still numeric ids
LIST_USERS_ENVELOPE_NUMERIC = {"code": 200, "data": [
    {"connected": False, "events": "Message", "expiration": 0, "id": 2, "jid": "", "loggedIn": False,
     "name": "usuario2", "proxy_url": "", "qrcode": "", "token": "token2", "webhook": "https://example.com/webhook2"},
], "success": True}


@pytest.mark.parametrize("answer", [LIST_USERS_API_MD, {"code": 200, "data": LIST_USERS_API_MD, "success": True}],
                         ids=["bare", "envelope"])
async def test_list_users_with_numeric_ids(gateway, http, answer) -> None:
    gateway.reply("GET", "/admin/users", json_body=answer)
    [user] = await wuzapi(http, gateway).list_users()
    assert (user.id, user.name, user.token, user.connected, user.loggedIn, user.events) == (
        "1", "admin", "H4Zbhwr72PBrtKdTIgS", True, False, "Message,ReadReceipt")


async def test_list_users_in_the_envelope_with_numeric_ids(gateway, http) -> None:
    gateway.reply("GET", "/admin/users", json_body=LIST_USERS_ENVELOPE_NUMERIC)
    [user] = await wuzapi(http, gateway).list_users()
    assert (user.id, user.name, user.token) == ("2", "usuario2", "token2")


@pytest.mark.parametrize("answer", ["null", "[]"], ids=["null-2024-04", "empty-array"])
async def test_list_users_none_in_a_bare_answer(gateway, http, answer) -> None:
    # the first /admin/users (2024-04) encoded a nil slice: `null` when there were no users; `[]` from 2024-04-26
    gateway.reply("GET", "/admin/users", text=answer, headers={"Content-Type": "application/json"})
    assert await wuzapi(http, gateway).list_users() == []


async def test_create_user_answered_with_a_bare_numeric_id(gateway, http) -> None:
    # handlers.go AddUser until the newest code, and API.md: `{"id": 2}`, nothing else
    gateway.reply("POST", "/admin/users", json_body={"id": 2})
    created = await wuzapi(http, gateway).create_user(NewUser(name="usuario2", token="token2"))
    assert created.id == "2"


async def test_delete_user_answered_with_details_only(gateway, http) -> None:
    # handlers.go DeleteUser until the newest code: the envelope around `{"Details": …}`, no id: the one asked for
    gateway.reply("DELETE", "/admin/users/2", json_body={"code": 200, "data": {"Details": "User deleted successfully"},
                                                         "success": True})
    deleted = await wuzapi(http, gateway).delete_user("2")
    assert gateway.last.raw_path == "/admin/users/2"
    assert deleted.id == "2"
