"""Durable webhook event store: SQLite in WAL mode, one writer thread doing group commit, pooled readers.

EventStore is put together from its halves: the writer thread (tui.webhooks.store_writer: appends, group commit,
the search index, checkpoints, health) and the reads (tui.webhooks.store_queries); the schema and its migrations
are in tui.webhooks.store_schema, the row format in tui.webhooks.store_rows, the errors in tui.webhooks.store_faults.
This module holds the life cycle: opening (read-only too), closing, the reader pool, and where appends enter.

Reads: plain synchronous methods, safe from any thread (the app calls them from thread workers). Each call
borrows a connection from a small pool; WAL lets readers run while the writer commits.

Life cycle: `open()` and `close()` are synchronous (open creates the schema and starts the writer; close
drains the queue, commits it and stops). `with EventStore(path) as store:` does both.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import os
import queue
import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from tui.local.paths import data_dir
from tui.webhooks import inbox_sql
from tui.webhooks.identities import has_table as has_identities
from tui.webhooks.events import EventRecord, StoredEvent
from tui.webhooks.store_faults import (
    HealthCallback,
    StoreClosed,
    StoreFailing,
    StoreHealth,
    StoreLocked,
    StoreUnusable,
)
from tui.webhooks.store_queries import EventQueries
from tui.webhooks.store_rows import _INSERT, _row
from tui.webhooks.store_schema import (
    _ACCOUNT_COLUMN,
    _ACCOUNT_INDEX,
    _COLUMNS_ADDED_IN_PLACE,
    _CUT_COLUMN,
    _DUPLICATE_COLUMNS,
    _DUPLICATE_SCHEMA,
    _MEDIA_COLUMNS,
    _MEDIA_INDEX,
    _SCHEMA,
    SCHEMA_VERSION,
    _backfill_identities,
    _backfill_inbox,
    _backfill_steps,
    _statements,
)
from tui.webhooks.store_writer import (
    _STOP,
    LOCK_POLL,
    CommitAction,
    StoreWriter,
    _Appends,
    _locked,
    _OnWriter,
    _rollback,
)

T = TypeVar("T")
log = logging.getLogger(__name__)
DEFAULT_FILE_NAME = "events.sqlite3"

# synchronous=FULL: in WAL mode this fsyncs the WAL at every commit, so an acknowledged event survives a power
# cut, not only a crash of this process (NORMAL would lose the last commits on power loss). Group commit pays
# one fsync per batch, and bench/listener.py measured FULL within a few percent of NORMAL on this machine
# (see the README), so the stronger promise costs next to nothing.
SYNCHRONOUS = "FULL"
# A store up to this size is checked (PRAGMA quick_check, about 4 s per GB here) before open() returns; a bigger
# one right after, in the background, so a million-event store opens at once.
QUICK_CHECK_AT_OPEN_LIMIT = 64 * 1024 * 1024


def default_path() -> Path:
    return data_dir() / DEFAULT_FILE_NAME


class EventStore(StoreWriter, EventQueries):
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
        self._busy_readers: set[sqlite3.Connection] = set()  # lent to a query now: closed by it once the store is
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

    def open(self, *, lock_wait: float = 10.0) -> EventStore:
        """Create or open the store. Raises StoreUnusable (naming the file and what to do) for a damaged file, and
        StoreLocked when another program held its lock for `lock_wait` seconds (a caller that can say so and wait,
        such as `listen`, asks for a short wait)."""
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
                connection = self._connect(timeout=lock_wait)
            except sqlite3.DatabaseError as error:
                if error.sqlite_errorcode & 0xFF in (sqlite3.SQLITE_NOTADB, sqlite3.SQLITE_CORRUPT):
                    raise self._unusable(str(error)) from None
                if _locked(error):
                    raise self._held_by_another() from None
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
                if _locked(error):
                    raise self._held_by_another() from None
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

    def _held_by_another(self) -> StoreLocked:
        return StoreLocked(f"the event store {self.path} is locked by another program (an open transaction, a copy "
                           "or a second writer)")

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
        with self._state_lock:
            while True:
                try:
                    self._idle_readers.get_nowait()
                except queue.Empty:
                    break
            # A reader lent to a query in another thread (the inbox's, a LID lookup's) is closed by that thread when
            # its query ends (`_reader`): closing a connection while a query runs on it crashed the process (SIGSEGV
            # in sqlite3, seen in the full suite).
            for connection in self._all_readers:
                if connection not in self._busy_readers:
                    connection.close()
            self._all_readers = [connection for connection in self._all_readers if connection in self._busy_readers]
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
        """The store's health now (`failing` while a fault lasts: a lock held by another program, a full disk)."""
        return self._health

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

    @contextlib.contextmanager
    def _reader(self) -> Iterator[sqlite3.Connection]:
        with self._state_lock:
            if not self._open:
                raise StoreClosed("the event store is closed")
            try:
                connection: sqlite3.Connection | None = self._idle_readers.get_nowait()
            except queue.Empty:
                connection = None
            if connection is not None:
                self._busy_readers.add(connection)
        if connection is None:
            connection = self._connect()
            connection.execute("PRAGMA query_only=1")
            with self._state_lock:
                if not self._open:  # closed while it connected
                    connection.close()
                    raise StoreClosed("the event store is closed")
                self._all_readers.append(connection)
                self._busy_readers.add(connection)
        try:
            yield connection
        finally:
            with self._state_lock:
                self._busy_readers.discard(connection)
                if self._open:
                    self._idle_readers.put(connection)
                else:  # the store closed during the query: its last user closes it
                    connection.close()
                    if connection in self._all_readers:
                        self._all_readers.remove(connection)

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
        identities_are_new = version == SCHEMA_VERSION and not has_identities(connection)
        steps_are_new = inbox_sql.create_schema(connection)
        if version in (1, 2):  # the inbox tables are new in 3: derive them from the events already stored
            _backfill_inbox(connection)
        elif steps_are_new:  # the timeline is new: its steps from the status events already stored
            _backfill_steps(connection)
        if identities_are_new:  # who the LIDs are: from the events already stored
            _backfill_identities(connection)
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
                and "conversations" in names and inbox_sql.schema_is_current(connection))



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



def _make_private(path: Path) -> None:
    """Owner-only access (0600) for a store file that exists; one we do not own is left as it is."""
    with contextlib.suppress(FileNotFoundError, PermissionError):
        if path.stat().st_mode & 0o777 != 0o600:
            os.chmod(path, 0o600)


