"""The event store's writer thread: group commit, the search index kept up when idle, checkpoints, faults and health.

Writes: `await store.append(record)` queues the record for the single writer thread. The writer commits
everything queued the moment its previous commit ends, so batches grow by themselves under load and an idle store
commits at once; while a stream of senders is still delivering the rest of what the previous commit held, it
takes them for up to a couple of milliseconds first (GATHER_QUIET), so that each commit's fsync serves them all.
The commit runs off the event loop; each append's future is resolved back on its loop only after the transaction
holding it has committed, so nothing is acknowledged before it is stored.

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
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import queue
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tui.webhooks.events import EventRecord, StoredEvent
from tui.webhooks.store_faults import HealthCallback, StoreClosed, StoreFailing, StoreHealth, StoreUnusable
from tui.webhooks.store_rows import _insert_rows, _row

log = logging.getLogger(__name__)

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


class StoreWriter:
    """The writing half of EventStore (a base class of it): the writer and checkpointer threads, and the health
    they report. Its state is set up by EventStore.__init__."""

    path: Path
    retention: int | None
    read_only: bool
    checkpoints: int
    _queue: queue.SimpleQueue[Any]
    _state_lock: threading.Lock
    _open: bool
    _writer_running: bool
    _giving_up: threading.Event
    _health: StoreHealth
    _checkpoint_owed: bool
    _wal_written: threading.Event
    _checkpointer_stopping: threading.Event
    _wal_reset_owed: bool
    _recent_fingerprints: collections.OrderedDict[bytes, int]
    _indexed_up_to: int
    _damaged: str | None
    _problems: dict[str, str]
    _appends_locked_out: bool
    _health_watchers: list[HealthCallback]
    _in_each_commit: CommitAction | None

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
