"""The wiring of one running app: secrets, HTTP clients, event store, webhook listener and (in sandbox mode)
the embedded sandbox gateway. No Textual here: the app owns a Runtime and starts it after its first frame.

    runtime = Runtime(sandbox=True)
    runtime.subscribe_events(on_event)        # every stored webhook event (StoredEvent), on the event loop
    runtime.request_log.subscribe(on_exchange)
    await runtime.start()                     # servers, clients, gateway configuration
    await runtime.instance.send_poll(...)
    await runtime.set_hmac_key("a" * 32)      # gateway op 17 + listener + secret store
    await runtime.delete_hmac_key()           # gateway op 19 + listener + secret store
    await runtime.stop()

Heavy modules (httpx, pydantic, aiohttp, keyring) are imported inside `start()`, never at import time, so
importing this module costs nothing before the app's first frame.

Sandbox mode: in-memory secrets, random tokens and a throwaway HMAC key, the sandbox gateway and the listener
on 127.0.0.1 port 0 (the gateway in this process, or, given a started `tui.sandbox.process.SandboxProcess` as
`gateway-tui --sandbox` does, in a process of its own: its tokens, and `runtime.sandbox.state` is then a copy of
the seeded state, not the live one), and the gateway configured through the API as a user would: delivery URL (op 16) →
listener `/delivery`, session webhook (op 24) → listener `/session` with Message, ReadReceipt and
ChatPresence active, HMAC key (op 17).

`deterministic=True` (tests and snapshots): fixed tokens and HMAC key, the sandbox's clock and id factory
fixed, and `scrub()` hides the random ports that would otherwise make screenshots differ from run to run (the UI's
`tui.ui.widgets.timefmt` hides wall-clock times and durations the same way, given `runtime.deterministic`).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import enum
import importlib
import itertools
import logging
import secrets as _random
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

# The listener judges signatures per family by these paths (Z-API's unsigned callbacks arrive below /delivery).
from tui.webhooks.families import AccountSigning, PathFamily, family_urls

# The inbox's row types and marks, for the UI (which reaches the webhooks layer only through the runtime): from the
# modules that hold them, not the inbox's SQL or the event store's (neither is read before the app takes keys).
from tui.webhooks.receipts import STATUS_MARKS, Status, stuck  # noqa: F401
from tui.webhooks.rows import ConversationRow, MessageRow, Step, Timeline  # noqa: F401

# The account (one profile's clients, secrets, dialects and events), and its errors, for the UI.
from tui.core.accounts.account import (
    SANDBOX_PROFILE,
    Account,
    ClientsNotReady,
    Opening,
    Tokens,
    new_account,
    sandbox_account_name,
    sandbox_profile,
)
from tui.core.accounts.fleet_board import FleetRow  # the Fleet section's rows (tui.core.accounts.fleet_board imports only the standard library)

if TYPE_CHECKING:  # pragma: no cover - imports for type checkers only
    import sqlite3

    from tui.api.client import InstanceClient, SessionClient
    from tui.api.dialects import Family, InstanceDialect, SessionDialect
    from tui.api.exchange import RequestLog
    from tui.api.gateway_http import GatewayHttp
    from tui.api.models import Request
    from tui.api.operations import OperationId
    from tui.local.config import Profile
    from tui.core.doctor import DoctorInputs, DoctorRecord
    from tui.sandbox.fleet import SandboxFleet
    from tui.sandbox.process import SandboxProcess
    from tui.sandbox.server import SandboxGateway
    from tui.sandbox.state import SandboxState
    from tui.local.secrets import SecretName, SecretStore
    from tui.webhooks.events import StoredEvent
    from tui.webhooks.forwarder import ForwardAttempt, Forwarder, ForwardLog
    from tui.webhooks.conversations import Inbox
    from tui.webhooks.inbox_changes import NewMessage
    from tui.webhooks.listener import Listener
    from tui.webhooks.store import EventStore

log = logging.getLogger(__name__)

MAX_ACCOUNTS = 100
"""Accounts one app opens at most (`--max-accounts`): each is watched, and the board reads them all."""
OPENING_READS_AT_ONCE = 1
"""Secret-store reads in flight at once while the other accounts open. One: reads in 4 threads (each keyring read
its own D-Bus connection and Secret Service session) opened 100 accounts in ~2.1 s instead of ~3.4 s, but two of
three gnome-keyring daemons died under a thousand or two such reads (the secrets then unreadable, the login keyring
locked): not worth it while the start no longer waits for these reads (bench/README.md, "Start from the keyring")."""
OPENING_AT_LISTENER = "is still opening (the app is reading its key)"
UNREADABLE_AT_LISTENER = "cannot be verified: the app could not read its secrets (the app says why)"
"""What the listener answers (503) for an account whose key is not known yet, after its name (never a detail)."""
NAME_LIST_PAGE_SIZE = 500  # Z-API's lists, page by page
NAME_LIST_PAGES = 40  # at most 20,000 entries per list


def duplicate_marker(event: StoredEvent) -> str:
    """The events panel's mark for a duplicate, as the CLI's (`tui.webhooks.events.duplicate_marker`), its module
    imported at the first event shown rather than with the UI's first frame."""
    from tui.webhooks.events import duplicate_marker as marker

    return marker(event)


class HmacDisagreement(enum.Enum):
    """How the gateway's key status and the profile's key disagree."""

    PROFILE_ONLY = "profile-only"  # we verify, the gateway does not sign: every event arrives unsigned
    GATEWAY_ONLY = "gateway-only"  # the gateway signs, we have no key: nothing is verified


@dataclass(frozen=True)
class SandboxSamples:
    """(id, name) pairs the sandbox really has: groups (digits; the account is admin of them), communities,
    visible products and contacts (phones); `own`: the account's own phone (what a phone code pairs)."""

    groups: tuple[tuple[str, str], ...]
    communities: tuple[tuple[str, str], ...]
    products: tuple[tuple[str, str], ...]
    contacts: tuple[tuple[str, str], ...]
    own: tuple[tuple[str, str], ...] = ()

SESSION_EVENTS = ["Message", "ReadReceipt", "ChatPresence"]
REQUEST_LOG_SIZE = 500

# Fixed secrets of deterministic mode. Only ever used with the in-process sandbox on loopback.
DETERMINISTIC_TOKENS = {
    "instance_token": "sandbox-instance-token",
    "client_token": "sandbox-client-token",
    "session_token": "sandbox-session-token",
}
DETERMINISTIC_HMAC_KEY = "sandbox-hmac-key-0123456789abcdef-deterministic"
# Shown instead of event reception times in deterministic mode: this base plus one second per event id.
DETERMINISTIC_EPOCH = datetime(2025, 1, 1, 12, 0, 0, tzinfo=UTC)

EventCallback = Callable[["StoredEvent"], None]
AttemptCallback = Callable[["ForwardAttempt"], None]


class MediaUnavailable(Exception):
    """A media message's file cannot be had (its words say why)."""


class StartupError(Exception):
    """Start-up failed in a way the user can act on (no profile, keyring unavailable, port taken...)."""


class SetupRequired(StartupError):
    """No profile exists yet (and not --sandbox): the app should open the set-up screen."""


@dataclass(frozen=True)
class ListenerOptions:
    """The listener's body limit and signature policy: the profile's (the sandbox's are the defaults)."""

    max_body: int
    require_signatures: bool
    media_limit: int


@dataclass
class ListenerStats:
    """What the header shows about the listener; updated on every stored event."""

    received: int = 0
    rejected: int = 0
    last_verdict: str | None = None
    _recent: deque[float] = field(default_factory=lambda: deque(maxlen=10_000))

    def record(self, event: StoredEvent) -> None:
        if event.duplicate_of is not None:
            return  # a delivery received again: shown flagged, counted once
        self.received += 1
        if event.rejected:
            self.rejected += 1
        self.last_verdict = "rejected" if event.rejected else str(event.verdict)
        self._recent.append(time.monotonic())

    def seed(self, store: EventStore) -> None:
        """Start from what the store already holds (blocking: call from a thread, before the listener runs), so
        that after a restart the header counts what the events panel and Events show, not only this run's."""
        self.received = store.count()
        self.rejected = store.count(rejected=True)
        newest = store.newest(1)
        if newest:
            self.last_verdict = "rejected" if newest[0].rejected else str(newest[0].verdict)

    def per_minute(self, now: float | None = None) -> int:
        """Events stored in the last 60 seconds."""
        now = time.monotonic() if now is None else now
        while self._recent and self._recent[0] < now - 60:
            self._recent.popleft()
        return len(self._recent)


class Runtime:
    """Everything behind the UI. What is process-wide lives here (the listener, the event store, the sandbox
    host, the request log, forwarding); each profile's clients, secrets and dialects live in its `Account`.
    `accounts` holds them (one today) and `current` is the one the UI works on. Fields are None until `start()`
    has finished (see `started`)."""

    def __init__(
        self,
        *,
        sandbox: bool = False,
        profile: str | None = None,
        insecure_storage: bool = False,
        deterministic: bool = False,
        http_timeout: float = 10.0,
        sandbox_dialects: tuple[str, str] = ("spec", "spec"),
        sandbox_process: SandboxProcess | None = None,
        sandbox_logged_out: bool = False,
        profiles: tuple[str, ...] = (),
        all_profiles: bool = False,
        max_accounts: int = MAX_ACCOUNTS,
        sandbox_accounts: int = 1,
    ) -> None:
        self.sandbox_mode = sandbox
        self.sandbox_accounts = sandbox_process.accounts if sandbox_process is not None else sandbox_accounts
        """Accounts the sandbox serves (`--sandbox --accounts N`): with more than one, each is an open account,
        sandbox-01 … sandbox-NN, on its own listener paths with its own key."""
        self.more_profiles = profiles
        """The profiles opened beside the current one (`--profiles a,b,c`; the first is current without --profile)."""
        self.all_profiles = all_profiles
        self.max_accounts = max_accounts
        self.accounts_note: str | None = None
        """Why fewer accounts were opened than asked for (the maximum), for the app to say."""
        self.sandbox_logged_out = sandbox_logged_out
        """The sandbox in this process starts with no phone paired (`--sandbox --logged-out`'s in-process twin)."""
        self._sandbox_process = sandbox_process
        """The sandbox already started in a process of its own (`gateway-tui --sandbox`); None: in this one."""
        self.start_beside_loop = asyncio.Event()
        """Set once the start has set going what runs beside the event loop before the clients can exist (the sandbox
        process's answer; without one, the start's first step, the profiles file read in a thread): the UI may take
        the loop for its own start-up work meanwhile (the first section's import)."""
        self.clients_coming = asyncio.Event()
        """Set once the clients are built, or the start must wait for the sandbox process to answer, or the start
        has ended (or at once without a sandbox process): the UI mounts its first section from then on, while the
        header's first status read runs (before, its ~60 ms held the clients and that read back)."""
        if sandbox_process is None:  # the start's steps run on the loop: nothing to wait for but its beginning
            self.clients_coming.set()
        self.sandbox_dialects = sandbox_dialects  # (instance, session) dialect of the embedded sandbox
        self.profile_name = SANDBOX_PROFILE if sandbox else (profile or (profiles[0] if profiles else None))
        self.insecure_storage = insecure_storage
        self.deterministic = deterministic
        self.http_timeout = http_timeout
        self.accounts: list[Account] = []
        self.current: Account | None = None
        """The account the UI works on (None until start has loaded its profile)."""
        self.http: GatewayHttp | None = None
        self.store: EventStore | None = None
        self.store_problem: str | None = None  # why there is no store (a damaged file): the app runs without events
        self._health_subscribers: list[Callable[[], None]] = []
        self._load_subscribers: list[Callable[[], None]] = []
        self.listener: Listener | None = None
        self.forward_log: ForwardLog | None = None
        self.forwarder: Forwarder | None = None
        self.sandbox: SandboxGateway | SandboxProcess | SandboxFleet | None = None
        self.request_log: RequestLog = _new_request_log()
        self.stats = ListenerStats()
        self.started = False
        self._event_subscribers: list[EventCallback] = []
        self._inbox_subscribers: list[Callable[[str], None]] = []
        self._names_asked = False
        self._names_task: asyncio.Task[None] | None = None
        self.names_note: str | None = None
        """What the last read of the gateway's lists found, in a few words (None: not read yet)."""
        self._attempt_subscribers: list[AttemptCallback] = []
        self._hmac_key: str | None = None
        self.webhooks_base: str | None = None
        """The base URL this app last pointed both webhooks at (None: not by this app, in this run)."""
        self._doctor_records: dict[str, DoctorRecord] = {}
        self._unread: dict[str, int] = {}
        self._sandbox_info: dict[tuple[str, ...], dict[str, str] | None] = {}
        self._account_keys: dict[str, str | None] = {}
        self._recorded: set[str] = set()  # the profiles whose listener record this run wrote (removed in stop)
        """Each open account's HMAC key, as the listener verifies its `/a/<profile>/` paths (listen_for_accounts)."""
        self._environment_warned = False
        self._opening: asyncio.Task[None] | None = None
        """The reads of the other accounts' secrets after the start (_open_others)."""

    def __repr__(self) -> str:
        mode = "sandbox" if self.sandbox_mode else f"profile={self.profile_name!r}"
        return f"<Runtime {mode} started={self.started} hmac={'set' if self._hmac_key else 'none'}>"

    # -- the current account ---------------------------------------------------------------------------------

    @property
    def profile(self) -> Profile | None:
        """The current account's profile (None before start has loaded it)."""
        return self.current.profile if self.current is not None else None

    @profile.setter
    def profile(self, profile: Profile) -> None:
        """A changed profile for the current account (Settings saved it); its clients speak its dialects."""
        if self.current is None:
            raise ClientsNotReady("There is no profile loaded yet; nothing was changed.")
        self.current.change_profile(profile)

    @property
    def secrets(self) -> SecretStore | None:
        """The current account's secret store."""
        return self.current.secrets if self.current is not None else None

    @property
    def instance(self) -> InstanceClient | None:
        """The current account's instance-family client (None before the clients are built, or without the family)."""
        return self.current.instance if self.current is not None else None

    @instance.setter
    def instance(self, client: InstanceClient | None) -> None:
        if self.current is None:
            raise ClientsNotReady("There is no profile loaded yet.")
        self.current.instance = client

    @property
    def session(self) -> SessionClient | None:
        """The current account's session-family client (None before the clients are built, or without the family)."""
        return self.current.session if self.current is not None else None

    def _open_account(self, profile: Profile, secrets: SecretStore) -> Account:
        """The current account, for a profile of the user's or the sandbox's (one factory for both)."""
        account = new_account(profile, secrets, store=lambda: self.store)
        self.accounts = [account]
        self.current = account
        return account

    # -- subscriptions --------------------------------------------------------------------------------------

    def subscribe_events(self, callback: EventCallback) -> Callable[[], None]:
        """Call `callback(event)` for every stored webhook event; returns an unsubscribe function."""
        self._event_subscribers.append(callback)

        def unsubscribe() -> None:
            if callback in self._event_subscribers:
                self._event_subscribers.remove(callback)

        return unsubscribe

    def subscribe_store_health(self, callback: Callable[[], None]) -> Callable[[], None]:
        """Call `callback()` on the event loop whenever the store starts or stops failing (see `store_status`)."""
        self._health_subscribers.append(callback)
        return lambda: self._health_subscribers.remove(callback) if callback in self._health_subscribers else None

    def store_status(self) -> str | None:
        """One line for the header about the event store; None while it works."""
        if self.store_problem is not None:
            return "event store unusable: events are off (see the message)"
        if self.store is not None and self.store.health.failing:
            health = self.store.health
            return f"store failing: {health.problem}" + ("" if health.appends_failing else " (search index only)")
        return None

    def subscribe_listener_load(self, callback: Callable[[], None]) -> Callable[[], None]:
        """Call `callback()` on the event loop whenever the listener starts or stops shedding load (`listener_status`)."""
        self._load_subscribers.append(callback)
        return lambda: self._load_subscribers.remove(callback) if callback in self._load_subscribers else None

    def listener_status(self) -> str | None:
        """One line for the header about the listener's load; None while it sheds nothing."""
        if self.listener is not None and self.listener.shedding:
            return "listener shedding load: unverified senders cut or refused (503)"
        return None

    def _on_listener_load(self, _shedding: bool) -> None:
        for callback in list(self._load_subscribers):
            try:
                callback()
            except Exception:
                log.exception("listener load subscriber failed")

    def _on_store_health(self) -> None:
        for callback in list(self._health_subscribers):
            try:
                callback()
            except Exception:
                log.exception("store health subscriber failed")

    def subscribe_inbox(self, callback: Callable[[str], None]) -> Callable[[], None]:
        """Call `callback(chat_id)` after one of the account's own messages was recorded (events come through
        `subscribe_events`); returns an unsubscribe function."""
        self._inbox_subscribers.append(callback)
        if not self._names_asked:  # the inbox opens for the first time: name its chats from the gateway's lists
            self.refresh_names()
        return lambda: self._inbox_subscribers.remove(callback) if callback in self._inbox_subscribers else None

    @property
    def inbox(self) -> Inbox | None:
        """The current account's conversations over the event store; None before start. Its reads are indexed and
        take about a millisecond (the UI makes them on the event loop), except a search of the messages' text (a
        scan: call it from a thread worker); its writes wait for the store's writer (call them from a thread)."""
        from tui.webhooks.conversations import Inbox

        if self.current is not None:
            return self.current.inbox
        return Inbox(self.store) if self.store is not None else None

    async def media_file(self, row: MessageRow) -> Path:
        """The kept file of a received media message (issue 25): WuzAPI's inline file, kept by the listener as
        media/<sha256>.<ext>; else the URL its event links to (Z-API's storage, WuzAPI's S3), fetched now with
        `tui.webhooks.media.fetch_media`'s rules (loopback only when the profile's gateway is itself on loopback)
        and kept the same way. Only a trusted event's media: a rejected or unverified one is never a message, and
        `event_media`/`media_urls` refuse it again. Raises MediaUnavailable with the reason in words."""
        from tui.webhooks.media import FetchRefused, MediaFolder, event_media, fetch_and_keep, is_loopback_url, media_urls

        store = self.store
        if store is None:
            raise MediaUnavailable("the event store is not open yet")
        if row.event_id is None and not row.outgoing:
            # The sandbox's seeded history (and any message written without an event) names a file it never had.
            raise MediaUnavailable("it came with the chat's history, without its file (no event delivered it here)")
        if row.event_id is None:
            raise MediaUnavailable("it was sent from here, and the app keeps no copy of what it sends")
        if row.media is None:
            raise MediaUnavailable("its event does not describe a file")
        event = await asyncio.to_thread(store.get, row.event_id)
        if event is None:
            raise MediaUnavailable("its event is no longer stored (the store's retention removed it)")
        folder = self.listener.media if self.listener is not None else MediaFolder.of_store(store)
        kept = await asyncio.to_thread(event_media, event, folder, store.shared_media_folder)
        if kept:
            return kept[0].path
        urls = media_urls(event)
        if not urls:
            if row.media.inline:
                raise MediaUnavailable("its file is no longer in the media folder (the retention limit removed it)")
            raise MediaUnavailable("its event neither carries the file nor links to it")
        profile = self.current.profile if self.current is not None else self.profile
        bases = [url for url in (profile.base_url, profile.session_url) if url] if profile is not None else []
        loopback = self.sandbox_mode or any(is_loopback_url(url) for url in bases)
        try:
            return (await fetch_and_keep(urls[0], folder, allow_loopback=loopback)).path
        except FetchRefused as refused:
            raise MediaUnavailable(f"it was not fetched: {refused}") from None
        except OSError as error:
            raise MediaUnavailable(f"it could not be kept in {folder.path}: {error.strerror or error}") from None

    async def record_sent(self, op_id: OperationId | str, request: Request, result: object) -> str | None:
        """Keep a message the gateway accepted in the inbox (same store as the events); returns its chat id."""
        from tui.webhooks.sent import message_id_of, sent_message

        if self.current is not None:
            self.current.activity.record_send()
        return await self._keep_own_message(sent_message(op_id, request, message_id_of(result)))

    async def record_unanswered(self, op_id: OperationId | str, request: Request) -> str | None:
        """Keep a send that got no answer in the inbox, as one that may have been sent; returns its chat id."""
        from tui.webhooks.sent import unanswered_message

        return await self._keep_own_message(unanswered_message(op_id, request))

    async def _keep_own_message(self, message: NewMessage | None) -> str | None:
        inbox = self.inbox
        if inbox is None or message is None:
            return None
        await asyncio.to_thread(inbox.record, message, _now_us())
        for callback in list(self._inbox_subscribers):
            try:
                callback(message.chat_id)
            except Exception:
                log.exception("inbox subscriber failed")
        return message.chat_id

    async def forget_chat(self, recipient: str) -> bool:
        """A chat the gateway deleted (modify-chat `delete` answered ok) leaves the inbox; its events stay in the
        store. `recipient` as the request named it (a number, `…@g.us` or `…-group`). Returns whether the inbox
        had it; inbox subscribers are told."""
        from tui.webhooks.inbox_changes import chat_id_of

        inbox = self.inbox
        if inbox is None:
            return False
        chat_id = chat_id_of(recipient)
        forgotten = await asyncio.to_thread(inbox.forget, chat_id)
        for callback in list(self._inbox_subscribers):
            try:
                callback(chat_id)
            except Exception:
                log.exception("inbox subscriber failed")
        return forgotten

    # -- names from the gateway's lists ---------------------------------------------------------------------

    def refresh_names(self) -> None:
        """Read the gateway's contact, chat and group lists in the background and name the inbox's chats from them
        (the first time the inbox opens, and when asked again). Only the lists the profile's dialects offer are
        read (the spec has none); a failing gateway leaves the names from the history as they are. Inbox
        subscribers are told when names changed."""
        self._names_asked = True
        if self._names_task is not None and not self._names_task.done():
            return
        if (self.instance is None and self.session is None) or self.store is None:
            return  # not started yet: start() reads them once it has
        self._names_task = asyncio.get_running_loop().create_task(self._read_names(), name="read gateway lists")

    async def _read_names(self) -> None:
        from tui.api.errors import GatewayError
        from tui.api.models import ChatList, ContactList, GroupList, ListPage, NoBody
        from tui.api.operations import NAME_LISTS, OPERATIONS, DialectRefusal, Family
        from tui.webhooks.inbox_changes import (
            ChatName,
            ListedChat,
            chats_from_chat_list,
            chats_from_group_list,
            names_from_chats,
            names_from_contacts,
            names_from_groups,
        )

        names: list[ChatName] = []
        chats: list[ListedChat] = []
        read: list[str] = []
        problems: list[str] = []
        for op_id in NAME_LISTS:
            op = OPERATIONS[op_id]
            client: InstanceClient | SessionClient | None = self.instance if op.family is Family.INSTANCE else self.session
            if client is None:
                continue  # a family the profile lacks (or not connected): its lists are not read
            items: list[object] = []
            try:
                if op.request is ListPage:
                    for page in range(1, NAME_LIST_PAGES + 1):  # bounded: a gateway that never ends its list
                        page_items = _list_items(await client.request(op, ListPage(page=page, pageSize=NAME_LIST_PAGE_SIZE)))
                        items.extend(page_items)
                        if len(page_items) < NAME_LIST_PAGE_SIZE:
                            break
                else:
                    items.extend(_list_items(await client.request(op, NoBody())))
            except DialectRefusal:
                continue  # this dialect has no such list: the history alone names the chats
            except (GatewayError, ClientsNotReady) as error:
                problems.append(f"{op.title}: {self.scrub(str(error))}")
                continue
            read.append(op.title)
            if op.result is ContactList:
                names.extend(names_from_contacts(items))
            elif op.result is ChatList:
                names.extend(names_from_chats(items))
                chats.extend(chats_from_chat_list(items))
            elif op.result is GroupList:
                names.extend(names_from_groups(items))
                chats.extend(chats_from_group_list(items))
        inbox = self.inbox
        try:
            written = await asyncio.to_thread(inbox.enrich, names, chats) if inbox is not None else 0
        except Exception as error:  # a failing or closed store: the names wait for the next read
            log.warning("could not keep the gateway's names: %s", error)
            written = 0
            problems.append(f"the event store: {error}")
        if problems:
            self.names_note = "names from the gateway's lists: " + "; ".join(problems)
            log.info("%s", self.names_note)
        elif read:
            self.names_note = f"{written} names from {', '.join(read)}" + (
                f"; {len(chats)} chats listed" if chats else "")
        else:
            self.names_note = "no lists in these dialects: names come from the history"
        if written or chats:
            for callback in list(self._inbox_subscribers):
                try:
                    callback("")
                except Exception:
                    log.exception("inbox subscriber failed")

    def now_us(self) -> int:
        return _now_us()

    def subscribe_forward_attempts(self, callback: AttemptCallback) -> Callable[[], None]:
        """Call `callback(attempt)` for every forward or replay attempt, on the event loop."""
        self._attempt_subscribers.append(callback)
        return lambda: self._attempt_subscribers.remove(callback) if callback in self._attempt_subscribers else None

    def _on_attempt(self, attempt: ForwardAttempt) -> None:
        for callback in list(self._attempt_subscribers):
            try:
                callback(attempt)
            except Exception:
                log.exception("forward attempt subscriber failed")

    def _on_event(self, event: StoredEvent) -> None:
        from tui.webhooks.store_rows import LIST_BODY_LIMIT

        self.stats.record(event)
        if self.forwarder is not None:
            self.forwarder.submit(event)  # only queues: the gateway's answer never waits for the user's app
        if event.payload is not None and len(event.body) > LIST_BODY_LIMIT:
            # Views keep hundreds of events; like the store's lists they get the payload, not inline media.
            event = dataclasses.replace(event, body=b"")
        account = self._account_of(event)
        if account is not None:
            account.publish(event)
        for callback in list(self._event_subscribers):
            try:
                callback(event)
            except Exception:  # a broken view must not break the listener's answer
                log.exception("event subscriber failed")

    def _account_of(self, event: StoredEvent) -> Account | None:
        """The open account an event came for (its `/a/<profile>/` path, or the old paths' single account)."""
        if event.account is None:
            return self.current if len(self.accounts) == 1 else None  # stored before the listener named it
        return next((account for account in self.accounts if account.name == event.account), None)

    # -- one listener for every open account (issue 26) -------------------------------------------------------

    async def listen_for_accounts(self) -> None:
        """Serve every open account on the listener's `/a/<profile>/session` and `/a/<profile>/delivery`, each
        verified with its own HMAC key; the old paths only while one account is open (its events carry its name).
        Call it when the open accounts change. With several open, the GATEWAY_TUI_* secret variables are ignored
        (said once, on the log): each account's stored key is used."""
        from tui.local import secrets as secret_module

        environ = secret_module.run_environment(len(self.accounts), self._warn_environment)
        keys: dict[str, str | None] = {}
        for account in self.accounts:  # each its own inbox in the store they share (their events name their paths)
            account.inbox_account = account.name if len(self.accounts) > 1 else ""
        for account in self.accounts:
            if account.opening is not Opening.OPEN:
                continue  # its key is not known yet: served as pending (_serve_accounts) until _open_others reads it
            if len(self.accounts) == 1 and account is self.current:
                keys[account.name] = self._hmac_key  # resolved at start, as before
            else:
                keys[account.name] = await asyncio.to_thread(
                    secret_module.resolve_secret, account.name, account.secrets, _hmac_secret(), environ) or None
        # Keys that _open_others gave meanwhile (an account that opened while these were read) are kept.
        still_open = {account.name for account in self.accounts}
        self._account_keys = {**{name: key for name, key in self._account_keys.items() if name in still_open}, **keys}
        if self.listener is not None:
            self._serve_accounts(self.listener)
            self._record_listener()

    def _warn_environment(self, line: str) -> None:
        if not self._environment_warned:
            self._environment_warned = True
            log.warning("%s", line)

    def _serve_accounts(self, listener: Listener) -> None:
        """Give the listener the open accounts' keys, and the old paths' account (the single one; none with several)."""
        for name in set(listener.accounts) - set(self._account_keys):
            listener.remove_account(name)
        for name, key in self._account_keys.items():
            listener.set_account_key(name, key)
        from tui.api.dialects import Family

        for account in self.accounts:
            # Its saved profile's policy; the current account's `require_signatures` is the listener's own (Settings
            # may change it before it is saved).
            listener.set_account_signing(account.name, AccountSigning(
                Family.INSTANCE in account.families,
                account.profile.require_signatures and account is not self.current))
        for account in self.accounts:  # a key not known yet: refused for now (503), never served without one
            if account.opening is not Opening.OPEN and account.name not in self._account_keys:
                listener.set_account_pending(account.name, OPENING_AT_LISTENER if account.opening is Opening.READING
                                             else UNREADABLE_AT_LISTENER)
        listener.account = self.accounts[0].name if len(self.accounts) == 1 else None
        listener.old_paths = len(self.accounts) <= 1

    def account_webhook_url(self, profile: str, family: Family) -> str:
        """The URL `profile`'s gateway should send `family`'s webhooks to: under its public URL (a tunnel), else the
        listener's; on its own `/a/<profile>/` paths when several accounts are open, the old paths with one."""
        base = self._listener_base_of(self.account_named(profile))
        return self._webhook_urls(base, profile)[PathFamily(family.value)]

    def _webhook_urls(self, base: str, profile: str) -> dict[PathFamily, str]:
        return family_urls(base, profile if len(self.accounts) > 1 else None)

    # -- life cycle -----------------------------------------------------------------------------------------

    async def start(self, on_clients: Callable[[], Awaitable[None]] | None = None) -> None:
        """Start everything. Raises SetupRequired when there is no profile (real mode) and nothing else ran.

        `await on_clients()` as soon as the clients can be used, in sandbox mode: before the store, the listener and
        the webhook set-up, so that the app reads the connection first instead of after them."""
        if self.started:
            return
        self._on_clients = on_clients
        if self._sandbox_process is None:
            self.start_beside_loop.set()  # the UI's next step runs once this start waits for its first thread
        try:
            if self.sandbox_mode:
                await self._start_sandbox()
            else:
                await self._start_profile()
        except BaseException:
            await self.stop()
            raise
        finally:
            self.start_beside_loop.set()
            self.clients_coming.set()
        self.started = True
        if self._names_asked and self._names_task is None:
            self.refresh_names()  # the inbox opened before the clients were ready

    async def stop(self) -> None:
        """Stop servers, close the HTTP pool and the store. Safe to call twice or after a failed start."""
        self.started = False
        if self._opening is not None:
            opening, self._opening = self._opening, None
            opening.cancel()
            with contextlib.suppress(BaseException):
                await opening
        if self._names_task is not None:
            task, self._names_task = self._names_task, None
            task.cancel()
            with contextlib.suppress(BaseException):
                await task
        if self.listener is not None:
            with contextlib.suppress(Exception):
                await self.listener.stop()
            from tui.local.listener_record import remove_record

            for name in self._recorded:
                remove_record(name)
        if self.forwarder is not None:
            forwarder, self.forwarder = self.forwarder, None
            with contextlib.suppress(Exception):
                await forwarder.stop()
        if self.forward_log is not None:
            forward_log, self.forward_log = self.forward_log, None
            with contextlib.suppress(Exception):
                await asyncio.to_thread(forward_log.close)
        if self.sandbox is not None:
            with contextlib.suppress(Exception):
                await self.sandbox.stop()
        if self._sandbox_process is not None:  # stopped for good (above, or before it was used): a retry starts
            process, self._sandbox_process = self._sandbox_process, None  # the sandbox in this process instead
            with contextlib.suppress(Exception):
                await process.stop()
        if self.http is not None:
            with contextlib.suppress(Exception):
                await self.http.aclose()
        if self.store is not None:
            store, self.store = self.store, None
            with contextlib.suppress(Exception):
                await asyncio.to_thread(store.close)

    async def _start_sandbox(self) -> None:
        from tui.local.secrets import MemorySecrets

        hmac_key = DETERMINISTIC_HMAC_KEY if self.deterministic else "sbx-" + _random.token_urlsafe(36)
        secrets = MemorySecrets()  # the sandbox's throwaway secrets: its account keeps them
        if self._sandbox_process is not None:
            tokens = Tokens.from_names(self._sandbox_process.tokens)
            _write_tokens(secrets, SANDBOX_PROFILE, tokens)  # in memory: no thread needed
            self.sandbox = self._sandbox_process
            from tui.sandbox.process import SandboxProcessError

            # The clients' modules and connection pool now, while the sandbox may still be starting, not after it;
            # the clients are built before the UI's first section is mounted (`clients_coming`). The sandbox speaks
            # plain http: no CA bundle is read (it was, in a thread, and the clients waited ~40-50 ms for it).
            self.start_beside_loop.set()
            self._build_http()
            if not self._sandbox_process.answered():
                self.clients_coming.set()  # the UI need not wait for the sandbox: its section first
            try:
                await self._sandbox_process.wait_ready()
            except SandboxProcessError as error:
                raise StartupError(str(error)) from None
            logins = [(instance_id, Tokens.from_names(names)) for instance_id, names in
                      zip(self._sandbox_process.instance_ids, self._sandbox_process.account_tokens, strict=True)]
        elif self.sandbox_accounts > 1:
            logins = await self._start_sandbox_accounts_here()
        else:
            tokens = Tokens.from_names(DETERMINISTIC_TOKENS) if self.deterministic else Tokens.from_names({
                name: _random.token_urlsafe(24) for name in DETERMINISTIC_TOKENS
            })
            await asyncio.to_thread(_write_tokens, secrets, SANDBOX_PROFILE, tokens)
            await self._start_sandbox_here(tokens)
            logins = [("sandbox", tokens)]
        if len(logins) > 1:
            await self._sandbox_accounts_started(secrets, logins)
        else:
            await self._sandbox_started(secrets, logins[0][1], hmac_key)

    async def _start_sandbox_accounts_here(self) -> list[tuple[str, Tokens]]:
        """`--sandbox --accounts N` in this process (the tests): every account on one port (tui.sandbox.fleet)."""
        from tui.api.dialects import InstanceDialect as InstanceDialectValue
        from tui.api.dialects import SessionDialect as SessionDialectValue
        from tui.sandbox.fleet import SandboxFleet

        def made(number: int, name: str) -> str:
            return f"sandbox-{number:02d}-{name}" if self.deterministic else _random.token_urlsafe(24)

        client_token = made(0, "client-token")
        logins = [(made(number, "instance-token"), made(number, "session-token"))
                  for number in range(1, self.sandbox_accounts + 1)]
        fleet = SandboxFleet(
            accounts=self.sandbox_accounts, admin_token=_random.token_urlsafe(24), client_token=client_token,
            logins=logins, instance_dialect=InstanceDialectValue(self.sandbox_dialects[0]),
            session_dialect=SessionDialectValue(self.sandbox_dialects[1]),
        )
        self.sandbox = fleet
        await fleet.start()
        return [(account.instance_id, Tokens(account.gateway.instance_token, client_token, account.gateway.session_token))
                for account in fleet.accounts]

    async def _sandbox_accounts_started(self, secrets: SecretStore, logins: list[tuple[str, Tokens]]) -> None:
        """The accounts of `--sandbox --accounts N`: sandbox-01 … (the first current), each with its tokens and an
        HMAC key of its own in the in-memory secrets, all watched, served on their own `/a/<name>/` listener paths,
        and each sandbox account's webhooks and key pointed there, so its traffic lands under it."""
        from tui.api.models import HmacKey
        from tui.local.secrets import SecretName

        assert self.sandbox is not None
        base = self.sandbox.url.rstrip("/")
        self.accounts = []
        for number, (instance_id, tokens) in enumerate(logins, start=1):
            name = sandbox_account_name(number)
            key = (f"{DETERMINISTIC_HMAC_KEY}-{number:02d}" if self.deterministic
                   else "sbx-" + _random.token_urlsafe(36))
            await asyncio.to_thread(_write_tokens, secrets, name, tokens)
            await asyncio.to_thread(secrets.set, name, SecretName.HMAC_KEY, key)
            self.accounts.append(new_account(sandbox_profile(base, self.sandbox_dialects, name=name,
                                                             instance_id=instance_id), secrets, store=lambda: self.store))
        self.current = self.accounts[0]
        self._build_http()
        assert self.http is not None
        for account, (_instance_id, tokens) in zip(self.accounts, logins, strict=True):
            account.connect(self.http, tokens)
        await self._clients_built()

        await self._open_store()
        store, state = self.store, self.sandbox.state
        ends_before_us = None if self.deterministic else _now_us()

        def seed_each() -> None:  # every sandbox account has the demo chats, in its own inbox
            assert store is not None
            for account in self.accounts:
                seed_sandbox_inbox(store, state, ends_before_us=ends_before_us, account=account.name)

        seeding = None if store is None else asyncio.ensure_future(asyncio.to_thread(seed_each))
        try:
            await self._start_listener("127.0.0.1", 0, hmac_key=None)  # each account's key from the secrets
            self._hmac_key = self._account_keys.get(self.current.name)
            if self.listener is not None:
                for account in self.accounts:
                    await self.configure_webhooks(self.listener.url, account)
                    await account.session_client().set_hmac_key(HmacKey(hmac_key=self._account_keys[account.name] or ""))
        finally:
            if seeding is not None:
                await seeding

    async def _start_sandbox_here(self, tokens: Tokens) -> None:
        """The sandbox gateway on this process's event loop (the tests: its state is read directly)."""
        from tui.sandbox.server import SandboxGateway

        from tui.api.dialects import InstanceDialect as InstanceDialectValue
        from tui.api.dialects import SessionDialect as SessionDialectValue

        counter = itertools.count(1)

        def fixed_clock() -> datetime:
            return DETERMINISTIC_EPOCH

        def numbered_id() -> str:
            return f"SBX{next(counter):08d}"

        sandbox = SandboxGateway(
            instance_id="sandbox",
            instance_token=tokens.instance_token,
            client_token=tokens.client_token,
            session_token=tokens.session_token,
            host="127.0.0.1",
            port=0,
            instance_dialect=InstanceDialectValue(self.sandbox_dialects[0]),
            session_dialect=SessionDialectValue(self.sandbox_dialects[1]),
            # Deterministic mode: the sandbox's clock and message ids fixed, so screenshots do not differ.
            clock=fixed_clock if self.deterministic else None,
            id_factory=numbered_id if self.deterministic else None,
            logged_out=self.sandbox_logged_out,
        )
        self.sandbox = sandbox
        await sandbox.start()

    async def _sandbox_started(self, secrets: SecretStore, tokens: Tokens, hmac_key: str) -> None:
        assert self.sandbox is not None
        base = self.sandbox.url.rstrip("/")
        account = self._open_account(sandbox_profile(base, self.sandbox_dialects), secrets)
        # The clients first: the gateway answers from here on, and the app reads its status while the store, the
        # listener and the webhooks are set up (bench/start_interactive.py: ~150 ms sooner "connected").
        self._build_http()
        assert self.http is not None
        account.connect(self.http, tokens)
        await self._clients_built()

        await self._open_store()
        # The demo chats are written (once per store) in a thread while the listener starts and the gateway is
        # configured: mostly SQLite commits, which need not hold up the rest of the start.
        seeding = None if self.store is None else asyncio.ensure_future(
            asyncio.to_thread(seed_sandbox_inbox, self.store, self.sandbox.state,
                              ends_before_us=None if self.deterministic else _now_us()))
        try:
            await self._start_listener("127.0.0.1", 0, hmac_key=None)
            if self.listener is not None:
                await self.configure_webhooks(self.listener.url)
                await self.set_hmac_key(hmac_key)
        finally:
            if seeding is not None:
                await seeding

    async def _start_profile(self) -> None:
        from tui.local import config

        profiles = {profile.name: profile for profile in await asyncio.to_thread(config.load_profiles)}
        if not profiles:
            raise SetupRequired("no profile yet")
        name = self.profile_name
        if name is None:
            name = "default" if "default" in profiles else next(iter(profiles))
        if name not in profiles:
            known = ", ".join(sorted(profiles))
            raise StartupError(f"no profile named {name!r} (known: {known}); see `gateway-tui profile list`")
        self.profile_name = name
        profile = profiles[name]
        others = self._other_profiles(name, profiles)

        from tui.local import secrets as secret_module

        if profile.secrets_file or any(profiles[other].secrets_file for other in others):
            self.insecure_storage = True  # set up without a keyring: its secrets are in the 0600 file, no flag needed
        secrets = await asyncio.to_thread(secret_module.open_secret_store_for_run, self.insecure_storage)
        account = self._open_account(profile, secrets)
        environ: dict[str, str] | None = None if not others else {}  # the GATEWAY_TUI_* variables name one account's secrets
        resolved = await asyncio.to_thread(secret_module.resolve_secrets, name, secrets, environ,
                                           secret_module.secrets_to_open(profile.families))
        self._hmac_key = resolved.get(secret_module.SecretName.HMAC_KEY) or None
        # The others are open from here on, their secrets still to read: the listener serves their paths from its
        # first request, answering 503 until their key is known (_open_others).
        for other in others:  # watched beside the current one: clients built (no I/O), never connected by us
            more = new_account(profiles[other], secrets, store=lambda: self.store)
            more.reading()
            self.accounts.append(more)

        self._build_http()
        assert self.http is not None
        from tui.api.gateway_http import over_tls

        if any(over_tls(url) for url in (profile.base_url, profile.session_url) if url):
            self.http.prepare_tls()  # the CA bundle, read in a thread while the store and the listener start
        await self._open_store(shared=bool(others))
        await self._start_listener(profile.listener_host or "127.0.0.1", profile.listener_port, hmac_key=self._hmac_key)
        account.connect(self.http, Tokens.from_secrets(resolved))
        if others and isinstance(secrets, secret_module.KeyringSecrets):
            # Each keyring read is a Secret Service round trip (~15 ms over D-Bus: seconds for a hundred accounts):
            # read after the start, which the current account alone needed.
            self._opening = asyncio.get_running_loop().create_task(self._open_others(), name="read the other accounts' secrets")
        elif others:
            await self._open_others()  # the 0600 file (or memory): read at once, the start ends with all of them open

    async def _open_others(self) -> None:
        """Read the secrets of the accounts still opening, in a thread of their own (a keyring read blocks on D-Bus;
        OPENING_READS_AT_ONCE at a time), in the board's order, and open each as soon as its
        own are read: its clients, and its key on the listener. One that cannot be read is "secrets unreadable" on
        the board (switching to it says why) and stays refused at the listener (503)."""
        from concurrent.futures import ThreadPoolExecutor

        from tui.local import secrets as secret_module

        loop = asyncio.get_running_loop()

        async def open_one(account: Account, pool: ThreadPoolExecutor) -> None:
            names = secret_module.secrets_to_open(account.families)
            try:  # {}: the GATEWAY_TUI_* variables name one account's secrets, and several are open
                resolved = await loop.run_in_executor(
                    pool, secret_module.resolve_secrets, account.name, account.secrets, {}, names)
            except Exception as error:  # noqa: BLE001 - one account's keyring trouble must not stop the others'
                problem = str(error) if isinstance(error, secret_module.KeyringUnavailable) else (
                    f"{type(error).__name__}: {error}")
                account.unreadable(problem)
                log.warning("the secrets of %s could not be read: %s", account.name, problem)
                if self.listener is not None:
                    self.listener.set_account_pending(account.name, UNREADABLE_AT_LISTENER)
                return
            assert self.http is not None
            account.opened(self.http, Tokens.from_secrets(resolved))
            key = resolved.get(secret_module.SecretName.HMAC_KEY) or None
            self._account_keys[account.name] = key
            if self.listener is not None:
                self.listener.set_account_key(account.name, key)

        opening = [account for account in self.accounts if account.opening is Opening.READING]
        pool = ThreadPoolExecutor(OPENING_READS_AT_ONCE, thread_name_prefix="open-accounts")
        try:  # submitted in the board's order; the pool takes them first come, first served
            await asyncio.gather(*(open_one(account, pool) for account in opening))
        finally:  # stopped: the reads not begun never begin, and none is waited for on the event loop
            pool.shutdown(wait=False, cancel_futures=True)

    def _other_profiles(self, current: str, profiles: dict[str, Profile]) -> list[str]:
        """The profiles opened beside the current one (`--profiles`, `--all-profiles`), at most `max_accounts` in
        all. Raises StartupError for a name that has no profile, or for more names than the maximum."""
        if self.all_profiles:
            names = [name for name in profiles if name != current]
        else:
            missing = [name for name in self.more_profiles if name not in profiles]
            if missing:
                known = ", ".join(sorted(profiles))
                raise StartupError(f"no profile named {', '.join(missing)} (known: {known}); see `gateway-tui profile list`")
            names = list(dict.fromkeys(name for name in self.more_profiles if name != current))
            if 1 + len(names) > self.max_accounts:
                raise StartupError(f"{1 + len(names)} profiles asked for, at most {self.max_accounts} open at once "
                                   "(--max-accounts N to change it)")
        if 1 + len(names) > self.max_accounts:
            self.accounts_note = (f"{1 + len(names)} profiles, {self.max_accounts} opened (the maximum; "
                                  "--max-accounts N to change it)")
            names = names[: self.max_accounts - 1]
        return names

    def fleet_rows(self) -> list[FleetRow]:
        """The Fleet board: one row per open account, from what this run knows (no I/O; `read_fleet` reads)."""
        from tui.core.accounts.fleet_board import board_row, health_word

        return [board_row(account, health=health_word(self._doctor_records.get(account.name)),
                          unread=self._unread.get(account.name)) for account in self.accounts]

    async def read_fleet(self) -> None:
        """The board's reads: each open account's status when its watch is due (a few at a time; never a connect),
        and the unread count of the store's account."""
        from tui.core.accounts.fleet_board import poll_accounts

        if not self.started:
            return
        await poll_accounts([account for account in self.accounts if account.opening is Opening.OPEN])
        store = self.store
        if store is not None and not store.health.failing:
            def unread() -> dict[str, int]:  # each account's own inbox (several share the store)
                return {account.name: sum(row.unread for row in inbox.conversations())
                        for account in self.accounts if (inbox := account.inbox) is not None}

            try:
                self._unread = await asyncio.to_thread(unread)
            except Exception as error:  # a closed or failing store: the count waits for the next read
                log.info("unread count not read: %s", error)

    @property
    def account_shown(self) -> str | None:
        """The account whose events and conversations the views show: the current one while several are open;
        None with one open (every event is its own)."""
        if len(self.accounts) < 2 or self.current is None:
            return None
        return self.current.name

    def account_named(self, name: str) -> Account | None:
        return next((account for account in self.accounts if account.name == name), None)

    async def switch_account(self, name: str) -> Account:
        """Make another open account the current one: the sections act on it from now on (its clients, its
        profile, its HMAC key for Settings and the doctor). Raises LookupError for a name that is not open."""
        account = self.account_named(name)
        if account is None:
            raise LookupError(f"{name} is not open in this app")
        if account is self.current:
            return account
        if await account.settled() is not Opening.OPEN:  # still opening: wait for its secrets, never act without them
            raise LookupError(f"{name}'s secrets could not be read: {account.opening_problem}")
        from tui.local import secrets as secret_module

        key = await asyncio.to_thread(secret_module.resolve_secret, account.name, account.secrets,
                                      secret_module.SecretName.HMAC_KEY, {} if len(self.accounts) > 1 else None)
        self.current = account
        self._hmac_key = key or None
        return account

    _on_clients: Callable[[], Awaitable[None]] | None = None

    async def _clients_built(self) -> None:
        self.clients_coming.set()
        callback, self._on_clients = self._on_clients, None
        if callback is not None:
            await callback()

    async def _open_store(self, *, shared: bool = False) -> None:
        """The run's event store: the profile's own, or with several accounts open the one they share (as
        `listen --all` writes it; each event names its account)."""
        # Imported in a thread, as the listener is: the forwarder pulls in aiohttp (~100 ms), which on the event
        # loop held the sandbox's first "connected" frame back (bench/start_interactive.py).
        await asyncio.to_thread(importlib.import_module, "tui.webhooks.forwarder")
        from tui.local.paths import fleet_events_path, profile_events_path
        from tui.webhooks.store import EventStore
        from tui.webhooks.store_faults import StoreUnusable

        store = EventStore(fleet_events_path() if shared else profile_events_path(self.profile_name or "default"))
        try:
            await asyncio.to_thread(store.open)
        except StoreUnusable as error:
            # A damaged store is not a reason to stop the app: it runs without events and says why (the file is
            # left exactly as it is).
            self.store_problem = str(error)
            return
        self.store_problem = None
        await asyncio.to_thread(self.stats.seed, store)
        self.store = store
        loop = asyncio.get_running_loop()

        def on_health(_health: object) -> None:  # from the store's writer thread
            loop.call_soon_threadsafe(self._on_store_health)

        store.watch_health(on_health)
        from tui.webhooks.forwarder import ForwardLog

        self.forward_log = await asyncio.to_thread(ForwardLog(store.path).open)
        profile = self.profile
        if profile is not None and profile.forward_to:
            await self.set_forward_target(profile.forward_to, allow_remote=profile.forward_allow_remote)

    async def _start_listener(self, host: str, port: int, *, hmac_key: str | None) -> None:
        # Imported in a thread: the listener's modules (the store, the HTTP layer) would otherwise hold the event
        # loop while the app already takes keys (the sandbox's start sets the listener up after the first section
        # is shown).
        await asyncio.to_thread(importlib.import_module, "tui.webhooks.listener")

        if self.store is None:
            return  # no store, no listener: an event answered 200 must be stored
        options = self._listener_options()
        self.listener = self._listener_at(self.store, host, port, hmac_key, options)
        await self.listener.start()
        await self.listen_for_accounts()

    def _listener_at(self, store: EventStore, host: str, port: int, hmac_key: str | None, options: ListenerOptions) -> Listener:
        """The one way the runtime builds its listener (at start and when Settings moves it)."""
        from tui.webhooks.listener import Listener

        listener = Listener(
            store,
            host=host,
            port=port,
            hmac_key=hmac_key,
            on_event=self._on_event,
            on_shedding=self._on_listener_load,
            max_body=options.max_body,
            require_signatures=options.require_signatures,
            media_limit=options.media_limit,
        )
        self._serve_accounts(listener)
        return listener

    def _record_listener(self) -> None:
        """Tell the doctor (`gateway-tui doctor`) where this run's listener is, which store it writes and whether
        it serves a profile on its own `/a/<profile>/` paths (several accounts open): a record for the run's name
        and, for real profiles, each open account's; written again when the accounts or the listener change,
        removed in `stop`. Never records for the sandbox's accounts, whose names a real profile may have."""
        from tui.local.listener_record import remove_record, write_record

        listener, store = self.listener, self.store
        if listener is None or listener.port is None or store is None:
            return
        open_names = [account.name for account in self.accounts]
        names = {self._record_name(), *(() if self.sandbox_mode else open_names)}
        for name in names:
            with contextlib.suppress(OSError):
                write_record(name, listener.host, listener.port, store=store.path,
                             account_paths=len(open_names) > 1 and name in open_names)
        for name in self._recorded - names:
            remove_record(name)
        self._recorded = names

    def _record_name(self) -> str:
        """The run's own name (its first profile, or the sandbox): the same at stop as at start, whichever account
        is current by then."""
        return self.profile_name or (self.profile.name if self.profile is not None else SANDBOX_PROFILE)

    def _listener_options(self) -> ListenerOptions:
        """The profile's body limit, signature policy and media folder limit (the sandbox's profile has the
        defaults)."""
        from tui.api.media import DEFAULT_MEDIA_LIMIT
        from tui.webhooks.budget import DEFAULT_MAX_BODY

        profile = self.profile
        if profile is None:
            return ListenerOptions(DEFAULT_MAX_BODY, False, DEFAULT_MEDIA_LIMIT)
        return ListenerOptions(
            profile.max_body or DEFAULT_MAX_BODY, profile.require_signatures, profile.media_limit or DEFAULT_MEDIA_LIMIT
        )

    def _build_http(self) -> None:
        """One connection pool for the whole run, also across credential changes (imports the clients' modules)."""
        import tui.api.credentials  # noqa: F401
        from tui.api.client import GatewayHttp

        if self.http is None:
            self.http = GatewayHttp(timeout=self.http_timeout, on_exchange=self.request_log.append)

    @property
    def dialects(self) -> tuple[InstanceDialect, SessionDialect]:
        """What the current profile speaks on the wire (instance, session); the spec's shapes until a profile is
        loaded."""
        from tui.api.dialects import InstanceDialect, SessionDialect

        if self.current is None:
            return InstanceDialect.SPEC, SessionDialect.SPEC
        return self.current.dialects

    async def set_dialects(self, instance: InstanceDialect, session: SessionDialect) -> None:
        """Switch the dialects of a real profile (Settings): saved to the profile, clients rebuilt to speak them."""
        from tui.local import config

        if self.sandbox_mode:
            raise StartupError("the sandbox's dialects are chosen when it starts (--instance-dialect, --session-dialect)")
        account = self._account()
        updated = account.profile.model_copy(update={"instance_dialect": instance, "session_dialect": session})
        await asyncio.to_thread(config.save_profile, updated)
        account.change_profile(updated)

    async def save_profile_changes(self, **changes: object) -> bool:
        """Save changed fields of a real profile (Settings: listener, forwarding, theme) and use them from now on.
        False when there is nothing on disk to change (the sandbox, or no profile yet); ConfigError or OSError
        when the file cannot be written."""
        from tui.local import config

        if self.sandbox_mode or self.profile is None:
            return False
        updated = self.profile.model_copy(update=changes)
        await asyncio.to_thread(config.save_profile, updated)
        self.profile = updated
        return True

    # -- operations the UI (Settings) calls ----------------------------------------------------------------

    def _account(self) -> Account:
        if self.current is None:
            raise ClientsNotReady("The gateway is not connected yet; nothing was sent. Try again in a moment.")
        return self.current

    async def reload_credentials(self) -> None:
        """Rebuild the clients from the secret store, after Settings replaced or removed a token. For a real
        profile the GATEWAY_TUI_* variables still win, as at start; the sandbox's throwaway secrets have no
        environment override."""
        from tui.local import secrets as secret_module

        account = self._account()
        store, profile = account.secrets, account.name
        if self.sandbox_mode:
            resolved = {name: await asyncio.to_thread(store.get, profile, name) for name in secret_module.SecretName}
        else:
            resolved = await asyncio.to_thread(secret_module.resolve_secrets, profile, store)
        self._build_http()
        assert self.http is not None
        account.connect(self.http, Tokens.from_secrets(resolved))

    async def restart_listener(
        self, host: str, port: int, *, max_body: int | None = None, require_signatures: bool | None = None
    ) -> None:
        """Move the listener to host:port (with a new body limit or signature policy when given). The new one starts
        before the old one stops, so no event is refused meanwhile; if the new address cannot be bound, the old
        listener keeps running and the error is raised."""

        if self.store is None:
            raise StartupError(self.store_problem or "there is no event store")
        profiled = self._listener_options()
        options = ListenerOptions(
            profiled.max_body if max_body is None else max_body,
            profiled.require_signatures if require_signatures is None else require_signatures,
            profiled.media_limit,
        )
        current = self.listener
        if (
            current is not None and current.host == host and port != 0 and current.port == port
            and ListenerOptions(current.max_body, current.require_signatures, current.media.limit) == options
        ):
            return  # already there
        if current is not None and current.host == host and port != 0 and current.port == port:
            await current.stop()  # same address, new options: the old one must let go of the port first
        replacement = self._listener_at(self.store, host, port, self._hmac_key, options)
        await replacement.start()
        previous, self.listener = self.listener, replacement
        self._record_listener()  # the doctor must find it where it now is
        if previous is not None:
            await previous.stop()

    # -- forwarding to the user's app ------------------------------------------------------------------------

    @property
    def forward_target(self) -> str | None:
        return self.forwarder.target if self.forwarder is not None else None

    async def set_forward_target(self, url: str | None, *, allow_remote: bool = False) -> None:
        """Forward every accepted event stored from now on, and the forwards still pending, to `url` (None or ""
        stops forwarding; what is pending then waits for the next target). Raises ForwardTargetRefused for a URL
        that is not loopback without `allow_remote`; the old target stays then."""
        from tui.webhooks.forwarder import Forwarder, check_target

        replacement = None
        if url:
            target = check_target(url, allow_remote=allow_remote, how_to_allow="switch on 'Allow a remote host'")
            replacement = Forwarder(target, self.forward_log, on_attempt=self._on_attempt, store=self.store)
        # The previous one stops first: the forwards it had not done stay queued on disk and the replacement
        # takes them (to its own target) when it starts; events stored meanwhile are queued too.
        previous, self.forwarder = self.forwarder, replacement
        if previous is not None:
            await previous.stop(handing_over=replacement is not None)
        if replacement is not None:
            await replacement.start()

    async def replay(self, event: StoredEvent) -> ForwardAttempt:
        """Send a stored event once more to the forward target. Raises LookupError when there is none."""
        from tui.webhooks.forwarder import replay

        if self.forwarder is None:
            raise LookupError("no forward URL is set: set one in Settings (Forward events to your app)")
        if (refusal := event.replay_refusal()) is not None:
            raise ValueError(f"event #{event.id} not sent: {refusal}")
        attempt = await replay(event, self.forwarder.target, forward_log=self.forward_log)
        self._on_attempt(attempt)
        return attempt

    def forward_attempts(self, event_id: int) -> list[ForwardAttempt]:
        """Every attempt for one event (blocking: call from a thread worker)."""
        return self.forward_log.attempts(event_id) if self.forward_log is not None else []

    def latest_forward_attempts(self, event_ids: list[int]) -> dict[int, ForwardAttempt]:
        """The newest attempt per event (blocking: call from a thread worker)."""
        return self.forward_log.latest(event_ids) if self.forward_log is not None else {}

    @property
    def hmac_key_set(self) -> bool:
        return self._hmac_key is not None

    async def configure_webhooks(self, public_url: str, account: Account | None = None) -> None:
        """Point the gateway at our listener like a user would: op 16 (delivery) and op 24 (session events), for
        the families the profile has.

        `public_url` is the listener's address as the gateway sees it (the listener URL in sandbox mode, a
        tunnel for a real gateway). Raises the client's typed errors, ClientsNotReady before the clients exist.
        """
        from tui.api.dialects import InstanceDialect
        from tui.api.models import DeliveryWebhook, WebhookUpdate
        from tui.api.operations import Family

        base = public_url.rstrip("/")
        account = account or self._account()
        urls = self._webhook_urls(base, account.name)  # its own paths when several accounts are open
        if account.has(Family.INSTANCE):
            instance = account.instance_client()
            if instance.dialect is InstanceDialect.ZAPI:
                # Z-API has a callback URL per kind (received, delivery, status, connected, ...): the doctor's
                # webhook-url-mismatch reads them all, so all of them point at the listener, in one call.
                await instance.point_every_callback(urls[PathFamily.INSTANCE])
            else:
                await instance.set_delivery_webhook(DeliveryWebhook(value=urls[PathFamily.INSTANCE]))
        if account.has(Family.SESSION):
            from tui.core.watch import SESSION_SUBSCRIPTION  # the connection events too: the account's live state

            await account.session_client().update_webhook(
                WebhookUpdate(webhook=urls[PathFamily.SESSION], events=list(SESSION_SUBSCRIPTION), active=True)
            )
        self.webhooks_base = base

    def listener_base(self) -> str:
        """Where the gateway should send events: the profile's public URL (a tunnel), else the listener's own."""
        return self._listener_base_of(self.current)

    def _listener_base_of(self, account: Account | None) -> str:
        public = account.profile.public_url if account is not None else ""
        if public:
            return public.rstrip("/")
        return self.listener.url.rstrip("/") if self.listener is not None else ""

    # -- the webhook doctor (issue 24) ------------------------------------------------------------------------

    @property
    def doctor_record(self) -> DoctorRecord:
        """The current account's newest doctor report of this run (the header's checks and the Settings panel write
        it)."""
        return self.doctor_record_of(self.current.name if self.current is not None else SANDBOX_PROFILE)

    def doctor_record_of(self, name: str) -> DoctorRecord:
        """One account's doctor record (empty until the doctor checked it while it was current)."""
        record = self._doctor_records.get(name)
        if record is None:
            from tui.core.doctor import DoctorRecord

            record = self._doctor_records[name] = DoctorRecord()
        return record

    async def doctor_inputs(self, may_probe: Callable[[], Awaitable[bool]] | None = None, *,
                            account: Account | None = None) -> DoctorInputs:
        """What the doctor examines for the current account: its clients, its key, the listener as the gateway
        must reach it, the store, and whether its gateway is the sandbox (which says so at /sandbox/info, with its
        own number; asked once per run and URL). `may_probe` is asked before probing a real gateway."""
        from tui.core.doctor import DoctorInputs, sandbox_info

        hmac_key = self._hmac_key
        if account is not None and account is not self.current:  # another open account: its own stored key
            from tui.local import secrets as secret_module

            hmac_key = await asyncio.to_thread(secret_module.resolve_secret, account.name, account.secrets,
                                               secret_module.SecretName.HMAC_KEY, {}) or None
        account = account or self._account()
        profile = account.profile
        urls: tuple[str, ...] = ()
        if profile.session is not None:
            urls += (profile.session.url,)
        if profile.instance is not None:
            urls += (profile.instance.base_url,)
        if urls not in self._sandbox_info:
            self._sandbox_info[urls] = await sandbox_info(urls)
        info = self._sandbox_info[urls]
        return DoctorInputs(
            name=account.name, instance=account.instance, session=account.session, hmac_key=hmac_key,
            listener_base=self._listener_base_of(account), store=self.store, listener_running=self.listener is not None,
            account_paths=account.name if len(self.accounts) > 1 else None, in_app=True,
            sandbox_app=self.sandbox_mode,
            is_sandbox=info is not None, own_number=(info or {}).get("own_phone") or None, may_probe=may_probe,
        )

    async def fix_webhooks(self, account: Account) -> list[str]:
        """The doctor's cheap check (no probe) of one open account, its fixes that need no secret applied, and a
        second check kept as that account's record; a line per thing changed. Raises the clients' typed errors."""
        from tui.core.doctor import Doctor

        doctor = Doctor(await self.doctor_inputs(account=account))
        lines = await doctor.fix(await doctor.examine(probe=False))
        self.doctor_record_of(account.name).update(await doctor.examine(probe=False), probed=False)
        return lines

    async def check_webhooks(self, account: Account) -> None:
        """The doctor's cheap check (no probe) of one open account, kept as its record (the board's health)."""
        from tui.core.doctor import Doctor

        report = await Doctor(await self.doctor_inputs(account=account)).examine(probe=False)
        self.doctor_record_of(account.name).update(report, probed=False)

    def webhook_drift(self) -> tuple[str, str] | None:
        """(where the webhooks point, where the listener is) when this app pointed them elsewhere than the
        listener now is — the gateway's events then go nowhere; None when they agree or nothing is known."""
        here = self.listener_base()
        if self.webhooks_base is None or not here or self.webhooks_base == here:
            return None
        return self.webhooks_base, here

    async def hmac_disagreement(self) -> HmacDisagreement | None:
        """Read the gateway's key status (op 18) and compare it with the profile's key; None when they agree.
        Raises the client's typed errors."""
        if self.session is None:
            return None
        configured = (await self.session.hmac_status()).configured
        if configured == self.hmac_key_set:
            return None
        return HmacDisagreement.PROFILE_ONLY if self.hmac_key_set else HmacDisagreement.GATEWAY_ONLY

    async def push_hmac_key(self) -> None:
        """Set the profile's own key on the gateway (when the gateway lacks it)."""
        if self._hmac_key is None:
            raise StartupError("this profile has no HMAC key to set on the gateway")
        await self.set_hmac_key(self._hmac_key)

    async def set_hmac_key(self, key: str) -> None:
        """Set the signing key: gateway op 17 first (raises its typed error, nothing else changes), then the
        listener verifies with it, then it is saved in the secret store (off the loop)."""
        from tui.api.models import HmacKey

        request = HmacKey(hmac_key=key)  # validates: at least 32 characters
        await self._account().session_client().set_hmac_key(request)
        self._hmac_key = key
        self._account_keys[self._account().name] = key
        if self.listener is not None:
            self.listener.set_hmac_key(key)
            self.listener.set_account_key(self._account().name, key)
        await self._store_secret(_hmac_secret(), key)

    async def delete_hmac_key(self) -> None:
        """Remove the signing key: gateway op 19, then the listener (verdicts become "no key"), then the store."""
        await self._account().session_client().delete_hmac_key()
        self._hmac_key = None
        self._account_keys[self._account().name] = None
        if self.listener is not None:
            self.listener.set_hmac_key(None)
            self.listener.set_account_key(self._account().name, None)
        await self._store_secret(_hmac_secret(), None)

    # -- secrets --------------------------------------------------------------------------------------------

    async def _store_secret(self, name: SecretName, value: str | None) -> None:
        if self.current is None:
            return
        try:
            await asyncio.to_thread(_write_secret, self.current.secrets, self.current.name, name, value)
        except Exception as error:  # the gateway already changed; say so rather than crash the caller
            log.warning("could not save the %s in the secret store: %s", name, type(error).__name__)
            raise

    # -- deterministic display helpers ----------------------------------------------------------------------

    def scrub(self, text: str) -> str:
        """Text for display: in deterministic mode random loopback ports become fixed names."""
        if not self.deterministic or not text:
            return text
        for url, name in sorted(self._random_urls(), key=lambda pair: -len(pair[0])):  # longest first
            text = text.replace(url, name)
        return text

    def _random_urls(self) -> list[tuple[str, str]]:
        urls: list[tuple[str, str]] = []
        if self.sandbox is not None and self.sandbox.url:
            urls.append((self.sandbox.url.rstrip("/"), "http://sandbox.test"))
            urls.append((self.sandbox.url.rstrip("/").removeprefix("http://"), "sandbox.test"))
        if self.listener is not None and self.listener.port:
            urls.append((self.listener.url, "http://listener.test"))
            urls.append((self.listener.url.removeprefix("http://"), "listener.test"))
        if self.webhooks_base and self.webhooks_base.startswith("http://127.0.0.1:") and self.webhooks_base not in (
            url for url, _ in urls
        ):  # where the webhooks point after the listener moved (a random port of the previous listener)
            urls.append((self.webhooks_base, "http://old-listener.test"))
        return urls

    def sandbox_samples(self) -> SandboxSamples | None:
        """Ids that exist in the running sandbox (read from its state, not copied), for placeholders and
        completion; None outside sandbox mode."""
        if not self.sandbox_mode or self.sandbox is None:
            return None
        state = self.sandbox.state
        groups = [(group.digits, group.name) for group in state.groups.values()]
        admin_groups = [(g.digits, g.name) for g in state.groups.values() if g.is_admin(state.own_phone)]
        return SandboxSamples(
            groups=tuple(admin_groups or groups),
            communities=tuple((c.community_id, c.name) for c in state.communities.values()),
            products=tuple((p.product_id, p.name) for p in state.products.values() if not p.is_hidden),
            contacts=tuple((c.phone, c.name) for c in state.contacts.values()),
            own=((state.own_phone, "this account's own phone"),),
        )

    def listener_address(self) -> str:
        if self.listener is None or self.listener.port is None:
            return "not listening"
        if self.deterministic:
            return f"{self.listener.host}:port"
        return self.listener.url.removeprefix("http://")



# -- adapters to the other layers' APIs (kept here so the UI does not care) ---------------------------------


def describe_forward_attempt(attempt: ForwardAttempt, *, duration: str) -> str:
    """The forwarder's own line about an attempt, with `duration` as the UI shows it (tui.ui.widgets.timefmt)."""
    from tui.webhooks.forwarder import describe

    return describe(attempt, duration=duration)


def _new_request_log() -> RequestLog:
    # tui.api.exchange imports only the standard library (and tui.api.redaction), so this is cheap.
    from tui.api.exchange import RequestLog

    return RequestLog(REQUEST_LOG_SIZE)


def _list_items(answer: object) -> list[object]:
    """The entries of one of the gateway's lists (contacts, chats, groups); [] for any other answer."""
    from tui.api.models import ChatList, ContactList, GroupList

    return list(answer.items) if isinstance(answer, (ContactList, ChatList, GroupList)) else []


def _hmac_secret() -> SecretName:
    from tui.local.secrets import SecretName

    return SecretName.HMAC_KEY


def _write_secret(store: SecretStore, profile: str, name: SecretName, value: str | None) -> None:
    if value is None:
        store.delete(profile, name)
    else:
        store.set(profile, name, value)


def _write_tokens(store: SecretStore, profile: str, tokens: Tokens) -> None:
    for name, value in tokens.by_secret().items():
        store.set(profile, name, value)


def _now_us() -> int:
    return time.time_ns() // 1000


SEEDED_HISTORY_ENDS_BEFORE_US = 5 * 60 * 1_000_000


def seed_sandbox_inbox(store: EventStore, state: SandboxState, *, ends_before_us: int | None = None,
                       account: str = "") -> None:
    """The sandbox's demo chats in the inbox: names from its contact and group lists, and the seeded history
    (once per store: a chat that already has messages keeps them). With `ends_before_us` (a live sandbox) the
    history keeps its spacing but ends a few minutes before that moment, so the inbox reads as this morning's
    chats rather than a day in 2025; deterministic runs keep the history's own times. `account`: whose inbox (one of
    `--sandbox --accounts N`'s)."""
    from tui.webhooks.conversations import Inbox
    from tui.webhooks.inbox_changes import ChatName, NameSource, NewMessage, StatusChange, is_group
    from tui.webhooks.inbox_sql import add_message, apply, set_names
    from tui.webhooks.render import render_whatsmeow

    history = state.history()
    shift_us = 0
    if ends_before_us is not None and history:
        newest_us = max(int(item.at.timestamp() * 1_000_000) for item in history)
        shift_us = ends_before_us - SEEDED_HISTORY_ENDS_BEFORE_US - newest_us

    seeded = {row.chat_id for row in Inbox(store, account).conversations(limit=10_000)}
    names = [ChatName(phone, contact.name, NameSource.LIST) for phone, contact in state.contacts.items()]
    names += [ChatName(group.jid, group.name, NameSource.LIST) for group in state.groups.values()]

    def write(connection: sqlite3.Connection) -> None:  # one transaction: a commit each cost ~35 ms an account
        set_names(connection, names, account)
        for item in history:
            if item.chat in seeded:
                continue
            kind, body = render_whatsmeow(item.content)
            sender = None
            if item.sender is not None and is_group(item.chat):
                sender = state.contact_name(item.sender) or item.sender
            add_message(connection, NewMessage(item.chat, item.sender is None, kind, body, item.message_id, sender),
                        int(item.at.timestamp() * 1_000_000) + shift_us, None, account)
            if item.sender is None:  # the history's own messages were read long ago
                apply(connection, [StatusChange((item.message_id,), Status.READ)], 0, None, account)

    store.write(write)

