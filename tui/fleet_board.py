"""The fleet board (issue 26): one row per open account, for the app's Fleet section and `gateway-tui fleet`. No
Textual and no argparse here (the section is tui/widgets/fleet/, the command line tui/fleet_cli.py).

    activity = AccountActivity()            # one per account (Account.activity): fed by its events and its sends
    row = board_row(account, health="healthy", unread=3)
    row.as_json()                           # {"profile", "number", "connected", "health", "unread", "last_event_at"}
    rows = await read_board(names)          # the command line: profiles, secrets, one status read each

"Connected" is what the account's watch knows (tui.watch: status reads and connection events), never a connect.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from tui.account import Account
    from tui.doctor import DoctorRecord
    from tui.webhooks.events import StoredEvent

UNCHECKED = "unchecked"
"""The health of an account the doctor has not checked in this run."""
STATUS_READS_AT_ONCE = 8
"""Status reads in flight at once when the board reads many accounts (the command line, the app's poll)."""
STATUS_READ_TIMEOUT = 5.0

JSON_KEYS = ("profile", "number", "connected", "health", "unread", "last_event_at")

Clock = Callable[[], datetime]


def _utc_now() -> datetime:
    return datetime.now(UTC)


@dataclass
class AccountActivity:
    """What one account did in this run: its events (per kind, the last one's time; per minute) and its sends."""

    clock: Clock = _utc_now
    last_by_kind: dict[str, datetime] = field(default_factory=dict)
    sends_by_day: dict[date, int] = field(default_factory=dict)
    _recent: deque[float] = field(default_factory=lambda: deque(maxlen=100_000))

    def record_event(self, event: StoredEvent) -> None:
        if event.duplicate_of is not None or event.rejected:
            return  # counted once; a refused post is not the account's traffic
        self.last_by_kind[event.kind] = event.received_at
        self._recent.append(time.monotonic())

    def record_send(self) -> None:
        today = self.clock().date()
        self.sends_by_day[today] = self.sends_by_day.get(today, 0) + 1

    def per_minute(self, now: float | None = None) -> int:
        now = time.monotonic() if now is None else now
        while self._recent and self._recent[0] < now - 60:
            self._recent.popleft()
        return len(self._recent)

    @property
    def sends_today(self) -> int:
        return self.sends_by_day.get(self.clock().date(), 0)

    @property
    def last_event_at(self) -> datetime | None:
        return max(self.last_by_kind.values(), default=None)


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
    """The doctor's newest report for the account in a word (tui.doctor.Health), else "unchecked"."""
    if record is None or record.report is None:
        return UNCHECKED
    from tui.doctor import health_of

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
    from tui.watch import header_words

    states = [state for family in account.families if (state := account.watch.state(family)) is not None]
    number = next((state.number for state in states if state.number), "") or ""
    connected = all(state.connected for state in states) if states else None
    return connected, header_words(account.watch), number


def board_row(account: Account, *, health: str, unread: int | None) -> FleetRow:
    connected, words, number = watched_connection(account)
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


async def poll_accounts(accounts: Sequence[Account], *, force: bool = False) -> None:
    """Read the status of each account whose watch is due (all with `force`), a few at a time, each bounded in
    time; a failing read is the watch's own problem to show, never raised here."""
    gate = asyncio.Semaphore(STATUS_READS_AT_ONCE)

    async def one(account: Account) -> None:
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
    from tui.paths import profile_events_path
    from tui.webhooks.conversations import Inbox
    from tui.webhooks.store import EventStore, StoreUnusable

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


async def read_board(names: Sequence[str] | None, *, insecure_storage: bool = False) -> list[FleetRow]:
    """The board of the command line: the named profiles (all when None), their secrets as the app resolves them,
    one status read each (never a connect), unread and the last event from each profile's own store. Raises
    LookupError naming the profiles that do not exist."""
    from tui import config
    from tui import secrets as secret_module
    from tui.account import Tokens, new_account
    from tui.api.gateway_http import GatewayHttp

    profiles = {profile.name: profile for profile in await asyncio.to_thread(config.load_profiles)}
    chosen = list(profiles) if names is None else list(names)
    missing = [name for name in chosen if name not in profiles]
    if missing:
        known = ", ".join(sorted(profiles)) or "none"
        raise LookupError(f"no profile named {', '.join(missing)} (known: {known}); see `gateway-tui profile list`")
    if any(profiles[name].secrets_file for name in chosen):
        insecure_storage = True
    store = await asyncio.to_thread(secret_module.open_secret_store_for_run, insecure_storage)
    http = GatewayHttp(timeout=STATUS_READ_TIMEOUT)
    try:
        accounts = []
        for name in chosen:
            account = new_account(profiles[name], store, store=lambda: None)
            # The GATEWAY_TUI_* variables name one account's secrets: with several profiles, each its own stored ones.
            environ: dict[str, str] | None = None if len(chosen) == 1 else {}
            resolved = await asyncio.to_thread(secret_module.resolve_secrets, name, store, environ)
            account.connect(http, Tokens.from_secrets(resolved))
            accounts.append(account)
        await poll_accounts(accounts, force=True)
    finally:
        await http.aclose()
    rows = []
    for account in accounts:
        unread, last = await asyncio.to_thread(_stored_activity, account.name)
        row = board_row(account, health=UNCHECKED, unread=unread)
        rows.append(FleetRow(**{**row.__dict__, "last_event_at": last or row.last_event_at}))
    return rows
