"""The sandbox's chat, contact and group lists in each dialect, compared with the gateways' literal shapes: Z-API's
bare arrays with string booleans and required paging (docs/gateways/zapi.md §3.6), WuzAPI's envelope with a JID map
and `{"Groups": [...]}` (docs/gateways/wuzapi.md §2.8, GET /user/contacts), and the spec's 404 (it has no lists).
Raw httpx, no client models."""

from __future__ import annotations

import httpx
import pytest

from tests.sandbox.conftest import CLIENT_TOKEN, INSTANCE_ID, INSTANCE_TOKEN, SESSION_TOKEN
from tui.gateways.sandbox import SandboxGateway
from tui.sandbox.state import ALL_HANDS_ID, LAUNCH_ID, NEIGHBOURS_ID


@pytest.fixture
async def gateway(request):
    dialects = getattr(request, "param", ("zapi", "wuzapi"))
    gateway = SandboxGateway(
        instance_id=INSTANCE_ID, instance_token=INSTANCE_TOKEN, client_token=CLIENT_TOKEN,
        session_token=SESSION_TOKEN, delivery_delay=0.0, instance_dialect=dialects[0], session_dialect=dialects[1],
    )
    await gateway.start()
    yield gateway
    await gateway.stop()


@pytest.fixture
async def instance(gateway):
    async with httpx.AsyncClient(base_url=gateway.instance_url, headers={"Client-Token": CLIENT_TOKEN},
                                 trust_env=False) as client:
        yield client


@pytest.fixture
async def session(gateway):
    async with httpx.AsyncClient(base_url=gateway.url, headers={"token": SESSION_TOKEN}, trust_env=False) as client:
        yield client


async def test_zapi_contacts_are_a_bare_array_with_saved_and_push_names(instance):
    response = await instance.get("/contacts", params={"page": "1", "pageSize": "2"})
    assert response.status_code == 200
    assert response.json() == [
        {"name": "Ana Souza", "short": "Ana", "notify": "Ana", "vname": "", "phone": "5511987654321"},
        {"name": "Bruno Lima", "short": "Bruno", "notify": "Bruno", "vname": "", "phone": "5511976543219"},
    ]
    second = (await instance.get("/contacts", params={"page": "2", "pageSize": "2"})).json()
    assert [contact["phone"] for contact in second] == ["5521998877665", "5531991234567"]
    assert (await instance.get("/contacts", params={"page": "99", "pageSize": "20"})).json() == []  # past the end


@pytest.mark.parametrize("query", [{}, {"page": "1"}, {"pageSize": "10"}, {"page": "0", "pageSize": "10"},
                                   {"page": "x", "pageSize": "10"}])
async def test_zapi_lists_require_page_and_page_size(instance, query):
    for path in ("/chats", "/contacts", "/groups"):
        response = await instance.get(path, params=query)
        assert response.status_code == 400, (path, query)
        assert set(response.json()) == {"error"}
        assert response.json()["error"].split(":")[0] in ("page", "pageSize")


async def test_zapi_chats_use_strings_for_booleans_and_counters(instance):
    chats = (await instance.get("/chats", params={"page": "1", "pageSize": "100"})).json()
    by_phone = {chat["phone"]: chat for chat in chats}
    ana = by_phone["5511987654321"]
    assert ana == {
        "archived": "false", "pinned": "true", "phone": "5511987654321", "unread": "3", "name": "Ana Souza",
        "isMuted": "0", "isMarkedSpam": "false", "isGroup": False, "muteEndTime": None, "messagesUnread": 3,
        "isGroupAnnouncement": False, "lastMessageTime": "1735730520",  # 2025-01-01 11:22 UTC, in seconds
    }
    assert chats[0]["pinned"] == "true"  # pinned chats first
    all_hands = by_phone[f"{ALL_HANDS_ID}-group"]
    assert (all_hands["isGroup"], all_hands["isMuted"], all_hands["unread"], all_hands["messagesUnread"]) == (
        True, "1", "27", "27")
    launch = by_phone[f"{LAUNCH_ID}-group"]
    assert launch["name"] == "Product Launch Q3"
    assert launch["lastMessageTime"] == "1735725780000"  # 2025-01-01 10:03 UTC, in milliseconds


async def test_zapi_groups_list_every_group(gateway, instance):
    groups = (await instance.get("/groups", params={"page": "1", "pageSize": "10"})).json()
    assert [group["phone"] for group in groups] == [f"{g.digits}-group" for g in gateway.state.groups.values()][:10]
    assert all(group["isGroup"] is True and group["archived"] in ("true", "false") for group in groups)


async def test_wuzapi_contacts_are_a_jid_map_in_the_envelope(session):
    response = await session.get("/user/contacts")
    assert response.status_code == 200
    body = response.json()
    assert set(body) == {"code", "data", "success"} and body["success"] is True
    assert body["data"]["5511987654321@s.whatsapp.net"] == {
        "BusinessName": "", "FirstName": "Ana", "Found": True, "FullName": "Ana Souza", "PushName": "Ana"}


async def test_wuzapi_group_list_holds_the_joined_groups(gateway, session):
    body = (await session.get("/group/list")).json()
    groups = body["data"]["Groups"]
    jids = [group["JID"] for group in groups]
    assert f"{NEIGHBOURS_ID}@g.us" in jids and f"{LAUNCH_ID}@g.us" in jids
    assert all(set(group) >= {"JID", "Name", "Participants", "GroupCreated"} for group in groups)


async def test_wuzapi_group_list_is_null_without_groups(gateway, session):
    gateway.state.groups.clear()
    assert (await session.get("/group/list")).json() == {"code": 200, "data": {"Groups": None}, "success": True}


@pytest.mark.parametrize("gateway", [("spec", "spec")], indirect=True)
async def test_the_spec_dialect_has_no_lists(instance, session):
    for client, path in ((instance, "/chats"), (instance, "/contacts"), (instance, "/groups"),
                         (session, "/user/contacts"), (session, "/group/list")):
        response = await client.get(path, params={"page": "1", "pageSize": "10"})
        assert response.status_code == 404, path
        assert "no such list" in response.json()["error"]
