"""Every operation x dialect through the generic client path against a sandbox speaking that dialect: the
client's translation and the sandbox's own checks (written from the research, not from the client's models)
must agree, and a client that speaks the other dialect is refused with a 400 naming the field."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from tests.api.spec_cases import media_requests
from tui.api import models as m
from tui.api.client import GatewayHttp, InstanceClient, SessionClient
from tui.api.credentials import InstanceCredentials, SessionCredentials
from tui.api.errors import BadRequest
from tui.api.operations import OPERATIONS, DialectRefusal, Family, InstanceDialect, OperationId, SessionDialect
from tui.api.vcard import build_vcard
from tui.sandbox.server import SandboxGateway
from tui.sandbox.state import COMMUNITY_ID, LAUNCH_ID, PRODUCT_IDS

PHONE = "5511999999999"
TOKENS = {"instance_token": "dia-inst-token", "client_token": "dia-client-token", "session_token": "dia-session-token"}

# One request per operation that both dialects can say (the link carries its preview; the delay is whole seconds).
REQUESTS: dict[OperationId, Callable[[], m.Request]] = {
    OperationId.SEND_TEXT: lambda: m.SendText(phone=f"{LAUNCH_ID}@g.us", message="hi"),
    OperationId.SEND_BUTTON_ACTIONS: lambda: m.SendButtonActions(
        phone=PHONE, message="Pick one", buttons=[m.Button(id="1", text="Yes"), m.Button(id="2", text="No")]),
    OperationId.SEND_BUTTON_LIST: lambda: m.SendButtonList(
        phone=PHONE, message="Pick", buttonList=m.ButtonList(buttons=[m.ListButton(id="a", label="A")])),
    OperationId.SEND_LINK: lambda: m.SendLink(
        phone=PHONE, message="see https://example.com", linkUrl="https://example.com",
        image="https://example.com/i.png", title="Example", linkDescription="An example"),
    OperationId.SEND_POLL: lambda: m.SendPoll(
        phone=f"{LAUNCH_ID}-group", message="Lunch?", poll=[m.PollOption(name="Pizza"), m.PollOption(name="Sushi")]),
    OperationId.SEND_LOCATION: lambda: m.SendLocation(
        phone=PHONE, title="Office", address="Av. Paulista, 1000", lat=-23.56, lng=-46.65, delayMessage=2000),
    OperationId.SEND_STICKER: lambda: m.SendSticker(phone=PHONE, sticker="https://example.com/s.webp", delayMessage=1000),
    OperationId.FORWARD_MESSAGE: lambda: m.ForwardMessage(phone=PHONE, messageId="3EB0UNKNOWN", messagePhone="5511988887777"),
    OperationId.PRIVACY_GROUP_ADD: lambda: m.PrivacyGroupAdd(type="CONTACT"),
    OperationId.PRIVACY_LAST_SEEN: lambda: m.PrivacyLastSeen(visualizationType="CONTACT"),
    OperationId.ADD_PARTICIPANT: lambda: m.AddParticipant(groupId=f"{LAUNCH_ID}-group", phones=["5511944443333"]),
    OperationId.UPDATE_GROUP_NAME: lambda: m.UpdateGroupName(groupId=f"{LAUNCH_ID}-group", groupName="Launch"),
    OperationId.GROUP_METADATA: lambda: m.GroupMetadataQuery(GROUP_PHONE_NUMBER=f"{LAUNCH_ID}-group"),
    OperationId.ADD_ADMIN: lambda: m.AddAdmin(communityId=COMMUNITY_ID, phones=["5511944443333"]),
    OperationId.REDEFINE_INVITATION_LINK: lambda: m.RedefineInvitationLink(communityId=COMMUNITY_ID),
    OperationId.MODIFY_CHAT: lambda: m.ModifyChat(phone=f"{LAUNCH_ID}@g.us", action="archive"),
    OperationId.PROFILE_DESCRIPTION: lambda: m.ProfileDescription(value="Open 9-18"),
    OperationId.PRODUCTS: lambda: m.ProductQuery(PRODUCT_ID=PRODUCT_IDS[0]),
    OperationId.UPDATE_WEBHOOK_DELIVERY: lambda: m.DeliveryWebhook(value="https://hooks.example.com/delivery"),
    OperationId.STATUS: m.NoBody,
    OperationId.HMAC_SET: lambda: m.HmacKey(hmac_key="k" * 40),
    OperationId.HMAC_STATUS: m.NoBody,
    OperationId.HMAC_DELETE: m.NoBody,
    OperationId.PROXY: lambda: m.ProxyConfig(enable=True, proxy_url="socks5://proxy.example.com:1080"),
    OperationId.GROUP_INFO: lambda: m.GroupInfoRequest(GroupJID=f"{LAUNCH_ID}@g.us"),
    OperationId.GROUP_CREATE: lambda: m.GroupCreate(name="Dialects", participants=["5511944443333"]),
    OperationId.SEND_CONTACT: lambda: m.ContactCard(Phone=PHONE, Name="Ana", Vcard=build_vcard("Ana", "5511988887777")),
    OperationId.WEBHOOK: lambda: m.WebhookUpdate(webhook="https://hooks.example.com/session"),
    OperationId.LIST_CHATS: lambda: m.ListPage(pageSize=5),
    OperationId.LIST_CONTACTS: m.ListPage,
    OperationId.LIST_GROUPS: m.ListPage,
    OperationId.USER_CONTACTS: m.NoBody,
    OperationId.GROUP_LIST: m.NoBody,
    **media_requests(PHONE),
}
# The gateways' lists: the spec has none, so its dialect refuses them before sending.
NOT_IN_SPEC = {OperationId.LIST_CHATS, OperationId.LIST_CONTACTS, OperationId.LIST_GROUPS, OperationId.USER_CONTACTS,
               OperationId.GROUP_LIST, OperationId.CHAT_SEND_IMAGE, OperationId.CHAT_SEND_VIDEO,
               OperationId.CHAT_SEND_AUDIO, OperationId.CHAT_SEND_DOCUMENT}

CASES = [(op.id, dialect) for op in OPERATIONS.values() for dialect in op.dialects]


async def _sandbox(instance: InstanceDialect, session: SessionDialect) -> SandboxGateway:
    gateway = SandboxGateway(instance_id="dia", **TOKENS, delivery_delay=0.0,
                             instance_dialect=instance, session_dialect=session)
    await gateway.start()
    return gateway


def _clients(http: GatewayHttp, url: str, instance: InstanceDialect, session: SessionDialect) -> tuple[InstanceClient, SessionClient]:
    return (
        InstanceClient(http, InstanceCredentials(url, "dia", TOKENS["instance_token"], TOKENS["client_token"]), instance),
        SessionClient(http, SessionCredentials(url, TOKENS["session_token"]), session),
    )


def test_every_operation_has_a_request_here() -> None:
    assert set(REQUESTS) == set(OPERATIONS)


@pytest.mark.parametrize(("op_id", "dialect"), CASES, ids=lambda value: str(value))
async def test_operation_against_the_sandbox_speaking_the_dialect(op_id: OperationId, dialect: Any) -> None:
    op = OPERATIONS[op_id]
    instance = InstanceDialect(dialect) if op.family is Family.INSTANCE else InstanceDialect.SPEC
    session = SessionDialect(dialect) if op.family is Family.SESSION else SessionDialect.SPEC
    gateway = await _sandbox(instance, session)
    try:
        async with GatewayHttp(timeout=5.0) as http:
            instance_client, session_client = _clients(http, gateway.url, instance, session)
            client = instance_client if op.family is Family.INSTANCE else session_client
            if op_id in NOT_IN_SPEC and dialect == "spec":
                with pytest.raises(DialectRefusal):
                    await client.request(op, REQUESTS[op_id]())
                return
            result = await client.request(op, REQUESTS[op_id]())
        assert isinstance(result, op.result)
        if isinstance(result, m.ListAnswer):
            assert result.items, result  # the sandbox's contacts, chats and groups
        if isinstance(result, m.OperationResult):
            assert result.ok, result
    finally:
        await gateway.stop()


@pytest.mark.parametrize(
    ("op_id", "field"),
    [(OperationId.SEND_POLL, "selectableCount"), (OperationId.SEND_LOCATION, "lat"),
     (OperationId.SEND_BUTTON_ACTIONS, "buttons")],
)
async def test_a_zapi_sandbox_refuses_the_spec_shape_naming_the_field(op_id: OperationId, field: str) -> None:
    gateway = await _sandbox(InstanceDialect.ZAPI, SessionDialect.SPEC)
    try:
        async with GatewayHttp(timeout=5.0) as http:
            spec_client, _ = _clients(http, gateway.url, InstanceDialect.SPEC, SessionDialect.SPEC)
            with pytest.raises(BadRequest) as refused:
                await spec_client.request(OPERATIONS[op_id], REQUESTS[op_id]())
        assert field in (refused.value.body or "") + refused.value.message
        assert list(gateway.state.sent) == []
    finally:
        await gateway.stop()
