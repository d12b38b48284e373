"""An account's own disconnected periods (issue 35 item 4): the gateway was up and its listener listening, but the
account's link to WhatsApp was not. The connection events the listener stores say when it went down and came back
(WuzAPI Disconnected/LoggedOut/Connected, Z-API DisconnectedCallback/ConnectedCallback, as the alerts read them;
Evolution's `connection.update` close/open, as tui.gateways.evolution.connection reads it); each period is kept in
the store (`account_outages`), and when it ends, that account's family is caught up for it with the same machinery
as a listener's own gap (tui.core.catchup.recovery): stored once, marked recovered, said in one line.

    outages = OutageCatchUp(store, clients_for, report)   # the listener's on_event hands it every stored event
                                                          # clients_for(inbox, family) -> AccountClients | None
    outages.observe(event)
    await outages.stop()
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import sqlite3
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from tui.core.catchup.runs import Gap

if TYPE_CHECKING:
    from tui.core.catchup.accounts import AccountClients
    from tui.core.catchup.recovery import CatchUp
    from tui.webhooks.events import StoredEvent
    from tui.webhooks.store import EventStore

log = logging.getLogger(__name__)

OUTAGES_SCHEMA = """CREATE TABLE IF NOT EXISTS account_outages (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    account TEXT NOT NULL,              -- the inbox's account ("" in a store of one account)
    family TEXT NOT NULL,               -- the path family the events came on: instance, session
    down_us INTEGER NOT NULL,           -- when the gateway said it was disconnected
    up_us INTEGER,                      -- when it said it was connected again; NULL: still down
    how TEXT NOT NULL                   -- the event that said it went down
)"""

ClientsFor = Callable[[str, str], Awaitable["AccountClients | None"]]
"""The clients of an account's inbox and family to read its history with (None: not one this listener knows)."""


def link_said(event: StoredEvent) -> bool | None:
    """True: the event says the account is connected again; False: disconnected (or logged out); None: it says
    neither (not a connection event, a rejected one, or Evolution's `connecting`)."""
    from tui.api.connection import ConnectionState
    from tui.core.watch import LINK_KINDS, Link
    from tui.gateways.evolution.connection import evolution_event, state_after

    if event.rejected:
        return None  # a forged "Connected" opens no catch-up
    evolution = evolution_event(event.payload)
    if evolution is not None:
        name, data = evolution
        new = state_after(name, data, ConnectionState(connected=False, logged_in=True))
        if name != "connection.update" or new is None:
            return None
        return True if new.connected else False if data.get("state") == "close" else None
    link = LINK_KINDS.get(event.kind)
    return None if link is None else link is Link.CONNECTED


def link_changed(connection: sqlite3.Connection, account: str, family: str, connected: bool, at_us: int,
                 how: str) -> Gap | None:
    """Inside the store's write: a period opened by a disconnect (once, however often the gateway repeats it), or
    closed by a connect; the closed period is returned (None otherwise)."""
    connection.execute(OUTAGES_SCHEMA)
    open_period = connection.execute(
        "SELECT id, down_us FROM account_outages WHERE account = ? AND family = ? AND up_us IS NULL "
        "ORDER BY id DESC LIMIT 1", (account, family)).fetchone()
    if not connected:
        if open_period is None:
            connection.execute("INSERT INTO account_outages(account, family, down_us, how) VALUES (?, ?, ?, ?)",
                               (account, family, at_us, how))
        return None
    if open_period is None:
        return None
    period, down_us = open_period
    up_us = max(at_us, down_us)
    connection.execute("UPDATE account_outages SET up_us = ? WHERE id = ?", (up_us, period))
    return Gap(_at(down_us), _at(up_us))


class OutageCatchUp:
    """Records each account's disconnected periods from the events a listener stores, in their order, and catches an
    account up for a period when it ends. `clients_for(inbox, family)` gives its clients; `report` hears each
    result (listen's line, the inbox's redraw). Events may be handed over from any thread."""

    def __init__(self, store: EventStore, clients_for: ClientsFor, report: Callable[[CatchUp], None], *,
                 inbox_of: Callable[[str | None], str] = lambda account: account or "") -> None:
        self.store = store
        self.inbox_of = inbox_of  # an event's account -> its inbox in the store (the old paths': "")
        self.clients_for = clients_for
        self.report = report
        self._loop = asyncio.get_running_loop()
        self._queue: asyncio.Queue[tuple[str, str, bool, int, str]] = asyncio.Queue()
        self._worker = self._loop.create_task(self._work(), name="catch up disconnected periods")

    def observe(self, event: StoredEvent) -> None:
        from tui.core.watch import where_from

        connected = link_said(event)
        if connected is None:
            return
        account, family = where_from(event)
        if family is None:
            return
        change = (self.inbox_of(account), family, connected, int(event.received_at.timestamp() * 1_000_000), event.kind)
        self._loop.call_soon_threadsafe(self._queue.put_nowait, change)

    async def stop(self) -> None:
        self._worker.cancel()
        with contextlib.suppress(BaseException):
            await self._worker

    async def _work(self) -> None:
        from tui.core.catchup.accounts import catch_up_accounts

        while True:
            account, family, connected, at_us, how = await self._queue.get()
            try:
                gap = await asyncio.to_thread(self.store.write, functools.partial(
                    link_changed, account=account, family=family, connected=connected, at_us=at_us, how=how))
                if gap is None:
                    continue
                clients = await self.clients_for(account, family)
                if clients is None:
                    continue
                for result in await catch_up_accounts(self.store, gap, [clients]):
                    self.report(result)
            except Exception as error:  # a failing store or profile: the period stays uncaught, the listener goes on
                log.warning("catch-up of a disconnected period (%s, %s): %s", account or "this account", family, error)


def _at(micros: int) -> datetime:
    return datetime.fromtimestamp(micros / 1_000_000, UTC)
