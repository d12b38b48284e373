"""The sandbox in Z-API's instance dialect: literal Z-API requests (docs/gateways/zapi.md §2-§4) are accepted and
answered in Z-API's shapes; the spec's shapes are refused with a 400 naming the field. Raw httpx, no client models."""

from __future__ import annotations

import httpx
import pytest

from tests.sandbox.conftest import CLIENT_TOKEN, INSTANCE_ID, INSTANCE_TOKEN, SESSION_TOKEN
from tui.gateways.sandbox import SandboxGateway
from tui.sandbox.state import COMMUNITY_ID, LAUNCH_ID, NEIGHBOURS_ID, PRODUCT_IDS

PHONE = "5511987654321"
GROUP = f"{LAUNCH_ID}-group"


@pytest.fixture
async def zapi():
    gateway = SandboxGateway(
        instance_id=INSTANCE_ID, instance_token=INSTANCE_TOKEN, client_token=CLIENT_TOKEN,
        session_token=SESSION_TOKEN, delivery_delay=0.0, instance_dialect="zapi",
    )
    await gateway.start()
    async with httpx.AsyncClient(
        base_url=gateway.instance_url, headers={"Client-Token": CLIENT_TOKEN}, trust_env=False
    ) as client:
        yield gateway, client
    await gateway.stop()


def refused(response: httpx.Response, field: str) -> None:
    assert response.status_code == 400, response.text
    body = response.json()
    assert set(body) == {"error"}, body  # Z-API's error shape
    assert body["error"].startswith(f"{field}: "), body


ACCEPTED = [
    ("POST", "send-text", {"phone": PHONE, "message": "hi", "delayMessage": 3, "delayTyping": 2}),
    ("POST", "send-text", {"phone": GROUP, "message": "hello group"}),
    ("POST", "send-button-actions", {"phone": PHONE, "message": "Pick one", "title": "Menu", "footer": "Acme",
                                     "buttonActions": [{"id": "1", "type": "REPLY", "label": "Yes"},
                                                       {"id": "2", "type": "REPLY", "label": "No"}]}),
    ("POST", "send-button-list", {"phone": PHONE, "message": "Options",
                                  "buttonList": {"buttons": [{"id": "1", "label": "A"}, {"label": "B"}]}}),
    ("POST", "send-link", {"phone": PHONE, "message": "See https://acme.example", "image": "https://acme.example/i.png",
                           "linkUrl": "https://acme.example", "title": "Acme", "linkDescription": "Our shop",
                           "linkType": "LARGE"}),
    ("POST", "send-poll", {"phone": GROUP, "message": "Lunch?", "poll": [{"name": "Yes"}, {"name": "No"}],
                           "pollMaxOptions": 1}),
    ("POST", "send-poll", {"phone": PHONE, "message": "Which?", "poll": [{"name": "A"}, {"name": "B"}]}),
    ("POST", "send-location", {"phone": PHONE, "title": "Office", "address": "Av. Paulista, 1000",
                               "latitude": "-23.06", "longitude": "-50.43", "delayMessage": 15}),
    ("POST", "send-sticker", {"phone": PHONE, "sticker": "https://acme.example/s.webp", "delayMessage": 1}),
]


@pytest.mark.parametrize(("method", "path", "body"), ACCEPTED, ids=[f"{case[1]}-{i}" for i, case in enumerate(ACCEPTED)])
async def test_z_api_sends_are_accepted_and_answered_with_zaap_id(zapi, method, path, body):
    _, client = zapi
    response = await client.request(method, path, json=body)
    assert response.status_code == 200, response.text  # Z-API answers 200, not the spec's 202
    answer = response.json()
    assert set(answer) == {"zaapId", "messageId", "id"}
    assert answer["messageId"] == answer["id"] and len(answer["zaapId"]) == 32


async def test_forward_message_answers_only_zaap_id(zapi):
    _, client = zapi
    sent = (await client.post("send-text", json={"phone": PHONE, "message": "original"})).json()
    response = await client.post(
        "forward-message", json={"phone": GROUP, "messageId": sent["messageId"], "messagePhone": PHONE}
    )
    assert response.status_code == 200
    assert set(response.json()) == {"zaapId"}


SPEC_SHAPES = [
    ("send-button-actions", {"phone": PHONE, "message": "Pick", "buttons": [{"id": "1", "text": "Yes"}]}, "buttons"),
    ("send-button-actions", {"phone": PHONE, "message": "Pick",
                             "buttonActions": [{"id": "1", "type": "REPLY", "text": "Yes"}]}, "buttonActions.0.text"),
    ("send-poll", {"phone": PHONE, "message": "Q", "poll": [{"name": "A"}, {"name": "B"}], "selectableCount": 1},
     "selectableCount"),
    ("send-location", {"phone": PHONE, "title": "T", "address": "A", "lat": -23.06, "lng": -50.43}, "lat"),
    ("send-location", {"phone": PHONE, "title": "T", "address": "A", "latitude": -23.06, "longitude": -50.43},
     "latitude"),
    ("send-link", {"phone": PHONE, "message": "m https://a.example", "linkUrl": "https://a.example"}, "image"),
    ("send-link", {"phone": PHONE, "message": "m", "linkUrl": "https://a.example", "image": "https://a.example/i.png",
                   "title": "T"}, "linkDescription"),
    ("send-text", {"phone": f"{LAUNCH_ID}@g.us", "message": "hi"}, "phone"),
    ("send-sticker", {"phone": PHONE, "sticker": "https://a.example/s.webp", "delayMessage": 3000}, "delayMessage"),
    ("send-text", {"phone": PHONE, "message": "hi", "delayMessage": 0}, "delayMessage"),
    ("modify-chat", {"phone": f"{LAUNCH_ID}@g.us", "action": "pin"}, "phone"),
    ("privacy/group-add", {"type": "CONTACT"}, "type"),
    ("privacy/group-add", {"type": "NONE"}, "type"),
    ("privacy/last-seen", {"visualizationType": "CONTACT"}, "visualizationType"),
    ("add-participant", {"groupId": GROUP, "phones": [PHONE]}, "autoInvite"),
    (f"redefine-invitation-link/{COMMUNITY_ID}", {"communityId": COMMUNITY_ID, "groupsPhones": []}, "communityId"),
]


@pytest.mark.parametrize(("path", "body", "field"), SPEC_SHAPES, ids=[f"{c[2]}-{i}" for i, c in enumerate(SPEC_SHAPES)])
async def test_spec_shapes_are_refused_naming_the_field(zapi, path, body, field):
    gateway, client = zapi
    before = len(gateway.state.sent)
    refused(await client.post(path, json=body), field)
    assert len(gateway.state.sent) == before  # nothing was sent


async def test_boolean_results_are_value_and_privacy_is_success(zapi):
    gateway, client = zapi
    for path, body in [
        ("update-group-name", {"groupId": GROUP, "groupName": "Launch Q4"}),
        ("modify-chat", {"phone": GROUP, "action": "pin"}),
        ("modify-chat", {"phone": PHONE, "action": "unread"}),
        ("add-admin", {"communityId": COMMUNITY_ID, "phones": ["5511976543219"]}),
    ]:
        response = await client.post(path, json=body)
        assert (response.status_code, response.json()) == (200, {"value": True}), path
    for path, body in [("profile-description", {"value": "Open 9-18"}),
                       ("update-webhook-delivery", {"value": "https://hooks.example/delivery"})]:
        response = await client.put(path, json=body)
        assert (response.status_code, response.json()) == (200, {"value": True}), path
    response = await client.post("privacy/group-add", json={
        "type": "CONTACT_BLACKLIST", "contactsBlacklist": [{"action": "add", "phone": PHONE}]})
    assert response.json() == {"success": True}
    response = await client.post("privacy/last-seen", json={"visualizationType": "CONTACTS"})
    assert response.json() == {"success": True}
    assert gateway.state.groups[LAUNCH_ID].name == "Launch Q4"
    assert gateway.state.privacy.last_seen == "CONTACT"


async def test_value_false_when_the_call_fails(zapi):
    gateway, client = zapi
    not_admin = await client.post("update-group-name", json={"groupId": f"{NEIGHBOURS_ID}-group", "groupName": "X"})
    assert (not_admin.status_code, not_admin.json()) == (200, {"value": False})
    members = set(gateway.state.groups[LAUNCH_ID].participants)
    unregistered = await client.post(
        "add-participant", json={"autoInvite": False, "groupId": GROUP, "phones": ["5511976543219", "5511912340000"]}
    )
    assert (unregistered.status_code, unregistered.json()) == (200, {"value": False})
    assert set(gateway.state.groups[LAUNCH_ID].participants) == members  # false means nothing changed


async def test_add_participant_answers_value_without_lists(zapi):
    gateway, client = zapi
    response = await client.post(
        "add-participant", json={"autoInvite": False, "groupId": GROUP, "phones": ["5511976543219"]}
    )
    assert response.json() == {"value": True}
    assert "5511976543219" in gateway.state.groups[LAUNCH_ID].participants


async def test_group_metadata_product_and_invite_link_in_z_api_fields(zapi):
    _, client = zapi
    metadata = (await client.get(f"group-metadata/{GROUP}")).json()
    assert {"phone", "subject", "owner", "creation", "participants", "invitationLink", "communityId",
            "adminOnlyMessage", "adminOnlySettings", "isGroupAnnouncement", "subjectTime", "subjectOwner"} <= set(metadata)
    assert metadata["phone"] == GROUP and metadata["subject"] == "Product Launch Q3"
    assert isinstance(metadata["creation"], int) and metadata["creation"] > 10**12  # epoch milliseconds
    assert {"phone", "isAdmin", "isSuperAdmin"} <= set(metadata["participants"][0])
    product = (await client.get(f"products/{PRODUCT_IDS[0]}")).json()
    assert product["id"] == PRODUCT_IDS[0] and product["price"] == "29990"  # a string of minor units
    link = await client.post(f"redefine-invitation-link/{COMMUNITY_ID}")
    assert link.status_code == 200 and set(link.json()) == {"invitationLink"}
    assert link.json()["invitationLink"].startswith("https://chat.whatsapp.com/")


async def test_status_and_unknown_group_metadata(zapi):
    _, client = zapi
    assert (await client.get("status")).json() == {
        "connected": True, "error": "You are already connected.", "smartphoneConnected": True}
    refused(await client.get(f"group-metadata/{LAUNCH_ID}@g.us"), "GROUP_PHONE_NUMBER")


def _shape(value: object) -> object:
    """A JSON value's shape: its keys in order and the type of each value (objects inside too)."""
    if isinstance(value, dict):
        return [(key, _shape(item)) for key, item in value.items()]
    return type(value).__name__


async def test_device_answers_the_paired_phone_in_the_docs_shape(zapi):
    """`GET /device` (developer.z-api.io/en/instance/device): the docs' 200 example's keys, in its order, each of
    its type; the phone is the sandbox's paired number, the name and profile text its account's. Not connected:
    409 (the sandbox's rule for a call that needs the phone), nothing else."""
    from tests.api.dialect_cases import ZAPI_DEVICE_DOC

    gateway, client = zapi
    answer = await client.get("device")
    assert answer.status_code == 200, answer.text
    device = answer.json()
    assert _shape(device) == _shape(ZAPI_DEVICE_DOC)
    state = gateway.state
    assert (device["phone"], device["name"], device["about"]) == (
        state.own_phone, state.own_name, state.profile_description)
    assert device["phone"] == state.instance_link.number
    state.instance_link.online = False  # the network lost: still paired, not connected
    lost = await client.get("device")
    assert lost.status_code == 409 and set(lost.json()) == {"error"}, lost.text
