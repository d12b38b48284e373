"""Async clients of the two endpoint families (spec §4): one method per operation, typed in and out.

    http = GatewayHttp(on_exchange=request_log.append)
    instance = InstanceClient(http, InstanceCredentials(base_url, instance_id, instance_token, client_token))
    result = await instance.send_text(SendText(phone="5511999999999", message="hi"))
    ...
    await http.aclose()

Requests are the strict models of `tui.api.models`, validated when built; every failure is a
`tui.api.errors.GatewayError` whose text is safe to show (secrets redacted).
"""

from __future__ import annotations

from typing import Any, TypeVar
from urllib.parse import quote, urlencode

from pydantic import BaseModel

from tui.api.credentials import InstanceCredentials, SessionCredentials
from tui.api.exchange import Exchange, RequestLog
from tui.api.gateway_http import Call, GatewayHttp
from tui.api.models import (
    AddAdmin,
    AddParticipant,
    AddParticipantResult,
    ConnectionStatus,
    ContactCard,
    ContactSent,
    DeliveryWebhook,
    Details,
    ForwardMessage,
    GroupCreate,
    GroupInfo,
    GroupInfoRequest,
    GroupMetadata,
    GroupMetadataQuery,
    HmacKey,
    HmacStatus,
    InviteLink,
    ModifyChat,
    OperationResult,
    PrivacyGroupAdd,
    PrivacyLastSeen,
    Product,
    ProductQuery,
    ProfileDescription,
    ProxyConfig,
    RedefineInvitationLink,
    Request,
    SendButtonActions,
    SendButtonList,
    SendLink,
    SendLocation,
    SendPoll,
    SendResult,
    SendSticker,
    SendText,
    UpdateGroupName,
    WebhookConfig,
    WebhookUpdate,
)
from tui.api.redaction import INSTANCE_TOKEN_PLACEHOLDER

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

JSON = "application/json"


def _segment(value: str) -> str:
    return quote(value, safe="")


def _check(request: Request, expected: type[Request]) -> dict[str, Any]:
    if not isinstance(request, expected):
        raise TypeError(f"expected {expected.__name__}, got {type(request).__name__}")
    return request.wire()


class InstanceClient:
    """Instance family: `{base_url}/instances/{instanceId}/token/{instanceToken}/...`, header `Client-Token`."""

    def __init__(self, http: GatewayHttp, credentials: InstanceCredentials) -> None:
        self.http = http
        self.credentials = credentials
        self._redactor = credentials.redactor()

    def __repr__(self) -> str:
        return f"InstanceClient({self.credentials!r})"

    def _prefix(self, token: str) -> str:
        base = self.credentials.base_url.rstrip("/")
        return f"{base}/instances/{_segment(self.credentials.instance_id)}/token/{token}"

    async def _call(
        self,
        operation: str,
        method: str,
        path: tuple[str, ...],
        result: type[Result],
        *,
        body: dict[str, Any] | None = None,
        is_read: bool = False,
    ) -> Result:
        tail = "/".join(_segment(part) for part in path)
        return await self.http.call(
            Call(
                operation=operation,
                method=method,
                url=f"{self._prefix(_segment(self.credentials.instance_token))}/{tail}",
                shown_url=f"{self._prefix(INSTANCE_TOKEN_PLACEHOLDER)}/{tail}",
                headers={"Client-Token": self.credentials.client_token, "Content-Type": JSON},
                result=result,
                redactor=self._redactor,
                body=body,
                is_read=is_read,
            )
        )

    async def _send(self, operation: str, request: Request, expected: type[Request]) -> SendResult:
        # Sends answer 202 in the spec and 200 in reality; both are accepted. Never retried.
        return await self._call(operation, "POST", (operation,), SendResult, body=_check(request, expected))

    # -- sends (202 or 200 with messageId / id / zaapId) -------------------------------------------

    async def send_text(self, request: SendText) -> SendResult:
        return await self._send("send-text", request, SendText)

    async def send_button_actions(self, request: SendButtonActions) -> SendResult:
        return await self._send("send-button-actions", request, SendButtonActions)

    async def send_button_list(self, request: SendButtonList) -> SendResult:
        return await self._send("send-button-list", request, SendButtonList)

    async def send_link(self, request: SendLink) -> SendResult:
        return await self._send("send-link", request, SendLink)

    async def send_poll(self, request: SendPoll) -> SendResult:
        return await self._send("send-poll", request, SendPoll)

    async def send_location(self, request: SendLocation) -> SendResult:
        return await self._send("send-location", request, SendLocation)

    async def send_sticker(self, request: SendSticker) -> SendResult:
        return await self._send("send-sticker", request, SendSticker)

    async def forward_message(self, request: ForwardMessage) -> SendResult:
        return await self._send("forward-message", request, ForwardMessage)

    # -- privacy, groups, communities, chats, profile, catalog, webhook ----------------------------

    async def set_privacy_group_add(self, request: PrivacyGroupAdd) -> OperationResult:
        body = _check(request, PrivacyGroupAdd)
        return await self._call("privacy/group-add", "POST", ("privacy", "group-add"), OperationResult, body=body)

    async def set_privacy_last_seen(self, request: PrivacyLastSeen) -> OperationResult:
        body = _check(request, PrivacyLastSeen)
        return await self._call("privacy/last-seen", "POST", ("privacy", "last-seen"), OperationResult, body=body)

    async def add_participant(self, request: AddParticipant) -> AddParticipantResult:
        body = _check(request, AddParticipant)
        return await self._call("add-participant", "POST", ("add-participant",), AddParticipantResult, body=body)

    async def update_group_name(self, request: UpdateGroupName) -> OperationResult:
        body = _check(request, UpdateGroupName)
        return await self._call("update-group-name", "POST", ("update-group-name",), OperationResult, body=body)

    async def group_metadata(self, group_id: str) -> GroupMetadata:
        """Raises pydantic's ValidationError naming GROUP_PHONE_NUMBER unless `group_id` is `<digits>-group`."""
        query = GroupMetadataQuery(GROUP_PHONE_NUMBER=group_id)
        return await self._call(
            "group-metadata", "GET", ("group-metadata", query.GROUP_PHONE_NUMBER), GroupMetadata, is_read=True
        )

    async def add_admin(self, request: AddAdmin) -> OperationResult:
        body = _check(request, AddAdmin)
        return await self._call("add-admin", "POST", ("add-admin",), OperationResult, body=body)

    async def redefine_invitation_link(self, request: RedefineInvitationLink) -> InviteLink:
        body = _check(request, RedefineInvitationLink)
        path = ("redefine-invitation-link", request.communityId)
        return await self._call("redefine-invitation-link", "POST", path, InviteLink, body=body)

    async def modify_chat(self, request: ModifyChat) -> OperationResult:
        body = _check(request, ModifyChat)
        return await self._call("modify-chat", "POST", ("modify-chat",), OperationResult, body=body)

    async def set_profile_description(self, request: ProfileDescription) -> OperationResult:
        body = _check(request, ProfileDescription)
        return await self._call("profile-description", "PUT", ("profile-description",), OperationResult, body=body)

    async def product(self, product_id: str) -> Product:
        query = ProductQuery(PRODUCT_ID=product_id)
        return await self._call("products", "GET", ("products", query.PRODUCT_ID), Product, is_read=True)

    async def set_delivery_webhook(self, request: DeliveryWebhook) -> OperationResult:
        body = _check(request, DeliveryWebhook)
        path = ("update-webhook-delivery",)
        return await self._call("update-webhook-delivery", "PUT", path, OperationResult, body=body)

    async def status(self) -> ConnectionStatus:
        return await self._call("status", "GET", ("status",), ConnectionStatus, is_read=True)


class SessionClient:
    """Session family: `{base_url}/session/...`, `/group/...`, `/chat/send/contact`, `/webhook`; header `token`."""

    def __init__(self, http: GatewayHttp, credentials: SessionCredentials) -> None:
        self.http = http
        self.credentials = credentials
        self._redactor = credentials.redactor()

    def __repr__(self) -> str:
        return f"SessionClient({self.credentials!r})"

    async def _call(
        self,
        method: str,
        path: str,
        result: type[Result],
        *,
        body: dict[str, Any] | None = None,
        query: dict[str, str] | None = None,
        is_read: bool = False,
    ) -> Result:
        url = self.credentials.base_url.rstrip("/") + path
        if query:
            url += "?" + urlencode(query)
        return await self.http.call(
            Call(
                operation=f"{method} {path}",
                method=method,
                url=url,
                shown_url=url,
                headers={"token": self.credentials.token, "Content-Type": JSON},
                result=result,
                redactor=self._redactor,
                body=body,
                is_read=is_read,
            )
        )

    async def set_hmac_key(self, request: HmacKey) -> Details:
        return await self._call("POST", "/session/hmac/config", Details, body=_check(request, HmacKey))

    async def hmac_status(self) -> HmacStatus:
        """`configured` is False when WuzAPI answers `{"hmac_key": ""}` or a bare `""`."""
        return await self._call("GET", "/session/hmac/config", HmacStatus, is_read=True)

    async def delete_hmac_key(self) -> Details:
        return await self._call("DELETE", "/session/hmac/config", Details)

    async def set_proxy(self, request: ProxyConfig) -> Details:
        return await self._call("POST", "/session/proxy", Details, body=_check(request, ProxyConfig))

    async def group_info(self, request: GroupInfoRequest) -> GroupInfo:
        # The spec puts GroupJID in a GET body; the real WuzAPI reads only the `groupJID` query parameter.
        body = _check(request, GroupInfoRequest)
        return await self._call(
            "GET", "/group/info", GroupInfo, body=body, query={"groupJID": request.GroupJID}, is_read=True
        )

    async def create_group(self, request: GroupCreate) -> GroupInfo:
        return await self._call("POST", "/group/create", GroupInfo, body=_check(request, GroupCreate))

    async def send_contact(self, request: ContactCard) -> ContactSent:
        return await self._call("POST", "/chat/send/contact", ContactSent, body=_check(request, ContactCard))

    async def update_webhook(self, request: WebhookUpdate) -> WebhookConfig:
        return await self._call("PUT", "/webhook", WebhookConfig, body=_check(request, WebhookUpdate))
