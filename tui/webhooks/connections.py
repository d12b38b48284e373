"""The listener's HTTP/1.1 server: the accept loop, and what it allows a connection (the connection budget).

aiohttp's server took about 30 µs of the listener's ~75 µs per webhook on the request path alone (README, issue 13);
the listener needs a small part of HTTP (a POST with a body, a one-piece JSON answer), so it speaks that part
itself on a well-kept parser (httptools: uvicorn's, llhttp). Each connection is an http_connection._Connection
(the framing of requests and answers); the handler sees each request as an http_request.Request.

- Proven and unproven connections. A connection is *unproven* until the handler calls Request.prove() for one of
  its requests (the listener does so when a request's signature verifies against its key). The source address
  proves nothing (behind a tunnel every sender is 127.0.0.1). An unproven connection's body bytes are counted as
  they arrive against the budget's unproven share (budget.py); when they go over it, the unproven bodies still
  arriving that have waited longest for their next bytes are cut (Shed: the handler answers 503, Retry-After)
  until they fit again, never the body whose bytes just arrived. A proven connection's path has none of this.
- Connection cap: at most `cap` connections are open (by default well under the process's file limit, so the
  store and the app always have descriptors left, and asyncio never fails an accept for want of one), and at
  most `unproven_slots` of them unproven (half the cap with a key; the whole cap without one, when nothing can
  be proven). A new connection is unproven: past either limit, the longest-stalled unproven connection makes
  room (the one that has sent nothing for the longest, among those waiting on their sender rather than on the
  handler: a request being answered is never cut); when there is none and the cap is reached, the connection
  idle the longest (connected, or answered, and no complete request head since); else the new one is answered
  503 and closed. So stalled sockets never lock an honest sender out: a fresh connection always gets in while
  any unproven one is stalled. Reaching a limit is logged once, and once more with the counts when the listener
  is back under it.
- Accepting: the server takes every connection the kernel has queued at once (no transport yet, a few microseconds
  each) and turns them into connections ADMIT_BATCH a turn, the newest first, so that a burst never keeps the
  kernel's queue full (a full queue drops an honest sender's SYN, resent only after a second) and the sender who
  came after a burst is read before it. Past the queue's depth, the oldest accepted sockets that have sent nothing
  are closed, as the longest-stalled unproven connections are; one with bytes waiting becomes a connection.
- Shedding load: cutting a request under way (an unproven body for the byte share, an unproven connection inside
  a request for a slot) or refusing one (503) is logged once ("shedding load: ..."), `on_shedding(True)` called,
  and once more, `on_shedding(False)`, when SHED_CALM seconds passed without any.

Interfaces: the handler sees a Request (its head, `read`, `proven`/`prove`, `expendable`); a Request sees its
connection only as a BodySource (`admit`, `prove`); a connection sees the Server only through its public
bookkeeping methods (`connected`, `disconnected`, `busy`, `idle`, `stirred`, `body_arrived`, `release`,
`proven`); the Server drives a connection through `stop`, `cut` and `close`.
"""

from __future__ import annotations

import asyncio
import logging
import os
import resource
import socket
from collections import deque
from collections.abc import Callable, Iterable

from tui.webhooks.budget import ByteBudget
from tui.webhooks.http_connection import MAX_FIELD, _Connection
from tui.webhooks.http_request import Handler, Request, Shed

HEADER_TIMEOUT = 10.0
DEFAULT_MAX_CONNECTIONS = 512
# Descriptors left for everything else in the process: SQLite's files, the app's own sockets, forwarding.
FD_RESERVE = 64
# How many accepted sockets become connections (a transport and a task each, 50-150 µs) per turn of the loop, before
# any of them reaches connection_made (where the cap is applied). Up to two such batches can be open beside the cap
# before the connections they replace are closed, so the cap leaves room for them under the file limit.
LISTEN_BACKLOG = 64
ADMIT_BATCH = LISTEN_BACKLOG
# The kernel's queue of connections waiting to be accepted (capped by net.core.somaxconn), and as many accepted
# sockets waiting to become connections (Server._pending): a full kernel queue drops every SYN, an honest sender's
# too, and TCP sends it again only after a second. Only as deep as the file limit allows (accept_queue_depth).
ACCEPT_QUEUE = 1024
# Connections taken off the kernel's queue per readiness of the listening socket (a few microseconds each: no
# transport yet); the oldest idle ones past the queue's depth are closed as they come (Server._trim_pending).
ACCEPT_BURST = 4096
ACCEPT_RETRY = 0.1  # seconds before accepting again after accept itself failed (EMFILE...)
# After the cap was reached, "back under it" means this fraction of the cap (so a flood is not logged twice).
UNDER_CAP_AGAIN = 0.5
UNPROVEN_SLOTS = 2
# A connection that has sent nothing yet is closed for room only after this many seconds (or when no other can be).
FIRST_BYTES = 1.0
# Connections looked at to find the longest-stalled unproven one (Server._longest_stalled): a few, never all.
STALLED_SCAN = 8
# Shedding load is reported over when nothing was shed for this many seconds.
SHED_CALM = 30.0

_FRAMING_HEADERS = ("content-length", "transfer-encoding", "expect")

log = logging.getLogger(__name__)


def connection_cap(requested: int | None = None) -> int:
    """The cap to use: `requested` (or the default), lowered to leave FD_RESERVE descriptors of the soft limit."""
    cap = requested if requested is not None else DEFAULT_MAX_CONNECTIONS
    if cap < 1:
        raise ValueError("the connection cap must be at least 1")
    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY:
        spare = FD_RESERVE + 2 * LISTEN_BACKLOG
        room = soft - spare if soft >= 2 * spare else soft // 4
        cap = min(cap, max(1, room))
    return cap


def accept_queue_depth(cap: int) -> int:
    """How deep the kernel's accept queue may be beside `cap` connections: ACCEPT_QUEUE, less what the soft file
    limit cannot hold once the cap, FD_RESERVE and two accept batches are counted; never below LISTEN_BACKLOG.

    Under a 256-file limit (cap 64) a 1024-deep queue let a flood of idle sockets be accepted faster than the ones
    they replaced were closed, and asyncio ran out of descriptors (tests/webhooks/test_hostile_http.py)."""
    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return ACCEPT_QUEUE
    return max(LISTEN_BACKLOG, min(ACCEPT_QUEUE, soft - cap - FD_RESERVE - 2 * LISTEN_BACKLOG))


class Server:
    """The HTTP server: accepts connections under the cap, hands each request to `handler`.

    `budget` holds the unproven share of body bytes (budget.py); `keyed` says whether any connection can be proven
    (the listener has a key), which sets the unproven connections' share of the slots (set_keyed)."""

    def __init__(
        self,
        handler: Handler,
        *,
        cap: int,
        budget: ByteBudget,
        keyed: bool = True,
        header_timeout: float = HEADER_TIMEOUT,
        kept_headers: Iterable[str] = (),
        value_limit: int = MAX_FIELD,
        on_shedding: Callable[[bool], None] | None = None,
    ) -> None:
        self.handler = handler
        self.cap = cap
        self.budget = budget
        self.unproven_slots = cap
        self.header_timeout = header_timeout
        self.value_limit = value_limit  # header values are cut to this many bytes
        self.kept_headers = {name.lower().encode(): name.lower() for name in (*kept_headers, *_FRAMING_HEADERS)}
        self.loop = asyncio.get_running_loop()
        self._server: asyncio.base_events.Server | None = None
        self._listening: list[socket.socket] = []  # our duplicates of the server's sockets, which we accept on
        self._pending: deque[socket.socket] = deque()  # accepted, not yet connections (oldest first)
        self._pending_limit = LISTEN_BACKLOG
        self._admitting = False
        self._admissions: set[asyncio.Task[tuple[asyncio.Transport, _Connection]]] = set()
        self._open: set[_Connection] = set()
        # Connections outside a request, oldest first: a dict keeps insertion order and each one is re-inserted
        # when it becomes idle again, so the first key is always the one idle the longest.
        self._idle_order: dict[_Connection, None] = {}
        # Unproven connections, the one that has sent nothing for the longest first (re-inserted on every read).
        self._unproven: dict[_Connection, None] = {}
        # The unproven connections that have sent something, in the same order (the longest silent first).
        self._heard: dict[_Connection, None] = {}
        # Unproven requests whose bodies are still arriving, the one that has waited longest for bytes first.
        self._arriving: dict[Request, None] = {}
        self._at_cap = False
        self.closed_for_room = 0  # since the cap was last reached
        self.refused = 0
        self.on_shedding = on_shedding
        self.shedding = False
        self.shed_count = 0  # requests cut or refused since shedding was last reported
        self._last_shed = 0.0
        self.set_keyed(keyed)

    def set_keyed(self, keyed: bool) -> None:
        self.unproven_slots = max(1, self.cap // UNPROVEN_SLOTS) if keyed else self.cap

    async def start(self, host: str, port: int, *, backlog: int = LISTEN_BACKLOG) -> int:
        # asyncio makes the listening sockets (names, families, SO_REUSEADDR) but does not accept on them: it took
        # `backlog` connections a turn, each through a task, so a burst of 10,000 filled the kernel's queue, whose
        # full state drops every SYN, an honest sender's too, and TCP sends it again only after a second (issue 37,
        # item 7: every honest request over 1 s coincided with ListenOverflows). The server drains the kernel's
        # queue itself (_accept_ready), through duplicates of asyncio's descriptors.
        self._server = await self.loop.create_server(
            lambda: _Connection(self), host, port, reuse_address=True, backlog=backlog, start_serving=False
        )
        self._pending_limit = max(backlog, accept_queue_depth(self.cap))
        for listening in self._server.sockets:
            duplicate = socket.socket(fileno=os.dup(listening.fileno()))
            duplicate.setblocking(False)
            duplicate.listen(self._pending_limit)
            self._listening.append(duplicate)
            self.loop.add_reader(duplicate.fileno(), self._accept_ready, duplicate)
        return int(self._server.sockets[0].getsockname()[1])

    def _accept_ready(self, listening: socket.socket) -> None:
        """Take every connection the kernel has queued (a few microseconds each, no transport yet) into `_pending`,
        and let the loop turn them into connections a batch at a time, newest first (_admit_pending)."""
        pending = self._pending
        for _ in range(ACCEPT_BURST):
            try:
                accepted, _address = listening.accept()
            except (BlockingIOError, InterruptedError):
                break
            except ConnectionAbortedError:
                continue
            except OSError as error:  # out of descriptors or memory: pause rather than spin on the error
                log.warning("accepting a connection failed (%s); accepting again in %g s", error, ACCEPT_RETRY)
                self.loop.remove_reader(listening.fileno())
                self.loop.call_later(ACCEPT_RETRY, self._accept_again, listening)
                break
            accepted.setblocking(False)
            pending.append(accepted)
            if len(pending) > self._pending_limit:
                self._trim_pending()  # as they come: the descriptors they hold are counted under the file limit
        if pending and not self._admitting:
            self._admitting = True
            self.loop.call_soon(self._admit_pending)

    def _accept_again(self, listening: socket.socket) -> None:
        if listening in self._listening:
            self.loop.add_reader(listening.fileno(), self._accept_ready, listening)

    def _trim_pending(self) -> None:
        """Past `_pending_limit` (the descriptors the file limit leaves: accept_queue_depth), the connections
        accepted longest ago and never read make room: closed when they have sent nothing yet, as the longest-stalled
        unproven connections are (a flood's idle sockets); one with bytes waiting is a sender on its way and becomes
        a connection instead."""
        pending = self._pending
        while len(pending) > self._pending_limit:
            oldest = pending.popleft()
            try:
                waiting = oldest.recv(1, socket.MSG_PEEK)
            except (BlockingIOError, InterruptedError):
                waiting = b""
                self._reached_cap()
                self.closed_for_room += 1
            except OSError:
                waiting = b""
            if waiting:
                self._admit(oldest)
            else:
                oldest.close()

    def _admit_pending(self) -> None:
        """Turn up to ADMIT_BATCH accepted sockets into connections, the newest first: after a burst, the sender who
        came last (an honest one, whose request is already on its way) is read before the burst's idle sockets, which
        the cap would close for room anyway. One batch a turn, so that the kernel's queue is drained in between."""
        pending = self._pending
        for turn in range(min(ADMIT_BATCH, len(pending))):
            # Newest and oldest in turn: the newest sender is still read first, and one accepted while newer sockets
            # keep coming (a flood that reconnects) is not buried under them (newest-only starved it past 1 s).
            self._admit(pending.pop() if turn % 2 == 0 else pending.popleft())
        if pending and self._listening:
            self.loop.call_soon(self._admit_pending)
        else:
            self._admitting = False

    def _admit(self, accepted: socket.socket) -> None:
        task = self.loop.create_task(self.loop.connect_accepted_socket(lambda: _Connection(self), accepted))
        self._admissions.add(task)
        task.add_done_callback(lambda done: self._admitted(done, accepted))

    def _admitted(self, task: asyncio.Task[tuple[asyncio.Transport, _Connection]], accepted: socket.socket) -> None:
        self._admissions.discard(task)
        if task.cancelled():
            accepted.close()  # stopped before it became a connection (closing twice is harmless)
        elif task.exception() is not None:
            log.debug("a connection was gone before it could be served: %s", task.exception())
            accepted.close()

    @property
    def open_connections(self) -> int:
        return len(self._open)

    @property
    def unproven_connections(self) -> int:
        return len(self._unproven)

    @property
    def requests_waiting(self) -> int:
        """Requests whose head has arrived and that are not answered yet, on every connection."""
        return sum(connection.requests_waiting for connection in self._open)

    async def stop(self, grace: float) -> None:
        """Stop accepting; close idle connections and requests nothing of which is stored yet; let the others be
        answered for up to `grace` seconds, then close everything."""
        for listening in self._listening:
            self.loop.remove_reader(listening.fileno())
            listening.close()
        self._listening.clear()
        while self._pending:
            self._pending.pop().close()
        for admission in list(self._admissions):
            admission.cancel()
        if self._server is not None:
            self._server.close()
        for connection in list(self._open):
            connection.stop()
        tasks = [connection.task for connection in self._open if connection.task is not None]
        if tasks:
            await asyncio.wait(tasks, timeout=grace)
        for connection in list(self._open):
            connection.close()
        self._open.clear()
        self._idle_order.clear()
        self._unproven.clear()
        self._heard.clear()
        self._arriving.clear()

    # -- bookkeeping, called by the connections ------------------------------------------------------------------

    def connected(self, connection: _Connection) -> None:
        self._open.add(connection)
        self._idle_order[connection] = None
        self._unproven[connection] = None
        if len(self._open) > self.cap or len(self._unproven) > self.unproven_slots:
            self._make_room(connection)

    def disconnected(self, connection: _Connection) -> None:
        self._forget(connection)
        if (
            self._at_cap
            and len(self._open) <= self.cap * UNDER_CAP_AGAIN
            and len(self._unproven) <= self.unproven_slots * UNDER_CAP_AGAIN
        ):
            self._at_cap = False
            log.warning(
                "open connections back under the cap of %d (%d for unverified ones): %d connections were closed "
                "to make room, %d new ones refused",
                self.cap,
                self.unproven_slots,
                self.closed_for_room,
                self.refused,
            )
            self.closed_for_room = self.refused = 0

    def busy(self, connection: _Connection) -> None:
        self._idle_order.pop(connection, None)

    def idle(self, connection: _Connection) -> None:
        if connection in self._open:
            self._idle_order[connection] = None
            if not connection.proven:
                self.stirred(connection)

    def stirred(self, connection: _Connection) -> None:
        """An unproven connection received bytes (or was answered): it is the least stalled now."""
        unproven = self._unproven
        if connection in unproven:
            del unproven[connection]
            unproven[connection] = None
            if connection.heard:
                heard = self._heard
                heard.pop(connection, None)
                heard[connection] = None

    def proven(self, connection: _Connection) -> None:
        self._unproven.pop(connection, None)
        self._heard.pop(connection, None)

    def body_arrived(self, request: Request, size: int) -> None:
        """`size` bytes of an unproven request's body arrived: count them, and keep the unproven bodies within their
        share by cutting the ones that have waited longest for their next bytes (never this one)."""
        request.held += size
        arriving = self._arriving
        arriving.pop(request, None)
        arriving[request] = None
        if self.budget.arrived(size):
            for stalled in list(arriving):
                if not self.budget.unproven_over:
                    break
                if stalled is not request:
                    self.release(stalled)
                    stalled.fail(Shed())  # its handler answers 503 and closes
                    self.shed(
                        f"an unverified body was cut (503): unverified bodies held more than their share of "
                        f"{self.budget.unproven_capacity} bytes"
                    )

    def body_complete(self, request: Request) -> None:
        self._arriving.pop(request, None)

    def release(self, request: Request) -> None:
        """The request's bytes are no longer held (answered, failed or dropped)."""
        if request.held:
            self.budget.left(request.held)
            request.held = 0
        self._arriving.pop(request, None)

    # -- making room ---------------------------------------------------------------------------------------------

    def _reached_cap(self) -> None:
        """Log, once until the listener is back under it, that connections now make room for new ones."""
        if self._at_cap:
            return
        self._at_cap = True
        if len(self._open) > self.cap:
            log.warning(
                "%d connections open, the cap: each new one now replaces the longest-stalled unverified "
                "connection or the longest-idle one, or is refused (503) while all are inside a request",
                self.cap,
            )
        else:
            log.warning(
                "%d unverified connections open, their share of the cap of %d: each new one now replaces the "
                "longest-stalled unverified connection, or is refused (503) while all are inside a request",
                self.unproven_slots,
                self.cap,
            )

    def _make_room(self, newcomer: _Connection) -> None:
        self._reached_cap()
        stalled = self._longest_stalled(newcomer)
        if stalled is not None:
            self._close_for_room(stalled)
            return
        if len(self._open) <= self.cap:
            return  # every unproven connection is still to be read: the newcomer waits its turn past the share
        oldest = next(iter(self._idle_order))
        if oldest is not newcomer:
            self._close_for_room(oldest)
            return
        self._forget(newcomer)
        newcomer.refuse()
        self.refused += 1
        self.shed("a new connection was refused (503): every connection slot is inside a request")

    def _longest_stalled(self, newcomer: _Connection) -> _Connection | None:
        """The unproven connection to close for room: the one silent the longest among those that sent something
        or had FIRST_BYTES seconds to (a connection accepted under a flood may not have been read yet: its request
        is on the way); failing that, at the cap only, the one silent the longest (below the cap the newcomer is let
        in past the share instead). Never one whose request the handler has.

        Looks at a few connections, never all: `_unproven` is in order of last activity, so once its first one
        waiting on its sender is a young silent one, every later one is younger or has sent something, and of
        those the longest silent is the first of `_heard`. Scanning them all for every newcomer cost 0.5 ms per
        connection under a 10,000-connection flood, and an honest sender queued behind it waited seconds (issue 37)."""
        young_after = self.loop.time() - FIRST_BYTES
        fallback = None
        for scanned, connection in enumerate(self._unproven):
            if scanned >= STALLED_SCAN:
                break
            if connection is newcomer or not connection.waiting_on_sender:
                continue
            if connection.heard or connection.connected_at <= young_after:
                return connection
            fallback = connection
            break
        for scanned, connection in enumerate(self._heard):
            if scanned >= STALLED_SCAN:
                break
            if connection is not newcomer and connection.waiting_on_sender:
                return connection
        return fallback if len(self._open) > self.cap else None

    def _close_for_room(self, connection: _Connection) -> None:
        if connection.requests_waiting:
            self.shed("an unverified connection stalled inside a request was closed (503) to make room")
        self._forget(connection)
        connection.cut()
        self.closed_for_room += 1

    def _forget(self, connection: _Connection) -> None:
        self._open.discard(connection)
        self._idle_order.pop(connection, None)
        self._unproven.pop(connection, None)
        self._heard.pop(connection, None)

    # -- shedding load -------------------------------------------------------------------------------------------

    def shed(self, what: str) -> None:
        """A request was cut or refused to keep room for others: said once (log and on_shedding), until SHED_CALM
        seconds pass without any."""
        self.shed_count += 1
        self._last_shed = self.loop.time()
        if self.shedding:
            return
        self.shedding = True
        log.warning(
            "shedding load: %s; unverified senders are cut or refused first, signed senders on their connections "
            "keep their room (said once until it stops)",
            what,
        )
        self.loop.call_later(SHED_CALM, self._check_calm)
        self._report(True)

    def _check_calm(self) -> None:
        calm_at = self._last_shed + SHED_CALM
        if self.loop.time() < calm_at:
            self.loop.call_at(calm_at, self._check_calm)
            return
        self.shedding = False
        log.warning("no longer shedding load: %d requests or connections were cut or refused", self.shed_count)
        self.shed_count = 0
        self._report(False)

    def _report(self, shedding: bool) -> None:
        if self.on_shedding is not None:
            try:
                self.on_shedding(shedding)
            except Exception:
                log.exception("the shedding callback failed")
