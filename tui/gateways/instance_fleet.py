"""What the fleets of the instance-family gateways (Z-API, Evolution API) share: an account is its profile's
`base_url` and `instance_id`; found again by both; its secrets are the ones the admin API listed; its webhooks are
pointed with the instance family's own "every callback" call. Each gateway says its dialect, the Client-Token it
sends (Z-API's account-wide one; Evolution has none), the URL its events must go to and what the pointed thing is
called in a failure's line."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import ClassVar

from pydantic import ValidationError

from tui.api.credentials import InstanceCredentials
from tui.api.dialects import InstanceDialect
from tui.api.errors import GatewayError
from tui.api.gateway_http import GatewayHttp
from tui.api.redaction import redact_delivery_secret
from tui.gateways.clients import InstanceClient
from tui.gateways.fleet_source import ListedAccount, StoredSecret, failure_reason
from tui.local import config
from tui.local.secrets import SecretName


class InstanceFamilyFleet:
    dialect: ClassVar[InstanceDialect]
    pointed: ClassVar[str]
    """What `point` sets, in its failure's line ("callbacks not pointed at …")."""

    def profile_url(self, profile: config.Profile) -> str | None:
        return profile.base_url

    def found_again(self, profile: config.Profile, account: ListedAccount, url: str, stored: StoredSecret) -> bool:
        return (profile.base_url or "").rstrip("/") == url.rstrip("/") and \
            profile.instance_id == account.fields["instance_id"]

    def secrets_for(self, account: ListedAccount, existing: str | None, stored: StoredSecret) -> Mapping[SecretName, str]:
        return account.secrets

    def client_token(self, secrets: Mapping[SecretName, str]) -> str:
        """The Client-Token header's value (none by default)."""
        return ""

    def webhook(self, account_url: str, path_secret: str | None) -> str:
        """Where the account's events must go, below its listener paths."""
        raise NotImplementedError

    async def point(self, http: GatewayHttp, profile: config.Profile, secrets: Mapping[SecretName, str],
                    account_url: str, session_events: Sequence[str], path_secret: str | None = None) -> tuple[str, ...]:
        assert profile.base_url is not None and profile.instance_id is not None
        credentials = InstanceCredentials(profile.base_url, profile.instance_id, secrets[SecretName.INSTANCE_TOKEN],
                                          self.client_token(secrets))
        webhook = self.webhook(account_url, path_secret)
        try:
            await InstanceClient(http, credentials, self.dialect).point_every_callback(webhook)
        except (GatewayError, ValidationError) as error:
            return (f"{self.pointed} not pointed at {redact_delivery_secret(webhook)}: {failure_reason(error)}",)
        return ()
