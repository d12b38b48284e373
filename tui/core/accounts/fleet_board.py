"""The fleet board (issue 26): one row per open account, for the app's Fleet section and `gateway-tui fleet`. No
Textual and no argparse here (the section is tui/ui/sections/fleet/, the command line tui/cli/fleet.py).

    account.activity                        # tui.core.accounts.activity.AccountActivity: its events and its sends in this run
    row = board_row(account, health="healthy", unread=3)
    row.as_json()                           # {"profile", "number", "connected", "health", "unread", "last_event_at"}
    rows = await read_board(names)          # the command line: profiles, secrets, one status read each

"Connected" is what the account's watch knows (tui.core.watch: status reads and connection events), never a connect.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from tui.core.accounts.account import Account
    from tui.local.config import Profile
    from tui.local.secrets import SecretName, SecretStore
    from tui.core.doctor import DoctorRecord
    from tui.gateways.fleet_source import FleetSource

UNCHECKED = "unchecked"
"""The health of an account the doctor has not checked in this run."""
STATUS_READS_AT_ONCE = 8
"""Status reads in flight at once when the board reads many accounts (the command line, the app's poll)."""
STATUS_READ_TIMEOUT = 5.0

JSON_KEYS = ("profile", "number", "connected", "health", "unread", "last_event_at")

@dataclass(frozen=True)
class FleetRow:
    """One account on the board. `connected` None: nothing read yet; `unread` None: not known in this run."""

    profile: str
    number: str
    dialects: str
    connected: bool | None
    connection: str
    health: str
    unread: int | None
    per_minute: int = 0
    sends_today: int = 0
    last_event_at: datetime | None = None
    last_by_kind: tuple[tuple[str, datetime], ...] = ()

    def as_json(self) -> dict[str, object]:
        """`gateway-tui fleet --json`'s object: exactly JSON_KEYS."""
        return {
            "profile": self.profile,
            "number": self.number,
            "connected": bool(self.connected),
            "health": self.health,
            "unread": self.unread,
            "last_event_at": self.last_event_at.isoformat() if self.last_event_at is not None else None,
        }


def health_word(record: DoctorRecord | None) -> str:
    """The doctor's newest report for the account in a word (tui.core.doctor.Health), else "unchecked"."""
    if record is None or record.report is None:
        return UNCHECKED
    from tui.core.doctor import health_of

    return health_of(record.report).value


def dialects_word(account: Account) -> str:
    """`zapi/wuzapi`, with "–" for a family the profile lacks."""
    from tui.api.operations import Family

    instance, session = account.dialects
    i = instance.value if account.has(Family.INSTANCE) else "–"
    s = session.value if account.has(Family.SESSION) else "–"
    return f"{i}/{s}"


def watched_connection(account: Account) -> tuple[bool | None, str, str]:
    """(connected, the header's words, the paired number) from the account's watch; connected is True when every
    family read is, None before any read."""
    from tui.core.watch import header_words

    states = [state for family in account.families if (state := account.watch.state(family)) is not None]
    number = next((state.number for state in states if state.number), "") or ""
    connected = all(state.connected for state in states) if states else None
    return connected, header_words(account.watch), number


def board_row(account: Account, *, health: str, unread: int | None) -> FleetRow:
    from tui.core.accounts.account import Opening

    connected, words, number = watched_connection(account)
    if account.opening is not Opening.OPEN:  # its secrets are being read, or could not be: nothing was read with them
        connected, words = None, account.opening.value
    activity = account.activity
    return FleetRow(
        profile=account.name,
        number=number,
        dialects=dialects_word(account),
        connected=connected,
        connection=words,
        health=health,
        unread=unread,
        per_minute=activity.per_minute(),
        sends_today=activity.sends_today,
        last_event_at=activity.last_event_at,
        last_by_kind=tuple(sorted(activity.last_by_kind.items())),
    )


AdminToken = Callable[["FleetSource", str], "str | None"]
"""A gateway's admin credential for the server at a URL, when the user has one at hand (None: not)."""


async def read_listed_states(accounts: Sequence[Account], admin_token: AdminToken) -> set[str]:
    """The connection of every account whose gateway lists its accounts' states (Evolution's fetchInstances, with
    the server's global key), read with one list call per server instead of one status read per account (220
    instances: one call, not 220). The names of the accounts whose every family was read so; a list that cannot be
    had (no key, refused, unreachable) leaves its accounts to their own status reads."""
    from tui.api.operations import Family
    from tui.gateways.fleets import source_of

    groups: dict[tuple[str, str, Family], tuple[FleetSource, list[Account]]] = {}
    for account in accounts:
        for family, dialect in zip((Family.INSTANCE, Family.SESSION), account.dialects, strict=True):
            source = source_of(family.value, dialect.value) if account.has(family) else None
            url = source.profile_url(account.profile) if source is not None and source.lists_states else None
            if source is not None and url:
                groups.setdefault((source.accounts_word, url.rstrip("/"), family), (source, []))[1].append(account)
    read: dict[str, set[Family]] = {}
    for (_word, url, family), (source, members) in groups.items():
        token = admin_token(source, url)
        if not token:
            continue
        try:
            listed = await asyncio.wait_for(
                source.list_accounts(members[0].client(family).http, url, token, {}), STATUS_READ_TIMEOUT)
        except (TimeoutError, Exception):  # noqa: BLE001 - the accounts are read one by one instead
            continue
        for account in members:
            match = next((item for item in listed if item.state is not None and not item.problem
                          and source.found_again(account.profile, item, url, account.secrets.get)), None)
            if match is not None and match.state is not None:
                account.watch.set_state(family, match.state)
                read.setdefault(account.name, set()).add(family)
    return {account.name for account in accounts if account.families <= read.get(account.name, set())}


async def poll_accounts(accounts: Sequence[Account], *, force: bool = False, listed: frozenset[str] = frozenset()) -> None:
    """Read the status of each account whose watch is due (all with `force`), a few at a time, each bounded in
    time; a failing read is the watch's own problem to show, never raised here. `listed`: the accounts whose
    state was just read from their gateway's list (read_listed_states), not read again."""
    gate = asyncio.Semaphore(STATUS_READS_AT_ONCE)

    async def one(account: Account) -> None:
        if account.name in listed:
            return
        if not force and not account.watch.poll_due():
            return
        async with gate:
            try:
                await asyncio.wait_for(account.watch.poll(account, force=force), STATUS_READ_TIMEOUT)
            except (TimeoutError, Exception):  # noqa: BLE001 - one account's failure must not stop the others
                return

    await asyncio.gather(*(one(account) for account in accounts))


def _stored_activity(name: str) -> tuple[int | None, datetime | None]:
    """(unread, newest event's time) from the profile's own event store, when it has one (blocking)."""
    from tui.local.paths import profile_events_path
    from tui.webhooks.conversations import Inbox
    from tui.webhooks.store import EventStore
    from tui.webhooks.store_faults import StoreUnusable

    path = profile_events_path(name)
    if not path.exists():
        return None, None
    try:
        with EventStore(path) as store:
            newest = store.newest(1)
            unread = sum(row.unread for row in Inbox(store).conversations())
    except (StoreUnusable, OSError):
        return None, None
    return unread, newest[0].received_at if newest else None


async def read_board(names: Sequence[str] | None, *, insecure_storage: bool = False,
                     given: tuple[Profile, Mapping[SecretName, str | None]] | None = None) -> list[FleetRow]:
    """The board of the command line: the named profiles (all when None), their secrets as the app resolves them,
    one status read each (never a connect), unread and the last event from each profile's own store. Raises
    LookupError naming the profiles that do not exist. `given`: the board of that one profile with those secrets
    instead (the command's sandbox)."""
    from tui.local import config
    from tui.local import secrets as secret_module

    if given is not None:
        return await _rows([(given[0], given[1])], secret_module.MemorySecrets())
    profiles = {profile.name: profile for profile in await asyncio.to_thread(config.load_profiles)}
    chosen = list(profiles) if names is None else list(names)
    missing = [name for name in chosen if name not in profiles]
    if missing:
        known = ", ".join(sorted(profiles)) or "none"
        raise LookupError(f"no profile named {', '.join(missing)} (known: {known}); see `gateway-tui profile list`")
    if any(profiles[name].secrets_file for name in chosen):
        insecure_storage = True
    store = await asyncio.to_thread(secret_module.open_secret_store_for_run, insecure_storage)
    # The GATEWAY_TUI_* variables name one account's secrets: with several profiles, each its own stored ones.
    environ: dict[str, str] | None = None if len(chosen) == 1 else {}
    resolved = [(profiles[name], await asyncio.to_thread(secret_module.resolve_secrets, name, store, environ))
                for name in chosen]
    return await _rows(resolved, store)


def admin_token_of(store: SecretStore, cache: dict[str, str | None] | None = None) -> AdminToken:
    """The gateway's admin credential as `fleet import` finds it: its variable, else the keyring under the URL
    (remembered in `cache`, by URL, when given)."""
    import os

    from tui.local.secrets import gateway_scope

    def token(source: FleetSource, url: str) -> str | None:
        from_env = os.environ.get(source.admin_secret.env_var, "").strip()
        if from_env:
            return from_env
        key = f"{source.admin_secret.value}@{url}"
        if cache is not None and key in cache:
            return cache[key]
        stored = store.get(gateway_scope(url), source.admin_secret)
        if cache is not None:
            cache[key] = stored
        return stored

    return token


async def _rows(profiles: Sequence[tuple[Profile, Mapping[SecretName, str | None]]], store: SecretStore) -> list[FleetRow]:
    """Each profile's row: one status read with its secrets (never a connect), unread and the last event from its
    own store."""
    from tui.core.accounts.account import Tokens, new_account
    from tui.api.gateway_http import GatewayHttp

    http = GatewayHttp(timeout=STATUS_READ_TIMEOUT)
    try:
        accounts = []
        for profile, resolved in profiles:
            account = new_account(profile, store, store=lambda: None)
            account.connect(http, Tokens.from_secrets(resolved))
            accounts.append(account)
        listed = await read_listed_states(accounts, admin_token_of(store))
        await poll_accounts(accounts, force=True, listed=frozenset(listed))
    finally:
        await http.aclose()
    rows = []
    for account in accounts:
        unread, last = await asyncio.to_thread(_stored_activity, account.name)
        row = board_row(account, health=UNCHECKED, unread=unread)
        rows.append(FleetRow(**{**row.__dict__, "last_event_at": last or row.last_event_at}))
    return rows
