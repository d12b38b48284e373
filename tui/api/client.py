"""Async clients of the two endpoint families (spec §4): one method per operation, typed in and out.

    http = GatewayHttp(on_exchange=request_log.append)
    instance = InstanceClient(http, InstanceCredentials(base_url, instance_id, instance_token, client_token), adapter)
    result = await instance.send_text(SendText(phone="5511999999999", message="hi"))
    ...
    await http.aclose()

Requests are the strict models of `tui.api.models`, validated when built; every failure is a
`tui.api.errors.GatewayError` whose text is safe to show (secrets redacted). The gateway is the `adapter`
(`tui.api.adapter.GatewayAdapter`, found by dialect in `tui.gateways`): it writes each operation, says where the
family lives and how it authenticates, and reads the answers; the client never asks which gateway it is.
"""

from __future__ import annotations

import dataclasses

from collections.abc import Sequence
from typing import TypeVar
from urllib.parse import quote, urlencode

from pydantic import BaseModel

from tui.api.connection import (
    EveryCallback,
    InstanceStatus,
    ZapiInstanceData,
    PairPhone,
    PhoneCodeQuery,
    SessionConnect,
    SessionConnected,
    SessionLinkingCode,
    SessionQr,
    SessionStatus,
    ZapiPhoneCode,
    ZapiQr,
)
from tui.api.credentials import InstanceCredentials, SessionCredentials
from tui.api.exchange import Exchange, RequestLog
from tui.api.gateway_http import Call, GatewayHttp
from tui.api.models import (
    AddAdmin,
    AddParticipant,
    AddParticipantResult,
    ChatSendAudio,
    ChatSendDocument,
    ChatSendImage,
    ChatSendVideo,
    ChatList,
    ContactCard,
    ContactList,
    ContactSent,
    DeliveryWebhook,
    Details,
    ForwardMessage,
    GroupCreate,
    GroupInfo,
    GroupInfoRequest,
    GroupList,
    GroupMetadata,
    GroupMetadataQuery,
    HmacKey,
    HmacStatus,
    InviteLink,
    ListPage,
    ModifyChat,
    NoBody,
    OperationResult,
    PrivacyGroupAdd,
    PrivacyLastSeen,
    Product,
    ProductQuery,
    ProfileDescription,
    ProxyConfig,
    RedefineInvitationLink,
    Request,
    SendAudio,
    SendButtonActions,
    SendButtonList,
    SendDocument,
    SendImage,
    SendLink,
    SendLocation,
    SendPoll,
    SendResult,
    SendSticker,
    SendText,
    SendVideo,
    UpdateGroupName,
    WebhookConfig,
    WebhookUpdate,
)
from tui.api.adapter import Endpoint, GatewayAdapter
from tui.api.errors import GatewayError, ReadOnlyRefused
from tui.api import operations as ops
from tui.api.operations import Dialect, Family, Operation, WireRequest
from tui.api.redaction import Redactor

__all__ = [
    "Exchange",
    "GatewayHttp",
    "InstanceClient",
    "InstanceCredentials",
    "RequestLog",
    "SessionClient",
    "SessionCredentials",
]

Result = TypeVar("Result", bound=BaseModel)
Req = TypeVar("Req", bound=Request)



def _require_family(op: Operation[Req, Result], family: Family) -> None:
    if op.family is not family:
        raise TypeError(f"{op.id} belongs to the {op.family} family")


def _refuse_a_write(op: Operation[Req, Result], read_only: str | None) -> None:
    """The one check every call passes: on a read-only profile (`read_only`, its name), an operation that writes
    raises ReadOnlyRefused before anything is written or sent."""
    if read_only is not None and op.writes:
        raise ReadOnlyRefused(read_only, op.id.value)


class _FamilyClient:
    """What both families' clients do: write the operation through the adapter, refuse a write on a read-only
    profile, read first where the gateway takes a write only whole, and send to the adapter's endpoint."""

    family: Family

    def __init__(self, http: GatewayHttp, adapter: GatewayAdapter, endpoint: Endpoint, redactor: Redactor,
                 read_only: str | None) -> None:
        if self.family not in adapter.dialects and not self._through_instance(adapter):
            raise ValueError(f"{adapter.name} has no {self.family.label}")
        self.http = http
        self.adapter = adapter
        self.read_only = read_only
        self._endpoint = endpoint
        self._redactor = redactor

    def _through_instance(self, adapter: GatewayAdapter) -> bool:
        return self.family is Family.SESSION and adapter.session_through_instance

    @property
    def dialect(self) -> Dialect:
        """The dialect its operations are written in: the instance's, for a gateway that serves the session
        family's operations through its instance (Evolution API)."""
        return self.adapter.dialects.get(self.family) or self.adapter.dialects[Family.INSTANCE]

    async def request(self, op: Operation[Req, Result], request: Req) -> Result:
        """Send `request` as `op`, written by this client's gateway. DialectRefusal (nothing sent) when it cannot
        be said; ReadOnlyRefused when the profile is read-only and `op` writes."""
        _require_family(op, self.family)
        _refuse_a_write(op, self.read_only)
        wire = self.adapter.wire(op, request)
        first = self.adapter.read_first(op, request)
        if first is not None:
            try:
                current = await self._send_wire(first.operation, "GET", first.read, first.answer, is_read=True)
            except GatewayError as error:
                raise type(error)(first.failed(error), status=error.status, body=error.body) from None
            wire = dataclasses.replace(wire, body=first.merge(current))  # the gateway's own method kept
        method = wire.method or op.method
        return await self._send_wire(op.id.value, method, wire, op.result, is_read=method == "GET")

    async def _send_wire(
        self, operation: str, method: str, wire: WireRequest, result: type[Result], *, is_read: bool
    ) -> Result:
        filled = self._endpoint.placeholders
        tail = "/".join(
            quote(filled.get(part[1:-1], part) if part.startswith("{") and part.endswith("}") else part, safe="")
            for part in wire.path
        )
        query = ("?" + urlencode(wire.query)) if wire.query else ""
        return await self.http.call(
            Call(
                operation=operation,
                method=method,
                url=f"{self._endpoint.url}/{tail}{query}",
                shown_url=f"{self._endpoint.shown_url}/{tail}{query}",
                headers=dict(self._endpoint.headers),
                result=result,
                redactor=self._redactor,
                body=wire.body,
                is_read=is_read,
                read=self.adapter.read_answer,
            )
        )


class InstanceClient(_FamilyClient):
    """Instance family: `{base_url}/instances/{instanceId}/token/{instanceToken}/...`, header `Client-Token` (as the
    spec and Z-API have it; another gateway's adapter says its own endpoint).

    `request(op, model)` sends any instance operation of `tui.api.operations`, written by `adapter`; the named
    methods below are thin typed wrappers over it. With `read_only` (the profile's name), every operation that
    writes is refused (ReadOnlyRefused) before anything is sent.
    """

    family = Family.INSTANCE

    def __init__(
        self, http: GatewayHttp, credentials: InstanceCredentials, adapter: GatewayAdapter,
        *, read_only: str | None = None,
    ) -> None:
        self.credentials = credentials
        super().__init__(http, adapter, adapter.instance_endpoint(credentials), credentials.redactor(), read_only)

    def __repr__(self) -> str:
        return f"InstanceClient({self.credentials!r}, dialect={self.dialect.value!r})"

    # -- sends (202 or 200 with messageId / id / zaapId); never retried ------------------------------------

    async def send_text(self, request: SendText) -> SendResult:
        return await self.request(ops.SEND_TEXT, request)

    async def send_button_actions(self, request: SendButtonActions) -> SendResult:
        return await self.request(ops.SEND_BUTTON_ACTIONS, request)

    async def send_button_list(self, request: SendButtonList) -> SendResult:
        return await self.request(ops.SEND_BUTTON_LIST, request)

    async def send_link(self, request: SendLink) -> SendResult:
        return await self.request(ops.SEND_LINK, request)

    async def send_poll(self, request: SendPoll) -> SendResult:
        return await self.request(ops.SEND_POLL, request)

    async def send_location(self, request: SendLocation) -> SendResult:
        return await self.request(ops.SEND_LOCATION, request)

    async def send_sticker(self, request: SendSticker) -> SendResult:
        return await self.request(ops.SEND_STICKER, request)

    async def forward_message(self, request: ForwardMessage) -> SendResult:
        return await self.request(ops.FORWARD_MESSAGE, request)

    # -- media (build the request from a file with tui.api.media, which checks it first) ---------------------

    async def send_image(self, request: SendImage) -> SendResult:
        return await self.request(ops.SEND_IMAGE, request)

    async def send_video(self, request: SendVideo) -> SendResult:
        return await self.request(ops.SEND_VIDEO, request)

    async def send_audio(self, request: SendAudio) -> SendResult:
        return await self.request(ops.SEND_AUDIO, request)

    async def send_document(self, request: SendDocument) -> SendResult:
        return await self.request(ops.SEND_DOCUMENT, request)

    # -- privacy, groups, communities, chats, profile, catalog, webhook ----------------------------

    async def set_privacy_group_add(self, request: PrivacyGroupAdd) -> OperationResult:
        return await self.request(ops.PRIVACY_GROUP_ADD, request)

    async def set_privacy_last_seen(self, request: PrivacyLastSeen) -> OperationResult:
        return await self.request(ops.PRIVACY_LAST_SEEN, request)

    async def add_participant(self, request: AddParticipant) -> AddParticipantResult:
        return await self.request(ops.ADD_PARTICIPANT, request)

    async def update_group_name(self, request: UpdateGroupName) -> OperationResult:
        return await self.request(ops.UPDATE_GROUP_NAME, request)

    async def group_metadata(self, group_id: str) -> GroupMetadata:
        """Raises pydantic's ValidationError naming GROUP_PHONE_NUMBER unless `group_id` is `<digits>-group`."""
        return await self.request(ops.GROUP_METADATA, GroupMetadataQuery(GROUP_PHONE_NUMBER=group_id))

    async def add_admin(self, request: AddAdmin) -> OperationResult:
        return await self.request(ops.ADD_ADMIN, request)

    async def redefine_invitation_link(self, request: RedefineInvitationLink) -> InviteLink:
        return await self.request(ops.REDEFINE_INVITATION_LINK, request)

    async def modify_chat(self, request: ModifyChat) -> OperationResult:
        return await self.request(ops.MODIFY_CHAT, request)

    async def set_profile_description(self, request: ProfileDescription) -> OperationResult:
        return await self.request(ops.PROFILE_DESCRIPTION, request)

    async def product(self, product_id: str) -> Product:
        return await self.request(ops.PRODUCTS, ProductQuery(PRODUCT_ID=product_id))

    async def set_delivery_webhook(self, request: DeliveryWebhook) -> OperationResult:
        return await self.request(ops.UPDATE_WEBHOOK_DELIVERY, request)

    async def status(self) -> InstanceStatus:
        """`.state` is the typed ConnectionState; `error` is Z-API's status text, not a failure."""
        return await self.request(ops.STATUS, NoBody())

    # -- pairing and the connection (Z-API only: the spec dialect refuses them before sending) ---------------

    async def qr_code(self) -> ZapiQr:
        """The current QR code; `.payload()` is its text (read from the image when Z-API sends one)."""
        return await self.request(ops.QR_CODE, NoBody())

    async def qr_code_image(self) -> ZapiQr:
        return await self.request(ops.QR_CODE_IMAGE, NoBody())

    async def phone_code(self, phone: str) -> ZapiPhoneCode:
        """Raises pydantic's ValidationError naming phone unless it is digits with the country code."""
        return await self.request(ops.PHONE_CODE, PhoneCodeQuery(phone=phone))

    async def restart(self) -> OperationResult:
        return await self.request(ops.RESTART, NoBody())

    async def disconnect(self) -> OperationResult:
        """Unpairs the phone (Z-API's GET /disconnect): pairing again needs a new code."""
        return await self.request(ops.DISCONNECT, NoBody())

    # -- the webhook settings (Z-API only: the spec can set the delivery URL and read none) ---------------------

    async def instance_data(self) -> ZapiInstanceData:
        """Z-API's `GET /me`: among the instance's settings, the URL of each callback."""
        return await self.request(ops.INSTANCE_DATA, NoBody())

    async def point_every_callback(self, url: str) -> OperationResult:
        """Z-API's `PUT /update-every-webhooks`: every callback to `url` (https only, at Z-API)."""
        return await self.request(ops.UPDATE_EVERY_WEBHOOKS, EveryCallback(value=url))

    # -- lists (Z-API only: the spec dialect refuses them before sending) --------------------------------

    async def list_chats(self, page: ListPage) -> ChatList:
        return await self.request(ops.LIST_CHATS, page)

    async def list_contacts(self, page: ListPage) -> ContactList:
        return await self.request(ops.LIST_CONTACTS, page)

    async def list_groups(self, page: ListPage) -> ChatList:
        return await self.request(ops.LIST_GROUPS, page)


class SessionClient(_FamilyClient):
    """Session family: `{base_url}/session/...`, `/group/...`, `/chat/send/contact`, `/webhook`; header `token`.

    Where the gateway takes a write only whole (WuzAPI's PUT /webhook zeroes every field it is not sent), the
    adapter's `read_first` reads the current state and the merged whole is sent. With `read_only` (the profile's
    name), every operation that writes is refused (ReadOnlyRefused) before anything is sent.
    """

    family = Family.SESSION

    def __init__(
        self, http: GatewayHttp, credentials: SessionCredentials | InstanceCredentials, adapter: GatewayAdapter,
        *, read_only: str | None = None,
    ) -> None:
        """`credentials` are the instance's when `adapter` serves the session family's operations through its
        instance endpoint (Evolution API: one profile, one key)."""
        self.credentials = credentials
        if isinstance(credentials, InstanceCredentials):
            if not adapter.session_through_instance:
                raise ValueError(f"{adapter.name} takes the {Family.SESSION.label}'s operations on settings of their own")
            endpoint = adapter.instance_endpoint(credentials)
        else:
            endpoint = adapter.session_endpoint(credentials)
        super().__init__(http, adapter, endpoint, credentials.redactor(), read_only)

    def __repr__(self) -> str:
        return f"SessionClient({self.credentials!r}, dialect={self.dialect.value!r})"

    async def set_hmac_key(self, request: HmacKey) -> Details:
        return await self.request(ops.HMAC_SET, request)

    async def hmac_status(self) -> HmacStatus:
        """`configured` is False when WuzAPI answers `{"hmac_key": ""}` or a bare `""`."""
        return await self.request(ops.HMAC_STATUS, NoBody())

    async def delete_hmac_key(self) -> Details:
        return await self.request(ops.HMAC_DELETE, NoBody())

    async def set_proxy(self, request: ProxyConfig) -> Details:
        return await self.request(ops.PROXY, request)

    async def group_info(self, request: GroupInfoRequest) -> GroupInfo:
        return await self.request(ops.GROUP_INFO, request)

    async def create_group(self, request: GroupCreate) -> GroupInfo:
        return await self.request(ops.GROUP_CREATE, request)

    async def send_contact(self, request: ContactCard) -> ContactSent:
        return await self.request(ops.SEND_CONTACT, request)

    # -- media (WuzAPI only: the spec dialect refuses them before sending) ---------------------------------------

    async def send_image(self, request: ChatSendImage) -> ContactSent:
        return await self.request(ops.CHAT_SEND_IMAGE, request)

    async def send_video(self, request: ChatSendVideo) -> ContactSent:
        return await self.request(ops.CHAT_SEND_VIDEO, request)

    async def send_audio(self, request: ChatSendAudio) -> ContactSent:
        return await self.request(ops.CHAT_SEND_AUDIO, request)

    async def send_document(self, request: ChatSendDocument) -> ContactSent:
        return await self.request(ops.CHAT_SEND_DOCUMENT, request)

    async def update_webhook(self, request: WebhookUpdate) -> WebhookConfig:
        return await self.request(ops.WEBHOOK, request)

    # -- lists (WuzAPI only: the spec dialect refuses them before sending) -------------------------------

    async def user_contacts(self) -> ContactList:
        return await self.request(ops.USER_CONTACTS, NoBody())

    async def group_list(self) -> GroupList:
        return await self.request(ops.GROUP_LIST, NoBody())

    # -- pairing and the connection (WuzAPI only: the spec dialect refuses them before sending) --------------

    async def read_webhook(self) -> WebhookConfig:
        """`GET /webhook`: the URL and the subscribed kinds (WuzAPI: `[""]` for none; the spec's sandbox also
        says `active`)."""
        return await self.request(ops.WEBHOOK_READ, NoBody())

    async def session_status(self) -> SessionStatus:
        """`.state` is the typed ConnectionState, from either shape WuzAPI answers."""
        return await self.request(ops.SESSION_STATUS, NoBody())

    async def connect(self, *, subscribe: Sequence[str]) -> SessionConnected:
        """`POST /session/connect` with `Immediate: true`. `subscribe` is the profile's event kinds, required and
        never empty: WuzAPI stores what every connect sends, and an empty list would store no subscriptions."""
        return await self.request(ops.SESSION_CONNECT, SessionConnect(Subscribe=list(subscribe), Immediate=True))

    async def session_qr(self) -> SessionQr:
        return await self.request(ops.SESSION_QR, NoBody())

    async def pair_phone(self, phone: str) -> SessionLinkingCode:
        return await self.request(ops.SESSION_PAIRPHONE, PairPhone(Phone=phone))

    async def disconnect(self) -> Details:
        """Drops the connection and keeps the pairing; `connect` again reconnects without a code."""
        return await self.request(ops.SESSION_DISCONNECT, NoBody())

    async def logout(self) -> Details:
        """Unpairs the phone: pairing again needs a new code."""
        return await self.request(ops.SESSION_LOGOUT, NoBody())
