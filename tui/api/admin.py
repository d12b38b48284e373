"""What the gateways' admin APIs share (each gateway's is in its package: WuzAPI's `/admin/users` in
tui.gateways.wuzapi.admin, Z-API's partner (integrator) API in tui.gateways.zapi.admin): the credential, the call.

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
from typing import Any
from urllib.parse import urlencode

from tui.api.credentials import _shown_url
from tui.api.gateway_http import Call, GatewayHttp
from tui.api.redaction import MASK, Redactor, proxy_password

__all__ = ["AdminClient", "AdminCredentials", "AdminOperation"]

JSON = "application/json"
ANSWER_SECRET_KEYS = frozenset({"token", "password"})  # an account's credential; a proxy's password (Evolution)


class AdminOperation(enum.StrEnum):
    """The admin calls, by the names `gateway-tui` uses for them."""

    LIST_USERS = "list-users"
    CREATE_USER = "create-user"
    DELETE_USER = "delete-user"
    LIST_INSTANCES = "list-instances"
    CREATE_INSTANCE = "create-instance"
    FETCH_INSTANCES = "fetch-instances"


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


class AdminClient:
    """One gateway's admin API: each says how it sends its credential (`_authorization`)."""

    def __init__(self, http: GatewayHttp, credentials: AdminCredentials) -> None:
        self.http = http
        self.credentials = credentials
        self._redactor = credentials.redactor()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.credentials!r})"

    def _authorization(self) -> str:
        raise NotImplementedError

    def _credential_headers(self) -> dict[str, str]:
        """How the credential travels: `Authorization` unless the gateway says otherwise (Evolution: `apikey`)."""
        return {"Authorization": self._authorization()}

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
                headers=self._credential_headers() | {"Content-Type": JSON},
                result=result,
                redactor=self._redactor.with_secrets(body.get("token") if body else None),
                body=body,
                is_read=method == "GET",
                answer_secret_keys=ANSWER_SECRET_KEYS,
            )
        )
