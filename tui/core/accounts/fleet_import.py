"""`gateway-tui fleet import`: one profile per account a gateway's admin API lists (the service; the command line
is tui.cli.fleet_import). What differs between the gateways (the admin API, the profile's fields and secrets, how
an account is found again, its webhooks) is the gateway's fleet source (tui.gateways.<gateway>.fleet, registered in
tui.gateways.fleets): WuzAPI's users (`--session-url`), Z-API's partner instances (`--zapi-partner`), Evolution's
instances (`--evolution-url`).

Names come from the gateway's user or instance names, made safe (letters, digits, - and _) and unique. An
account imported before is found again and its profile updated, never duplicated. Secrets are stored as
`profile add` stores them (secrets first, then the profile, rolled back together). Each account's webhooks are
pointed at the listener's paths for it (`/a/<profile>/…`), under the public URL, or the listener's host and port.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from pydantic import ValidationError

from tui.api.gateway_http import GatewayHttp
from tui.core.watch import SESSION_SUBSCRIPTION
from tui.gateways.fleet_source import FleetSource
from tui.gateways.fleet_source import ListenerPlace as ListenerPlace
from tui.local import config
from tui.local.secrets import SecretName, SecretStore, profile_path_secret, store_then_save

MAX_NAME = 64


class ImportRefused(Exception):
    """Nothing can be imported; the message says why in the product's words (never a secret)."""


@dataclass(frozen=True)
class Imported:
    """One account's outcome: its profile, whether it is new, and what could not be done (its profile is saved)."""

    profile: str
    account: str  # the gateway's name for it
    created: bool
    problems: tuple[str, ...] = ()


@dataclass
class ImportReport:
    accounts: list[Imported] = field(default_factory=list)

    @property
    def created(self) -> int:
        return sum(1 for item in self.accounts if item.created)

    @property
    def updated(self) -> int:
        return len(self.accounts) - self.created


def safe_name(name: str) -> str:
    """A gateway's account name as a profile name: runs of other characters become one '-', lower case."""
    safe = re.sub(r"[^A-Za-z0-9_-]+", "-", name.strip()).strip("-_").lower()[:MAX_NAME].strip("-_")
    return safe or "account"


def unique_name(wanted: str, taken: set[str]) -> str:
    """`wanted`, or `wanted-2`, `wanted-3`, … (cut to fit 64 characters): never one in `taken` or reserved."""
    taken = taken | config.RESERVED_NAMES
    if wanted not in taken:
        return wanted
    for number in range(2, 10_000):
        suffix = f"-{number}"
        candidate = wanted[: MAX_NAME - len(suffix)] + suffix
        if candidate not in taken:
            return candidate
    raise ImportRefused(f"no free profile name left for {wanted!r}")


class _Names:
    """Profile names for the accounts of one import: an account found again keeps its profile's name."""

    def __init__(self, profiles: list[config.Profile]) -> None:
        self.taken = {profile.name for profile in profiles}

    def new(self, account_name: str) -> str:
        name = unique_name(safe_name(account_name), self.taken)
        self.taken.add(name)
        return name


def _profile(existing: config.Profile | None, name: str, place: ListenerPlace | None, secrets_file: bool,
             **fields: object) -> config.Profile:
    """The new profile, or the existing one with the gateway's fields (and the listener's, when given) updated."""
    values: dict[str, object] = existing.model_dump() if existing is not None else {"name": name}
    values |= fields | {"secrets_file": secrets_file or bool(values.get("secrets_file"))}
    if place is not None:
        values |= {"listener_host": place.host, "listener_port": place.port, "public_url": place.public_url}
    try:
        return config.Profile.model_validate(values)
    except ValidationError as error:
        raise ImportRefused(f"profile {name!r} not saved: {config.describe_profile_error(error)}") from None


async def _refuse_other_dialect(url: str, family: str, needed: str, flag: str) -> None:
    """The sandbox speaks the dialect it was started with; the imported profiles speak the real gateway's. A
    sandbox started in another dialect would answer every call of theirs 404: refused before anything is saved."""
    from tui.core.doctor import sandbox_info

    info = await sandbox_info([url])
    if info is not None and info.get(family) and info[family] != needed:
        raise ImportRefused(f"the sandbox at {url} speaks the {info[family]} dialect, and the imported profiles would "
                            f"speak the real gateway's ({needed}); nothing was imported. Start it with `gateway-tui "
                            f"sandbox --accounts N {flag}`.")


def _place_of(profile: config.Profile, given: ListenerPlace | None) -> ListenerPlace:
    return given or ListenerPlace(profile.listener_host, profile.listener_port, profile.public_url)


async def import_fleet(
    source: FleetSource, http: GatewayHttp, url: str, token: str, store: SecretStore, *,
    given: Mapping[SecretName, str] | None = None, place: ListenerPlace | None = None, secrets_file: bool = False,
) -> ImportReport:
    """Every account `source`'s admin API at `url` lists, as a profile. Raises the client's GatewayError when the
    accounts cannot be listed (nothing saved then); an account whose webhooks could not be pointed is saved and its
    problem reported. `given`: the secrets the source asks of the user (`source.asked`)."""
    url = config.check_http_url(url.strip()).rstrip("/")
    family, dialect, flag = source.sandbox_dialect
    await _refuse_other_dialect(url, f"{family}_dialect", dialect, flag)
    listed = await source.list_accounts(http, url, token, given or {})
    profiles = config.load_profiles()
    names = _Names(profiles)
    report = ImportReport()
    for account in listed:
        if account.problem:
            report.accounts.append(Imported("", account.account, False, (account.problem,)))
            continue
        existing = next((profile for profile in profiles
                         if source.found_again(profile, account, url, store.get)), None)
        name = existing.name if existing is not None else names.new(account.account)
        profile = _profile(existing, name, place, secrets_file, **account.fields)
        secrets = source.secrets_for(account, existing.name if existing is not None else None, store.get)
        store_then_save(profile, store, dict(secrets))
        problems = await source.point(http, profile, secrets, _place_of(profile, place).account_url(name),
                                      SESSION_SUBSCRIPTION, await asyncio.to_thread(profile_path_secret, profile, store))
        report.accounts.append(Imported(name, account.account, existing is None, problems))
    return report
