"""Durable webhook event store: SQLite in WAL mode, one writer thread doing group commit, pooled readers.

Writes: `await store.append(record)` queues the record for the single writer thread. The writer commits
everything queued the moment its previous commit ends (no timer), so batches grow by themselves under load and
an idle store commits at once. The commit runs off the event loop; each append's future is resolved back on its
loop only after the transaction holding it has committed, so nothing is acknowledged before it is stored.

Reads: plain synchronous methods, safe from any thread (the app calls them from thread workers). Each call
borrows a connection from a small pool; WAL lets readers run while the writer commits.

Search index: the FTS5 index is derived data, so it is kept out of the acknowledgement path. The writer indexes
new rows once its queue has been quiet for INDEX_IDLE_DELAY (or one chunk per commit once the index trails by
MAX_INDEX_LAG), in the same
transaction that advances `search_index_state.indexed_up_to`; a search first asks the writer to catch up, so
its answer always covers every stored event. A crash loses no index work that matters: the next writer
indexes whatever the watermark says is missing.

Life cycle: `open()` and `close()` are synchronous (open creates the schema and starts the writer; close
drains the queue, commits it and stops). `with EventStore(path) as store:` does both.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import queue
import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO, TypeVar

from tui.paths import data_dir
from tui.webhooks import conversations
from tui.webhooks.events import EventRecord, StoredEvent, stored
from tui.webhooks.signing import Verdict

T = TypeVar("T")
log = logging.getLogger(__name__)
DEFAULT_FILE_NAME = "events.sqlite3"
SCHEMA_VERSION = 3  # 3: the inbox tables of tui.webhooks.conversations

# synchronous=FULL: in WAL mode this fsyncs the WAL at every commit, so an acknowledged event survives a power
# cut, not only a crash of this process (NORMAL would lose the last commits on power loss). Group commit pays
# one fsync per batch, and bench/listener.py measured FULL within a few percent of NORMAL on this machine
# (see the README), so the stronger promise costs next to nothing.
SYNCHRONOUS = "FULL"

# A flood must not turn into one giant transaction that holds every waiting request hostage.
MAX_BATCH = 2000
# The search index catches up in transactions of this many rows: big enough to amortise FTS5's segment
# writes, small enough that an append arriving meanwhile waits a few milliseconds at most.
INDEX_CHUNK = 256
# Indexing waits for this much quiet, so a burst is acknowledged at full speed and indexed right after it.
INDEX_IDLE_DELAY = 0.05
# Under a sustained flood the writer still indexes one chunk per commit once the index trails by this much
# (a search made meanwhile first waits for the catch-up: about 25 µs per event behind).
MAX_INDEX_LAG = 200_000

_SCHEMA = """
CREATE TABLE IF NOT EXISTS events (
    -- AUTOINCREMENT: ids are never reused after retention deletes, so an id the app holds stays unambiguous.
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    received_us INTEGER NOT NULL,          -- microseconds since the epoch, UTC
    path TEXT NOT NULL,
    headers TEXT NOT NULL,                 -- JSON object of the headers of interest
    body BLOB NOT NULL,                    -- exactly the bytes received (empty when too large to keep)
    has_payload INTEGER NOT NULL,          -- 0: body did not parse
    payload TEXT,                          -- parsed JSON, only when the body is not that JSON text already
    kind TEXT NOT NULL,
    summary TEXT NOT NULL,
    verdict TEXT NOT NULL,
    rejected INTEGER NOT NULL,
    reason TEXT,
    message_ids TEXT NOT NULL              -- JSON array
);
CREATE INDEX IF NOT EXISTS events_by_kind ON events(kind, id);
CREATE INDEX IF NOT EXISTS events_by_verdict ON events(verdict, id);
CREATE INDEX IF NOT EXISTS events_by_rejected ON events(rejected, id);
CREATE TABLE IF NOT EXISTS event_message_ids (
    message_id TEXT NOT NULL,
    event_id INTEGER NOT NULL,
    PRIMARY KEY (message_id, event_id)
) WITHOUT ROWID;
-- The text search sees the payload when the body is encoded (form bodies, \\u escapes), else the body itself.
CREATE VIEW IF NOT EXISTS events_search_text AS
    SELECT id, coalesce(payload, CAST(body AS TEXT)) AS text FROM events;
-- External content: the index holds no second copy of the text, and 'delete' re-derives it from the row.
CREATE VIRTUAL TABLE IF NOT EXISTS events_fts USING fts5(
    text, content='events_search_text', content_rowid='id'
);
-- The search index trails the rows: events up to this id are indexed (see "Search index" in the docstring).
CREATE TABLE IF NOT EXISTS search_index_state (
    only_row INTEGER PRIMARY KEY CHECK (only_row = 0),
    indexed_up_to INTEGER NOT NULL
);
INSERT OR IGNORE INTO search_index_state(only_row, indexed_up_to) VALUES (0, 0);
CREATE TRIGGER IF NOT EXISTS events_after_insert AFTER INSERT ON events BEGIN
    INSERT OR IGNORE INTO event_message_ids(message_id, event_id)
        SELECT value, new.id FROM json_each(new.message_ids);
END;
CREATE TRIGGER IF NOT EXISTS events_after_delete AFTER DELETE ON events BEGIN
    -- Only rows the index holds may be deleted from it: an external-content 'delete' of a row it never saw
    -- would corrupt it.
    INSERT INTO events_fts(events_fts, rowid, text)
        SELECT 'delete', old.id, coalesce(old.payload, CAST(old.body AS TEXT))
        WHERE old.id <= (SELECT indexed_up_to FROM search_index_state);
    DELETE FROM event_message_ids
        WHERE event_id = old.id AND message_id IN (SELECT value FROM json_each(old.message_ids));
END;
"""

_COLUMNS = "events.id, received_us, path, headers, body, has_payload, payload, kind, summary, verdict, rejected, reason, message_ids"
# Lists (the events screen, the panel, a message's events) leave out a big body whose payload is stored apart
# (form bodies, inline base64 media): the row, the detail view and search need only the payload, and one page
# of media events would otherwise read hundreds of megabytes. `get` and exports read the body in full.
LIST_BODY_LIMIT = 64 * 1024
_LIST_COLUMNS = _COLUMNS.replace(
    " body,", f" CASE WHEN payload IS NOT NULL AND length(body) > {LIST_BODY_LIMIT} THEN X'' ELSE body END,", 1
)
_INSERT = """INSERT INTO events
    (received_us, path, headers, body, has_payload, payload, kind, summary, verdict, rejected, reason, message_ids)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"""

_INDEX_SQL = """INSERT INTO events_fts(rowid, text)
    SELECT id, coalesce(payload, CAST(body AS TEXT)) FROM events
    WHERE id > ? AND id <= ? ORDER BY id"""

_STOP = object()
SEARCH_CATCH_UP_TIMEOUT = 60.0


class _CatchUp:
    """A reader's request that the writer index everything stored so far."""

    def __init__(self) -> None:
        self.done = threading.Event()


class StoreClosed(RuntimeError):
    pass


def default_path() -> Path:
    return data_dir() / DEFAULT_FILE_NAME


class EventStore:
    """Webhook events on disk. `retention`: keep at most that many newest events (None keeps everything)."""

    def __init__(self, path: Path | None = None, *, retention: int | None = None) -> None:
        if retention is not None and retention < 1:
            raise ValueError("retention must be at least 1 event, or None to keep everything")
        self.path = Path(path) if path is not None else default_path()
        self.retention = retention
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._state_lock = threading.Lock()
        self._open = False
        self._writer: threading.Thread | None = None
        self._idle_readers: queue.SimpleQueue[sqlite3.Connection] = queue.SimpleQueue()
        self._all_readers: list[sqlite3.Connection] = []
        self._side_lock = threading.Lock()
        self._side: sqlite3.Connection | None = None

    # -- life cycle -------------------------------------------------------------------------------------------

    def open(self) -> EventStore:
        with self._state_lock:
            if self._open:
                return self
            self.path.parent.mkdir(parents=True, exist_ok=True)
            # Events carry people's messages: the file (and the -wal/-shm files SQLite derives from it) is private.
            os.close(os.open(self.path, os.O_CREAT | os.O_RDWR, 0o600))
            connection = self._connect()
            try:
                self._create_schema(connection)
                if self.retention is not None:
                    with connection:
                        self._enforce_retention(connection)
            except BaseException:
                connection.close()
                raise
            self._writer = threading.Thread(
                target=self._write_forever, args=(connection,), name="event-store-writer", daemon=True
            )
            self._writer.start()
            self._open = True
        return self

    def close(self) -> None:
        """Commit everything already appended, stop the writer and close every connection."""
        with self._state_lock:
            if not self._open:
                return
            self._open = False
            self._queue.put(_STOP)
        if self._writer is not None:
            self._writer.join()
        while True:
            try:
                self._idle_readers.get_nowait()
            except queue.Empty:
                break
        for connection in self._all_readers:
            connection.close()
        self._all_readers.clear()
        with self._side_lock:
            if self._side is not None:
                self._side.close()
                self._side = None

    def __enter__(self) -> EventStore:
        return self.open()

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- writing ----------------------------------------------------------------------------------------------

    async def append(self, record: EventRecord) -> StoredEvent:
        """Store one event; resolves once the group commit holding it has committed. Raises on storage failure."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[StoredEvent] = loop.create_future()
        with self._state_lock:
            if not self._open:
                raise StoreClosed("the event store is closed")
            self._queue.put((record, future, loop))
        return await future

    def bulk_insert_for_bench(self, records: Iterable[EventRecord], *, chunk: int = 20_000) -> int:
        """Fill the store fast (benchmarks, e.g. 1,000,000 rows): big transactions, no fsync. Not for real events.

        Can run while the store is open; the writer thread waits for each chunk's transaction.
        """
        connection = self._connect(timeout=60.0)
        connection.execute("PRAGMA synchronous=OFF")
        total = 0
        try:
            pending: list[tuple[Any, ...]] = []
            for record in records:
                pending.append(_row(record))
                if len(pending) >= chunk:
                    total += self._insert_chunk(connection, pending)
                    pending = []
            if pending:
                total += self._insert_chunk(connection, pending)
            if self.retention is not None:
                with connection:
                    self._enforce_retention(connection)
        finally:
            connection.close()
        return total

    def _insert_chunk(self, connection: sqlite3.Connection, rows: list[tuple[Any, ...]]) -> int:
        connection.execute("BEGIN IMMEDIATE")
        try:
            connection.executemany(_INSERT, rows)
            self._index_rows(connection, None)
            connection.execute("COMMIT")
        except BaseException:
            if connection.in_transaction:
                connection.execute("ROLLBACK")
            raise
        return len(rows)

    def _write_forever(self, connection: sqlite3.Connection) -> None:
        try:
            lag = self._index_lag(connection)
            stopping = False
            while not stopping:
                if lag > 0:
                    try:
                        first = self._queue.get(timeout=INDEX_IDLE_DELAY)
                    except queue.Empty:  # quiet for a moment: let the search index catch up
                        lag = self._index_chunk(connection)
                        continue
                else:
                    first = self._queue.get()
                batch = [first]
                while len(batch) < MAX_BATCH:
                    try:
                        batch.append(self._queue.get_nowait())
                    except queue.Empty:
                        break
                if _STOP in batch:
                    stopping = True
                catch_up = [item for item in batch if isinstance(item, _CatchUp)]
                appends = [item for item in batch if item is not _STOP and not isinstance(item, _CatchUp)]
                if appends:
                    self._commit(connection, appends)
                    lag += len(appends)
                    if lag > MAX_INDEX_LAG:
                        lag = self._index_chunk(connection)
                if catch_up:
                    lag = self._index_lag(connection)
                    while lag > 0:
                        lag = self._index_chunk(connection)
                    for request in catch_up:
                        request.done.set()
        finally:
            connection.close()

    def _index_lag(self, connection: sqlite3.Connection) -> int:
        indexed, newest = connection.execute(
            "SELECT indexed_up_to, (SELECT coalesce(max(id), 0) FROM events) FROM search_index_state"
        ).fetchone()
        return newest - indexed

    def _index_chunk(self, connection: sqlite3.Connection) -> int:
        """Index up to INDEX_CHUNK rows past the watermark; returns how many rows still trail."""
        connection.execute("BEGIN IMMEDIATE")
        try:
            self._index_rows(connection, INDEX_CHUNK)
            lag = self._index_lag(connection)
            connection.execute("COMMIT")
        except BaseException:
            if connection.in_transaction:
                connection.execute("ROLLBACK")
            raise
        return lag

    def _index_rows(self, connection: sqlite3.Connection, limit: int | None) -> None:
        """Inside a transaction: index the rows past the watermark (at most `limit`) and advance it."""
        indexed = connection.execute("SELECT indexed_up_to FROM search_index_state").fetchone()[0]
        newest = connection.execute("SELECT coalesce(max(id), 0) FROM events").fetchone()[0]
        upto = newest if limit is None else min(newest, indexed + limit)
        if upto > indexed:
            connection.execute(_INDEX_SQL, (indexed, upto))
            connection.execute("UPDATE search_index_state SET indexed_up_to = ?", (upto,))

    def _catch_up_search_index(self) -> None:
        """Block until every event stored so far is searchable (readers call this from worker threads)."""
        request = _CatchUp()
        with self._state_lock:
            if not self._open:
                raise StoreClosed("the event store is closed")
            self._queue.put(request)
        if not request.done.wait(SEARCH_CATCH_UP_TIMEOUT):
            raise TimeoutError("the search index is still catching up; try again in a moment")

    def _commit(self, connection: sqlite3.Connection, batch: list[tuple[EventRecord, asyncio.Future, Any]]) -> None:
        results: list[StoredEvent | BaseException]
        try:
            connection.execute("BEGIN IMMEDIATE")
            results = []
            for record, _future, _loop in batch:
                row = _row(record)
                cursor = connection.execute(_INSERT, row)
                _derive_inbox(connection, record, row[0], cursor.lastrowid)
                results.append(stored(record, cursor.lastrowid))
            self._enforce_retention(connection)
            connection.execute("COMMIT")
        except Exception as error:
            if connection.in_transaction:
                connection.execute("ROLLBACK")
            if len(batch) > 1:
                # One bad record must not sink its neighbours: retry each alone, so only it fails.
                for item in batch:
                    self._commit(connection, [item])
                return
            results = [error]
        _settle_on_loops(batch, results)

    def _enforce_retention(self, connection: sqlite3.Connection) -> None:
        # Ids are contiguous (AUTOINCREMENT, deletes only ever take the oldest), so max(id) - retention is exact.
        if self.retention is not None:
            connection.execute(
                "DELETE FROM events WHERE id <= (SELECT max(id) FROM events) - ?", (self.retention,)
            )

    # -- reading ----------------------------------------------------------------------------------------------

    def newest(
        self,
        limit: int,
        *,
        kind: str | None = None,
        verdict: Verdict | str | None = None,
        search: str | None = None,
        rejected: bool | None = None,
    ) -> list[StoredEvent]:
        """The newest `limit` events matching the filters, newest first."""
        return self._select(None, limit, kind, verdict, search, rejected)

    def page_before(
        self,
        before_id: int,
        limit: int,
        *,
        kind: str | None = None,
        verdict: Verdict | str | None = None,
        search: str | None = None,
        rejected: bool | None = None,
    ) -> list[StoredEvent]:
        """The next page of older events: ids below `before_id`, newest first (keyset pagination)."""
        return self._select(before_id, limit, kind, verdict, search, rejected)

    def count(
        self,
        *,
        kind: str | None = None,
        verdict: Verdict | str | None = None,
        search: str | None = None,
        rejected: bool | None = None,
    ) -> int:
        source, conditions, parameters = self._filter(kind, verdict, search, rejected)
        where = f"WHERE {' AND '.join(conditions)}" if conditions else ""
        with self._reader() as connection:
            return connection.execute(f"SELECT count(*) FROM {source} {where}", parameters).fetchone()[0]

    def get(self, event_id: int) -> StoredEvent | None:
        with self._reader() as connection:
            row = connection.execute(f"SELECT {_COLUMNS} FROM events WHERE id = ?", (event_id,)).fetchone()
        return _event(row) if row else None

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
        """Every event that refers to this gateway message id, oldest first."""
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
    ) -> int:
        """Write the matching events, oldest first, one JSON object per line; returns how many were written."""
        if isinstance(dest, (str, Path)):
            with open(dest, "w", encoding="utf-8") as stream:
                return self.export_jsonl(stream, kind=kind, verdict=verdict, search=search, rejected=rejected)
        source, conditions, parameters = self._filter(kind, verdict, search, rejected)
        where = f"WHERE {' AND '.join(conditions)}" if conditions else ""
        written = 0
        with self._reader() as connection:
            cursor = connection.execute(f"SELECT {_COLUMNS} FROM {source} {where} ORDER BY events.id", parameters)
            # Streamed in chunks: an export of a million events must not hold them all in memory.
            while rows := cursor.fetchmany(1000):
                for row in rows:
                    dest.write(_event(row).to_json_line() + "\n")
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
    ) -> list[StoredEvent]:
        source, conditions, parameters = self._filter(kind, verdict, search, rejected)
        if before_id is not None:
            conditions.append("events.id < ?")
            parameters.append(before_id)
        where = f"WHERE {' AND '.join(conditions)}" if conditions else ""
        query = f"SELECT {_LIST_COLUMNS} FROM {source} {where} ORDER BY events.id DESC LIMIT ?"
        with self._reader() as connection:
            rows = connection.execute(query, [*parameters, max(0, limit)]).fetchall()
        return [_event(row) for row in rows]

    def _filter(
        self, kind: str | None, verdict: Verdict | str | None, search: str | None, rejected: bool | None
    ) -> tuple[str, list[str], list[Any]]:
        if _fts_query(search) is not None:
            self._catch_up_search_index()
        return _filtered(kind, verdict, search, rejected)

    @contextlib.contextmanager
    def _reader(self) -> Iterator[sqlite3.Connection]:
        if not self._open:
            raise StoreClosed("the event store is closed")
        try:
            connection = self._idle_readers.get_nowait()
        except queue.Empty:
            connection = self._connect()
            connection.execute("PRAGMA query_only=1")
            with self._state_lock:
                self._all_readers.append(connection)
        try:
            yield connection
        finally:
            self._idle_readers.put(connection)

    # -- the inbox (tui.webhooks.conversations) ----------------------------------------------------------------

    def read(self, query: Callable[[sqlite3.Connection], T]) -> T:
        """Run `query(connection)` on a pooled reader (blocking: call from a worker thread)."""
        with self._reader() as connection:
            return query(connection)

    def write(self, change: Callable[[sqlite3.Connection], T]) -> T:
        """Run `change(connection)` in its own transaction beside the writer thread (the app's sends, names, mark
        seen): SQLite serialises it with the group commits. Blocking: call from a worker thread."""
        if not self._open:
            raise StoreClosed("the event store is closed")
        with self._side_lock:
            if self._side is None:
                self._side = self._connect(timeout=30.0)
            connection = self._side
            connection.execute("BEGIN IMMEDIATE")
            try:
                result = change(connection)
                connection.execute("COMMIT")
            except BaseException:
                if connection.in_transaction:
                    connection.execute("ROLLBACK")
                raise
            return result

    # -- connections and schema -------------------------------------------------------------------------------

    def _connect(self, timeout: float = 10.0) -> sqlite3.Connection:
        # isolation_level=None: transactions are explicit (BEGIN IMMEDIATE ... COMMIT), never implicit.
        connection = sqlite3.connect(self.path, timeout=timeout, isolation_level=None, check_same_thread=False)
        connection.execute("PRAGMA journal_mode=WAL")
        connection.execute(f"PRAGMA synchronous={SYNCHRONOUS}")
        # Bounds the -wal file after a burst; the checkpoints themselves run on the writer thread.
        connection.execute("PRAGMA journal_size_limit=67108864")
        return connection

    def _create_schema(self, connection: sqlite3.Connection) -> None:
        version = connection.execute("PRAGMA user_version").fetchone()[0]
        if version not in (0, 1, 2, SCHEMA_VERSION):
            raise RuntimeError(f"{self.path} has event store schema {version}; this version reads {SCHEMA_VERSION}")
        connection.execute("BEGIN IMMEDIATE")
        if version == 1:  # schema 1 indexed inside the insert trigger: every row it stored is already indexed
            connection.execute("DROP TRIGGER IF EXISTS events_after_insert")
            connection.execute("DROP TRIGGER IF EXISTS events_after_delete")
        for statement in _statements(_SCHEMA):
            connection.execute(statement)
        if version == 1:
            connection.execute("UPDATE search_index_state SET indexed_up_to = (SELECT coalesce(max(id), 0) FROM events)")
        conversations.create_schema(connection)
        if version in (1, 2):  # the inbox tables are new in 3: derive them from the events already stored
            _backfill_inbox(connection)
        connection.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
        connection.execute("COMMIT")


def _statements(script: str) -> list[str]:
    """Split the schema into statements (executescript would commit behind our explicit transaction)."""
    statements: list[str] = []
    pending = ""
    for line in script.splitlines(keepends=True):
        pending += line
        if sqlite3.complete_statement(pending):
            statements.append(pending.strip())
            pending = ""
    return [statement for statement in statements if statement]


def _filtered(
    kind: str | None, verdict: Verdict | str | None, search: str | None, rejected: bool | None
) -> tuple[str, list[str], list[Any]]:
    """(FROM clause, WHERE conditions, parameters) for the panel's filters."""
    conditions: list[str] = []
    parameters: list[Any] = []
    source = "events"
    match = _fts_query(search)
    if match is not None:
        # The index drives (CROSS JOIN fixes the order): FTS5 walks its matches by rowid descending and the
        # LIMIT stops it early, instead of materialising every match first.
        source = "events_fts CROSS JOIN events ON events.id = events_fts.rowid"
        conditions.append("events_fts MATCH ?")
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
    return source, conditions, parameters


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


def _derive_inbox(connection: sqlite3.Connection, record: EventRecord, at_us: int, event_id: int | None) -> None:
    """The append hook: what this event changes in the inbox, in the transaction that stores it."""
    if record.payload is None or not conversations.trusted(record.verdict, record.rejected):
        return
    changes = conversations.changes_of(record.kind, record.payload)
    if not changes:
        return
    # A savepoint: should the inbox fail on an odd event, the event itself is still stored and acknowledged.
    connection.execute("SAVEPOINT inbox")
    try:
        conversations.apply(connection, changes, at_us, event_id)
    except sqlite3.Error:
        connection.execute("ROLLBACK TO inbox")
        log.exception("the inbox could not take event %s", event_id)
    connection.execute("RELEASE inbox")


def _backfill_inbox(connection: sqlite3.Connection) -> None:
    """Schema 2 → 3: derive the inbox from every trusted event already stored, oldest first."""
    cursor = connection.execute(
        "SELECT id, received_us, kind, body, payload FROM events WHERE has_payload AND NOT rejected "
        "AND verdict IN (?, ?) ORDER BY id",
        (str(Verdict.VALID), str(Verdict.NO_KEY)),
    )
    while rows := cursor.fetchmany(1000):
        for event_id, received_us, kind, body, payload in rows:
            changes = conversations.changes_of(kind, conversations.payload_of(bytes(body), payload))
            if changes:
                conversations.apply(connection, changes, received_us, event_id)


def _row(record: EventRecord) -> tuple[Any, ...]:
    return (
        _microseconds(record.received_at),
        _storable(record.path),
        json.dumps(record.headers),
        record.body,
        int(record.payload is not None),
        _payload_text(record),
        _storable(record.kind),
        _storable(record.summary),
        str(record.verdict),
        int(record.rejected),
        _storable(record.reason) if record.reason is not None else None,
        json.dumps(list(record.message_ids)),
    )


def _payload_text(record: EventRecord) -> str | None:
    """The parsed payload as JSON text, or None when reparsing the body gives it back (most JSON bodies).

    Stored when the body is a form (the JSON is url-encoded inside it) or uses \\u escapes (so the search index
    sees the real characters), or when the body is not JSON at all (e.g. a form body without a content type).
    """
    if record.payload is None:
        return None
    if b"\\u" not in record.body:
        try:
            if json.loads(record.body) == record.payload:
                return None
        except (ValueError, RecursionError):
            pass
    text = json.dumps(record.payload, ensure_ascii=False, separators=(",", ":"))
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates from `\ud800` escapes: keep them escaped
        text = json.dumps(record.payload, separators=(",", ":"))
    return text


def _storable(text: str) -> str:
    # Header values and payload strings may hold lone surrogates, which SQLite's UTF-8 text cannot take.
    return text.encode("utf-8", "replace").decode("utf-8")


def _microseconds(moment: datetime) -> int:
    if moment.tzinfo is None:
        raise ValueError("received_at must be timezone-aware")
    delta = moment - datetime(1970, 1, 1, tzinfo=UTC)
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def _event(row: tuple[Any, ...]) -> StoredEvent:
    (event_id, received_us, path, headers, body, has_payload, payload, kind, summary, verdict, rejected, reason, ids) = row
    if not has_payload:
        parsed = None
    else:
        parsed = json.loads(payload if payload is not None else body)
    return StoredEvent(
        id=event_id,
        received_at=datetime.fromtimestamp(received_us // 1_000_000, UTC).replace(microsecond=received_us % 1_000_000),
        path=path,
        headers=json.loads(headers),
        body=bytes(body),
        payload=parsed,
        kind=kind,
        summary=summary,
        verdict=Verdict(verdict),
        rejected=bool(rejected),
        reason=reason,
        message_ids=tuple(json.loads(ids)),
    )


def _settle_on_loops(batch: list[tuple[EventRecord, asyncio.Future, Any]], results: list[Any]) -> None:
    by_loop: dict[Any, list[tuple[asyncio.Future, Any]]] = {}
    for (_record, future, loop), result in zip(batch, results):
        by_loop.setdefault(loop, []).append((future, result))
    for loop, pairs in by_loop.items():
        try:
            loop.call_soon_threadsafe(_settle, pairs)
        except RuntimeError:
            pass  # that loop is closed: nobody is waiting for these answers any more


def _settle(pairs: list[tuple[asyncio.Future, Any]]) -> None:
    for future, result in pairs:
        if future.done():
            continue
        if isinstance(result, BaseException):
            future.set_exception(result)
        else:
            future.set_result(result)
