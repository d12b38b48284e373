"""Z-API's partner (integrator) API (docs/gateways/zapi.md §7; developer.z-api.io/en/partner/list-instances,
/create-instance): `Authorization: Bearer <Partner-Token>`, paths outside every instance. The answers carry every
instance's token: masked by key in what the request log records, and never in an instance's repr."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import ConfigDict, Field, field_validator

from tui.api.admin import AdminClient, AdminOperation
from tui.api.models import Response

ZAPI_PARTNER_URL = "https://api.z-api.io"


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


class ZapiPartnerClient(AdminClient):
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
