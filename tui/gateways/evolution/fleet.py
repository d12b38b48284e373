"""Evolution's fleet (`fleet import --evolution-url URL`, the server's global key): every instance of
`GET /instance/fetchInstances` (one call, docs/gateways/evolution.md §3.4) becomes an instance-family profile
(Evolution dialect): the instance's name as its instance id, its own key (`token`) as the instance token, no
Client-Token. Its one webhook is set with `POST /webhook/set/{instance}` (§4.1: enabled, the events the app reads,
base64 on so media arrive with their bytes) at the profile's `/a/<profile>/evolution` path on the listener. An
account imported before: the same URL and instance name."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import ClassVar

from tui.api.admin import AdminCredentials
from tui.api.dialects import Family, InstanceDialect
from tui.api.gateway_http import GatewayHttp
from tui.api.listener_paths import EVOLUTION_PATH
from tui.api.connection import ConnectionState
from tui.gateways.evolution.admin import EvolutionAdminClient, EvolutionInstance
from tui.gateways.evolution.answers import STATES
from tui.gateways.instance_fleet import InstanceFamilyFleet
from tui.gateways.fleet_source import AskedSecret, ListedAccount
from tui.local.secrets import GatewaySecret, SecretName

NO_KEY = ("Evolution gave no key for it (a v1 server lists keys only with AUTHENTICATION_EXPOSE_IN_FETCH_INSTANCES "
          "on)")


def listed_state(row: EvolutionInstance) -> ConnectionState:
    """The row's `connectionStatus` as last written to Evolution's database (§3.4: `open` once paired and up,
    `connecting` while a QR waits, `close` after a logout or a ban) and the number from `ownerJid`, which
    connectionState never gives."""
    if row.connected:
        return ConnectionState(connected=True, logged_in=True, number=row.number or None)
    words = STATES.get(row.connectionStatus, row.connectionStatus or "in no state yet")
    return ConnectionState(connected=False, logged_in=row.connectionStatus == "connecting" and bool(row.ownerJid),
                           number=row.number or None, reason=f"Evolution says the instance is {words}")


@dataclass(frozen=True)
class EvolutionFleet(InstanceFamilyFleet):
    dialect: ClassVar[InstanceDialect] = InstanceDialect.EVOLUTION
    pointed: ClassVar[str] = "webhook"

    accounts_word: str = "Evolution instances"
    admin_secret: GatewaySecret = GatewaySecret.ADMIN_TOKEN
    admin_label: str = "Evolution global API key"
    default_url: str = ""
    asked: Sequence[AskedSecret] = ()
    lists_states: bool = True
    sandbox_dialect: tuple[str, str, str] = (Family.INSTANCE.value, InstanceDialect.EVOLUTION.value,
                                             "--instance-dialect evolution")

    async def list_accounts(self, http: GatewayHttp, url: str, token: str,
                            given: Mapping[SecretName, str]) -> list[ListedAccount]:
        rows = await EvolutionAdminClient(http, AdminCredentials(url, token)).fetch_instances()
        return [ListedAccount(
            row.name, {"base_url": url, "instance_id": row.name, "instance_dialect": InstanceDialect.EVOLUTION},
            {SecretName.INSTANCE_TOKEN: row.token} if row.token else {}, "" if row.token else NO_KEY,
            listed_state(row),
        ) for row in sorted(rows, key=lambda row: row.name)]

    def webhook(self, account_url: str, path_secret: str | None) -> str:
        return account_url + EVOLUTION_PATH  # its deliveries' apikey is checked there: no secret in the URL
