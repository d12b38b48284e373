"""The gateways' admin APIs: WuzAPI's `/admin/users` and Z-API's partner (integrator) API.

    async with GatewayHttp() as http:
        users = await WuzapiAdminClient(http, AdminCredentials(url, admin_token)).list_users()
        page = await ZapiPartnerClient(http, AdminCredentials(partner_url, partner_token)).list_instances()

Not rows of `tui.api.operations`: a row belongs to a family, and its family decides the credentials (an
instance's id, token and Client-Token, or a session's token) and the path prefix (`/instances/{id}/token/{token}`
or none). These calls carry neither: they act on the gateway account itself, with another credential (WuzAPI's
admin token, sent bare in `Authorization`; Z-API's partner token, sent as `Authorization: Bearer …`), and Z-API's
partner paths sit outside every instance. A row would need a third family with no instance, no session, no
sandbox account, no section of the app and no dialect; this small client says what they are instead.

Shapes: docs/gateways/wuzapi.md §2.10 (asternic/wuzapi handlers.go), tests/api/wuzapi-openapi/spec.yml `/admin/users`;
docs/gateways/zapi.md §7 and developer.z-api.io/en/partner/list-instances, /create-instance.

The answers carry every account's token: they are masked by key in what the request log records (`token` in an
answer), and a user's or instance's repr never shows one.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Annotated, Any
from urllib.parse import quote, urlencode

from pydantic import BeforeValidator, ConfigDict, Field, field_validator

from tui.api.credentials import _shown_url
from tui.api.gateway_http import Call, GatewayHttp
from tui.api.models import ListAnswer, Response
from tui.api.redaction import MASK, Redactor, proxy_password

__all__ = [
    "AdminCredentials",
    "AdminOperation",
    "CreatedInstance",
    "DeletedUser",
    "InstancePage",
    "NewInstance",
    "NewUser",
    "PartnerInstance",
    "WuzapiAdminClient",
    "WuzapiUser",
    "WuzapiUsers",
    "ZAPI_PARTNER_URL",
    "ZapiPartnerClient",
]

ZAPI_PARTNER_URL = "https://api.z-api.io"
JSON = "application/json"
ANSWER_SECRET_KEYS = frozenset({"token"})  # in these answers, `token` is an account's credential


class AdminOperation(enum.StrEnum):
    """The admin calls, by the names `gateway-tui` uses for them."""

    LIST_USERS = "list-users"
    CREATE_USER = "create-user"
    DELETE_USER = "delete-user"
    LIST_INSTANCES = "list-instances"
    CREATE_INSTANCE = "create-instance"


@dataclass(frozen=True, repr=False)
class AdminCredentials:
    """A gateway account's own credential: WuzAPI's admin token or Z-API's partner token, and where to send it."""

    base_url: str
    token: str = field(repr=False)

    def redactor(self) -> Redactor:
        return Redactor([self.token, proxy_password(self.base_url)])

    def __repr__(self) -> str:
        return f"AdminCredentials(base_url={_shown_url(self.base_url)!r}, token={MASK!r})"

    __str__ = __repr__


# ---------------------------------------------------------------------------------------------------------------
# WuzAPI /admin/users (docs/gateways/wuzapi.md §2.10)


def _number_as_text(value: Any) -> Any:
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else value


# A user's id: the database's integer key in API.md's examples and in WuzAPI's code until its newest, which sends
# text (docs/gateways/wuzapi.md §2.10); read as text either way.
WuzapiUserId = Annotated[str, BeforeValidator(_number_as_text)]


class WuzapiUser(Response):
    """One user of `GET /admin/users` (or the `data` of `POST /admin/users`): `events` is a comma string."""

    id: WuzapiUserId
    name: str = ""
    token: str = Field(default="", repr=False)
    webhook: str = ""
    jid: str = ""
    connected: bool = False
    loggedIn: bool = False
    events: str = ""
    expiration: int = 0

    @field_validator("name", "token", "webhook", "jid", "events", mode="before")
    @classmethod
    def _null_is_empty(cls, value: Any) -> Any:
        return "" if value is None else value


class WuzapiUsers(ListAnswer):
    items: list[WuzapiUser]


class DeletedUser(Response):
    """`DELETE /admin/users/{id}`: the newest WuzAPI answers with the id, older ones only with `Details`."""

    id: WuzapiUserId = ""


@dataclass(frozen=True, repr=False)
class NewUser:
    """`POST /admin/users`: WuzAPI does not make tokens up, the admin chooses each one. `events` as a list
    (sent comma-joined, WuzAPI's form); no `hmacKey`: WuzAPI does not sign with one given here until it restarts,
    so a user's key is set through its own `/session/hmac/config`."""

    name: str
    token: str = field(repr=False)
    webhook: str = ""
    events: tuple[str, ...] = ()

    def wire(self) -> dict[str, Any]:
        body: dict[str, Any] = {"name": self.name, "token": self.token}
        if self.webhook:
            body["webhook"] = self.webhook
        if self.events:
            body["events"] = ",".join(self.events)
        return body

    def __repr__(self) -> str:
        return f"NewUser(name={self.name!r}, token={MASK!r}, webhook={self.webhook!r}, events={self.events!r})"


class _Client:
    def __init__(self, http: GatewayHttp, credentials: AdminCredentials) -> None:
        self.http = http
        self.credentials = credentials
        self._redactor = credentials.redactor()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.credentials!r})"

    def _authorization(self) -> str:
        raise NotImplementedError

    async def _call(
        self, operation: AdminOperation, method: str, path: str, result: type[Any], *,
        body: dict[str, Any] | None = None, query: dict[str, str] | None = None,
    ) -> Any:
        url = self.credentials.base_url.rstrip("/") + path + ("?" + urlencode(query) if query else "")
        return await self.http.call(
            Call(
                operation=operation.value,
                method=method,
                url=url,
                shown_url=url,
                headers={"Authorization": self._authorization(), "Content-Type": JSON},
                result=result,
                redactor=self._redactor.with_secrets(body.get("token") if body else None),
                body=body,
                is_read=method == "GET",
                answer_secret_keys=ANSWER_SECRET_KEYS,
            )
        )


class WuzapiAdminClient(_Client):
    """WuzAPI's admin API: `Authorization: <admin token>` (the bare token, WUZAPI_ADMIN_TOKEN)."""

    def _authorization(self) -> str:
        return self.credentials.token

    async def list_users(self) -> list[WuzapiUser]:
        answer: WuzapiUsers = await self._call(AdminOperation.LIST_USERS, "GET", "/admin/users", WuzapiUsers)
        return answer.items

    async def create_user(self, user: NewUser) -> WuzapiUser:
        """201 with the user (its new `id`); 409 when a user already has this token."""
        created: WuzapiUser = await self._call(
            AdminOperation.CREATE_USER, "POST", "/admin/users", WuzapiUser, body=user.wire())
        return created

    async def delete_user(self, user_id: str) -> DeletedUser:
        """Removes the user from WuzAPI's database (not its WhatsApp session: that is `/full`, not offered)."""
        deleted: DeletedUser = await self._call(
            AdminOperation.DELETE_USER, "DELETE", "/admin/users/" + quote(user_id, safe=""), DeletedUser)
        return deleted if deleted.id else DeletedUser(id=user_id)


# ---------------------------------------------------------------------------------------------------------------
# Z-API partner API (docs/gateways/zapi.md §7)


class PartnerInstance(Response):
    """One instance of `GET /instances`: its id and token (the Client-Token is the account's, never here)."""

    id: str
    token: str = Field(default="", repr=False)
    name: str = ""
    due: int | str | None = None
    paymentStatus: str = ""
    phoneConnected: bool = False
    whatsappConnected: bool = False
    middleware: str = ""

    @field_validator("name", "token", "paymentStatus", "middleware", mode="before")
    @classmethod
    def _null_is_empty(cls, value: Any) -> Any:
        return "" if value is None else value


class InstancePage(Response):
    """`GET /instances?page=&pageSize=`: one page of a paginated envelope, unlike the other Z-API lists."""

    model_config = ConfigDict(extra="ignore", frozen=True, populate_by_name=True)

    total: int = 0
    totalPage: int = 0
    pageSize: int = 0
    page: int = 0
    content: list[PartnerInstance] = Field(default_factory=list)


class CreatedInstance(Response):
    """`POST /instances/integrator/on-demand`: `{id, token, due}` (`due` a number, or a string in older docs)."""

    id: str
    token: str = Field(repr=False)
    due: int | str | None = None


@dataclass(frozen=True)
class NewInstance:
    """`POST /instances/integrator/on-demand`. It costs money once the trial (2 days) ends: confirm first.
    `callback_url` sets the delivery and received callbacks (and the others Z-API sends to the same place)."""

    name: str
    callback_url: str = ""

    def wire(self) -> dict[str, Any]:
        body: dict[str, Any] = {"name": self.name}
        if self.callback_url:
            for key in ("deliveryCallbackUrl", "receivedCallbackUrl", "disconnectedCallbackUrl",
                        "connectedCallbackUrl", "messageStatusCallbackUrl", "presenceChatCallbackUrl"):
                body[key] = self.callback_url
        return body


PAGE_SIZE = 100
MAX_PAGES = 100  # 10 000 instances: a bound on the loop, far past any partner's count


class ZapiPartnerClient(_Client):
    """Z-API's partner API: `Authorization: Bearer <Partner-Token>`, no Client-Token."""

    def _authorization(self) -> str:
        return "Bearer " + self.credentials.token

    async def list_instances(self, page: int = 1, page_size: int = PAGE_SIZE, query: str = "") -> InstancePage:
        params = {"page": str(page), "pageSize": str(page_size)} | ({"query": query} if query else {})
        answer: InstancePage = await self._call(
            AdminOperation.LIST_INSTANCES, "GET", "/instances", InstancePage, query=params)
        return answer

    async def all_instances(self) -> list[PartnerInstance]:
        """Every page, in order, up to MAX_PAGES."""
        found: list[PartnerInstance] = []
        for number in range(1, MAX_PAGES + 1):
            page = await self.list_instances(number)
            found.extend(page.content)
            if not page.content or number >= page.totalPage:
                break
        return found

    async def create_instance(self, instance: NewInstance) -> CreatedInstance:
        created: CreatedInstance = await self._call(
            AdminOperation.CREATE_INSTANCE, "POST", "/instances/integrator/on-demand", CreatedInstance,
            body=instance.wire())
        return created
