"""Following a store another process writes (`gateway-tui listen`, or another app's listener): the events it
appends, as they commit, without reading the whole store again.

A thread of its own asks SQLite `PRAGMA data_version` every FOLLOW_INTERVAL on a connection of its own: the
number changes when any other connection committed, and asking costs a read of the WAL index in shared memory
(no disk, no lock held). Only when it changed are the rows after the last id seen read (one indexed range on the
primary key, LIST columns: no inline media). So an idle store costs nothing but the question, and a burst is
read in pages of FOLLOW_PAGE. A commit that added no event (a send or a mark read recorded by another app, a
forward attempt) is reported as `changed` with no events, for the inbox to read itself again.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path

from tui.webhooks.events import StoredEvent
from tui.webhooks.store_rows import _LIST_COLUMNS, _event

FOLLOW_INTERVAL = 0.05
"""Seconds between two looks at the store: the most an event waits before a viewer reads it."""
FOLLOW_PAGE = 500

OnFollowed = Callable[[list[StoredEvent]], None]
"""Called from the follower's thread with the events appended since the last call, oldest first; an empty list:
the store changed without a new event."""


class StoreFollower:
    """Reads the events appended to `path` after `after_id`, until stopped. `on_followed` runs on its thread."""

    def __init__(self, path: Path, after_id: int, on_followed: OnFollowed, *,
                 interval: float = FOLLOW_INTERVAL) -> None:
        self.path = path
        self.last_id = after_id
        self._on_followed = on_followed
        self._interval = interval
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self.looks = 0  # how many times it asked the store (the measurement in docs/listener.md)
        self.reads = 0  # how many of them read rows

    def start(self) -> StoreFollower:
        self._thread = threading.Thread(target=self._follow, name="event-store-follower", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop looking (blocking for at most one look: call from a thread)."""
        self._stopping.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    def _follow(self) -> None:
        connection: sqlite3.Connection | None = None
        version: int | None = None
        while not self._stopping.is_set():
            try:
                if connection is None:
                    connection = sqlite3.connect(self.path, timeout=5.0, isolation_level=None,
                                                 check_same_thread=False)
                    connection.execute("PRAGMA query_only=1")
                self.looks += 1
                now = connection.execute("PRAGMA data_version").fetchone()[0]
                if now != version:
                    first = version is None
                    version = now
                    events = self._read_new(connection)
                    if events or not first:
                        self.reads += 1
                        self._on_followed(events)
            except sqlite3.Error:
                # The file is being replaced, or locked for a moment: look again with a fresh connection.
                if connection is not None:
                    connection.close()
                connection, version = None, None
            self._stopping.wait(self._interval)
        if connection is not None:
            connection.close()

    def _read_new(self, connection: sqlite3.Connection) -> list[StoredEvent]:
        events: list[StoredEvent] = []
        while True:
            rows = connection.execute(
                f"SELECT {_LIST_COLUMNS} FROM events WHERE events.id > ? ORDER BY events.id LIMIT ?",
                (self.last_id, FOLLOW_PAGE),
            ).fetchall()
            if not rows:
                return events
            page = [_event(row) for row in rows]
            self.last_id = page[-1].id
            events.extend(page)
            if len(rows) < FOLLOW_PAGE:
                return events
