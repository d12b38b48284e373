"""Z-API's fleet (`fleet import --zapi-partner`): every instance of the partner API's `GET /instances` becomes an
instance-family profile (Z-API dialect) with its id and token, and the Client-Token, which the partner API never
returns (it is the Z-API account's, one for all its instances), asked once for all. The instance family lives at
the partner URL (Z-API serves both its partner and its instance paths there). An account imported before: the
same URL and instance id."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pydantic import ValidationError

from tui.api.admin import AdminCredentials
from tui.api.credentials import InstanceCredentials
from tui.api.dialects import Family, InstanceDialect
from tui.api.errors import GatewayError
from tui.api.gateway_http import GatewayHttp
from tui.api.listener_paths import INSTANCE_PATH, with_path_secret
from tui.api.redaction import redact_delivery_secret
from tui.gateways.clients import InstanceClient
from tui.gateways.fleet_source import AskedSecret, ListedAccount, StoredSecret, failure_reason
from tui.gateways.zapi.admin import ZAPI_PARTNER_URL, ZapiPartnerClient
from tui.local import config
from tui.local.secrets import GatewaySecret, SecretName


@dataclass(frozen=True)
class ZapiFleet:
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

    def profile_url(self, profile: config.Profile) -> str | None:
        return profile.base_url

    def found_again(self, profile: config.Profile, account: ListedAccount, url: str, stored: StoredSecret) -> bool:
        return (profile.base_url or "").rstrip("/") == url.rstrip("/") and \
            profile.instance_id == account.fields["instance_id"]

    def secrets_for(self, account: ListedAccount, existing: str | None, stored: StoredSecret) -> Mapping[SecretName, str]:
        return account.secrets

    async def point(self, http: GatewayHttp, profile: config.Profile, secrets: Mapping[SecretName, str],
                    account_url: str, session_events: Sequence[str], path_secret: str | None = None) -> tuple[str, ...]:
        assert profile.base_url is not None and profile.instance_id is not None
        credentials = InstanceCredentials(profile.base_url, profile.instance_id, secrets[SecretName.INSTANCE_TOKEN],
                                          secrets[SecretName.CLIENT_TOKEN])
        webhook = with_path_secret(account_url + INSTANCE_PATH, path_secret)  # Z-API cannot sign: its secret URL
        try:
            await InstanceClient(http, credentials, InstanceDialect.ZAPI).point_every_callback(webhook)
        except (GatewayError, ValidationError) as error:
            return (f"callbacks not pointed at {redact_delivery_secret(webhook)}: {failure_reason(error)}",)
        return ()
