"""Hand stored webhook events on to the user's own app (`listen --forward-to URL`), and replay one on demand.

The forwarder is driven by stored events: the listener's `on_event` hook calls `submit(event)` after the event
has been committed, and `submit` only queues it, so the gateway's 200 never waits for the user's app.

What the app receives is what the gateway sent: the original body bytes, `Content-Type` and `x-hmac-signature`
unchanged (so the app's own verification runs as in production), plus `X-Gateway-Tui-Event: <stored id>`.
Rejected events are never forwarded.

Delivery: one lane per chat, so events of one chat arrive in the order they were stored while a slow or failing
chat does not hold up the others. A lane retries a failed attempt (no answer, timeout, 408, 429 or 5xx) with a
doubling pause capped at `max_delay`, at most `max_attempts` times, then gives up on that event and goes on.
Any other answer is final: the app has spoken. Every attempt is written to the `forward_attempts` table
beside the events (see ForwardLog), which the event detail and the events panel show.

Pending forwards survive a crash or a stop. Given the store, the forwarder has the store write each accepted event's
id into the `forward_queue` table in the very transaction that stores the event (EventStore.in_each_commit), so
an event answered 200 is queued on disk before the gateway hears so; the id leaves the queue with the forward's
final outcome (delivered, or failed with no attempt to follow). The next forwarder started on the store (`listen
--forward-to`, the app's forward target) sends what the queue holds first, in stored order per chat, to its own
target, numbering attempts on from the last one recorded. Duplicates (a delivery the gateway sent again) and
rejected events are never queued nor forwarded. Delivery stays at least once: a forward delivered in the instant
before a crash, before its outcome is written, goes out again after the restart.

Targets: loopback only, unless the user names another host explicitly (`allow_remote`), because forwarding
sends people's messages to wherever the URL points.
"""

from __future__ import annotations

import asyncio
import enum
import logging
import sqlite3
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self
from urllib.parse import urlsplit

import aiohttp

from tui.webhooks.events import StoredEvent
from tui.webhooks.identities import has_table, identity_of, sender_in
from tui.webhooks.inbox_changes import inbox_of
from tui.api.signing import SIGNATURE_HEADER
from tui.gateways.evolution.envelope import REDACTED_HEADER as DELIVERY_REDACTED_HEADER
from tui.local.forward_targets import ForwardTargetRefused, check_target, is_loopback

if TYPE_CHECKING:
    from tui.webhooks.store import EventStore

__all__ = ["ForwardLog", "ForwardTargetRefused", "Forwarder", "check_target", "is_loopback", "replay"]

FORWARD_EVENT_HEADER = "X-Gateway-Tui-Event"
REDACTED_HEADER = DELIVERY_REDACTED_HEADER
REPLAY_HEADER = "X-Gateway-Tui-Replay"
# Who wrote, when WhatsApp named them by a LID and the payload gives their number too (tui.webhooks.identities):
# the phone's digits, so the app can answer and save them without reading each gateway's fields.
SENDER_PHONE_HEADER = "X-Gateway-Tui-Sender-Phone"
USER_AGENT = "gateway-tui-forward"
# The stored headers that travel on: what the app needs to parse and verify the body exactly as sent.
FORWARDED_HEADERS = ("content-type", SIGNATURE_HEADER)
RETRYABLE_STATUSES = frozenset({408, 425, 429, 500, 502, 503, 504})
ERROR_TEXT_LIMIT = 300
DEFAULT_MAX_PENDING = 10_000
PRUNE_EVERY = 1000  # attempts written between two clean-ups of those whose event retention has deleted


class Outcome(enum.StrEnum):
    DELIVERED = "delivered"  # 2xx
    RETRYING = "retrying"  # failed; another attempt follows
    FAILED = "failed"  # failed and no attempt follows (gave up, a final non-2xx answer, or the queue was full)


@dataclass(frozen=True, slots=True)
class ForwardAttempt:
    event_id: int
    attempt: int  # 1, 2, ... within this forward or replay
    at: datetime
    target: str  # scheme://host:port/path only: no credentials, no query (it may carry a shared secret)
    status: int | None  # the app's HTTP status; None when no answer came
    error: str | None
    duration_ms: float
    outcome: Outcome
    replay: bool = False

    @property
    def delivered(self) -> bool:
        return self.outcome is Outcome.DELIVERED

    def to_json(self) -> dict[str, Any]:
        return {
            "attempt": self.attempt,
            "at": self.at.isoformat(),
            "target": self.target,
            "status": self.status,
            "error": self.error,
            "duration_ms": round(self.duration_ms, 1),
            "outcome": str(self.outcome),
            "replay": self.replay,
        }


# -- targets ---------------------------------------------------------------------------------------------------


def shown_target(url: str) -> str:
    """What is stored and shown of a target: no user:password, no query string, no fragment."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{host}{port}{parts.path}"


# -- one request -----------------------------------------------------------------------------------------------


def forward_headers(event: StoredEvent, *, replay: bool = False, learned_phone: str = "") -> dict[str, str]:
    """`learned_phone`: the number the store knows for the event's LID sender when the event itself does not give it."""
    headers = {name: event.headers[name] for name in FORWARDED_HEADERS if name in event.headers}
    headers[FORWARD_EVENT_HEADER] = str(event.id)
    redacted = event.headers.get(REDACTED_HEADER.lower())
    if redacted:  # the listener replaced a live key in the body (tui.gateways.evolution.envelope): say so
        headers[REDACTED_HEADER] = redacted
    sender = sender_in(event.payload)
    if sender is not None and (sender.phone or learned_phone):
        headers[SENDER_PHONE_HEADER] = sender.phone or learned_phone
    if replay:
        headers[REPLAY_HEADER] = "1"
    return headers


@dataclass(frozen=True, slots=True)
class Answer:
    status: int | None
    error: str | None
    duration_ms: float

    @property
    def ok(self) -> bool:
        return self.status is not None and 200 <= self.status < 300

    @property
    def retryable(self) -> bool:
        return self.status is None or self.status in RETRYABLE_STATUSES


def new_client(timeout: float) -> aiohttp.ClientSession:
    # aiohttp rather than httpx: the forwarder shares the listener's event loop, and aiohttp costs it about a
    # third of the CPU per request (measured), which is what keeps acknowledgements fast while forwarding.
    # trust_env=False: a proxy from the environment must not see (or intercept) loopback deliveries.
    return aiohttp.ClientSession(
        timeout=aiohttp.ClientTimeout(total=timeout),
        trust_env=False,
        headers={"User-Agent": USER_AGENT},
        # The stored Content-Type travels as it is; none is invented when the gateway sent none.
        skip_auto_headers=("Content-Type",),
    )


async def post_body(client: aiohttp.ClientSession, url: str, body: bytes, headers: dict[str, str]) -> Answer:
    """POST these exact bytes; never raises for the target's faults (they come back as the answer's error).
    No redirects: a 3xx is the app's answer, not a reason to send people's messages somewhere else."""
    started = time.perf_counter()
    status: int | None = None
    error: str | None = None
    try:
        async with client.post(url, data=body, headers=headers, allow_redirects=False) as response:
            await response.read()
            status = response.status
            if not 200 <= status < 300:
                error = f"HTTP {status} {response.reason or ''}".strip()
    except TimeoutError:
        error = "no answer in time (timeout)"
    except aiohttp.ClientConnectorError:
        error = "connection refused or unreachable (is the app running?)"
    except (aiohttp.ClientError, OSError, ValueError) as fault:
        error = f"{type(fault).__name__}: {fault}".rstrip(": ")[:ERROR_TEXT_LIMIT]
    return Answer(status, error, (time.perf_counter() - started) * 1000)


# -- the attempts table ----------------------------------------------------------------------------------------

_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS forward_attempts (
        id INTEGER PRIMARY KEY,
        event_id INTEGER NOT NULL,
        attempt INTEGER NOT NULL,
        at_us INTEGER NOT NULL,              -- microseconds since the epoch, UTC
        target TEXT NOT NULL,                -- without credentials or query
        status INTEGER,                      -- NULL: no answer
        error TEXT,
        duration_ms REAL NOT NULL,
        outcome TEXT NOT NULL,               -- delivered | retrying | failed
        replay INTEGER NOT NULL
    )""",
    "CREATE INDEX IF NOT EXISTS forward_attempts_by_event ON forward_attempts(event_id, id)",
    # Accepted events whose forward has no final outcome yet: written by the store's writer in each event's own
    # transaction (ForwardLog.queue), deleted with the final attempt (ForwardLog.record). Survives crashes.
    "CREATE TABLE IF NOT EXISTS forward_queue (event_id INTEGER PRIMARY KEY)",
)


class ForwardLog:
    """Forward and replay attempts, in their own table of the event store's SQLite file.

    Its own connection and lock: attempts are written off the event loop (asyncio.to_thread) and read from the
    app's worker threads. synchronous=NORMAL: an attempt lost to a power cut costs nothing that matters, and
    the events' own commits keep their fsync.
    """

    def __init__(self, path: Path, *, read_only: bool = False) -> None:
        """`read_only`: only read (`events list`): opened as the store's read_only_connection; no log yet reads
        as an empty one."""
        self.path = Path(path)
        self.read_only = read_only
        self._lock = threading.Lock()
        self._connection: sqlite3.Connection | None = None
        self._written = 0

    def open(self) -> Self:
        with self._lock:
            if self._connection is None and self.read_only:
                from tui.webhooks.store import read_only_connection

                connection, _uri, _note = read_only_connection(self.path)
                tables = {name for (name,) in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
                if {"forward_attempts", "forward_queue"} <= tables:
                    self._connection = connection
                else:
                    connection.close()
            elif self._connection is None:
                connection = sqlite3.connect(self.path, timeout=10.0, isolation_level=None, check_same_thread=False)
                connection.execute("PRAGMA journal_mode=WAL")
                connection.execute("PRAGMA synchronous=NORMAL")
                for statement in _SCHEMA:
                    connection.execute(statement)
                self._connection = connection
        return self

    def close(self) -> None:
        with self._lock:
            if self._connection is not None:
                self._connection.close()
                self._connection = None

    def __enter__(self) -> Self:
        return self.open()

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    @staticmethod
    def queue(connection: sqlite3.Connection, events: list[StoredEvent]) -> None:
        """Queue the forwards of these just-inserted events, on the store's writer connection, inside the
        transaction that stores them (EventStore.in_each_commit): rejected events and duplicates are left out."""
        rows = [(event.id,) for event in events if forwardable(event)]
        if rows:
            connection.executemany("INSERT OR IGNORE INTO forward_queue(event_id) VALUES (?)", rows)

    def queued(self) -> tuple[list[int], int]:
        """(the ids of the events whose forward is pending, oldest first; the newest event id stored), read
        together: every event stored up to that id and queued is in the list."""
        with self._lock:
            if self._connection is None:
                return [], 0
            connection = self._connection
            connection.execute("BEGIN")
            try:
                ids = [event_id for (event_id,) in connection.execute("SELECT event_id FROM forward_queue ORDER BY event_id")]
                (newest,) = connection.execute("SELECT coalesce(max(id), 0) FROM events").fetchone()
            finally:
                connection.execute("COMMIT")
        return ids, newest

    def is_queued(self, event_id: int) -> bool:
        """Whether this event's forward is pending (it goes out while a forwarder runs on the store)."""
        with self._lock:
            if self._connection is None:
                return False
            row = self._connection.execute("SELECT 1 FROM forward_queue WHERE event_id = ?", (event_id,)).fetchone()
        return row is not None

    def unqueue(self, event_ids: Iterable[int]) -> None:
        """Forget pending forwards whose events are gone (retention deleted them)."""
        with self._lock:
            if self._connection is not None:
                self._connection.executemany("DELETE FROM forward_queue WHERE event_id = ?", [(i,) for i in event_ids])

    def record(self, attempt: ForwardAttempt) -> None:
        """Write an attempt; a final one (delivered or failed, not a replay) takes its event out of the queue in
        the same transaction."""
        final = attempt.outcome is not Outcome.RETRYING and not attempt.replay
        with self._lock:
            if self._connection is None:
                return  # closed while the attempt was under way: the app is shutting down
            if final:
                self._connection.execute("BEGIN IMMEDIATE")
            try:
                self._write(attempt)
                if final:
                    self._connection.execute("DELETE FROM forward_queue WHERE event_id = ?", (attempt.event_id,))
            except BaseException:
                if final and self._connection.in_transaction:
                    self._connection.execute("ROLLBACK")
                raise
            if final:
                self._connection.execute("COMMIT")
            self._written += 1
            if self._written % PRUNE_EVERY == 0:
                self._prune()

    def _write(self, attempt: ForwardAttempt) -> None:
        assert self._connection is not None
        self._connection.execute(
                """INSERT INTO forward_attempts
                   (event_id, attempt, at_us, target, status, error, duration_ms, outcome, replay)
                   VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)""",
                (
                    attempt.event_id,
                    attempt.attempt,
                    _microseconds(attempt.at),
                    attempt.target,
                    attempt.status,
                    attempt.error,
                    attempt.duration_ms,
                    str(attempt.outcome),
                    int(attempt.replay),
                ),
            )

    def _prune(self) -> None:
        """Drop the attempts of events the store's retention has deleted (events only go oldest first)."""
        assert self._connection is not None
        try:
            for table in ("forward_attempts", "forward_queue"):
                self._connection.execute(
                    f"DELETE FROM {table} WHERE event_id < (SELECT coalesce(min(id), 0) FROM events)"
                )
        except sqlite3.OperationalError:
            pass  # no events table: a log used on its own (tests); nothing to prune against

    def attempts(self, event_id: int) -> list[ForwardAttempt]:
        """Every attempt for this event, oldest first."""
        with self._lock:
            if self._connection is None:
                return []
            rows = self._connection.execute(
                """SELECT event_id, attempt, at_us, target, status, error, duration_ms, outcome, replay
                   FROM forward_attempts WHERE event_id = ? ORDER BY id""",
                (event_id,),
            ).fetchall()
        return [_attempt(row) for row in rows]

    def latest(self, event_ids: Iterable[int]) -> dict[int, ForwardAttempt]:
        """The newest attempt of each of these events that has one (for the panel's marks)."""
        wanted = sorted(set(event_ids))
        if not wanted:
            return {}
        found: dict[int, ForwardAttempt] = {}
        with self._lock:
            if self._connection is None:
                return {}
            for start in range(0, len(wanted), 500):
                chunk = wanted[start : start + 500]
                marks = ",".join("?" * len(chunk))
                rows = self._connection.execute(
                    f"""SELECT event_id, attempt, at_us, target, status, error, duration_ms, outcome, replay
                        FROM forward_attempts WHERE id IN (
                            SELECT max(id) FROM forward_attempts WHERE event_id IN ({marks}) GROUP BY event_id)""",
                    chunk,
                ).fetchall()
                for row in rows:
                    found[row[0]] = _attempt(row)
        return found


def _attempt(row: tuple[Any, ...]) -> ForwardAttempt:
    event_id, attempt, at_us, target, status, error, duration_ms, outcome, replay = row
    at = datetime.fromtimestamp(at_us // 1_000_000, UTC).replace(microsecond=at_us % 1_000_000)
    return ForwardAttempt(event_id, attempt, at, target, status, error, duration_ms, Outcome(outcome), bool(replay))


def _microseconds(moment: datetime) -> int:
    delta = moment - datetime(1970, 1, 1, tzinfo=UTC)
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def forwardable(event: StoredEvent) -> bool:
    """Rejected events are never forwarded, nor a delivery received again (a duplicate): its original was."""
    return not event.rejected and event.duplicate_of is None


# -- chats -----------------------------------------------------------------------------------------------------


def chat_of(event: StoredEvent) -> str:
    """The chat an event belongs to, for per-chat ordering: WuzAPI's `event.Info.Chat` / `event.Chat`, the
    instance family's `phone`; events without one share a single lane."""
    payload = event.payload
    if isinstance(payload, dict):
        inner = payload.get("event")
        if isinstance(inner, dict):
            info = inner.get("Info")
            for value in (info.get("Chat") if isinstance(info, dict) else None, inner.get("Chat"), inner.get("From")):
                if isinstance(value, str) and value:
                    return value
        phone = payload.get("phone")
        if isinstance(phone, (str, int)) and not isinstance(phone, bool) and str(phone):
            return str(phone)
    return ""


# -- the forwarder ---------------------------------------------------------------------------------------------

AttemptCallback = Callable[[ForwardAttempt], None]

log = logging.getLogger(__name__)


class Forwarder:
    """Forwards every accepted stored event to `target`. Use on one event loop: start(), submit()..., stop()."""

    def __init__(
        self,
        target: str,
        forward_log: ForwardLog | None,
        *,
        max_attempts: int = 8,
        first_delay: float = 0.5,
        max_delay: float = 30.0,
        timeout: float = 10.0,
        max_pending: int = DEFAULT_MAX_PENDING,
        on_attempt: AttemptCallback | None = None,
        store: EventStore | None = None,
    ) -> None:
        """With `store` (and a `forward_log` on the same file), pending forwards are kept on disk: start() has the
        store queue every accepted event in its own transaction and first sends what earlier runs left queued."""
        if max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")
        self.target = target
        self.forward_log = forward_log
        self.max_attempts = max_attempts
        self.first_delay = first_delay
        self.max_delay = max_delay
        self.timeout = timeout
        self.max_pending = max_pending
        self.on_attempt = on_attempt
        self.delivered = 0
        self.failed = 0
        self._client: aiohttp.ClientSession | None = None
        self._lanes: dict[str, deque[StoredEvent]] = {}
        self._workers: dict[str, asyncio.Task[None]] = {}
        self._pending = 0
        self._idle = asyncio.Event()
        self._idle.set()
        self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="forward-log")
        self._writes: set[asyncio.Future[None]] = set()
        self.store = store
        self._attempts_before: dict[int, int] = {}  # resumed event id -> attempts recorded by earlier runs
        self._resumed_through = 0  # events up to this id were queued on disk when start() read the queue

    def __repr__(self) -> str:
        return f"<Forwarder to {shown_target(self.target)} pending={self._pending}>"

    @property
    def pending(self) -> int:
        """Events queued or being delivered."""
        return self._pending

    def waiting_ids(self) -> list[int]:
        """The ids of the events queued or being delivered, in the order they were stored (what a stop abandons)."""
        return sorted(event.id for lane in self._lanes.values() for event in lane)

    async def start(self) -> None:
        """Ready to forward; with a store, queue every accepted event from now on and send the pending ones first."""
        if self._client is not None:
            return
        self._client = new_client(self.timeout)
        if self.store is not None and self.forward_log is not None:
            self.store.in_each_commit(ForwardLog.queue)
            try:
                await self._resume(self.store, self.forward_log)
            except sqlite3.Error as error:  # new events are still forwarded; the queue waits for the next start
                log.warning("the forwards pending from before could not be read (%s); they stay queued", error)

    async def _resume(self, store: EventStore, forward_log: ForwardLog) -> None:
        """Submit the forwards earlier runs left pending (a crash, a stop, a switched target), oldest first: each
        lands in its chat's lane ahead of anything stored later, so the order per chat holds across the restart."""

        def read() -> tuple[list[StoredEvent], dict[int, ForwardAttempt], int]:
            ids, newest = forward_log.queued()
            events: list[StoredEvent] = []
            gone: list[int] = []
            for event_id in ids:
                event = store.get(event_id)
                if event is not None and forwardable(event):
                    events.append(event)
                else:
                    gone.append(event_id)  # deleted by retention since
            forward_log.unqueue(gone)
            return events, forward_log.latest(ids), newest

        events, latest, newest = await asyncio.to_thread(read)
        # An event stored before that read and announced after it (submit) is one of these or not queued at all.
        self._resumed_through = newest
        for event in events:
            previous = latest.get(event.id)
            if previous is not None and not previous.replay:
                self._attempts_before[event.id] = previous.attempt
            self._queue(event)

    async def stop(self, *, handing_over: bool = False) -> None:
        """Stop at once. The forwards not done stay queued on disk and go out from the next forwarder started on
        the store; `handing_over`: one is about to start (a new target), so the store keeps queueing meanwhile."""
        if self.store is not None and not handing_over:
            self.store.in_each_commit(None)
        workers = list(self._workers.values())
        for worker in workers:
            worker.cancel()
        await asyncio.gather(*workers, return_exceptions=True)
        self._workers.clear()
        self._lanes.clear()
        self._pending = 0
        self._idle.set()
        await asyncio.gather(*self._writes, return_exceptions=True)
        self._writer.shutdown(wait=False)
        if self._client is not None:
            client, self._client = self._client, None
            await client.close()

    async def wait_idle(self, timeout: float = 30.0) -> None:
        """Until nothing is queued or being delivered (tests, and a clean stop of `listen`)."""
        async with asyncio.timeout(timeout):
            await self._idle.wait()
            await asyncio.gather(*self._writes)

    def submit(self, event: StoredEvent) -> None:
        """Queue a stored event (the listener's on_event hook); returns at once. Rejected events and duplicates
        are skipped, and so is an event start() already took from the queue on disk."""
        if not forwardable(event) or self._client is None or event.id <= self._resumed_through:
            return
        self._queue(event)

    def _queue(self, event: StoredEvent) -> None:
        if self._pending >= self.max_pending:
            answer = Answer(None, "not forwarded: too many events waiting for the app (replay it later)", 0.0)
            self._note(event, self._attempts_before.pop(event.id, 0) + 1, answer, Outcome.FAILED)
            return
        chat = chat_of(event)
        lane = self._lanes.setdefault(chat, deque())
        lane.append(event)
        self._pending += 1
        self._idle.clear()
        if chat not in self._workers:
            worker = asyncio.get_running_loop().create_task(self._drain(chat, lane), name=f"forward-lane-{chat or 'other'}")
            self._workers[chat] = worker

    async def _drain(self, chat: str, lane: deque[StoredEvent]) -> None:
        try:
            while lane:
                event = lane[0]
                try:
                    await self._deliver(event)
                except asyncio.CancelledError:
                    raise
                except Exception:  # a bug here must not stop the lane for good
                    log.exception("forwarding event %s failed", event.id)
                lane.popleft()
                self._pending -= 1
        finally:
            self._workers.pop(chat, None)
            if self._lanes.get(chat) is lane and not lane:
                del self._lanes[chat]
            if self._pending <= 0:
                self._idle.set()

    async def _deliver(self, event: StoredEvent) -> None:
        assert self._client is not None
        headers = forward_headers(event, learned_phone=await self._learned_phone(event))
        before = self._attempts_before.pop(event.id, 0)  # numbering goes on across restarts; the bound is per run
        for attempt in range(before + 1, before + self.max_attempts + 1):
            answer = await post_body(self._client, self.target, event.body, headers)
            if answer.ok:
                self.delivered += 1
                self._note(event, attempt, answer, Outcome.DELIVERED)
                return
            last = attempt == before + self.max_attempts or not answer.retryable
            self._note(event, attempt, answer, Outcome.FAILED if last else Outcome.RETRYING)
            if last:
                self.failed += 1
                return
            await asyncio.sleep(min(self.max_delay, self.first_delay * 2 ** (attempt - before - 1)))

    async def _learned_phone(self, event: StoredEvent) -> str:
        """The number the store learned for a sender the event names by LID alone (another event, a look-up); ""
        when the event gives it, names no LID, or the store does not know (one indexed read, only then)."""
        sender = sender_in(event.payload)
        store = self.store
        if sender is None or sender.phone or store is None:
            return ""
        inbox = inbox_of(event.path)

        def read(connection: sqlite3.Connection) -> str:
            known = identity_of(connection, sender.lid, inbox) if has_table(connection) else None
            return known.phone if known is not None else ""

        try:
            return await asyncio.to_thread(store.read, read)
        except Exception:  # a failing store: the event goes on without the header
            return ""

    def _note(self, event: StoredEvent, attempt: int, answer: Answer, outcome: Outcome, *, replay: bool = False) -> None:
        record = ForwardAttempt(
            event.id, attempt, datetime.now(UTC), shown_target(self.target), answer.status, answer.error,
            answer.duration_ms, outcome, replay,
        )
        if self.forward_log is not None:
            # Off the loop (the listener shares it, and a write may wait for the store's own commit), on one
            # thread so the attempts are written in the order they happened.
            write = asyncio.get_running_loop().run_in_executor(self._writer, self.forward_log.record, record)
            self._writes.add(write)
            write.add_done_callback(self._writes.discard)
        if self.on_attempt is not None:
            try:
                self.on_attempt(record)
            except Exception:
                log.exception("forward attempt callback failed")


async def replay(
    event: StoredEvent,
    url: str,
    *,
    forward_log: ForwardLog | None = None,
    timeout: float = 10.0,
    client: aiohttp.ClientSession | None = None,
) -> ForwardAttempt:
    """Send one stored event once more, as the forwarder would (plus `X-Gateway-Tui-Replay: 1`); the attempt
    is recorded when a log is given. Rejected events can be replayed too: the user asked for this one."""
    owned = client is None
    http = client if client is not None else new_client(timeout)
    try:
        answer = await post_body(http, url, event.body, forward_headers(event, replay=True))
    finally:
        if owned:
            await http.close()
    attempt = ForwardAttempt(
        event.id, 1, datetime.now(UTC), shown_target(url), answer.status, answer.error, answer.duration_ms,
        Outcome.DELIVERED if answer.ok else Outcome.FAILED, replay=True,
    )
    if forward_log is not None:
        await asyncio.to_thread(forward_log.record, attempt)
    return attempt


def describe(attempt: ForwardAttempt, *, duration: str | None = None) -> str:
    """One line for people: `attempt 1 → http://127.0.0.1:3000/hook: HTTP 200 (delivered, 4 ms)`, or
    `... no answer: connection refused or unreachable (is the app running?) (retrying, 1 ms)`."""
    what = "replay" if attempt.replay else f"attempt {attempt.attempt}"
    answer = f"HTTP {attempt.status}" if attempt.status is not None else "no answer"
    detail = f": {attempt.error}" if attempt.error and attempt.status is None else ""
    took = duration if duration is not None else f"{attempt.duration_ms:.0f} ms"
    return f"{what} → {attempt.target}: {answer}{detail} ({attempt.outcome}, {took})"

