"""What one profile's event store says about a campaign's recipients, read only: the messages the account sent
(recorded by the `call`/`send` path after each accepted send), the steps the webhooks reported (the status table
the inbox's ticks read: `conversations.statuses`), and what recipients wrote (stop words; whether they ever wrote).

The store is the listener's and the inbox's: nothing here writes to it or changes its schema. The queries on
`chat_messages` use its (chat_id, at_us, id) index and its rowid.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path

from tui.local.paths import profile_events_path
from tui.webhooks.conversations import Step, Timeline, statuses, timeline_of
from tui.webhooks.inbox_changes import chat_id_of
from tui.webhooks.store import EventStore
from tui.webhooks.store_faults import StoreFailing, StoreUnusable


@dataclass(frozen=True)
class Reply:
    row_id: int
    chat_id: str
    body: str


@dataclass(frozen=True)
class SentRecord:
    message_id: str | None
    at_us: int


class StoreView:
    """One profile's event store, opened read-only when it exists (a profile that never listened or sent has none:
    every answer is then "nothing known")."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._store: EventStore | None = None

    @classmethod
    def of_profile(cls, profile: str) -> StoreView:
        return cls(profile_events_path(profile))

    def _read(self) -> EventStore | None:
        if self._store is None:
            if not self.path.is_file():
                return None
            try:
                self._store = EventStore(self.path, read_only=True).open()
            except (StoreFailing, StoreUnusable):
                return None
        return self._store

    def close(self) -> None:
        if self._store is not None:
            self._store.close()
            self._store = None

    def sent_since(self, phone: str, since_us: int) -> SentRecord | None:
        """The account's first message to `phone` recorded at or after `since_us`, if any."""
        store = self._read()
        if store is None:
            return None
        chat = chat_id_of(phone)

        def query(connection: sqlite3.Connection) -> SentRecord | None:
            row = connection.execute(
                "SELECT message_id, at_us FROM chat_messages WHERE chat_id = ? AND at_us >= ? AND outgoing = 1 "
                "ORDER BY at_us, id LIMIT 1", (chat, since_us)).fetchone()
            return SentRecord(row[0], row[1]) if row else None

        return store.read(query)

    def steps(self, message_ids: list[str]) -> dict[str, Step]:
        """The best step each message reached (delivered, read, failed with the gateway's words...)."""
        store = self._read()
        if store is None or not message_ids:
            return {}
        found: dict[str, Step] = {}
        for start in range(0, len(message_ids), 500):  # SQLite's bound on parameters
            chunk = message_ids[start:start + 500]
            found.update(store.read(lambda connection, chunk=chunk: statuses(connection, chunk)))  # type: ignore[misc]
        return found

    def replies_after(self, row_id: int, limit: int = 1000) -> list[Reply]:
        """Messages the account received after row `row_id` of the inbox, oldest first."""
        store = self._read()
        if store is None:
            return []

        def query(connection: sqlite3.Connection) -> list[Reply]:
            return [Reply(row[0], row[1], row[2]) for row in connection.execute(
                "SELECT id, chat_id, body FROM chat_messages WHERE id > ? AND outgoing = 0 ORDER BY id LIMIT ?",
                (row_id, limit))]

        return store.read(query)

    def has_written(self, phone: str) -> bool:
        """Whether `phone` ever wrote to the account (a recipient who never did is a first contact)."""
        store = self._read()
        if store is None:
            return False
        chat = chat_id_of(phone)
        return store.read(lambda connection: connection.execute(
            "SELECT 1 FROM chat_messages WHERE chat_id = ? AND outgoing = 0 LIMIT 1", (chat,)).fetchone() is not None)

    def timeline(self, message_id: str) -> Timeline | None:
        """Every step one message reached, with when (`conversations.timeline_of`)."""
        store = self._read()
        if store is None:
            return None
        return store.read(lambda connection: timeline_of(connection, message_id))
