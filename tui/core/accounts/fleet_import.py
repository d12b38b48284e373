"""`gateway-tui fleet import`: one profile per account a gateway's admin API lists (the service; the command line
is tui.cli.fleet_import).

* WuzAPI (`--session-url`): every user of `GET /admin/users` becomes a session-family profile (WuzAPI dialect)
  with the user's token. Its HMAC key (the profile's, or a new one) is set through the user's own
  `POST /session/hmac/config`: WuzAPI does not sign with a key given to its admin API until it restarts.
* Z-API (`--zapi-partner`): every instance of the partner API's `GET /instances` becomes an instance-family
  profile (Z-API dialect) with its id and token, and the Client-Token, which the partner API never returns (it
  is the Z-API account's, one for all its instances), asked once for all.

Names come from the gateway's user or instance names, made safe (letters, digits, - and _) and unique. An
account imported before is found again (WuzAPI: same URL and token; Z-API: same URL and instance id) and its
profile updated, never duplicated. Secrets are stored as `profile add` stores them (secrets first, then the
profile, rolled back together). Each account's webhooks are pointed at the listener's paths for it,
`/a/<profile>/session` and `/a/<profile>/delivery`, under the public URL, or the listener's host and port.
"""

from __future__ import annotations

import re
import secrets as random
from collections.abc import Callable
from dataclasses import dataclass, field

from pydantic import ValidationError

from tui.local import config
from tui.api.admin import AdminCredentials
from tui.gateways.wuzapi.admin import WuzapiAdminClient
from tui.gateways.zapi.admin import ZapiPartnerClient
from tui.gateways.clients import InstanceClient, SessionClient
from tui.api.credentials import InstanceCredentials, SessionCredentials
from tui.api.dialects import InstanceDialect, SessionDialect
from tui.api.errors import GatewayError
from tui.api.gateway_http import GatewayHttp
from tui.api.models import HmacKey, WebhookUpdate
from tui.local.secrets import SecretName, SecretStore, store_then_save
from tui.core.watch import SESSION_SUBSCRIPTION
from tui.webhooks.families import INSTANCE_PATH, SESSION_PATH
from tui.api.addresses import http_base

ACCOUNT_PATH_PREFIX = "/a"
MAX_NAME = 64


class ImportRefused(Exception):
    """Nothing can be imported; the message says why in the product's words (never a secret)."""


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

    def session_url(self, profile: str) -> str:
        return f"{self.base}{ACCOUNT_PATH_PREFIX}/{profile}{SESSION_PATH}"

    def delivery_url(self, profile: str) -> str:
        return f"{self.base}{ACCOUNT_PATH_PREFIX}/{profile}{INSTANCE_PATH}"


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


def _same_url(left: str | None, right: str) -> bool:
    return left is not None and left.rstrip("/") == right.rstrip("/")


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


async def import_wuzapi(
    http: GatewayHttp, url: str, admin_token: str, store: SecretStore, *,
    place: ListenerPlace | None = None, secrets_file: bool = False,
    new_key: Callable[[], str] = lambda: random.token_urlsafe(32),
) -> ImportReport:
    """Every WuzAPI user at `url` as a profile. Raises the client's GatewayError when the users cannot be listed
    (nothing saved then); a user whose key or webhook could not be set is saved and its problem reported."""
    url = config.check_http_url(url.strip()).rstrip("/")
    await _refuse_other_dialect(url, "session_dialect", SessionDialect.WUZAPI.value, "--session-dialect wuzapi")
    users = await WuzapiAdminClient(http, AdminCredentials(url, admin_token)).list_users()
    profiles = config.load_profiles()
    names = _Names(profiles)
    report = ImportReport()
    for user in sorted(users, key=lambda user: (user.name, user.id)):
        if not user.token:
            report.accounts.append(Imported("", user.name or user.id, False, ("WuzAPI gave no token for it",)))
            continue
        existing = next((profile for profile in profiles if _same_url(profile.session_url, url)
                         and store.get(profile.name, SecretName.SESSION_TOKEN) == user.token), None)
        name = existing.name if existing is not None else names.new(user.name or user.id)
        profile = _profile(existing, name, place, secrets_file, session_url=url,
                           session_dialect=SessionDialect.WUZAPI)
        key = store.get(name, SecretName.HMAC_KEY) if existing is not None else None
        key = key or new_key()
        store_then_save(profile, store, {SecretName.SESSION_TOKEN: user.token, SecretName.HMAC_KEY: key})
        problems = await _point_session(http, url, user.token, key, _place_of(profile, place).session_url(name))
        report.accounts.append(Imported(name, user.name or user.id, existing is None, problems))
    return report


async def _point_session(http: GatewayHttp, url: str, token: str, key: str, webhook: str) -> tuple[str, ...]:
    client = SessionClient(http, SessionCredentials(url, token), SessionDialect.WUZAPI)
    problems: list[str] = []
    try:
        await client.set_hmac_key(HmacKey(hmac_key=key))
    except GatewayError as error:
        problems.append(f"HMAC key not set: {error.message}")
    try:
        await client.update_webhook(WebhookUpdate(webhook=webhook, events=list(SESSION_SUBSCRIPTION), active=True))
    except (GatewayError, ValidationError) as error:
        problems.append(f"webhook not pointed at {webhook}: {_reason(error)}")
    return tuple(problems)


async def import_zapi(
    http: GatewayHttp, partner_url: str, partner_token: str, client_token: str, store: SecretStore, *,
    place: ListenerPlace | None = None, secrets_file: bool = False,
) -> ImportReport:
    """Every instance of the Z-API partner account as a profile (the instance family at `partner_url`, where
    Z-API serves both its partner and its instance paths)."""
    url = config.check_http_url(partner_url.strip()).rstrip("/")
    await _refuse_other_dialect(url, "instance_dialect", InstanceDialect.ZAPI.value, "--instance-dialect zapi")
    instances = await ZapiPartnerClient(http, AdminCredentials(url, partner_token)).all_instances()
    profiles = config.load_profiles()
    names = _Names(profiles)
    report = ImportReport()
    for instance in sorted(instances, key=lambda instance: (instance.name, instance.id)):
        if not instance.token:
            report.accounts.append(Imported("", instance.name or instance.id, False, ("Z-API gave no token for it",)))
            continue
        existing = next((profile for profile in profiles if _same_url(profile.base_url, url)
                         and profile.instance_id == instance.id), None)
        name = existing.name if existing is not None else names.new(instance.name or instance.id)
        profile = _profile(existing, name, place, secrets_file, base_url=url, instance_id=instance.id,
                           instance_dialect=InstanceDialect.ZAPI)
        store_then_save(profile, store, {SecretName.INSTANCE_TOKEN: instance.token,
                                         SecretName.CLIENT_TOKEN: client_token})
        webhook = _place_of(profile, place).delivery_url(name)
        client = InstanceClient(http, InstanceCredentials(url, instance.id, instance.token, client_token),
                                InstanceDialect.ZAPI)
        problems: tuple[str, ...] = ()
        try:
            await client.point_every_callback(webhook)
        except (GatewayError, ValidationError) as error:
            problems = (f"callbacks not pointed at {webhook}: {_reason(error)}",)
        report.accounts.append(Imported(name, instance.name or instance.id, existing is None, problems))
    return report


def _reason(error: GatewayError | ValidationError) -> str:
    if isinstance(error, GatewayError):
        return error.message
    from tui.api.models import field_errors

    return "; ".join(field_errors(error).values())
