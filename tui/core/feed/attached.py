"""An attached listener: another process (`gateway-tui listen`, or another app) listens for this run's profiles and
writes the store; this run reads that store live instead of binding a port of its own (issue 32).

`find_listener` looks, at start, for a live listener of one of the profiles (its record in the data dir, its
process alive, its port answering). `Attachment` then follows the store (tui.webhooks.store_follower: each commit's
new events, handed to the feed as if its own listener had stored them) and watches who listens, twice a second:
the process gone (a quit, a kill -9) makes it say that nothing listens now, while it keeps reading the store; a
`listen` started again for the profile, on the same store, is followed again with nothing missed (the follower
goes on from the last id it read); one started again on another store (`--db`) is followed there, from the first
event it stored. What changes is published as `IntakeChanged`.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from tui.core.feed.bus import EventBus, IntakeChanged

if TYPE_CHECKING:  # pragma: no cover - imports for type checkers only
    from tui.local.listener_record import ListenerRecord
    from tui.webhooks.events import StoredEvent
    from tui.webhooks.store_follower import StoreFollower

WATCH_INTERVAL = 0.5
"""Seconds between two looks at who listens: a listener's death is said within about this."""


def find_listener(names: Iterable[str]) -> ListenerRecord | None:
    """The first live listener of another process serving one of `names` (blocking: call from a thread)."""
    from tui.local.listener_record import attachable

    for name in names:
        record = attachable(name)
        if record is not None:
            return record
    return None


def _listener_of(names: tuple[str, ...]) -> ListenerRecord | None:
    """Who listens now for one of `names`, with the store it writes, judged by its record and its process (no
    connection): a listener that stops removes its record, one killed leaves a record whose process is gone."""
    from tui.local.listener_record import running

    for name in names:
        record = running(name)
        if record is not None and record.store is not None:
            return record
    return None


def _same_file(one: Path, other: Path) -> bool:
    try:
        return one.resolve() == other.resolve()
    except OSError:
        return one == other


class Attachment:
    """Follows the store `record` names, from `after_id` on, and who listens for `names`."""

    def __init__(self, bus: EventBus, record: ListenerRecord, names: Iterable[str],
                 on_events: Callable[[list[StoredEvent]], None],
                 on_moved: Callable[[ListenerRecord], Awaitable[int | None]]) -> None:
        self.bus = bus
        self.record = record
        self.alive = True
        self._names = tuple(names)
        self._on_events = on_events
        self._on_moved = on_moved  # the store of a listener started again elsewhere opened: the id to follow after
        self._follower: StoreFollower | None = None
        self._watch: asyncio.Task[None] | None = None

    @property
    def store(self) -> Path:
        assert self.record.store is not None  # find_listener only returns records that name their store
        return self.record.store

    def describe(self) -> str:
        """For Settings: who listens, or that nothing does now (and what the app still does)."""
        if self.alive:
            return self.record.describe()
        return (f"nothing listens now: {self.record.describe()} stopped. Events sent meanwhile are lost unless the "
                "gateway retries; start `gateway-tui listen` again and this app follows it")

    def problem(self) -> str | None:
        """For the events panel's title, short enough for 80 columns: None while a listener runs."""
        return None if self.alive else "nothing listens now: start `gateway-tui listen` again"

    def address(self) -> str:
        """For the header: `listen :8787`, or `nothing listens`."""
        if not self.alive:
            return "nothing listens"
        from tui.local.listener_record import LOOPBACK_HOSTS

        host = "" if self.record.host in LOOPBACK_HOSTS else self.record.host
        return f"{self.record.who} {host}:{self.record.port}"

    async def start(self, after_id: int) -> None:
        self._follow(after_id)
        self._watch = asyncio.create_task(self._watch_listener(), name="attached-listener-watch")

    def _follow(self, after_id: int) -> None:
        from tui.webhooks.store_follower import StoreFollower

        loop = asyncio.get_running_loop()

        def followed(events: list[StoredEvent]) -> None:  # on the follower's thread
            loop.call_soon_threadsafe(self._on_events, events)

        self._follower = StoreFollower(self.store, after_id, followed).start()

    async def _watch_listener(self) -> None:
        from tui.local.listener_record import alive

        while True:
            await asyncio.sleep(WATCH_INTERVAL)
            if self.alive and not alive(self.record):
                # Said at once: looking through every profile's record first (a `listen --all` killed leaves one
                # per profile) took 8 s with 1,000 profiles on a loaded machine (bench/fleet.py).
                self.alive = False
                self.bus.publish(IntakeChanged())
            record = await asyncio.to_thread(_listener_of, self._names)
            if record is None and self.alive:
                self.alive = False
                self.bus.publish(IntakeChanged())
            elif record is not None and record.store is not None and not _same_file(record.store, self.store):
                # Started again on another store (`listen --db`): followed there, from what it stored since its start.
                after_id = await self._on_moved(record)
                if after_id is None:
                    continue  # that store cannot be opened now (its problem is said): looked at again next time
                await self._stop_following()
                self.record, self.alive = record, True
                self._follow(after_id)
                self.bus.publish(IntakeChanged())
            elif record is not None and (not self.alive or record != self.record):
                self.record, self.alive = record, True
                self.bus.publish(IntakeChanged())

    async def _stop_following(self) -> None:
        if self._follower is not None:
            follower, self._follower = self._follower, None
            await asyncio.to_thread(follower.stop)

    async def stop(self) -> None:
        if self._watch is not None:
            self._watch.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._watch
            self._watch = None
        await self._stop_following()
