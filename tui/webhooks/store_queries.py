"""The event store's reads: the newest events, a page before, counts, one event, by message id, the panel's
filters as SQL (search through the FTS5 index), and the JSONL export (written owner-only)."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import stat
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO, TypeVar

from tui.webhooks.events import StoredEvent
from tui.api.signing import Verdict
from tui.webhooks.store_rows import _COLUMNS, _LIST_COLUMNS, _event

T = TypeVar("T")

AccountFilter = str | tuple[str, ...] | None
"""Whose events a read returns: one profile's, any of several (with those no account owns), or every event."""

MEDIA_FOLDER_SUFFIX = ".media"  # `<store>.media` beside the store: the inline files its events refer to
# Where every store in a folder kept its files before each store had its own: still read for events of that time.
SHARED_MEDIA_FOLDER_NAME = "media"


class EventQueries:
    """The reads of EventStore (a base class of it): plain synchronous methods, safe from any thread."""

    path: Path

    if TYPE_CHECKING:  # provided by EventStore (its reader pool) and StoreWriter (the index catch-up)
        def _reader(self) -> contextlib.AbstractContextManager[sqlite3.Connection]: ...
        def read(self, query: Callable[[sqlite3.Connection], T]) -> T: ...
        def _catch_up_search_index(self) -> None: ...

    def newest(
        self,
        limit: int,
        *,
        kind: str | None = None,
        verdict: Verdict | str | None = None,
        search: str | None = None,
        rejected: bool | None = None,
        account: AccountFilter = None,
    ) -> list[StoredEvent]:
        """The newest `limit` events matching the filters, newest first (`account`: only that profile's)."""
        return self._select(None, limit, kind, verdict, search, rejected, account)

    def page_before(
        self,
        before_id: int,
        limit: int,
        *,
        kind: str | None = None,
        verdict: Verdict | str | None = None,
        search: str | None = None,
        rejected: bool | None = None,
        account: AccountFilter = None,
    ) -> list[StoredEvent]:
        """The next page of older events: ids below `before_id`, newest first (keyset pagination)."""
        return self._select(before_id, limit, kind, verdict, search, rejected, account)

    def count(
        self,
        *,
        kind: str | None = None,
        verdict: Verdict | str | None = None,
        search: str | None = None,
        rejected: bool | None = None,
        account: AccountFilter = None,
    ) -> int:
        """How many events match, each delivery once: duplicates are left out (counted through their own small
        index, so the total stays an index count even over millions of events)."""
        source, conditions, parameters = self._filter(kind, verdict, search, rejected, account)
        where = f"WHERE {' AND '.join(conditions)}" if conditions else ""
        # The duplicates' own partial index drives (few rows), whatever index the other filters would pick.
        duplicates = " AND ".join(
            ["events.duplicate_of IS NOT NULL"]
            + [_IN_SEARCH if condition == _MATCH else condition for condition in conditions]
        )
        with self._reader() as connection:
            total = connection.execute(f"SELECT count(*) FROM {source} {where}", parameters).fetchone()[0]
            repeated = connection.execute(
                f"SELECT count(*) FROM events INDEXED BY events_duplicates WHERE {duplicates}", parameters
            ).fetchone()[0]
        return int(total) - int(repeated)

    @property
    def media_folder(self) -> Path:
        """Where the files of this store's inline media are kept (their events refer to them): its own folder. The
        stores of one data folder (each profile's, the sandbox's, `listen --all`'s) once shared `media/`, where one
        store's limit removed files another store's events need to rebuild their bodies."""
        return self.path.absolute().with_name(self.path.name + MEDIA_FOLDER_SUFFIX)

    @property
    def shared_media_folder(self) -> Path:
        """The folder the stores beside this one shared before each had its own (events of that time kept their
        body whole, so only `event_media` looks there for their files)."""
        return self.path.absolute().parent / SHARED_MEDIA_FOLDER_NAME

    def media_in_use(self, file_name: str) -> bool:
        """Whether a stored event's body needs this kept file to be rebuilt (it may then not be removed). Blocking:
        call from a worker thread."""
        def query(connection: sqlite3.Connection) -> bool:
            found = connection.execute("SELECT 1 FROM events WHERE media_file = ? LIMIT 1", (file_name,)).fetchone()
            return found is not None
        return self.read(query)

    def get(self, event_id: int) -> StoredEvent | None:
        with self._reader() as connection:
            row = connection.execute(f"SELECT {_COLUMNS} FROM events WHERE id = ?", (event_id,)).fetchone()
        return _event(row, self.media_folder) if row else None

    def kinds(self) -> list[str]:
        """Distinct kinds, sorted; a skip-scan over the kind index, so cheap even with millions of rows."""
        query = """
            WITH RECURSIVE k(kind) AS (
                SELECT min(kind) FROM events
                UNION ALL
                SELECT (SELECT min(kind) FROM events WHERE kind > k.kind) FROM k WHERE k.kind IS NOT NULL
            )
            SELECT kind FROM k WHERE kind IS NOT NULL"""
        with self._reader() as connection:
            return [row[0] for row in connection.execute(query)]

    def find_by_message_id(self, message_id: str) -> list[StoredEvent]:
        """Every event that refers to this gateway message id, oldest first (blocking: the index catches up first)."""
        self._catch_up_search_index()
        query = f"""SELECT {_LIST_COLUMNS} FROM event_message_ids
            CROSS JOIN events ON events.id = event_message_ids.event_id
            WHERE event_message_ids.message_id = ? ORDER BY events.id"""
        with self._reader() as connection:
            return [_event(row) for row in connection.execute(query, (message_id,))]

    def export_jsonl(
        self,
        dest: Path | TextIO,
        *,
        kind: str | None = None,
        verdict: Verdict | str | None = None,
        search: str | None = None,
        rejected: bool | None = None,
        account: AccountFilter = None,
    ) -> int:
        """Write the matching events, oldest first, one JSON object per line; returns how many were written."""
        if isinstance(dest, (str, Path)):
            with open_private(Path(dest)) as stream:
                return self.export_jsonl(stream, kind=kind, verdict=verdict, search=search, rejected=rejected,
                                         account=account)
        source, conditions, parameters = self._filter(kind, verdict, search, rejected, account)
        where = f"WHERE {' AND '.join(conditions)}" if conditions else ""
        written = 0
        with self._reader() as connection:
            cursor = connection.execute(f"SELECT {_COLUMNS} FROM {source} {where} ORDER BY events.id", parameters)
            # Streamed in chunks: an export of a million events must not hold them all in memory.
            while rows := cursor.fetchmany(1000):
                for row in rows:
                    dest.write(_event(row, self.media_folder).to_json_line() + "\n")
                    written += 1
        return written

    def _select(
        self,
        before_id: int | None,
        limit: int,
        kind: str | None,
        verdict: Verdict | str | None,
        search: str | None,
        rejected: bool | None,
        account: AccountFilter = None,
    ) -> list[StoredEvent]:
        source, conditions, parameters = self._filter(kind, verdict, search, rejected, account)
        if before_id is not None:
            conditions.append("events.id < ?")
            parameters.append(before_id)
        where = f"WHERE {' AND '.join(conditions)}" if conditions else ""
        query = f"SELECT {_LIST_COLUMNS} FROM {source} {where} ORDER BY events.id DESC LIMIT ?"
        with self._reader() as connection:
            rows = connection.execute(query, [*parameters, max(0, limit)]).fetchall()
        return [_event(row) for row in rows]

    def _filter(
        self, kind: str | None, verdict: Verdict | str | None, search: str | None, rejected: bool | None,
        account: AccountFilter = None,
    ) -> tuple[str, list[str], list[Any]]:
        if _fts_query(search) is not None:
            self._catch_up_search_index()
        return _filtered(kind, verdict, search, rejected, account)


def open_private(path: Path) -> TextIO:
    """Open `path` for writing text, owner-only (0600) from the first byte: exports hold people's messages."""
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        if stat.S_ISREG(os.fstat(descriptor).st_mode):  # an existing file keeps no wider mode; a pipe is left alone
            os.fchmod(descriptor, 0o600)
        return open(descriptor, "w", encoding="utf-8")
    except BaseException:
        os.close(descriptor)
        raise



def _filtered(
    kind: str | None, verdict: Verdict | str | None, search: str | None, rejected: bool | None,
    account: AccountFilter = None,
) -> tuple[str, list[str], list[Any]]:
    """(FROM clause, WHERE conditions, parameters) for the panel's filters. `account`: one profile's events, or
    (a tuple) those of any of these profiles and the ones no account owns (rejected on unknown paths)."""
    conditions: list[str] = []
    parameters: list[Any] = []
    source = "events"
    match = _fts_query(search)
    if match is not None:
        # The index drives (CROSS JOIN fixes the order): FTS5 walks its matches by rowid descending and the
        # LIMIT stops it early, instead of materialising every match first.
        source = "events_fts CROSS JOIN events ON events.id = events_fts.rowid"
        conditions.append(_MATCH)
        parameters.append(match)
    if kind is not None:
        conditions.append("events.kind = ?")
        parameters.append(kind)
    if verdict is not None:
        conditions.append("events.verdict = ?")
        parameters.append(str(verdict))
    if rejected is not None:
        conditions.append("events.rejected = ?")
        parameters.append(int(rejected))
    if isinstance(account, str):
        conditions.append("events.account = ?")
        parameters.append(account)
    elif account is not None:
        marks = ", ".join("?" * len(account))
        conditions.append(f"(events.account IS NULL OR events.account IN ({marks}))")
        parameters.extend(account)
    return source, conditions, parameters


_MATCH = "events_fts MATCH ?"
_IN_SEARCH = "events.id IN (SELECT rowid FROM events_fts WHERE events_fts MATCH ?)"


def _fts_query(search: str | None) -> str | None:
    """The user's words as an FTS5 query: every word must appear, the last one may be a prefix (as you type).

    Each word is quoted, so FTS5 syntax in it (AND, NEAR, *, :) is searched for literally instead of parsed.
    """
    if search is None:
        return None
    words = search.split()
    if not words:
        return None
    quoted = ['"' + word.replace('"', '""') + '"' for word in words]
    quoted[-1] += "*"
    return " ".join(quoted)
