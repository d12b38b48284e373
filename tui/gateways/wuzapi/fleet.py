"""WuzAPI's fleet (`fleet import --session-url URL`): every user of `GET /admin/users` becomes a session-family
profile (WuzAPI dialect) with the user's token. Its HMAC key (the profile's, or a new one) is set through the
user's own `POST /session/hmac/config`: WuzAPI does not sign with a key given to its admin API until it restarts.
An account imported before: the same URL and token."""

from __future__ import annotations

import secrets as random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from pydantic import ValidationError

from tui.api.admin import AdminCredentials
from tui.api.credentials import SessionCredentials
from tui.api.dialects import Family, SessionDialect
from tui.api.errors import GatewayError
from tui.api.gateway_http import GatewayHttp
from tui.api.listener_paths import SESSION_PATH
from tui.api.models import HmacKey, WebhookUpdate
from tui.gateways.clients import SessionClient
from tui.gateways.fleet_source import AskedSecret, ListedAccount, StoredSecret, failure_reason
from tui.gateways.wuzapi.admin import WuzapiAdminClient
from tui.local import config
from tui.local.secrets import GatewaySecret, SecretName


@dataclass(frozen=True)
class WuzapiFleet:
    new_key: Callable[[], str] = field(default=lambda: random.token_urlsafe(32), repr=False)
    accounts_word: str = "WuzAPI users"
    admin_secret: GatewaySecret = GatewaySecret.ADMIN_TOKEN
    admin_label: str = "WuzAPI admin token"
    default_url: str = ""
    asked: Sequence[AskedSecret] = ()
    lists_states: bool = False
    sandbox_dialect: tuple[str, str, str] = (Family.SESSION.value, SessionDialect.WUZAPI.value,
                                             "--session-dialect wuzapi")

    async def list_accounts(self, http: GatewayHttp, url: str, token: str,
                            given: Mapping[SecretName, str]) -> list[ListedAccount]:
        users = await WuzapiAdminClient(http, AdminCredentials(url, token)).list_users()
        return [ListedAccount(user.name or user.id, {"session_url": url, "session_dialect": SessionDialect.WUZAPI},
                              {SecretName.SESSION_TOKEN: user.token} if user.token else {},
                              "" if user.token else "WuzAPI gave no token for it")
                for user in sorted(users, key=lambda user: (user.name, user.id))]

    def profile_url(self, profile: config.Profile) -> str | None:
        return profile.session_url

    def found_again(self, profile: config.Profile, account: ListedAccount, url: str, stored: StoredSecret) -> bool:
        return (profile.session_url or "").rstrip("/") == url.rstrip("/") and \
            stored(profile.name, SecretName.SESSION_TOKEN) == account.secrets[SecretName.SESSION_TOKEN]

    def secrets_for(self, account: ListedAccount, existing: str | None, stored: StoredSecret) -> Mapping[SecretName, str]:
        key = stored(existing, SecretName.HMAC_KEY) if existing is not None else None
        return {**account.secrets, SecretName.HMAC_KEY: key or self.new_key()}

    async def point(self, http: GatewayHttp, profile: config.Profile, secrets: Mapping[SecretName, str],
                    account_url: str, session_events: Sequence[str], path_secret: str | None = None) -> tuple[str, ...]:
        assert profile.session_url is not None
        client = SessionClient(http, SessionCredentials(profile.session_url, secrets[SecretName.SESSION_TOKEN]),
                               SessionDialect.WUZAPI)
        webhook = account_url + SESSION_PATH
        problems: list[str] = []
        try:
            await client.set_hmac_key(HmacKey(hmac_key=secrets[SecretName.HMAC_KEY]))
        except GatewayError as error:
            problems.append(f"HMAC key not set: {error.message}")
        try:
            await client.update_webhook(WebhookUpdate(webhook=webhook, events=list(session_events), active=True))
        except (GatewayError, ValidationError) as error:
            problems.append(f"webhook not pointed at {webhook}: {failure_reason(error)}")
        return tuple(problems)
