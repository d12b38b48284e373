"""The event feed: the run's event store, the listener that writes it, the forwarder to the user's app, replays and
the listener's statistics. Every event stored is published on the bus (`EventStored`, after its account's own
watch and activity saw it); the store's health, the listener's load and forward attempts are published too.

Heavy modules (the store, the listener, aiohttp) are imported when the store opens or the listener starts, in a
thread, never at import time.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import importlib
import os
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from tui.core.errors import StartupError
from tui.core.feed.attached import Attachment
from tui.core.feed.bus import (
    EventBus,
    EventStored,
    ForwardAttempted,
    InboxChanged,
    IntakeChanged,
    ListenerLoadChanged,
    StoreHealthChanged,
)

if TYPE_CHECKING:  # pragma: no cover - imports for type checkers only
    from tui.core.catchup import Gap
    from tui.local.listener_record import ListenerRecord
    from tui.webhooks.events import StoredEvent
    from tui.webhooks.forwarder import ForwardAttempt, Forwarder, ForwardLog
    from tui.webhooks.identities import Identity
    from tui.webhooks.listener import Listener
    from tui.webhooks.store import EventStore


class EventOwner(Protocol):
    """What the feed needs of the open account an event came for (tui.core.accounts.account.Account): the
    accounts sit above the feed (they start its listener), so the feed names only this."""

    @property
    def name(self) -> str: ...

    def receive(self, event: StoredEvent) -> None: ...


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


ServeAccounts = Callable[["Listener"], None]
"""Gives a listener the open accounts' keys and paths before it starts (`Accounts.serve`)."""


class EventFeed:
    """The store, the listener and the forwarder of one run. `owner_of` names the open account an event came for."""

    def __init__(self, bus: EventBus, *, owner_of: Callable[[StoredEvent], EventOwner | None]) -> None:
        self.bus = bus
        self._owner_of = owner_of
        self.store: EventStore | None = None
        self.store_problem: str | None = None  # why there is no store (a damaged file): the app runs without events
        self.listener: Listener | None = None
        self.attachment: Attachment | None = None
        """The listener of another process this run follows instead of its own (issue 32); None: its own, or none."""
        self.listener_problem: str | None = None
        """Why this run has no listener at all (its port taken by a program that is not ours): one line."""
        self._port_taken: int | None = None  # that port, for the events panel's short line
        self.forward_log: ForwardLog | None = None
        self.forwarder: Forwarder | None = None
        self.stats = ListenerStats()
        self._recorded: set[str] = set()  # the names whose listener record this run wrote (removed in stop)
        # This run of its own listener in the store's records (tui.core.catchup): when it began listening (noted
        # at once, no I/O on the start's path), and its record once the catch-up's background task wrote it.
        self.listening_since_us: int | None = None
        self._run: int | None = None
        self._left_stores: list[EventStore] = []  # stores of a listener followed before it moved (closed at the end)

    # -- the store ----------------------------------------------------------------------------------------------

    async def open_store(self, path: Path) -> None:
        """Open the run's event store (a damaged one: `store_problem` says why and the run goes on without events)."""
        # Imported in a thread, as the listener is: the forwarder pulls in aiohttp (~100 ms), which on the event
        # loop held the sandbox's first "connected" frame back (bench/start_interactive.py).
        await asyncio.to_thread(importlib.import_module, "tui.webhooks.forwarder")
        from tui.webhooks.store import EventStore, StoreUnusable

        store = EventStore(path)
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
            loop.call_soon_threadsafe(self.bus.publish, StoreHealthChanged())

        store.watch_health(on_health)
        from tui.webhooks.forwarder import ForwardLog

        self.forward_log = await asyncio.to_thread(ForwardLog(store.path).open)

    def store_status(self) -> str | None:
        """One line for the header about the event store; None while it works."""
        if self.store_problem is not None:
            return "event store unusable: events are off (see the message)"
        if self.store is not None and self.store.health.failing:
            health = self.store.health
            return f"store failing: {health.problem}" + ("" if health.appends_failing else " (search index only)")
        return None

    # -- the listener -------------------------------------------------------------------------------------------

    async def start_listener(self, host: str, port: int, hmac_key: str | None, options: ListenerOptions,
                             serve: ServeAccounts) -> None:
        """The run's own listener. A port taken by a program that is not ours (no listener record names it: those
        are attached to before this) leaves the run without one, saying why in `listener_problem`: the rest of the
        app starts as usual."""
        # Imported in a thread: the listener's modules (the store, the HTTP layer) would otherwise hold the event
        # loop while the app already takes keys (the sandbox's start sets the listener up after the first section
        # is shown).
        await asyncio.to_thread(importlib.import_module, "tui.webhooks.listener")
        if self.store is None:
            return  # no store, no listener: an event answered 200 must be stored
        listener = self._listener_at(self.store, host, port, hmac_key, options, serve)
        try:
            await listener.start()
        except OSError as error:
            self.listener_problem = (f"no listener: port {port} on {host} is taken by another program "
                                     f"({error.strerror or error}); change the port in Settings → Listener, or "
                                     "stop that program")
            self._port_taken = port
            self.bus.publish(IntakeChanged())
            return
        self.listener, self.listener_problem, self._port_taken = listener, None, None
        self.listening_since_us = time.time_ns() // 1000

    async def record_run(self) -> Gap | None:
        """Write this run of the listener in the store: the gap since the run before ended (None: a first run, an
        attached or absent listener, or already written). Called off the start's path (the catch-up's task)."""
        since, store = self.listening_since_us, self.store
        if since is None or store is None or self._run is not None or self.listener is None:
            return None
        from tui.core.catchup import listener_started

        self._run, gap = await asyncio.to_thread(store.write, lambda connection: listener_started(connection, since))
        return gap

    # -- a listener of another process (issue 32) -----------------------------------------------------------------

    @property
    def attached(self) -> ListenerRecord | None:
        """The record of the listener this run follows (None: it has its own, or none)."""
        return self.attachment.record if self.attachment is not None else None

    async def attach(self, record: ListenerRecord, names: Iterable[str]) -> None:
        """Follow the store `record`'s process writes (open already: `open_store(record.store)`) instead of
        listening: its events from now on reach the bus as this run's own would. Forwarding stays the listener's."""
        if self.store is None:
            return
        store = self.store

        def newest_id() -> int:
            newest = store.newest(1)
            return newest[0].id if newest else 0

        after = await asyncio.to_thread(newest_id)
        self.attachment = Attachment(self.bus, record, names, self._on_followed, self._store_moved)
        await self.attachment.start(after)
        self.bus.publish(IntakeChanged())

    async def _store_moved(self, record: ListenerRecord) -> int | None:
        """The listener this run follows started again on another store: open it as the run's store (the views read
        it from now on) and say after which event to follow it; None when it cannot be opened (store_problem says
        why). The store left is closed with the run's, since a view may still be reading it."""
        from tui.core.catchup.runs import newest_before_run

        previous, previous_log = self.store, self.forward_log
        assert record.store is not None
        await self.open_store(record.store)
        store = self.store
        if store is None or store is previous:
            self.bus.publish(StoreHealthChanged())
            return None
        if previous is not None:
            self._left_stores.append(previous)
        if previous_log is not None:
            with contextlib.suppress(Exception):
                await asyncio.to_thread(previous_log.close)
        after = await asyncio.to_thread(store.read, newest_before_run)
        self.bus.publish(StoreHealthChanged())
        self.bus.publish(InboxChanged(""))  # every inbox reads the new store
        return after

    def _on_followed(self, events: list[StoredEvent]) -> None:
        """Events another process stored (or, with none, a change such as another app's send or mark read)."""
        if not events:
            self.bus.publish(InboxChanged(""))
        for event in events:
            self._on_event(event)

    def intake_address(self) -> str | None:
        """The header's word for who listens when it is not this run: `listen :8787`, `nothing listens`, `no
        listener`; None while this run listens itself."""
        if self.attachment is not None:
            return self.attachment.address()
        if self.listener is None and self.listener_problem is not None:
            return "no listener"
        return None

    def intake_problem(self) -> str | None:
        """A short line (80 columns) for the events panel while no event can arrive; None while a listener runs."""
        if self.attachment is not None:
            return self.attachment.problem()
        if self.listener is None and self.listener_problem is not None:
            return f"no listener: port {self._port_taken} taken by another program; change it in Settings"
        return None

    def intake_description(self) -> str | None:
        """Settings' line about who listens when it is not this run: another process's listener (or that it stopped),
        or why this run has none; None while this run listens."""
        if self.attachment is not None:
            return self.attachment.describe()
        return self.listener_problem if self.listener is None else None

    async def move_listener(self, host: str, port: int, hmac_key: str | None, options: ListenerOptions,
                            serve: ServeAccounts) -> bool:
        """Move the listener to host:port with `options`. The new one starts before the old one stops, so no event
        is refused meanwhile; if the new address cannot be bound, the old listener keeps running and the error is
        raised. False when it already is there, so."""
        if self.store is None:
            raise StartupError(self.store_problem or "there is no event store")
        current = self.listener
        same_address = current is not None and current.host == host and port != 0 and current.port == port
        if same_address and current is not None and ListenerOptions(
                current.max_body, current.require_signatures, current.media.limit) == options:
            return False  # already there
        if same_address and current is not None:
            await current.stop()  # same address, new options: the old one must let go of the port first
        replacement = self._listener_at(self.store, host, port, hmac_key, options, serve)
        await replacement.start()
        previous, self.listener = self.listener, replacement
        if previous is not None:
            await previous.stop()
        if self.attachment is not None or self.listener_problem is not None:
            # Asked to listen here: this run's own listener now, no longer another process's (whose store it keeps
            # writing beside it, under SQLite's lock) nor none.
            attachment, self.attachment = self.attachment, None
            self.listener_problem, self._port_taken = None, None
            if attachment is not None:
                await attachment.stop()
            self.bus.publish(IntakeChanged())
        return True

    def _listener_at(self, store: EventStore, host: str, port: int, hmac_key: str | None, options: ListenerOptions,
                     serve: ServeAccounts) -> Listener:
        """The one way the feed builds its listener (at start and when Settings moves it)."""
        from tui.webhooks.listener import Listener

        listener = Listener(
            store,
            host=host,
            port=port,
            hmac_key=hmac_key,
            on_event=self._on_event,
            on_shedding=lambda shedding: self.bus.publish(ListenerLoadChanged(shedding)),
            max_body=options.max_body,
            require_signatures=options.require_signatures,
            media_limit=options.media_limit,
        )
        serve(listener)
        return listener

    def listener_status(self) -> str | None:
        """One line for the header about the listener's load; None while it sheds nothing."""
        if self.listener is not None and self.listener.shedding:
            return "listener shedding load: unverified senders cut or refused (503)"
        return None

    def record_listener(self, names: Iterable[str], account_paths: Iterable[str]) -> None:
        """Tell the doctor (`gateway-tui doctor`) where this run's listener is and which store it writes, under each
        of `names`, and whether it serves each on its own `/a/<profile>/` paths (`account_paths`, several accounts
        open); written again when the accounts or the listener change, the names no longer given removed."""
        from tui.local.listener_record import remove_record, running, write_record

        listener, store = self.listener, self.store
        if listener is None or listener.port is None or store is None:
            return
        names, account_paths = set(names), set(account_paths)
        recorded: set[str] = set()
        for name in names:
            other = running(name) if name not in self._recorded else None
            if other is not None and other.pid != os.getpid():
                # Another live process (`listen`, another app) serves it: its record is what the next app attaches
                # to and what it removes on exit; this run listening beside it (Settings' "Restart listener here"
                # in an attached app) must not take it over.
                continue
            with contextlib.suppress(OSError):
                write_record(name, listener.host, listener.port, store=store.path,
                             account_paths=len(account_paths) > 1 and name in account_paths)
                recorded.add(name)
        for name in self._recorded - names:
            remove_record(name)
        self._recorded = recorded

    def _on_event(self, event: StoredEvent) -> None:
        from tui.webhooks.store_rows import LIST_BODY_LIMIT

        self.stats.record(event)
        if self.forwarder is not None:
            self.forwarder.submit(event)  # only queues: the gateway's answer never waits for the user's app
        if event.payload is not None and len(event.body) > LIST_BODY_LIMIT:
            # Views keep hundreds of events; like the store's lists they get the payload, not inline media.
            event = dataclasses.replace(event, body=b"")
        account = self._owner_of(event)
        if account is not None:
            account.receive(event)
        self.bus.publish(EventStored(event, account.name if account is not None else None))

    # -- forwarding to the user's app ---------------------------------------------------------------------------

    @property
    def forward_target(self) -> str | None:
        return self.forwarder.target if self.forwarder is not None else None

    async def set_forward_target(self, url: str | None, *, allow_remote: bool = False) -> None:
        """Forward every accepted event stored from now on, and the forwards still pending, to `url` (None or ""
        stops forwarding; what is pending then waits for the next target). Raises ForwardTargetRefused for a URL
        that is not loopback without `allow_remote`; the old target stays then."""
        from tui.webhooks.forwarder import Forwarder, check_target

        if self.attachment is not None:  # the listener's process forwards what it stores: not this viewer too
            record = self.attachment.record
            raise ValueError(f"forwarding belongs to the listener this app follows (`{record.who}`, pid "
                             f"{record.pid}): give it --forward-to, or set it in the app that listens")
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

    def _on_attempt(self, attempt: ForwardAttempt) -> None:
        self.bus.publish(ForwardAttempted(attempt))

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

    def known_identities(self, lids: Iterable[str], inbox: str) -> dict[str, Identity]:
        """What the store has learned of each LID in `inbox`'s identities (`inbox_of` an event's path), for lines
        written before their number was known (blocking: call from a thread worker); {} without a store."""
        from tui.webhooks.identities import known_identities

        store = self.store
        if store is None:
            return {}
        return store.read(lambda connection: known_identities(connection, lids, inbox))

    # -- the end --------------------------------------------------------------------------------------------------

    async def stop(self) -> None:
        """Stop the listener (its records removed), the forwarder, and close the forward log and the store."""
        if self.attachment is not None:
            attachment, self.attachment = self.attachment, None
            with contextlib.suppress(Exception):
                await attachment.stop()
        if self.listener is not None:
            with contextlib.suppress(Exception):
                await self.listener.stop()
            run, self._run, self.listening_since_us = self._run, None, None
            if run is not None and self.store is not None and not self.store.health.failing:
                from tui.core.catchup import listener_stopped

                stopped, store = time.time_ns() // 1000, self.store
                with contextlib.suppress(Exception):  # unrecorded, the next run ends it at its newest event
                    await asyncio.to_thread(store.write, lambda connection: listener_stopped(connection, run, stopped))
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

    async def close_store(self) -> None:
        """The store last (after the sandbox and the clients: a delivery in flight may still be written)."""
        stores, self._left_stores = [*self._left_stores, *([self.store] if self.store is not None else [])], []
        self.store = None
        for store in stores:
            with contextlib.suppress(Exception):
                await asyncio.to_thread(store.close)
