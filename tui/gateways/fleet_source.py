"""What `gateway-tui fleet import` needs from a gateway (issue 36 item 4: the import's per-gateway flows live in the
gateway packages, `<gateway>/fleet.py`, registered in tui.gateways.fleets). The service that saves the profiles
(tui.core.accounts.fleet_import) asks the source for the accounts its admin API lists, how an account imported
before is found again, and to point an account's webhooks at the listener; it never asks which gateway it is.

    source = fleet_source("evolution")
    accounts = await source.list_accounts(http, url, token, given)
    problems = await source.point(http, profile, secrets, ListenerPlace(...).account_url(profile.name), events)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from tui.api.addresses import http_base
from tui.api.listener_paths import ACCOUNT_PREFIX
from tui.local import config

if TYPE_CHECKING:
    from pydantic import ValidationError

    from tui.api.connection import ConnectionState
    from tui.api.errors import GatewayError
    from tui.api.gateway_http import GatewayHttp
    from tui.local.secrets import GatewaySecret, SecretName


@dataclass(frozen=True)
class ListenerPlace:
    """Where the gateway reaches the listener: the public URL when set, else http://host:port."""

    host: str = "127.0.0.1"
    port: int = config.DEFAULT_LISTENER_PORT
    public_url: str = ""

    @property
    def base(self) -> str:
        if self.public_url:
            return self.public_url.rstrip("/")
        return http_base(self.host, self.port)

    def account_url(self, profile: str) -> str:
        """The root of the profile's paths under `listen --all` (`…/a/<profile>`); a gateway adds its own path."""
        return f"{self.base}{ACCOUNT_PREFIX}{profile}"


@dataclass(frozen=True)
class ListedAccount:
    """One account as the gateway's admin API lists it, and as its profile will be: the profile's gateway fields
    and secrets. `problem`: why it cannot be imported (nothing is saved for it)."""

    account: str  # the gateway's name for it (a profile name is made from it)
    fields: Mapping[str, object]
    secrets: Mapping[SecretName, str] = field(default_factory=dict, repr=False)
    problem: str = ""
    state: ConnectionState | None = None
    """Its connection as the list says it, where the gateway's list says it well enough for the board (Evolution's
    fetchInstances: one call for the whole fleet instead of one status read per account); None: read each."""


StoredSecret = Callable[["str", "SecretName"], "str | None"]
"""A profile's stored secret, by profile name (None when none is stored)."""


@dataclass(frozen=True)
class AskedSecret:
    """A secret the admin API does not give, asked once for every account (Z-API's Client-Token)."""

    name: SecretName
    hint: str  # where the user finds it, said in the prompt


class FleetSource(Protocol):
    """One gateway's fleet: its admin API's list, and each account's setup."""

    @property
    def accounts_word(self) -> str:
        """What the gateway calls its accounts, in the report: "WuzAPI users", "Evolution instances"."""
        ...

    @property
    def admin_secret(self) -> GatewaySecret:
        """The credential of the gateway's admin API (the variable, the keyring entry, the prompt)."""
        ...

    @property
    def admin_label(self) -> str:
        """The credential in the gateway's words, for prompts and messages: "Evolution global API key"."""
        ...

    @property
    def default_url(self) -> str:
        """Where the admin API answers when the user names no URL ("" when a URL is needed)."""
        ...

    @property
    def asked(self) -> Sequence[AskedSecret]:
        """Secrets asked of the user once for all accounts, handed back to `list_accounts` in `given`."""
        ...

    @property
    def lists_states(self) -> bool:
        """Whether its list says each account's connection (`ListedAccount.state`) well enough for the board."""
        ...

    @property
    def sandbox_dialect(self) -> tuple[str, str, str]:
        """(the family whose dialect the sandbox must speak, that dialect, the sandbox's flag that sets it)."""
        ...

    async def list_accounts(self, http: GatewayHttp, url: str, token: str,
                            given: Mapping[SecretName, str]) -> list[ListedAccount]:
        """Every account the admin API at `url` lists, in a stable order (GatewayError when it cannot list)."""
        ...

    def profile_url(self, profile: config.Profile) -> str | None:
        """The URL of the profile's family this source imports (None: the profile has no such family)."""
        ...

    def found_again(self, profile: config.Profile, account: ListedAccount, url: str, stored: StoredSecret) -> bool:
        """Whether `profile` is `account` imported before (same gateway URL and the same instance or token)."""
        ...

    def secrets_for(self, account: ListedAccount, existing: str | None, stored: StoredSecret) -> Mapping[SecretName, str]:
        """The secrets to store for the account's profile (`existing`: its name when it was imported before)."""
        ...

    async def point(self, http: GatewayHttp, profile: config.Profile, secrets: Mapping[SecretName, str],
                    account_url: str, session_events: Sequence[str], path_secret: str | None = None) -> tuple[str, ...]:
        """Point the account's webhooks at its listener paths below `account_url`; what could not be done.
        `session_events`: what the app subscribes a session-family account to; `path_secret`: a Z-API account's
        webhook URL secret (tui.api.listener_paths.PATH_SECRET_SEGMENT), None for the others."""
        ...


def failure_reason(error: GatewayError | ValidationError) -> str:
    """Why a setup call failed, in one line: the gateway's words, or the fields our models refused."""
    from tui.api.errors import GatewayError

    if isinstance(error, GatewayError):
        return error.message
    from tui.api.models import field_errors

    return "; ".join(field_errors(error).values())
