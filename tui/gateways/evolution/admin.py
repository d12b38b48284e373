"""Evolution API's instance list with the server's global key (docs/gateways/evolution.md §1.1, §3.4;
instance.controller.ts fetchInstances, monitor.service.ts instanceInfo): `GET /instance/fetchInstances`, the key
in the `apikey` header. v2 answers a bare array of database rows, each with the instance's own key (`token`):
masked by key in what the request log records, and never in a row's repr. v1's `[{"instance": {…}}]` rows are
read too (`instanceName`, `status`, `owner`, and `apikey` only when the server exposes it)."""

from __future__ import annotations

from typing import Any

from pydantic import Field, model_validator

from tui.api.admin import AdminClient, AdminOperation
from tui.api.models import ListAnswer, Response

CONNECTED = "open"
"""The `connectionStatus` of a paired instance whose socket Evolution last wrote as up (§3.4)."""

_V1_NAMES = {"instanceName": "name", "status": "connectionStatus", "owner": "ownerJid", "apikey": "token"}


class EvolutionInstance(Response):
    """One row of fetchInstances: the instance's name (its path segment), its key, its state as last written to
    Evolution's database (`open`, `connecting`, `close`) and the paired number's JID (`ownerJid`, null before)."""

    name: str
    token: str = Field(default="", repr=False)
    connectionStatus: str = ""
    ownerJid: str | None = None
    profileName: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _v1_row(cls, value: Any) -> Any:
        if isinstance(value, dict) and isinstance(value.get("instance"), dict):
            return {_V1_NAMES.get(key, key): item for key, item in value["instance"].items()}
        if isinstance(value, dict) and value.get("token") is None:
            return value | {"token": ""}
        return value

    @property
    def connected(self) -> bool:
        return self.connectionStatus == CONNECTED

    @property
    def number(self) -> str:
        """The paired number's digits, from `ownerJid` (connectionState never gives it, §3.1)."""
        return self.ownerJid.split("@")[0].split(":")[0] if self.ownerJid else ""


class EvolutionInstances(ListAnswer):
    """v2's bare array; v1's single object (with `instanceName`) as a list of one."""

    items: list[EvolutionInstance]

    @classmethod
    def _unwrap(cls, value: Any) -> Any:
        return [value] if isinstance(value, dict) and "instance" in value else value


class EvolutionAdminClient(AdminClient):
    """Evolution's global key (AUTHENTICATION_API_KEY) in the `apikey` header; no Authorization."""

    def _credential_headers(self) -> dict[str, str]:
        return {"apikey": self.credentials.token}

    async def fetch_instances(self) -> list[EvolutionInstance]:
        """Every instance of the server in one call (with an instance key instead: that instance only)."""
        answer: EvolutionInstances = await self._call(
            AdminOperation.FETCH_INSTANCES, "GET", "/instance/fetchInstances", EvolutionInstances)
        return answer.items
