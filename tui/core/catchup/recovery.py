"""Storing what a gateway's history lists for a gap: each message once (by its id, as the inbox keys messages, so a
webhook re-delivering it later adds nothing), marked recovered, never as an event (it carries no signature, so it
never passes for a signed one); one note per account and gap for the inbox's line."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, tzinfo
from typing import TYPE_CHECKING

from tui.api.history import HistoryCutShort, ListedMessage
from tui.core.catchup.runs import Gap

if TYPE_CHECKING:
    from tui.gateways.history import HistoryLister
    from tui.webhooks.store import EventStore

RECOVERY_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS recovered_messages (
        account TEXT NOT NULL,
        chat_id TEXT NOT NULL,
        message_id TEXT NOT NULL,
        PRIMARY KEY (account, chat_id, message_id)
    ) WITHOUT ROWID""",
    """CREATE TABLE IF NOT EXISTS catch_up_notes (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        account TEXT NOT NULL,
        start_us INTEGER NOT NULL,
        end_us INTEGER NOT NULL,
        recovered INTEGER NOT NULL,
        missing TEXT,                   -- why (part of) the gap could not be recovered; NULL: nothing missing
        gateway TEXT                    -- whose history was read ("WuzAPI", "Z-API", ...)
    )""",
)
NO_LISTING = "it has no call that lists messages"


@dataclass(frozen=True)
class CatchUp:
    account: str
    gap: Gap
    recovered: int
    missing: str | None
    gateway: str = ""

    def words(self, zone: tzinfo | None = None) -> str:
        """The inbox's line: "12 messages recovered from 03:10–03:42", or the gap named ("no history from Z-API for
        03:10–03:42 (why)")."""
        span = self.gap.words(zone)
        if self.missing is not None and not self.recovered:
            return f"no history from {self.gateway or 'the gateway'} for {span} ({self.missing})"
        said = f"{self.recovered} message{'s' if self.recovered != 1 else ''} recovered from {span}"
        return f"{said}; the rest could not be ({self.missing})" if self.missing else said


async def catch_up(store: EventStore, account: str, gap: Gap, lister: HistoryLister | None, *,
                   gateway: str = "") -> CatchUp:
    """Recover `account`'s messages of `gap` through `lister` (its gateway's history, read by its client), store
    them and the note. No lister (a gateway without the call: `gateway` names it), or a history the gateway
    refuses, is a named gap."""
    missing: str | None = None
    listed: list[ListedMessage] = []
    if lister is None:
        missing = NO_LISTING
    else:
        gateway = lister.gateway
        try:
            listed = await lister.list_since(gap.start)
        except HistoryCutShort as cut:
            listed, missing = cut.listed, str(cut)
        except Exception as error:  # the gateway was not there, said no, or keeps none: the gap stays named
            missing = str(error).splitlines()[0] if str(error) else type(error).__name__
    return await asyncio.to_thread(store.write, lambda connection: store_recovered(
        connection, account, gap, listed, missing, gateway))


def _ensure_schema(connection: sqlite3.Connection) -> None:
    for statement in RECOVERY_SCHEMA:
        connection.execute(statement)
    columns = {row[1] for row in connection.execute("PRAGMA table_info(catch_up_notes)")}
    if "gateway" not in columns:  # a store whose notes table came before the gateway was named
        connection.execute("ALTER TABLE catch_up_notes ADD COLUMN gateway TEXT")


def store_recovered(connection: sqlite3.Connection, account: str, gap: Gap, listed: Iterable[ListedMessage],
                    missing: str | None = None, gateway: str = "") -> CatchUp:
    """Inside the store's write: the messages of `listed` within `gap` not stored yet, and the note."""
    from tui.webhooks import inbox_sql
    from tui.webhooks.inbox_changes import NewMessage, chat_id_of, is_group

    _ensure_schema(connection)
    recovered = 0
    since = gap.start.replace(microsecond=0)  # a gateway's whole seconds (Evolution): the same second counts; the
    # message ids keep one seen live just before the stop from coming twice
    for message in sorted(listed, key=lambda message: message.at):
        if not since <= message.at <= gap.end:
            continue
        chat = chat_id_of(message.chat_jid)
        sender = chat_id_of(message.sender) if message.sender and is_group(chat) else None
        new = NewMessage(chat, message.from_me, message.kind, message.text or f"[{message.kind}]",
                         message.message_id, sender)
        if inbox_sql.add_message(connection, new, _us(message.at), None, account):
            # under the chat the inbox put it in (a person's phone chat for their LID's message): the thread's mark
            connection.execute("INSERT OR IGNORE INTO recovered_messages(account, chat_id, message_id) VALUES (?, ?, ?)",
                               (account, inbox_sql.same_person_chat(connection, chat, account), message.message_id))
            recovered += 1
    connection.execute("INSERT INTO catch_up_notes(account, start_us, end_us, recovered, missing, gateway) "
                       "VALUES (?, ?, ?, ?, ?, ?)", (account, _us(gap.start), _us(gap.end), recovered, missing, gateway))
    return CatchUp(account, gap, recovered, missing, gateway)


def recovered_ids(connection: sqlite3.Connection, account: str, chat_id: str) -> set[str]:
    """The message ids of a chat that came by catch-up (the thread marks them); a reader's query: none before the
    first catch-up made the table."""
    if connection.execute("SELECT 1 FROM sqlite_master WHERE name = 'recovered_messages'").fetchone() is None:
        return set()
    return {row[0] for row in connection.execute(
        "SELECT message_id FROM recovered_messages WHERE account = ? AND chat_id = ?", (account, chat_id))}


def newest_notes(connection: sqlite3.Connection, account: str) -> list[CatchUp]:
    """What the newest catch-up of `account` said, one per gateway read, when it recovered something or named a
    gap (a gap with nothing missed says nothing); a reader's query: [] before the first catch-up."""
    try:
        newest = connection.execute("SELECT max(end_us) FROM catch_up_notes WHERE account = ?", (account,)).fetchone()
        if newest is None or newest[0] is None:
            return []
        rows = connection.execute(
            """SELECT start_us, end_us, recovered, missing, gateway FROM catch_up_notes
               WHERE account = ? AND end_us = ? AND (recovered > 0 OR missing IS NOT NULL) ORDER BY id""",
            (account, newest[0])).fetchall()
    except sqlite3.OperationalError:  # no catch-up yet (no table), or one from before the gateway was named
        return []
    return [CatchUp(account, Gap(_at(start), _at(end)), recovered, missing, gateway or "")
            for start, end, recovered, missing, gateway in rows]


def _at(micros: int) -> datetime:
    return datetime.fromtimestamp(micros / 1_000_000, UTC)


def _us(at: datetime) -> int:
    return int(at.timestamp() * 1_000_000)
