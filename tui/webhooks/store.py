"""Durable webhook event store: SQLite in WAL mode, one writer thread doing group commit, pooled readers.

Writes: `await store.append(record)` queues the record for the single writer thread. The writer commits
everything queued the moment its previous commit ends, so batches grow by themselves under load and an idle store
commits at once; while a stream of senders is still delivering the rest of what the previous commit held, it
takes them for up to a couple of milliseconds first (GATHER_QUIET), so that each commit's fsync serves them all.
The commit runs off the event loop; each append's future is resolved back on its loop only after the transaction
holding it has committed, so nothing is acknowledged before it is stored.

Reads: plain synchronous methods, safe from any thread (the app calls them from thread workers). Each call
borrows a connection from a small pool; WAL lets readers run while the writer commits.

Search index: the FTS5 index is derived data, so it is kept out of the acknowledgement path (so are the
message-id index and the fingerprints' table, written with it). The writer indexes
new rows once its queue has been quiet for INDEX_IDLE_DELAY (or one chunk per commit once the index trails by
MAX_INDEX_LAG), in the same
transaction that advances `search_index_state.indexed_up_to`; a search (or a look-up by message id) first asks
the writer to catch up, so its answer always covers every stored event. A crash loses no index work that matters: the next writer
indexes whatever the watermark says is missing.

Checkpoints: the writer's connection never checkpoints inside a commit (`wal_autocheckpoint=0`): copying a
thousand WAL pages into the database and fsyncing it took 5-15 ms here, which every event of that batch waited
for (the listener's p99). A checkpointer thread with its own connection copies the WAL into the database at most
every CHECKPOINT_INTERVAL while events arrive (and once more after they stop), beside the writer (a PASSIVE
checkpoint takes no write lock). Durability does not depend on it: each commit fsyncs the WAL (synchronous=FULL)
before anything is acknowledged. The WAL starts over only when a write begins with everything checkpointed, which
a sustained flood never leaves time for; so once the checkpointer finds WAL_RESET_FRAMES or more frames, the
writer checkpoints the few written since itself, between two transactions, and its next write starts it over.

Life cycle: `open()` and `close()` are synchronous (open creates the schema and starts the writer; close
drains the queue, commits it and stops). `with EventStore(path) as store:` does both.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import functools
import hashlib
import json
import logging
import os
import queue
import sqlite3
import stat
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, TextIO, TypeVar

from tui.local.paths import data_dir
from tui.webhooks import conversations, spliced
from tui.webhooks.events import EventRecord, StoredEvent, stored
from tui.api.signing import Verdict

T = TypeVar("T")
AccountFilter = str | tuple[str, ...] | None
"""Whose events a read returns: one profile's, any of several (with those no account owns), or every event."""
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
# Group commit across turns of the loop. Senders that send again once answered (a gateway's connections, the bench's
# 16) deliver their next events over a millisecond or so after a commit, a few per turn of the loop; committing the
# first few at once costs a whole commit (an fdatasync and the hand-overs) for them, and the rest wait for it anyway.
# So when the appends in hand are fewer than the previous commit held, and that commit ended less than STREAM_GAP
# before, the writer keeps taking appends until none arrives for GATHER_QUIET, or for GATHER_WINDOW in all. A lone
# event (or one sender's, sent only once answered) is committed at once.
GATHER_QUIET = 0.0005
GATHER_WINDOW = 0.002
STREAM_GAP = 0.01
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
    body BLOB NOT NULL,                    -- exactly the bytes received (empty when too large to keep; see cut_from)
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

_COLUMNS = (
    "events.id, received_us, path, headers, body, has_payload, payload, kind, summary, verdict, rejected, reason,"
    " message_ids, duplicate_of, cut_from, account, media_file, media_span"
)
# Lists (the events screen, the panel, a message's events) leave out a big body whose payload is stored apart
# (form bodies, inline base64 media): the row, the detail view and search need only the payload, and one page
# of media events would otherwise read hundreds of megabytes. `get` and exports read the body in full.
LIST_BODY_LIMIT = 64 * 1024
_LIST_COLUMNS = _COLUMNS.replace(
    " body,", f" CASE WHEN payload IS NOT NULL AND (length(body) > {LIST_BODY_LIMIT} OR media_file IS NOT NULL)"
    " THEN X'' ELSE body END,", 1
).replace(" media_file, media_span", " NULL, NULL")  # a list's body is left out: nothing to rebuild
_INSERT = """INSERT INTO events
    (received_us, path, headers, body, has_payload, payload, kind, summary, verdict, rejected, reason, message_ids,
     cut_from, account, media_file, media_span, fingerprint, duplicate_of)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"""

# Duplicates, added to schema 2 in place (columns checked, not the version number): old rows have no fingerprint,
# so they are never taken for originals, and nothing has to be rewritten. Like the search index, the fingerprint
# index is derived data kept out of the acknowledgement path: `event_fingerprints` holds the first event of each
# fingerprint up to the search watermark (written by the idle indexing, in the same transaction), and the writer
# keeps the fingerprints of the rows past it in memory (reloaded from those rows at open). A lookup is one dict
# probe, then at most one primary-key seek: never a scan, and no random B-tree insert per acknowledged event.
_DUPLICATE_COLUMNS = (
    "ALTER TABLE events ADD COLUMN fingerprint BLOB",  # 16-byte BLAKE2b, only for accepted events with a body
    "ALTER TABLE events ADD COLUMN duplicate_of INTEGER",
)
_DUPLICATE_SCHEMA = (
    "DROP INDEX IF EXISTS events_by_fingerprint",  # an earlier draft indexed the column on the hot path
    "CREATE INDEX IF NOT EXISTS events_duplicates ON events(duplicate_of) WHERE duplicate_of IS NOT NULL",
    """CREATE TABLE IF NOT EXISTS event_fingerprints (
        fingerprint BLOB PRIMARY KEY,
        event_id INTEGER NOT NULL
    ) WITHOUT ROWID""",
    """CREATE TRIGGER IF NOT EXISTS events_after_delete_fingerprint AFTER DELETE ON events
        WHEN old.fingerprint IS NOT NULL BEGIN
        DELETE FROM event_fingerprints WHERE fingerprint = old.fingerprint AND event_id = old.id;
    END""",
)
# A rejected event keeps only the first bytes of a big body (listener.REJECTED_BODY_KEPT); this column holds the size
# it arrived with (NULL: the body is whole). Added in place, like the duplicates' columns.
_CUT_COLUMN = "ALTER TABLE events ADD COLUMN cut_from INTEGER"
# The profile each event came for (one listener, one store, many accounts: issue 26); NULL when none is known (rows
# stored before, an unknown `/a/<name>/`). Added in place, like the columns above; the index serves `--profile`.
_ACCOUNT_COLUMN = "ALTER TABLE events ADD COLUMN account TEXT"
_ACCOUNT_INDEX = "CREATE INDEX IF NOT EXISTS events_by_account ON events(account, id)"
# An accepted event's inline file is kept once, in the media folder beside the store (tui.webhooks.spliced): the
# body is stored without its base64, `media_file` names the kept file and `media_span` says where the base64 went
# ("<offset> <length> json|form"). Added in place; the index answers "does an event still need this file?".
_MEDIA_COLUMNS = (
    "ALTER TABLE events ADD COLUMN media_file TEXT",
    "ALTER TABLE events ADD COLUMN media_span TEXT",
)
# Columns added to schema 3 in place, without a new version: a store written before them reads as an older one
# where it cannot be brought up to date (read-only), instead of failing at its first read.
_COLUMNS_ADDED_IN_PLACE = frozenset({"cut_from", "account", "media_file", "media_span"})
_MEDIA_INDEX = "CREATE INDEX IF NOT EXISTS events_by_media_file ON events(media_file) WHERE media_file IS NOT NULL"
_FINGERPRINT_INDEX_SQL = """INSERT OR IGNORE INTO event_fingerprints(fingerprint, event_id)
    SELECT fingerprint, id FROM events WHERE id > ? AND id <= ? AND fingerprint IS NOT NULL ORDER BY id"""

# The message-id index is derived data too (schema 3 kept it in an insert trigger, a random B-tree insert per
# acknowledged event): written by the idle indexing with the search index, up to the same watermark, and a
# look-up by message id first asks the writer to catch up, as a search does.
_MESSAGE_ID_INDEX_SQL = """INSERT OR IGNORE INTO event_message_ids(message_id, event_id)
    SELECT ids.value, events.id FROM events, json_each(events.message_ids) AS ids
    WHERE events.id > ? AND events.id <= ? AND events.message_ids != '[]'"""

_INDEX_SQL = """INSERT INTO events_fts(rowid, text)
    SELECT id, coalesce(payload, CAST(body AS TEXT)) FROM events
    WHERE id > ? AND id <= ? ORDER BY id"""

# Rows per INSERT statement: a batch of 16 (the bench's connections) in one; 16 values a row stays far below
# SQLite's bound on variables.
INSERT_ROWS = 32

_STOP = object()
_PROBE_CHUNK = 500  # fingerprints per lookup query (under SQLite's 999 bound variables of older builds)
SEARCH_CATCH_UP_TIMEOUT = 60.0

# While events arrive, the checkpointer copies the WAL into the database at most this often (see the docstring).
# Each pass holds the commits under way for a few milliseconds (its database fsync shares the disk with their WAL
# fsync): under the listener bench every pass cost a whole batch of answers 5-14 ms, and every 0.2 s that was 1 %
# of the answers, the p99 (6.0-6.2 ms). Once a second it is 0.2 %: p99 3.5-3.9 ms, the same events/s.
CHECKPOINT_INTERVAL = 1.0
# A WAL still this long after a checkpoint is not starting over (a sustained flood): the writer finishes it. Each
# time costs the writer a checkpoint of the few frames written since the checkpointer's pass (2-7 ms measured under
# the bench at load 7); rarer would leave the WAL file growing for longer, and a commit that extends the file pays
# for the size change in its fdatasync. 4,000 frames of 4 KiB pages: 16 MiB, four times SQLite's auto-checkpoint.
WAL_RESET_FRAMES = 4000

# Faults (see "Faults and privacy" in the README). An append waits at most this long, counted from when it was
# appended, for a write lock another program holds; then it fails (the listener answers 500, the sender retries),
# so the answer comes within 10 s. Work nobody waits for (indexing) gives the lock up to waiting appends. The writer
# polls in slices of LOCK_POLL so that close() (SIGTERM) never waits for the whole of it.
WRITE_LOCK_TIMEOUT = 9.0
LOCK_POLL = 0.05
# Appends waiting this long for another program's lock are reported through the health (events are not being
# stored) before they fail; while appends fail on a lock, the writer looks every LOCK_PROBE_INTERVAL whether it
# is gone, so the health recovers without waiting for the next event.
LOCK_REPORT_AFTER = 1.0
LOCK_PROBE_INTERVAL = 0.5
# A store up to this size is checked (PRAGMA quick_check, about 4 s per GB here) before open() returns; a bigger
# one right after, in the background, so a million-event store opens at once.
QUICK_CHECK_AT_OPEN_LIMIT = 64 * 1024 * 1024
# Work nobody waits for (search indexing) is retried after a failure, backing off from the first delay to the last.
RETRY_FIRST_DELAY = 0.25
RETRY_MAX_DELAY = 5.0


class _CatchUp:
    """A reader's request that the writer index everything stored so far."""

    def __init__(self) -> None:
        self.done = threading.Event()
        self.error: str | None = None


class _Appends(list[tuple[EventRecord, "asyncio.Future[StoredEvent]", Any]]):  # (record, future, loop)
    """The appends of one turn of an event loop, and when the first of them was made (their lock deadline)."""

    __slots__ = ("queued_at",)

    def __init__(self) -> None:
        super().__init__()
        self.queued_at = time.monotonic()


class _OnWriter:
    """Run `action(connection)` on the writer thread, between transactions (tests use it to set PRAGMAs that
    only apply to the writer's own connection, e.g. `max_page_count` for a real "database or disk is full")."""

    def __init__(self, action: Callable[[sqlite3.Connection], object]) -> None:
        self.action = action
        self.done = threading.Event()
        self.error: BaseException | None = None


CommitAction = Callable[[sqlite3.Connection, list[StoredEvent]], None]


class StoreClosed(RuntimeError):
    pass


class StoreFailing(RuntimeError):
    """A write failed for a reason outside this program (disk full, a lock held too long, an I/O error). The event
    was not stored; the store keeps running and the next write tries again."""


class StoreUnusable(RuntimeError):
    """The store file cannot be used (damaged, not a database, a newer version's schema). The message names the file
    and what to do; the file is never overwritten or deleted."""


@dataclass(frozen=True, slots=True)
class StoreHealth:
    """Whether the last write worked; `problem` is SQLite's own words (e.g. "database or disk is full")."""

    path: Path
    problem: str | None = None
    appends_failing: bool = False  # False while only work nobody waits for (search indexing) fails

    @property
    def failing(self) -> bool:
        return self.problem is not None

    def __str__(self) -> str:
        if self.problem is None:
            return f"store ok — {self.path}"
        return f"store failing: {self.problem} — {self.path}"


HealthCallback = Callable[[StoreHealth], None]


MEDIA_FOLDER_SUFFIX = ".media"  # `<store>.media` beside the store: the inline files its events refer to
# Where every store in a folder kept its files before each store had its own: still read for events of that time.
SHARED_MEDIA_FOLDER_NAME = "media"


def default_path() -> Path:
    return data_dir() / DEFAULT_FILE_NAME


class EventStore:
    """Webhook events on disk. `retention`: keep at most that many newest events (None keeps everything)."""

    def __init__(self, path: Path | None = None, *, retention: int | None = None, read_only: bool = False) -> None:
        """`read_only`: only read (`events list`): nothing is created, migrated or written, so a store on a read-only
        mount can be read; `read_note` then says what could not be (see read_only_connection)."""
        if retention is not None and retention < 1:
            raise ValueError("retention must be at least 1 event, or None to keep everything")
        self.path = Path(path) if path is not None else default_path()
        self.retention = retention
        self.read_only = read_only
        self.read_note: str | None = None
        self._read_only_uri: str | None = None
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._state_lock = threading.Lock()
        self._open = False
        self._writer: threading.Thread | None = None
        # Cleared by the writer as it ends; read by every append (cheaper than Thread.is_alive, ~1 % of the loop).
        self._writer_running = False
        self._idle_readers: queue.SimpleQueue[sqlite3.Connection] = queue.SimpleQueue()
        self._all_readers: list[sqlite3.Connection] = []
        self._giving_up = threading.Event()  # set by close()/stop_waiting(): lock waits end at once
        self._health = StoreHealth(self.path)
        # After a failed write the WAL is checkpointed and truncated when the writer is next idle: on a full disk
        # the WAL (copies of pages already in the database) is most of what can be given back.
        self._checkpoint_owed = False
        # The checkpointer thread (see the docstring): woken when the writer has committed, stopped by close().
        self._checkpointer: threading.Thread | None = None
        self._wal_written = threading.Event()
        self._checkpointer_stopping = threading.Event()
        self._wal_reset_owed = False  # set by the checkpointer when the WAL is not starting over by itself
        self.checkpoints = 0  # completed by the checkpointer (every WAL frame copied into the database)
        # Fingerprint -> first event id, for rows past the search watermark (oldest first; see _DUPLICATE_SCHEMA).
        self._recent_fingerprints: collections.OrderedDict[bytes, int] = collections.OrderedDict()
        self._indexed_up_to = 0
        self._damaged: str | None = None  # set by the background quick_check of a big store: no more writes
        self._problems: dict[str, str] = {}  # path of work ("append", "index") -> its last failure
        self._appends_locked_out = False  # appends fail (or wait) on another program's lock: probe for its end
        self._health_watchers: list[HealthCallback] = []
        self._side_lock = threading.Lock()
        self._side: sqlite3.Connection | None = None
        # Appends of the current turn of each event loop, not handed to the writer yet (see append).
        self._outbox: dict[asyncio.AbstractEventLoop, _Appends] = {}
        self._in_each_commit: CommitAction | None = None  # see in_each_commit

    # -- life cycle -------------------------------------------------------------------------------------------

    def open(self) -> EventStore:
        """Create or open the store. Raises StoreUnusable (naming the file and what to do) for a damaged file."""
        with self._state_lock:
            if self._open:
                return self
            if self.read_only:
                self._open_read_only()
                return self
            self.path.parent.mkdir(parents=True, exist_ok=True)
            # Events carry people's messages: the file (and the -wal/-shm files SQLite derives from it) is private,
            # an existing one too (a store made by an older version, or copied in, keeps whatever mode it had).
            os.close(os.open(self.path, os.O_CREAT | os.O_RDWR, 0o600))
            _make_private(self.path)
            try:
                connection = self._connect()
            except sqlite3.DatabaseError as error:
                if error.sqlite_errorcode & 0xFF in (sqlite3.SQLITE_NOTADB, sqlite3.SQLITE_CORRUPT):
                    raise self._unusable(str(error)) from None
                raise
            # The writer waits for locks in short slices (see _begin), so close() can end a wait at once.
            connection.execute(f"PRAGMA busy_timeout={int(LOCK_POLL * 1000)}")
            try:
                for suffix in ("-wal", "-shm"):
                    _make_private(Path(f"{self.path}{suffix}"))
                checked_now = self.path.stat().st_size <= QUICK_CHECK_AT_OPEN_LIMIT
                if checked_now:
                    self._check_integrity(connection)
                self._create_schema(connection)
                self._load_recent_fingerprints(connection)
                if self.retention is not None:
                    self._begin(connection)
                    self._enforce_retention(connection)
                    connection.execute("COMMIT")
            except sqlite3.OperationalError as error:  # a full disk, a lock held past the timeout, an I/O error
                _rollback(connection)
                connection.close()
                raise StoreFailing(f"cannot open the event store {self.path}: {error}") from None
            except sqlite3.DatabaseError as error:  # SQLITE_CORRUPT / NOTADB met on the way
                _rollback(connection)
                connection.close()
                raise self._unusable(str(error)) from None
            except BaseException:
                _rollback(connection)
                connection.close()
                raise
            try:
                checkpointing = self._connect()
            except sqlite3.Error as error:
                connection.close()
                raise StoreFailing(f"cannot open the event store {self.path}: {error}") from None
            # No checkpoint inside a commit: the checkpointer thread does them (see the module's docstring).
            connection.execute("PRAGMA wal_autocheckpoint=0")
            self._giving_up.clear()
            self._checkpointer_stopping.clear()
            self._wal_written.clear()
            self._wal_reset_owed = False
            self._checkpointer = threading.Thread(
                target=self._checkpoint_forever, args=(checkpointing,), name="event-store-checkpointer", daemon=True
            )
            self._checkpointer.start()
            self._writer = threading.Thread(
                target=self._write_forever, args=(connection,), name="event-store-writer", daemon=True
            )
            self._writer_running = True
            self._writer.start()
            self._open = True
        if not checked_now:
            threading.Thread(target=self._check_in_background, name="event-store-check", daemon=True).start()
        return self

    def _open_read_only(self) -> None:
        """Open without writing anything: no file created, no schema brought up to date, no writer."""
        if not self.path.is_file():
            raise StoreFailing(f"no event store at {self.path}")
        try:
            connection, self._read_only_uri, self.read_note = read_only_connection(self.path)
        except sqlite3.DatabaseError as error:
            if error.sqlite_errorcode & 0xFF in (sqlite3.SQLITE_NOTADB, sqlite3.SQLITE_CORRUPT):
                raise self._unusable(str(error)) from None
            raise StoreFailing(f"cannot open the event store {self.path} to read it: {error}") from None
        try:
            version = connection.execute("PRAGMA user_version").fetchone()[0]
            columns = {row[1] for row in connection.execute("PRAGMA table_info(events)")}
            if self.path.stat().st_size <= QUICK_CHECK_AT_OPEN_LIMIT:
                self._check_integrity(connection)
        finally:
            connection.close()
        if version == SCHEMA_VERSION and not _COLUMNS_ADDED_IN_PLACE <= columns:
            version = SCHEMA_VERSION - 1  # written before a column the reads name was added: an older store
        if version != SCHEMA_VERSION:
            newer = "a newer" if version > SCHEMA_VERSION else "an older"
            raise StoreUnusable(
                f"the event store {self.path} was written by {newer} version of gateway-tui (schema {version}; this "
                f"version reads schema {SCHEMA_VERSION}), and reading it here must not change it. Open it with the "
                "version that wrote it, or once where it can be written (it is brought up to date then)."
            )
        self._giving_up.clear()
        self._open = True

    def _load_recent_fingerprints(self, connection: sqlite3.Connection) -> None:
        """The fingerprints of the rows the idle indexing has not reached yet (after a crash or a flood)."""
        self._indexed_up_to = connection.execute("SELECT indexed_up_to FROM search_index_state").fetchone()[0]
        self._recent_fingerprints.clear()
        rows = connection.execute(
            "SELECT fingerprint, id FROM events WHERE id > ? AND fingerprint IS NOT NULL ORDER BY id",
            (self._indexed_up_to,),
        )
        for fingerprint, event_id in rows:
            self._recent_fingerprints.setdefault(fingerprint, event_id)

    def _check_in_background(self) -> None:
        """quick_check for a big store (seconds for a million events) while it already serves: a damaged one stops
        taking events (500, the file is not written again) and says why through its health."""
        try:
            connection = self._connect()
        except sqlite3.Error:
            return
        try:
            self._check_integrity(connection)
        except StoreUnusable as error:
            self._damaged = str(error)
            self._set_health("damaged", "damaged (PRAGMA quick_check): move the file away; it is not written again")
        except sqlite3.Error:
            pass  # closed meanwhile, or busy: the check is a courtesy, the next open runs it again
        finally:
            connection.close()

    def close(self) -> None:
        """Commit everything already appended, stop the writer and close every connection.

        Never waits for a lock another program holds: appends still waiting for one fail (StoreFailing)."""
        with self._state_lock:
            if not self._open:
                return
            self._open = False
            self._giving_up.set()
            for appends in self._outbox.values():  # appended before close: committed, like everything queued
                self._queue.put(appends)
            self._outbox.clear()
            self._queue.put(_STOP)
        if self._writer is not None:
            self._writer.join()
        self._checkpointer_stopping.set()
        self._wal_written.set()
        if self._checkpointer is not None:
            self._checkpointer.join()
            self._checkpointer = None
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

    def stop_waiting(self) -> None:
        """Stop waiting for locks other programs hold: a shutdown (SIGTERM) must not wait out WRITE_LOCK_TIMEOUT.
        Writes still go through when nothing blocks them; the ones that would wait fail at once."""
        self._giving_up.set()

    # -- health -----------------------------------------------------------------------------------------------

    @property
    def health(self) -> StoreHealth:
        """The outcome of the last write (append, indexing, retention): readable from any thread."""
        return self._health

    def watch_health(self, callback: HealthCallback) -> Callable[[], None]:
        """Call `callback(health)` on every change (failing ↔ recovered, or a new problem), from the writer thread.
        Returns an unsubscribe function."""
        self._health_watchers.append(callback)
        return lambda: self._health_watchers.remove(callback) if callback in self._health_watchers else None

    def _set_health(self, work: str, problem: str | None) -> None:
        """Record how `work` ("append", "index") last went; the store is failing while any of them fails, so a
        working append does not hide an index that still cannot be written (and the log does not flap)."""
        if problem is None:
            self._problems.pop(work, None)
        else:
            self._problems[work] = problem
        problems = self._problems
        problem = problems.get("damaged") or problems.get("writer") or problems.get("append") or problems.get("index")
        appends_failing = bool({"damaged", "writer", "append"} & problems.keys())
        if (problem, appends_failing) == (self._health.problem, self._health.appends_failing):
            return
        self._health = StoreHealth(self.path, problem, appends_failing)
        for callback in list(self._health_watchers):
            try:
                callback(self._health)
            except Exception:  # a broken watcher must not kill the writer
                pass

    def _unusable(self, detail: str) -> StoreUnusable:
        return StoreUnusable(
            f"the event store {self.path} is damaged or not an event store ({detail}). Move it away (for example "
            f"`mv {self.path} {self.path}.damaged`, with its -wal and -shm files) and start again: a new, empty "
            "store is created. gateway-tui never overwrites or deletes it, so whatever it holds can still be rescued "
            "(`sqlite3 FILE .recover`)."
        )

    def _check_integrity(self, connection: sqlite3.Connection) -> None:
        try:
            problems = [row[0] for row in connection.execute("PRAGMA quick_check(3)")]
        except sqlite3.DatabaseError as error:
            raise self._unusable(str(error)) from None
        if problems != ["ok"]:
            raise self._unusable("; ".join(problems))

    def in_each_commit(self, action: CommitAction | None) -> None:
        """Run `action(connection, events)` inside the transaction of every batch of appends, after its rows (None:
        no more). What it writes is committed with the events, before any of them is answered: the forwarder's
        queue of pending forwards (forwarder.ForwardLog.queue) cannot lose an acknowledged event to a crash.
        If it raises, the batch fails as a failed insert does."""
        self._in_each_commit = action

    def on_writer(self, action: Callable[[sqlite3.Connection], object], timeout: float = 30.0) -> None:
        """Run `action(writer connection)` on the writer thread between transactions and wait for it (tests: a
        per-connection PRAGMA such as `max_page_count`)."""
        request = _OnWriter(action)
        with self._state_lock:
            if not self._open:
                raise StoreClosed("the event store is closed")
            self._queue.put(request)
        if not request.done.wait(timeout):
            raise TimeoutError("the store's writer did not run the action in time")
        if request.error is not None:
            raise request.error

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
            if self._damaged is not None:
                raise StoreUnusable(self._damaged)
            if not self._writer_running:  # never queue for a writer that is gone
                raise StoreFailing(f"the event store's writer stopped ({self._health.problem or 'unknown error'})")
            # Handed to the writer once per turn of the loop, not once per event: a put into an empty queue wakes
            # the writer thread (a futex call, then a fight for the GIL), which profiles showed as ~7% of the
            # loop's time; the events that arrived in one turn also commit together. close() hands over the rest.
            outbox = self._outbox.get(loop)
            first = outbox is None
            if outbox is None:
                outbox = self._outbox[loop] = _Appends()
            outbox.append((record, future, loop))
        if first:
            loop.call_soon(self._hand_over, loop)
        return await future

    def _hand_over(self, loop: asyncio.AbstractEventLoop) -> None:
        """The appends of one turn of `loop`, to the writer in one piece (close() may have taken them already)."""
        with self._state_lock:
            appends = self._outbox.pop(loop, None)
            if appends:
                self._queue.put(appends)

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
                pending.append((*_row(record), None))
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
        """The writer thread. Nothing here may end it but close(): every failure fails only what it affects (the
        appends of that transaction, a search waiting for the index) and the work nobody waits for is retried."""
        lag: int | None = None  # rows the search index trails by; None: not known (a read failed)
        retry_delay = 0.0  # > 0 while indexing keeps failing: back off before trying again
        stopping = False
        stream, stream_ended = 0, 0.0  # appends in the previous commit, and when it ended (see GATHER_WINDOW)
        try:
            while not stopping:
                if lag != 0 or self._checkpoint_owed or self._appends_locked_out:
                    try:
                        first = self._queue.get(timeout=retry_delay or INDEX_IDLE_DELAY)
                    except queue.Empty:  # quiet for a moment: let the search index catch up
                        lag, retry_delay = self._upkeep(connection, retry_delay)
                        continue
                else:
                    first = self._queue.get()
                batch = [first]
                while len(batch) < MAX_BATCH:
                    try:
                        batch.append(self._queue.get_nowait())
                    except queue.Empty:
                        break
                if time.monotonic() - stream_ended < STREAM_GAP:
                    self._gather(batch, stream)
                if _STOP in batch:
                    stopping = True
                catch_up = [item for item in batch if isinstance(item, _CatchUp)]
                actions = [item for item in batch if isinstance(item, _OnWriter)]
                appends = [append for item in batch if isinstance(item, list) for append in item]
                # Each append waits for another program's lock until WRITE_LOCK_TIMEOUT after it was made, not after
                # the writer got to it.
                made = [item.queued_at for item in batch if isinstance(item, _Appends)]
                deadline = (min(made) if made else time.monotonic()) + WRITE_LOCK_TIMEOUT
                for action in actions:
                    try:
                        action.action(connection)
                    except BaseException as error:
                        action.error = error
                    action.done.set()
                # A flood must not turn into one giant transaction that holds every waiting request hostage.
                chunks = [appends[start : start + MAX_BATCH] for start in range(0, len(appends), MAX_BATCH)]
                committed = [self._commit(connection, chunk, deadline) for chunk in chunks].count(True)
                if appends:
                    stream, stream_ended = len(appends), time.monotonic()
                if committed:
                    if self._checkpoint_owed:  # writes work again: give back the WAL's space now, not when idle
                        self._checkpoint_after_fault(connection)
                    elif self._wal_reset_owed:
                        self._finish_checkpoint(connection)
                    self._wal_written.set()
                    if "index" in self._problems:
                        retry_delay = 0.0  # writes work again: retry the index as soon as the queue is quiet
                    if lag is not None:
                        lag += len(appends)
                if appends and lag is not None:
                    if lag > MAX_INDEX_LAG and not retry_delay:
                        lag, retry_delay = self._upkeep(connection, retry_delay)
                if catch_up:
                    lag, retry_delay = self._catch_up(connection, catch_up, retry_delay)
        except BaseException as error:  # a bug, not a fault: say so, and let nothing wait for this writer
            self._set_health("writer", f"the writer stopped: {type(error).__name__}: {error}")
            raise
        finally:
            with self._state_lock:
                self._writer_running = False
            self._release_waiting()
            connection.close()

    def _gather(self, batch: list[Any], previous: int) -> None:
        """Keep taking appends while they keep coming, when `batch` holds fewer than the `previous` commit did (see
        GATHER_QUIET). Anything else arriving (close, a search's catch-up, an action) ends the wait, as does close()."""
        count = 0
        for item in batch:
            if not isinstance(item, list):
                return
            count += len(item)
        if count >= previous:
            return
        deadline = time.monotonic() + GATHER_WINDOW
        while len(batch) < MAX_BATCH and not self._giving_up.is_set():
            wait = min(GATHER_QUIET, deadline - time.monotonic())
            if wait <= 0:
                return
            try:
                item = self._queue.get(timeout=wait)
            except queue.Empty:
                return
            batch.append(item)
            if not isinstance(item, list):
                return

    def _upkeep(self, connection: sqlite3.Connection, retry_delay: float) -> tuple[int | None, float]:
        """Give back WAL space when owed, index one chunk; (rows still trailing or None when unknown, the delay
        before the next try)."""
        if self._damaged is not None:
            return 0, 0.0  # nothing more is written to a damaged store
        lock_gone = False
        if self._appends_locked_out:
            if not self._lock_is_free(connection):
                return None, LOCK_PROBE_INTERVAL
            self._appends_locked_out, lock_gone = False, True
        try:
            if self._checkpoint_owed:
                self._checkpoint_after_fault(connection)
            lag = self._index_chunk(connection, yielding=True)
        except _Yielded:  # appends arrived while the lock was waited for: they go first, the index later
            lag, retry_delay = None, 0.0
        except Exception as error:
            self._checkpoint_owed = True
            if _locked(error):  # another program's lock, held past the timeout: no event could be stored either
                self._appends_locked_out = True
                self._set_health("append", _problem(error))
                return None, LOCK_PROBE_INTERVAL
            self._set_health("index", _problem(error))
            lag, retry_delay = None, min(max(retry_delay * 2, RETRY_FIRST_DELAY), RETRY_MAX_DELAY)
        else:
            self._set_health("index", None)
            retry_delay = 0.0
        if lock_gone:  # said last, so the log goes straight from failing to recovered
            self._set_health("append", None)
        return lag, retry_delay

    def _checkpoint_after_fault(self, connection: sqlite3.Connection) -> None:
        """Copy the WAL into the database and truncate it: after a full disk, the WAL (pages the database already
        has, up to wal_autocheckpoint of them) is most of the space the store can give back. Once, not per event."""
        try:
            busy, _log, _done = connection.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        except sqlite3.Error:
            return  # still no room, or locked: owed until it works
        self._checkpoint_owed = bool(busy)  # a reader in the way: try again next time

    def _finish_checkpoint(self, connection: sqlite3.Connection) -> None:
        """On the writer, between transactions: copy the frames written since the checkpointer's last pass (a few
        batches' worth), so the next write starts the WAL over. Only when the checkpointer asked (WAL_RESET_FRAMES)."""
        try:
            busy, frames, copied = connection.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
        except sqlite3.Error:
            return  # the checkpointer keeps trying; so does the next commit
        self._wal_reset_owed = bool(busy) or frames != copied

    def _checkpoint_forever(self, connection: sqlite3.Connection) -> None:
        """The checkpointer thread: after commits, at most every CHECKPOINT_INTERVAL, copy the WAL into the database.
        A failure (a full disk, an I/O error) only postpones it: retried after a growing delay, never fatal; a
        reader holding an old snapshot only shortens it (the rest is copied next time)."""
        delay = CHECKPOINT_INTERVAL
        try:
            # close() sets "stopping" before it wakes this thread: checked here, a close() that lands between the
            # pause below and the clear of the wake-up is not lost (it hung close(), and SIGTERM, for ever).
            while not self._checkpointer_stopping.is_set():
                self._wal_written.wait()
                # Gather the commits of a moment into one checkpoint (each one fsyncs the database file).
                if self._checkpointer_stopping.wait(delay):
                    return
                self._wal_written.clear()
                try:
                    busy, frames, copied = connection.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
                except sqlite3.Error:
                    self._wal_written.set()  # still owed
                    delay = min(max(delay * 2, RETRY_FIRST_DELAY), RETRY_MAX_DELAY)
                    continue
                delay = CHECKPOINT_INTERVAL
                if busy or frames != copied:
                    self._wal_written.set()  # a reader (or another checkpoint) in the way: the rest next time
                else:
                    self.checkpoints += 1
                if frames >= WAL_RESET_FRAMES:
                    self._wal_reset_owed = True
        finally:
            connection.close()

    def _catch_up(
        self, connection: sqlite3.Connection, requests: list[_CatchUp], retry_delay: float
    ) -> tuple[int | None, float]:
        """Index everything for the searches waiting; on failure they get the reason instead of a hang."""
        if self._damaged is not None:
            for request in requests:
                request.error = "the store is damaged"
                request.done.set()
            return 0, 0.0
        try:
            lag = self._index_lag(connection)
            while lag > 0:
                lag = self._index_chunk(connection)
        except Exception as error:
            problem = _problem(error)
            self._set_health("index", problem)
            for request in requests:
                request.error = problem
                request.done.set()
            return None, min(max(retry_delay * 2, RETRY_FIRST_DELAY), RETRY_MAX_DELAY)
        self._set_health("index", None)
        for request in requests:
            request.done.set()
        return lag, 0.0

    def _release_waiting(self) -> None:
        """The writer is ending: whatever is still queued gets an answer instead of waiting forever."""
        closed = StoreClosed("the event store is closed")
        while True:
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                return
            if isinstance(item, list):
                _settle_on_loops(item, [closed] * len(item))
            elif isinstance(item, _CatchUp):
                item.error = str(closed)
                item.done.set()
            elif isinstance(item, _OnWriter):
                item.error = closed
                item.done.set()

    def _begin(
        self,
        connection: sqlite3.Connection,
        deadline: float | None = None,
        *,
        appending: bool = False,
        yielding: bool = False,
    ) -> None:
        """BEGIN IMMEDIATE, waiting until `deadline` (default: WRITE_LOCK_TIMEOUT from now) for another program's
        lock, in LOCK_POLL slices (the connection's busy timeout) so that close() ends the wait at once.

        `appending`: after LOCK_REPORT_AFTER of waiting, the health says events are not being stored. `yielding`
        (work nobody waits for: the idle indexing): the wait ends with _Yielded as soon as anything is queued, so
        appends never wait behind it."""
        started = time.monotonic()
        if deadline is None:
            deadline = started + WRITE_LOCK_TIMEOUT
        while True:
            try:
                connection.execute("BEGIN IMMEDIATE")
                return
            except sqlite3.OperationalError as error:
                now = time.monotonic()
                if not _locked(error) or self._giving_up.is_set() or now >= deadline:
                    raise
                if yielding and not self._queue.empty():
                    raise _Yielded from None
                if appending and now - started >= LOCK_REPORT_AFTER and not self._appends_locked_out:
                    self._appends_locked_out = True
                    self._set_health("append", _problem(error))

    def _lock_is_free(self, connection: sqlite3.Connection) -> bool:
        """Whether a write could begin now (one try, waiting at most LOCK_POLL); nothing is written."""
        try:
            connection.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError:
            return False
        connection.execute("ROLLBACK")
        return True

    def _index_lag(self, connection: sqlite3.Connection) -> int:
        indexed, newest = connection.execute(
            "SELECT indexed_up_to, (SELECT coalesce(max(id), 0) FROM events) FROM search_index_state"
        ).fetchone()
        return int(newest) - int(indexed)  # SQLite integers (sqlite3 types its rows Any)

    def _index_chunk(self, connection: sqlite3.Connection, *, yielding: bool = False) -> int:
        """Index up to INDEX_CHUNK rows past the watermark; returns how many rows still trail. `yielding`: see _begin."""
        self._begin(connection, yielding=yielding)
        try:
            self._index_rows(connection, INDEX_CHUNK)
            lag = self._index_lag(connection)
            connection.execute("COMMIT")
        except BaseException:
            _rollback(connection)
            raise
        # Those rows' fingerprints are in event_fingerprints now: memory keeps only the ones past the watermark.
        recent = self._recent_fingerprints
        while recent and recent[next(iter(recent))] <= self._indexed_up_to:
            recent.popitem(last=False)
        return lag

    def _index_rows(self, connection: sqlite3.Connection, limit: int | None) -> None:
        """Inside a transaction: index the rows past the watermark (at most `limit`) and advance it."""
        indexed = connection.execute("SELECT indexed_up_to FROM search_index_state").fetchone()[0]
        newest = connection.execute("SELECT coalesce(max(id), 0) FROM events").fetchone()[0]
        upto = newest if limit is None else min(newest, indexed + limit)
        if upto > indexed:
            connection.execute(_INDEX_SQL, (indexed, upto))
            connection.execute(_FINGERPRINT_INDEX_SQL, (indexed, upto))
            connection.execute(_MESSAGE_ID_INDEX_SQL, (indexed, upto))
            connection.execute("UPDATE search_index_state SET indexed_up_to = ?", (upto,))
        self._indexed_up_to = upto if upto > indexed else indexed

    def _catch_up_search_index(self) -> None:
        """Block until every event stored so far is searchable (readers call this from worker threads)."""
        if self.read_only:  # nothing may be written: events not indexed yet are left out of searches
            return
        request = _CatchUp()
        with self._state_lock:
            if not self._open:
                raise StoreClosed("the event store is closed")
            self._queue.put(request)
        if not request.done.wait(SEARCH_CATCH_UP_TIMEOUT):
            raise TimeoutError("the search index is still catching up; try again in a moment")
        if request.error is not None:
            raise StoreFailing(f"search is unavailable: the index cannot be updated ({request.error})")

    def _commit(
        self, connection: sqlite3.Connection, batch: list[tuple[EventRecord, asyncio.Future, Any]], deadline: float
    ) -> bool:
        """Store the batch in one transaction and answer each append; True when it was committed. `deadline`: how
        long it may wait for another program's lock (see _begin)."""
        results: list[StoredEvent | BaseException]
        if self._damaged is not None:  # found damaged after opening: never write to it again
            _settle_on_loops(batch, [StoreUnusable(self._damaged)] * len(batch))
            return False
        new_fingerprints: dict[bytes, int] = {}  # this batch's originals: remembered only once committed
        # A batch of one guards its inbox with a savepoint; a bigger batch does not pay two statements per event
        # for it: an inbox failure there rolls the batch back and it is retried one by one (_RetryAlone).
        guarded = len(batch) == 1
        try:
            self._begin(connection, deadline, appending=True)
            rows = [_row(record) for record, _future, _loop in batch]
            known = self._known_fingerprints(connection, rows)
            results = []
            # Rows go in with one multi-row INSERT (see _insert_rows), so a row whose original is among the rows
            # not inserted yet waits until they are: only then is the original's id known.
            pending: list[tuple[EventRecord, tuple[Any, ...]]] = []
            pending_originals: set[bytes] = set()
            for (record, _future, _loop), row in zip(batch, rows, strict=True):
                fingerprint = row[-1]
                duplicate_of = None
                if fingerprint is not None:
                    if fingerprint in pending_originals:
                        _insert_rows(connection, pending, new_fingerprints, results, guarded=guarded)
                        pending, pending_originals = [], set()
                    duplicate_of = new_fingerprints.get(fingerprint) or known.get(fingerprint)
                    if duplicate_of is None:
                        pending_originals.add(fingerprint)
                pending.append((record, (*row, duplicate_of)))
            _insert_rows(connection, pending, new_fingerprints, results, guarded=guarded)
            if (in_each_commit := self._in_each_commit) is not None:
                in_each_commit(connection, [event for event in results if isinstance(event, StoredEvent)])
            self._enforce_retention(connection)
            connection.execute("COMMIT")
        except sqlite3.OperationalError as error:
            # The disk, a lock, the file: a fault of the place, not of a record. Every append of the batch fails
            # (500, so the senders retry) and the next batch tries again; retrying each alone would only make
            # a full disk fail N times, or a held lock wait N times.
            _rollback(connection)
            problem = _problem(error)
            self._checkpoint_owed = True
            self._appends_locked_out = _locked(error)
            self._set_health("append", problem)
            failure = StoreFailing(problem)
            _settle_on_loops(batch, [failure] * len(batch))
            return False
        except Exception as error:
            _rollback(connection)
            if len(batch) > 1:
                # One bad record must not sink its neighbours: retry each alone, so only it fails.
                return any([self._commit(connection, [item], deadline) for item in batch])
            results = [error]
            _settle_on_loops(batch, results)
            return False
        self._recent_fingerprints.update(new_fingerprints)
        self._appends_locked_out = False
        self._set_health("append", None)
        _settle_on_loops(batch, results)
        return True

    def _known_fingerprints(self, connection: sqlite3.Connection, rows: list[tuple[Any, ...]]) -> dict[bytes, int]:
        """The first event of each of these rows' fingerprints already stored: memory first (rows past the search
        watermark), then one query for the whole batch rather than one per event."""
        recent = self._recent_fingerprints
        known: dict[bytes, int] = {}
        missing: list[bytes] = []
        for row in rows:
            fingerprint = row[-1]
            if fingerprint is None:
                continue
            event_id = recent.get(fingerprint)
            if event_id is not None:
                known[fingerprint] = event_id
            else:
                missing.append(fingerprint)
        for start in range(0, len(missing), _PROBE_CHUNK):
            chunk = missing[start : start + _PROBE_CHUNK]
            marks = ",".join("?" * len(chunk))
            known.update(
                connection.execute(
                    f"SELECT fingerprint, event_id FROM event_fingerprints WHERE fingerprint IN ({marks})", chunk
                ).fetchall()
            )
        return known

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
        if self._read_only_uri is not None:  # a read-only store's readers: the way its open found to read it
            return sqlite3.connect(self._read_only_uri, uri=True, timeout=timeout, isolation_level=None,
                                   check_same_thread=False)
        # isolation_level=None: transactions are explicit (BEGIN IMMEDIATE ... COMMIT), never implicit.
        connection = sqlite3.connect(self.path, timeout=timeout, isolation_level=None, check_same_thread=False)
        connection.execute("PRAGMA journal_mode=WAL")
        connection.execute(f"PRAGMA synchronous={SYNCHRONOUS}")
        # Bounds the -wal file after a burst; the checkpoints themselves run on the checkpointer thread.
        connection.execute("PRAGMA journal_size_limit=67108864")
        return connection

    def _create_schema(self, connection: sqlite3.Connection) -> None:
        version = connection.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise StoreUnusable(
                f"the event store {self.path} was written by a newer version of gateway-tui (schema {version}; this "
                f"version reads schemas up to {SCHEMA_VERSION}). Update gateway-tui to use it, or move it away (with "
                "its -wal and -shm files) to start a new, empty store; it is left exactly as it is."
            )
        if version not in (0, 1, 2, SCHEMA_VERSION):
            raise self._unusable(f"unknown event store schema {version}")
        if version == SCHEMA_VERSION and self._schema_is_current(connection):
            return  # nothing to write: a store on a full disk still opens (and can be read and exported)
        self._begin(connection)
        if version == 1:  # schema 1 indexed inside the insert trigger: every row it stored is already indexed
            connection.execute("DROP TRIGGER IF EXISTS events_after_insert")
            connection.execute("DROP TRIGGER IF EXISTS events_after_delete")
        for statement in _statements(_SCHEMA):
            connection.execute(statement)
        # Schema 3 as first released indexed message ids in this trigger; the idle indexing does it now (rows past
        # the watermark that the trigger already indexed are skipped: INSERT OR IGNORE).
        connection.execute("DROP TRIGGER IF EXISTS events_after_insert")
        columns = {row[1] for row in connection.execute("PRAGMA table_info(events)")}
        if "duplicate_of" not in columns:
            for statement in _DUPLICATE_COLUMNS:
                connection.execute(statement)
        if "cut_from" not in columns:
            connection.execute(_CUT_COLUMN)
        if "account" not in columns:
            connection.execute(_ACCOUNT_COLUMN)
        connection.execute(_ACCOUNT_INDEX)
        if "media_file" not in columns:
            for statement in _MEDIA_COLUMNS:
                connection.execute(statement)
        connection.execute(_MEDIA_INDEX)
        for statement in _DUPLICATE_SCHEMA:
            connection.execute(statement)
        if version == 1:
            connection.execute("UPDATE search_index_state SET indexed_up_to = (SELECT coalesce(max(id), 0) FROM events)")
        steps_are_new = conversations.create_schema(connection)
        if version in (1, 2):  # the inbox tables are new in 3: derive them from the events already stored
            _backfill_inbox(connection)
        elif steps_are_new:  # the timeline is new: its steps from the status events already stored
            _backfill_steps(connection)
        connection.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
        connection.execute("COMMIT")

    @staticmethod
    def _schema_is_current(connection: sqlite3.Connection) -> bool:
        names = {row[0] for row in connection.execute("SELECT name FROM sqlite_master")}
        expected = {
            "events", "event_message_ids", "events_search_text", "events_fts", "search_index_state",
            "events_after_delete", "events_by_kind", "events_by_verdict", "events_by_rejected",
            "events_duplicates", "event_fingerprints", "events_after_delete_fingerprint", "events_by_account",
            "events_by_media_file",
        }
        columns = {row[1] for row in connection.execute("PRAGMA table_info(events)")}
        return (expected <= names and not {"events_by_fingerprint", "events_after_insert"} & names
                and _COLUMNS_ADDED_IN_PLACE <= columns
                and "conversations" in names and conversations.schema_is_current(connection))


class _Yielded(Exception):
    """Work nobody waits for stopped waiting for a lock: appends are queued (see EventStore._begin)."""


def _locked(error: BaseException) -> bool:
    """Whether a failure is another connection's lock (SQLITE_BUSY or SQLITE_LOCKED) rather than the disk or the file."""
    return isinstance(error, sqlite3.OperationalError) and error.sqlite_errorcode & 0xFF in (
        sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)


def _problem(error: BaseException) -> str:
    """SQLite's own words for a fault ("database or disk is full", "database is locked")."""
    return str(error) or type(error).__name__


def _rollback(connection: sqlite3.Connection) -> None:
    # SQLite may already have rolled back (it does on SQLITE_FULL); a failing ROLLBACK must not hide the fault.
    if connection.in_transaction:
        with contextlib.suppress(sqlite3.Error):
            connection.execute("ROLLBACK")


def read_only_connection(path: Path) -> tuple[sqlite3.Connection, str, str | None]:
    """A connection that never writes to `path` or beside it; its URI (for more like it); what it cannot show.

    SQLite reads a WAL store read-only (mode=ro) only where it can keep the -shm index beside it; on a read-only
    mount it cannot, whether or not a -wal file is there. Then the store file is read alone (immutable=1): events
    still in a -wal file, not yet copied into the store file, are not seen, and the note says so."""
    from urllib.parse import quote

    base = f"file:{quote(str(path.absolute()))}"
    for mode in ("mode=ro", "immutable=1"):
        uri = f"{base}?{mode}"
        connection = sqlite3.connect(uri, uri=True, timeout=10.0, isolation_level=None, check_same_thread=False)
        try:
            connection.execute("SELECT count(*) FROM sqlite_master").fetchone()
        except sqlite3.OperationalError:
            connection.close()
            if mode == "immutable=1":
                raise
            continue
        note = None
        wal = Path(f"{path}-wal")
        if mode == "immutable=1" and wal.exists() and wal.stat().st_size > 0:
            note = (f"{path} is read-only and its -wal file cannot be read without writing beside it: shown as the "
                    "store file alone, without the newest events kept only in the -wal file")
        return connection, uri, note
    raise AssertionError("unreachable")


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


def _make_private(path: Path) -> None:
    """Owner-only access (0600) for a store file that exists; one we do not own is left as it is."""
    with contextlib.suppress(FileNotFoundError, PermissionError):
        if path.stat().st_mode & 0o777 != 0o600:
            os.chmod(path, 0o600)


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


class _RetryAlone(Exception):
    """The inbox failed inside a batch (no savepoint there): roll the batch back and store its events one by one."""


def _derive_inbox(
    connection: sqlite3.Connection, record: EventRecord, at_us: int, event_id: int | None, *, guarded: bool = True
) -> None:
    """The append hook: what this event changes in the inbox, in the transaction that stores it."""
    if record.payload is None or record.rejected or record.verdict not in conversations.TRUSTED_VERDICTS:
        return
    changes = conversations.changes_of(record.kind, record.payload)
    if not changes:
        return
    account = conversations.inbox_of(record.path)
    if not guarded:
        try:
            conversations.apply(connection, changes, at_us, event_id, account)
        except sqlite3.Error as error:
            raise _RetryAlone(str(error)) from error
        return
    # A savepoint: should the inbox fail on an odd event, the event itself is still stored and acknowledged.
    connection.execute("SAVEPOINT inbox")
    try:
        conversations.apply(connection, changes, at_us, event_id, account)
    except sqlite3.Error:
        connection.execute("ROLLBACK TO inbox")
        log.exception("the inbox could not take event %s", event_id)
    connection.execute("RELEASE inbox")


def _backfill_inbox(connection: sqlite3.Connection) -> None:
    """Schema 2 → 3: derive the inbox from every trusted event already stored, oldest first."""
    for event_id, received_us, changes, account in _trusted_changes(connection):
        if changes:
            conversations.apply(connection, changes, received_us, event_id, account)


def _trusted_changes(
    connection: sqlite3.Connection, kinds: tuple[str, ...] = ()
) -> Iterator[tuple[int, int, list[conversations.Change], str]]:
    """(event id, received µs, the inbox changes it says, whose inbox) for every trusted event stored (of `kinds`,
    if given), oldest first: what the backfills derive from."""
    only = f" AND kind IN ({', '.join('?' * len(kinds))})" if kinds else ""
    cursor = connection.execute(
        # A payload kept apart makes the body unneeded (and it may be megabytes of inline media).
        "SELECT id, received_us, kind, CASE WHEN payload IS NULL THEN body ELSE X'' END, payload, path FROM events "
        f"WHERE has_payload AND NOT rejected AND verdict IN (?, ?){only} ORDER BY id",
        (str(Verdict.VALID), str(Verdict.NO_KEY), *kinds),
    )
    while rows := cursor.fetchmany(1000):
        for event_id, received_us, kind, body, payload, path in rows:
            yield (event_id, received_us, conversations.changes_of(kind, conversations.payload_of(bytes(body), payload)),
                   conversations.inbox_of(path))


def _backfill_steps(connection: sqlite3.Connection) -> None:
    """The timeline's table is new: the steps of the messages already stored, from their sends and the trusted
    status events, oldest first (only what those said: a send's time, each receipt's)."""
    connection.execute(
        """INSERT OR IGNORE INTO message_steps(message_id, status, at_us)
           SELECT message_id, ?, min(at_us) FROM chat_messages WHERE outgoing AND message_id IS NOT NULL
           GROUP BY message_id""",
        (int(conversations.Status.SENT),),
    )
    for event_id, received_us, changes, account in _trusted_changes(
            connection, ("Delivery", "MessageStatusCallback", "ReadReceipt")):
        statuses = [change for change in changes if isinstance(change, conversations.StatusChange)]
        conversations.apply(connection, statuses, received_us, event_id, account)


def _row(record: EventRecord) -> tuple[Any, ...]:
    span = record.media
    return (
        _microseconds(record.received_at),
        _storable(record.path),
        _json_object(record.headers),
        record.body if span is None else spliced.cut(record.body, span),
        int(record.payload is not None),
        _payload_text(record),
        _storable(record.kind),
        _storable(record.summary),
        record.verdict.value,
        int(record.rejected),
        _storable(record.reason) if record.reason is not None else None,
        _json_strings(record.message_ids),
        record.cut_from,
        record.account,
        span.file if span is not None else None,
        span.to_column() if span is not None else None,
        _fingerprint(record),
    )


# The headers and message ids are flat strings: written with json's own C string encoder, the same text
# json.dumps gives, without its per-call set-up (a few microseconds per event on the writer thread).
_json_string = json.encoder.encode_basestring_ascii


def _insert_rows(
    connection: sqlite3.Connection,
    pending: list[tuple[EventRecord, tuple[Any, ...]]],
    new_fingerprints: dict[bytes, int],
    results: list[StoredEvent | BaseException],
    *,
    guarded: bool,
) -> None:
    """Insert these (record, row) pairs in order, a few statements of up to INSERT_ROWS rows each, and derive the
    inbox of each original. One statement for many rows costs the writer less than one per row: 24-26 against 29-31
    µs of CPU per event, measured alone with batches of 16 (in bench/listener.py the gain is within the machine's
    run-to-run spread). The ids follow from the last: an AUTOINCREMENT table under this connection's write lock
    numbers one statement's rows consecutively, in order."""
    for start in range(0, len(pending), INSERT_ROWS):
        part = pending[start : start + INSERT_ROWS]
        last_id = connection.execute(_insert_statement(len(part)), [value for _record, row in part for value in row]).lastrowid
        assert last_id is not None  # an INSERT always sets it
        first_id = last_id - len(part) + 1
        for event_id, (record, row) in enumerate(part, first_id):
            fingerprint, duplicate_of = row[-2], row[-1]
            if duplicate_of is None:  # a delivery received again changes no conversation
                if fingerprint is not None:
                    new_fingerprints[fingerprint] = event_id
                _derive_inbox(connection, record, row[0], event_id, guarded=guarded)
            results.append(stored(record, event_id, duplicate_of))


@functools.cache
def _insert_statement(rows: int) -> str:
    return _INSERT + ", (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)" * (rows - 1)


def _json_object(strings: dict[str, str]) -> str:
    return "{" + ", ".join(f"{_json_string(name)}: {_json_string(value)}" for name, value in strings.items()) + "}"


def _json_strings(strings: tuple[str, ...]) -> str:
    return "[" + ", ".join(map(_json_string, strings)) + "]"


def _fingerprint(record: EventRecord) -> bytes | None:
    """What makes two deliveries the same: the message ids with the kind and summary (a receipt's state is in its
    summary, so "delivered" then "read" are two events), else the body bytes. Rejected events and bodies not kept
    have none: they are never duplicates, nor originals. Each account's deliveries are its own: a group message
    two of the accounts receive is two events (an event of no known account keeps the fingerprint it always had)."""
    if record.rejected or not record.body:
        return None
    whose = b"" if record.account is None else b"account\x00" + record.account.encode("utf-8", "replace") + b"\x00"
    if record.message_ids:
        identity = "\x00".join((record.kind, record.summary, *record.message_ids)).encode("utf-8", "replace")
        return hashlib.blake2b(whose + b"ids\x00" + identity, digest_size=16).digest()
    return hashlib.blake2b(whose + b"body\x00" + record.body, digest_size=16).digest()


def _payload_text(record: EventRecord) -> str | None:
    """The parsed payload as JSON text, or None when reparsing the body gives it back (most JSON bodies).

    Stored when the body is a form (the JSON is url-encoded inside it) or uses \\u escapes (so the search index
    sees the real characters), or when the body is not JSON at all (e.g. a form body without a content type).
    """
    if record.payload is None:
        return None
    escaped = _has_unicode_escape(record.body)
    if record.payload_is_body and not escaped:
        return None  # the listener parsed this payload from the body's JSON: no need to parse it again
    # A body cut around its kept file (record.media) is never its payload's JSON: the listener cuts only bodies whose
    # payload it stored apart (the inline base64 noted by size); parsing a megabyte body to find out cost 2 ms.
    if not escaped and record.media is None:
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


def _has_unicode_escape(body: bytes) -> bool:
    # Most bodies hold no backslash at all: one memchr finds that, five times faster than looking for "\\u" in a
    # 1 KB body (a microsecond of the writer's time per event).
    return b"\\" in body and b"\\u" in body


def _storable(text: str) -> str:
    # Header values and payload strings may hold lone surrogates, which SQLite's UTF-8 text cannot take.
    if text.isascii():
        return text
    return text.encode("utf-8", "replace").decode("utf-8")


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)


def _microseconds(moment: datetime) -> int:
    if moment.tzinfo is None:
        raise ValueError("received_at must be timezone-aware")
    return (moment - _EPOCH) // _MICROSECOND


def _event(row: tuple[Any, ...], media_folder: Path | None = None) -> StoredEvent:
    """The stored event of a row; with `media_folder`, a body stored without its inline file is rebuilt from the kept
    file (`get`, export); a list's row has no body to rebuild."""
    (event_id, received_us, path, headers, body, has_payload, payload, kind, summary, verdict, rejected, reason, ids,
     duplicate_of, cut_from, account, media_file, media_span) = row
    if not has_payload:
        parsed = None
    else:
        parsed = json.loads(payload if payload is not None else body)
    if media_file is not None and media_folder is not None:
        body, cut_from = _rebuilt(bytes(body), media_file, media_span, media_folder)
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
        duplicate_of=duplicate_of,
        cut_from=cut_from,
        account=account,
    )


def _rebuilt(stored: bytes, media_file: str, media_span: str, media_folder: Path) -> tuple[bytes, int | None]:
    """(body as received, None), or, when the kept file is gone or altered, (the stored body, the size the whole
    body had): shown as a cut body, never forwarded as if whole."""
    span = spliced.MediaSpan.from_column(media_file, media_span)
    if span is None:
        return stored, len(stored)
    try:
        data = (media_folder / Path(media_file).name).read_bytes()
    except OSError:
        return stored, len(stored) + span.length
    body = spliced.rebuild(stored, span, data)
    return (body, None) if body is not None else (stored, len(stored) + span.length)


def _settle_on_loops(batch: list[tuple[EventRecord, asyncio.Future, Any]], results: list[Any]) -> None:
    by_loop: dict[Any, list[tuple[asyncio.Future, Any]]] = {}
    for (_record, future, loop), result in zip(batch, results, strict=True):
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
