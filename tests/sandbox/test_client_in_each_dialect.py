"""The app's client, speaking each dialect, against the sandbox speaking the same one: every operation of the table
succeeds with the sandbox's demo data. The sandbox judges requests by its own checks (not the client's models),
so a translation bug in the client fails here."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from tests.api.spec_cases import media_requests
from tests.sandbox.conftest import CLIENT_TOKEN, INSTANCE_ID, INSTANCE_TOKEN, SESSION_TOKEN
from tui.api import connection as c
from tui.api import models as m
from tui.api.client import GatewayHttp
from tui.gateways.clients import InstanceClient, SessionClient
from tui.api.credentials import InstanceCredentials, SessionCredentials
from tui.api.dialects import InstanceDialect, SessionDialect
from tui.api.operations import OPERATIONS, PAIRING_CALLS, DialectRefusal, Family, OperationId
from tui.gateways.sandbox import SandboxGateway
from tui.sandbox.state import COMMUNITY_ID, LAUNCH_ID, PRODUCT_IDS

PHONE = "5511987654321"
# Where the sandbox's webhooks go here: a loopback port nothing listens on, refused at once (an unresolvable host
# cost a DNS round trip per attempt, and with the media sends' deliveries the wait below passed its 10 s).
NOWHERE = "http://127.0.0.1:9"
KEY = "client-dialect-key-0123456789abcdef"
VCARD = "BEGIN:VCARD\nVERSION:3.0\nN:Souza;Ana;;;\nFN:Ana Souza\nTEL;TYPE=CELL:+5511987654321\nEND:VCARD"

# One request per operation, with the spec's field names, aimed at the sandbox's demo account.
# issue 23's pairing calls (shared with test_operations_in_dialects)
PAIRING_REQUESTS: dict[OperationId, Callable[[], m.Request]] = {
    OperationId.QR_CODE: m.NoBody,
    OperationId.QR_CODE_IMAGE: m.NoBody,
    OperationId.PHONE_CODE: lambda: c.PhoneCodeQuery(phone="5511987654321"),
    OperationId.RESTART: m.NoBody,
    OperationId.DISCONNECT: m.NoBody,
    OperationId.SESSION_STATUS: m.NoBody,
    OperationId.SESSION_CONNECT: lambda: c.SessionConnect(Subscribe=["Message", "ReadReceipt"]),
    OperationId.SESSION_QR: m.NoBody,
    OperationId.SESSION_PAIRPHONE: lambda: c.PairPhone(Phone="5511987654321"),
    OperationId.SESSION_DISCONNECT: m.NoBody,
    OperationId.SESSION_LOGOUT: m.NoBody,
}
# issue 24's webhook reads and settings (Z-API's GET /me and PUT /update-every-webhooks, GET /webhook)
DOCTOR_REQUESTS: dict[OperationId, Callable[[], m.Request]] = {
    OperationId.INSTANCE_DATA: m.NoBody,
    OperationId.UPDATE_EVERY_WEBHOOKS: lambda: c.EveryCallback(value="http://127.0.0.1:9/hooks"),
    OperationId.WEBHOOK_READ: m.NoBody,
    OperationId.DEVICE: m.NoBody,  # Z-API's GET /device: the paired phone's number (the connection watch reads it)
}
ZAPI_ONLY = {OperationId.INSTANCE_DATA, OperationId.UPDATE_EVERY_WEBHOOKS, OperationId.DEVICE}

REQUESTS: dict[OperationId, Callable[[], m.Request]] = {
    OperationId.SEND_TEXT: lambda: m.SendText(phone=f"{LAUNCH_ID}@g.us", message="hello"),
    OperationId.SEND_BUTTON_ACTIONS: lambda: m.SendButtonActions(
        phone=PHONE, message="Pick", buttons=[m.Button(id="1", text="Yes"), m.Button(id="2", text="No")]),
    OperationId.SEND_BUTTON_LIST: lambda: m.SendButtonList(
        phone=PHONE, message="Options", buttonList=m.ButtonList(buttons=[m.ListButton(id="1", label="A")])),
    OperationId.SEND_LINK: lambda: m.SendLink(
        phone=PHONE, message="See https://acme.example", linkUrl="https://acme.example",
        image="https://acme.example/i.png", title="Acme", linkDescription="Our shop"),
    OperationId.SEND_POLL: lambda: m.SendPoll(
        phone=PHONE, message="Lunch?", poll=[m.PollOption(name="Yes"), m.PollOption(name="No")], selectableCount=1),
    OperationId.SEND_LOCATION: lambda: m.SendLocation(
        phone=PHONE, title="Office", address="Av. Paulista, 1000", lat=-23.5614, lng=-46.6559, delayMessage=2000),
    OperationId.SEND_STICKER: lambda: m.SendSticker(phone=PHONE, sticker="https://acme.example/s.webp"),
    OperationId.FORWARD_MESSAGE: lambda: m.ForwardMessage(phone=PHONE, messageId="3EB0UNKNOWN", messagePhone=PHONE),
    OperationId.PRIVACY_GROUP_ADD: lambda: m.PrivacyGroupAdd(type=m.PrivacyScope.CONTACT),
    OperationId.PRIVACY_LAST_SEEN: lambda: m.PrivacyLastSeen(visualizationType=m.PrivacyScope.CONTACT),
    OperationId.ADD_PARTICIPANT: lambda: m.AddParticipant(groupId=f"{LAUNCH_ID}-group", phones=["5511976543219"]),
    OperationId.UPDATE_GROUP_NAME: lambda: m.UpdateGroupName(groupId=f"{LAUNCH_ID}-group", groupName="Launch Q4"),
    OperationId.GROUP_METADATA: lambda: m.GroupMetadataQuery(GROUP_PHONE_NUMBER=f"{LAUNCH_ID}-group"),
    OperationId.ADD_ADMIN: lambda: m.AddAdmin(communityId=COMMUNITY_ID, phones=["5511976543219"]),
    OperationId.REDEFINE_INVITATION_LINK: lambda: m.RedefineInvitationLink(communityId=COMMUNITY_ID),
    OperationId.MODIFY_CHAT: lambda: m.ModifyChat(phone=f"{LAUNCH_ID}@g.us", action=m.ChatAction.PIN),
    OperationId.PROFILE_DESCRIPTION: lambda: m.ProfileDescription(value="Open 9-18"),
    OperationId.PRODUCTS: lambda: m.ProductQuery(PRODUCT_ID=PRODUCT_IDS[0]),
    OperationId.UPDATE_WEBHOOK_DELIVERY: lambda: m.DeliveryWebhook(value=f"{NOWHERE}/delivery"),
    OperationId.STATUS: lambda: m.NoBody(),
    OperationId.HMAC_SET: lambda: m.HmacKey(hmac_key=KEY),
    OperationId.HMAC_STATUS: lambda: m.NoBody(),
    OperationId.HMAC_DELETE: lambda: m.NoBody(),
    OperationId.PROXY: lambda: m.ProxyConfig(enable=True, proxy_url="socks5://10.0.0.1:1080"),
    OperationId.GROUP_INFO: lambda: m.GroupInfoRequest(GroupJID=f"{LAUNCH_ID}@g.us"),
    OperationId.GROUP_CREATE: lambda: m.GroupCreate(name="Launch crew", participants=[PHONE]),
    OperationId.SEND_CONTACT: lambda: m.ContactCard(Phone=PHONE, Name="Ana Souza", Vcard=VCARD),
    OperationId.WEBHOOK: lambda: m.WebhookUpdate(events=["Message", "ReadReceipt"]),
    OperationId.LIST_CHATS: lambda: m.ListPage(),
    OperationId.LIST_CONTACTS: lambda: m.ListPage(pageSize=5),
    OperationId.LIST_GROUPS: lambda: m.ListPage(),
    OperationId.USER_CONTACTS: lambda: m.NoBody(),
    OperationId.USER_LID: lambda: m.UserLidQuery(jid="5511987654321"),
    OperationId.MESSAGE_HISTORY: lambda: m.ChatHistoryQuery(chat_jid="index"),
    OperationId.FIND_MESSAGES: lambda: m.ChatMessagesQuery(phone="5511987654321"),
    OperationId.GROUP_LIST: lambda: m.NoBody(),
    **PAIRING_REQUESTS,
    **DOCTOR_REQUESTS,
    **media_requests(PHONE),
}
# The gateways' lists and pairing calls are not in the spec, nor WuzAPI's media sends: its dialect refuses them
# before sending (and that is the success).
NOT_IN_SPEC = {OperationId.LIST_CHATS, OperationId.LIST_CONTACTS, OperationId.LIST_GROUPS, OperationId.USER_CONTACTS,
               OperationId.USER_LID, OperationId.MESSAGE_HISTORY, OperationId.FIND_MESSAGES,
               OperationId.GROUP_LIST, *PAIRING_CALLS, *ZAPI_ONLY, OperationId.CHAT_SEND_IMAGE, OperationId.CHAT_SEND_VIDEO,
               OperationId.CHAT_SEND_AUDIO, OperationId.CHAT_SEND_DOCUMENT}
# The pairing calls change the account's connection as they go (disconnect, logout): they are driven in the
# order a person uses them in tests/sandbox/test_pairing.py, and in the spec dialect only for their refusal here.
DRIVEN_ELSEWHERE = set(PAIRING_CALLS)


def test_every_operation_has_a_request_here() -> None:
    assert set(REQUESTS) == set(OPERATIONS)


def _succeeded(result: Any) -> bool:
    if isinstance(result, m.OperationResult):
        return result.ok
    if isinstance(result, m.SendResult):
        return bool(result.message_id)
    if isinstance(result, m.GroupMetadata):
        return result.groupName == "Product Launch Q3" or result.groupName == "Launch Q4"
    if isinstance(result, m.GroupInfo):
        return result.JID.endswith("@g.us") and bool(result.Participants)
    if isinstance(result, m.Product):
        return result.price == 29990
    if isinstance(result, m.ConnectionStatus):
        return result.connected
    if isinstance(result, m.ListAnswer):
        return bool(result.items)
    return result is not None


DIALECTS = [(InstanceDialect.SPEC, SessionDialect.SPEC), (InstanceDialect.ZAPI, SessionDialect.WUZAPI)]


@pytest.mark.parametrize(("instance_dialect", "session_dialect"), DIALECTS, ids=["spec", "zapi+wuzapi"])
async def test_client_speaks_every_operation_to_the_sandbox_in_its_dialect(instance_dialect, session_dialect):
    gateway = SandboxGateway(
        instance_id=INSTANCE_ID, instance_token=INSTANCE_TOKEN, client_token=CLIENT_TOKEN,
        session_token=SESSION_TOKEN, delivery_delay=0.0,
        instance_dialect=instance_dialect, session_dialect=session_dialect,
    )
    await gateway.start()
    failures: dict[str, str] = {}
    try:
        async with GatewayHttp(timeout=5.0) as http:
            instance = InstanceClient(
                http, InstanceCredentials(gateway.url, INSTANCE_ID, INSTANCE_TOKEN, CLIENT_TOKEN), instance_dialect)
            session = SessionClient(http, SessionCredentials(gateway.url, SESSION_TOKEN), session_dialect)
            await session.update_webhook(m.WebhookUpdate(webhook=f"{NOWHERE}/s", events=["Message"],
                                                         active=True))
            for op in OPERATIONS.values():
                client: Any = instance if op.family is Family.INSTANCE else session
                if op.id in DRIVEN_ELSEWHERE and client.dialect.value != "spec":
                    continue
                try:
                    result = await client.request(op, REQUESTS[op.id]())
                except DialectRefusal as refusal:
                    if not (op.id in NOT_IN_SPEC and client.dialect.value == "spec"):
                        failures[op.id.value] = f"refused: {refusal}"
                    continue
                except Exception as error:  # collect every failure, then report them together
                    failures[op.id.value] = f"{type(error).__name__}: {error}"
                    continue
                if not _succeeded(result):
                    failures[op.id.value] = f"unexpected result {result!r}"
        await gateway.wait_for_deliveries()
    finally:
        await gateway.stop()
    assert failures == {}
    # The partial webhook update was merged with what was there, not zeroed.
    webhook = gateway.state.session_webhook
    assert (webhook.url, webhook.events, webhook.active) == (f"{NOWHERE}/s", ["Message", "ReadReceipt"], True)
