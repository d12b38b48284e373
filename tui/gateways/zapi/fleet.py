"""Z-API's fleet (`fleet import --zapi-partner`): every instance of the partner API's `GET /instances` becomes an
instance-family profile (Z-API dialect) with its id and token, and the Client-Token, which the partner API never
returns (it is the Z-API account's, one for all its instances), asked once for all. The instance family lives at
the partner URL (Z-API serves both its partner and its instance paths there). An account imported before: the
same URL and instance id."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import ClassVar

from tui.api.admin import AdminCredentials
from tui.api.dialects import Family, InstanceDialect
from tui.api.gateway_http import GatewayHttp
from tui.api.listener_paths import INSTANCE_PATH, with_path_secret
from tui.gateways.instance_fleet import InstanceFamilyFleet
from tui.gateways.fleet_source import AskedSecret, ListedAccount
from tui.gateways.zapi.admin import ZAPI_PARTNER_URL, ZapiPartnerClient
from tui.local.secrets import GatewaySecret, SecretName


@dataclass(frozen=True)
class ZapiFleet(InstanceFamilyFleet):
    dialect: ClassVar[InstanceDialect] = InstanceDialect.ZAPI
    pointed: ClassVar[str] = "callbacks"

    accounts_word: str = "Z-API instances"
    admin_secret: GatewaySecret = GatewaySecret.PARTNER_TOKEN
    admin_label: str = "Z-API partner token"
    default_url: str = ZAPI_PARTNER_URL
    asked: Sequence[AskedSecret] = (
        AskedSecret(SecretName.CLIENT_TOKEN, "Z-API: Security > Account security token; one for every instance"),)
    lists_states: bool = False
    sandbox_dialect: tuple[str, str, str] = (Family.INSTANCE.value, InstanceDialect.ZAPI.value,
                                             "--instance-dialect zapi")

    async def list_accounts(self, http: GatewayHttp, url: str, token: str,
                            given: Mapping[SecretName, str]) -> list[ListedAccount]:
        instances = await ZapiPartnerClient(http, AdminCredentials(url, token)).all_instances()
        client_token = given[SecretName.CLIENT_TOKEN]
        return [ListedAccount(
            instance.name or instance.id,
            {"base_url": url, "instance_id": instance.id, "instance_dialect": InstanceDialect.ZAPI},
            {SecretName.INSTANCE_TOKEN: instance.token, SecretName.CLIENT_TOKEN: client_token} if instance.token else {},
            "" if instance.token else "Z-API gave no token for it",
        ) for instance in sorted(instances, key=lambda instance: (instance.name, instance.id))]

    def client_token(self, secrets: Mapping[SecretName, str]) -> str:
        return secrets[SecretName.CLIENT_TOKEN]  # the Z-API account's, one for all its instances

    def webhook(self, account_url: str, path_secret: str | None) -> str:
        return with_path_secret(account_url + INSTANCE_PATH, path_secret)  # Z-API cannot sign: its secret URL
