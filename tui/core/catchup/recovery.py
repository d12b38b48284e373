"""Storing what a gateway's history lists for a gap: each message once (by its id, as the inbox keys messages, so a
webhook re-delivering it later adds nothing), marked recovered, never as an event (it carries no signature, so it
never passes for a signed one); one note per account and gap for the inbox's line."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, tzinfo
from typing import TYPE_CHECKING

from tui.api.history import HistoryUnreadable, ListedMessage
from tui.core.catchup.runs import Gap

if TYPE_CHECKING:
    from tui.gateways.wuzapi.history import Fetch
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
        missing TEXT                    -- why (part of) the gap could not be recovered; NULL: nothing missing
    )""",
)
LISTING_DIALECTS = frozenset({"wuzapi"})
"""The dialects whose gateway lists recent messages that we read: WuzAPI's /chat/history. Evolution's findMessages
and Z-API's /chat-messages/{phone} list them too and are not read yet: their gaps are named."""


@dataclass(frozen=True)
class CatchUp:
    account: str
    gap: Gap
    recovered: int
    missing: str | None

    def words(self, zone: tzinfo | None = None) -> str:
        """The inbox's line: "12 messages recovered from 03:10–03:42", or the gap named."""
        span = self.gap.words(zone)
        if self.missing is not None and not self.recovered:
            return f"messages from {span} could not be recovered: {self.missing}"
        said = f"{self.recovered} message{'s' if self.recovered != 1 else ''} recovered from {span}"
        return f"{said}; some could not be: {self.missing}" if self.missing else said


async def catch_up(store: EventStore, account: str, gap: Gap, fetch: Fetch | None, *, family: str,
                   dialect: str) -> CatchUp:
    """Recover `account`'s messages of `gap` from its `dialect`'s history through `fetch` (the account's GET), store
    them and the note. A dialect that lists none, or a history the gateway refuses, is a named gap."""
    missing: str | None = None
    listed: list[ListedMessage] = []
    if dialect not in LISTING_DIALECTS or fetch is None:
        missing = f"the {dialect} dialect lists no history here"
    else:
        from tui.gateways.wuzapi.history import list_since

        try:
            listed = await list_since(fetch, gap.start)
        except HistoryUnreadable as refused:
            missing = str(refused)
        except Exception as error:  # the gateway was not there or said no: the gap stays named
            missing = f"{family} history not read: {str(error).splitlines()[0] if str(error) else type(error).__name__}"
    return await asyncio.to_thread(store.write, lambda connection: store_recovered(
        connection, account, gap, listed, missing))


def store_recovered(connection: sqlite3.Connection, account: str, gap: Gap, listed: Iterable[ListedMessage],
                    missing: str | None = None) -> CatchUp:
    """Inside the store's write: the messages of `listed` within `gap` not stored yet, and the note."""
    from tui.webhooks import inbox_sql
    from tui.webhooks.inbox_changes import NewMessage, chat_id_of, is_group

    for statement in RECOVERY_SCHEMA:
        connection.execute(statement)
    recovered = 0
    for message in sorted(listed, key=lambda message: message.at):
        if not gap.start <= message.at <= gap.end:
            continue
        chat = chat_id_of(message.chat_jid)
        sender = chat_id_of(message.sender) if message.sender and is_group(chat) else None
        new = NewMessage(chat, message.from_me, message.kind, message.text or f"[{message.kind}]",
                         message.message_id, sender)
        if inbox_sql.add_message(connection, new, _us(message.at), None, account):
            connection.execute("INSERT OR IGNORE INTO recovered_messages(account, chat_id, message_id) VALUES (?, ?, ?)",
                               (account, chat, message.message_id))
            recovered += 1
    connection.execute("INSERT INTO catch_up_notes(account, start_us, end_us, recovered, missing) VALUES (?, ?, ?, ?, ?)",
                       (account, _us(gap.start), _us(gap.end), recovered, missing))
    return CatchUp(account, gap, recovered, missing)


def recovered_ids(connection: sqlite3.Connection, account: str, chat_id: str) -> set[str]:
    """The message ids of a chat that came by catch-up (the thread marks them); a reader's query: none before the
    first catch-up made the table."""
    if connection.execute("SELECT 1 FROM sqlite_master WHERE name = 'recovered_messages'").fetchone() is None:
        return set()
    return {row[0] for row in connection.execute(
        "SELECT message_id FROM recovered_messages WHERE account = ? AND chat_id = ?", (account, chat_id))}


def _us(at: datetime) -> int:
    return int(at.timestamp() * 1_000_000)
