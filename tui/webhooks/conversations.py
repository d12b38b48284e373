"""Conversations: the inbox's view of the event store (who wrote, what, what was delivered and read).

Derived at append time, so reading is cheap: every stored event that carries a message, a status or a typing
notice updates the inbox's tables in the same transaction as the event itself (tui.webhooks.inbox_sql, whose
docstring describes them), and every message the app or `gateway-tui call` sends is recorded beside them
(`tui.webhooks.sent`). What an event (or a gateway's contact, chat and group lists) means for the inbox is read in
tui.webhooks.inbox_changes. This module holds the reads (the chat list, a thread, statuses, a message's timeline)
and `Inbox`, the one object the app and the CLI use.
Each account has its own inbox when several share one store (issue 26): the `account` of every row is the
profile an event came for on its own listener path (`/a/<profile>/…`), or of the app that sent; "" for a store of
one account (the old paths, and every row written before accounts were told apart). `Inbox(store, account)` reads
and writes one account's.

Only events that verify become messages: an event the listener rejected, or whose signature is missing or
wrong, is kept in the event store (the Events section shows it) but never appears here. With no key set
nothing can be verified and events count as they come (verdict `no-key`).

No Textual here; readers are plain synchronous functions over a sqlite3 connection (the store lends one).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import replace
from typing import Protocol, TypeVar

from tui.webhooks.identities import (
    UNKNOWN_NUMBER,
    Identity,
    has_table,
    identity_by_phone,
    identity_of,
    learn,
    phones_without_lid,
    renamed,
)
from tui.webhooks.inbox_changes import (
    ChatName,
    ListedChat,
    NameSource,
    NewMessage,
    StatusChange,
    media_info,
    payload_of,
)
from tui.webhooks.inbox_sql import (
    add_message,
    apply,
    forget_chat,
    list_chats,
    mark_seen,
    set_name,
    set_names,
)
from tui.webhooks.receipts import (  # noqa: F401 (the UI reads the marks and words here)
    LEGACY_STATUS,
    STATUS_MARKS,
    Receipt,
    Status,
    failure_of,
    receipt_of,
    stuck,
)
from tui.webhooks.rows import (  # noqa: F401 (read here by the inbox's callers)
    MEDIA_KINDS,
    ConversationRow,
    MediaInfo,
    MessageRow,
    Step,
    Timeline,
)


# -- reading -------------------------------------------------------------------------------------------------------


_CONVERSATION_COLUMNS = "chat_id, name, last_us, last_body, last_outgoing, unread, typing_us, messages"
# A LID chat's phone number, from the identities the events taught (tui.webhooks.identities); NULL in a store
# opened read-only that was written before that table.
_PHONE_COLUMN = """, (SELECT i.phone FROM identities i WHERE i.account = conversations.account
                                                        AND i.lid = conversations.chat_id)"""
_MEDIA_KIND_LIST = ", ".join(f"'{kind}'" for kind in MEDIA_KINDS)
# A media message's event (kind and payload) is read with it: the payload, never the raw body, when the store kept
# the payload apart (inline media stays in the body); the body is the payload's JSON text otherwise (small then).
_MESSAGE_COLUMNS = f"""m.id, m.chat_id, m.at_us, m.outgoing, m.kind, m.body, m.message_id, m.sender,
    CASE WHEN m.outgoing THEN s.status END,
    CASE WHEN m.outgoing THEN (SELECT t.at_us FROM message_steps t WHERE t.message_id = s.message_id
                                                                    AND t.status = s.status) END,
    m.event_id,
    CASE WHEN m.kind IN ({_MEDIA_KIND_LIST}) THEN (SELECT e.kind FROM events e WHERE e.id = m.event_id) END,
    CASE WHEN m.kind IN ({_MEDIA_KIND_LIST}) THEN (SELECT coalesce(e.payload, CAST(e.body AS TEXT)) FROM events e
                                                   WHERE e.id = m.event_id AND e.has_payload) END"""


def _conversation(row: tuple) -> ConversationRow:
    return ConversationRow(row[0], row[1], row[2], row[3], bool(row[4]), row[5], row[6], row[7],
                           row[8] if len(row) > 8 else None)


def _conversation_columns(connection: sqlite3.Connection) -> str:
    return _CONVERSATION_COLUMNS + (_PHONE_COLUMN if has_table(connection) else "")


def _message(row: tuple) -> MessageRow:
    media = None
    if row[11] is not None and row[12] is not None:
        media = media_info(row[11], payload_of(b"", row[12]), row[4])
    return MessageRow(row[0], row[1], row[2], bool(row[3]), row[4], row[5], row[6], row[7],
                      Status(row[8]) if row[8] is not None else None, row[9], row[10], media)


def list_conversations(connection: sqlite3.Connection, limit: int, *, search: str | None = None,
                       account: str = "") -> list[ConversationRow]:
    """`account`'s chats newest first (one indexed scan); with `search`, those whose name, number or messages hold
    it."""
    if not search or not search.strip():
        rows = connection.execute(
            f"""SELECT {_conversation_columns(connection)} FROM conversations WHERE account = ? AND (messages > 0 OR listed)
                ORDER BY last_us DESC LIMIT ?""",
            (account, limit),
        ).fetchall()
        return [_conversation(row) for row in rows]
    pattern = "%" + search.strip().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
    # A LID chat by the number it shows ("+5544…" as the list writes it), once the identities know it.
    digits = search.strip().removeprefix("+")
    by_phone = ("OR chat_id IN (SELECT lid FROM identities WHERE account = ?3 AND phone LIKE ?4)"
                if digits.isdigit() and has_table(connection) else "")
    rows = connection.execute(
        f"""SELECT {_conversation_columns(connection)} FROM conversations
            WHERE account = ?3 AND (messages > 0 OR listed)
                AND (name LIKE ?1 ESCAPE '\\' OR chat_id LIKE ?1 ESCAPE '\\' OR chat_id IN
                    (SELECT DISTINCT chat_id FROM chat_messages WHERE account = ?3 AND body LIKE ?1 ESCAPE '\\')
                    {by_phone})
            ORDER BY last_us DESC LIMIT ?2""",
        (pattern, limit, account, *((f"%{digits}%",) if by_phone else ())),
    ).fetchall()
    return [_conversation(row) for row in rows]


def get_conversation(connection: sqlite3.Connection, chat_id: str, account: str = "") -> ConversationRow | None:
    row = connection.execute(f"SELECT {_conversation_columns(connection)} FROM conversations WHERE account = ? AND chat_id = ?",
                             (account, chat_id)).fetchone()
    return _conversation(row) if row else None


def thread_before(
    connection: sqlite3.Connection, chat_id: str, limit: int, before: tuple[int, int] | None = None, account: str = ""
) -> list[MessageRow]:
    """Up to `limit` messages of a chat, oldest first, older than `before` (at_us, id) when given: the newest
    page when None. One range scan of the (chat_id, at_us, id) index, however long the thread."""
    if before is None:
        condition, parameters = "", (chat_id, account, limit)
    else:
        condition, parameters = "AND (m.at_us, m.id) < (?, ?)", (chat_id, account, *before, limit)  # type: ignore[assignment]
    rows = connection.execute(
        f"""SELECT {_MESSAGE_COLUMNS} FROM chat_messages m LEFT JOIN message_status s ON s.message_id = m.message_id
            WHERE m.chat_id = ? AND m.account = ? {condition} ORDER BY m.at_us DESC, m.id DESC LIMIT ?""",
        parameters,
    ).fetchall()
    return [_message(row) for row in reversed(rows)]


def thread_after(connection: sqlite3.Connection, chat_id: str, after_id: int, account: str = "") -> list[MessageRow]:
    """Messages of a chat stored after message `after_id` (live updates), oldest first."""
    rows = connection.execute(
        f"""SELECT {_MESSAGE_COLUMNS} FROM chat_messages m LEFT JOIN message_status s ON s.message_id = m.message_id
            WHERE m.chat_id = ? AND m.account = ? AND m.id > ? ORDER BY m.at_us, m.id""",
        (chat_id, account, after_id),
    ).fetchall()
    return [_message(row) for row in rows]


def statuses(connection: sqlite3.Connection, message_ids: list[str]) -> dict[str, Step]:
    """The best step of each message (with when it was reached), for the marks of a thread's sent messages."""
    if not message_ids:
        return {}
    marks = ",".join("?" * len(message_ids))
    rows = connection.execute(
        f"""SELECT s.message_id, s.status, t.at_us, t.error FROM message_status s
            LEFT JOIN message_steps t ON t.message_id = s.message_id AND t.status = s.status
            WHERE s.message_id IN ({marks})""",
        message_ids,
    )
    return {row[0]: Step(Status(row[1]), row[2], row[3]) for row in rows}


def timeline_of(connection: sqlite3.Connection, message_id: str) -> Timeline | None:
    """One message's timeline by its gateway id; None when nothing here names it. The account's own message is
    preferred when an id is also a received one's."""
    row = connection.execute(
        f"""SELECT {_MESSAGE_COLUMNS} FROM chat_messages m LEFT JOIN message_status s ON s.message_id = m.message_id
            WHERE m.message_id = ? ORDER BY m.outgoing DESC, m.id LIMIT 1""",
        (message_id,),
    ).fetchone()
    status = connection.execute("SELECT status FROM message_status WHERE message_id = ?", (message_id,)).fetchone()
    steps = tuple(
        Step(Status(step[0]), step[1], step[2])
        for step in connection.execute(
            "SELECT status, at_us, error FROM message_steps WHERE message_id = ? ORDER BY status", (message_id,))
    )
    if row is None and status is None and not steps:
        return None
    message = _message(row) if row is not None else None
    if message is not None and not message.outgoing:
        return Timeline(message_id, None, (), message)  # received, not sent: no ticks to tell
    return Timeline(message_id, Status(status[0]) if status is not None else None, steps, message)


# -- the store's inbox, for callers that hold an EventStore ---------------------------------------------------------


T = TypeVar("T")


class InboxStore(Protocol):
    """What the inbox needs of `store.EventStore`: a query on a reader, a change in its own transaction."""

    def read(self, query: Callable[[sqlite3.Connection], T]) -> T: ...

    def write(self, change: Callable[[sqlite3.Connection], T]) -> T: ...


class Inbox:
    """Reads and writes of the inbox over one event store. The reads are indexed (about a millisecond on a
    100,000-message history; the UI makes them on its event loop), except `conversations(search=...)`, which scans
    the messages' text (call it from a worker thread, as the writes).

    `store` is an `EventStore` (anything with its `read(fn)` and `write(fn)`); `account`: whose inbox, when several
    accounts share the store ("" in a store of one account)."""

    def __init__(self, store: InboxStore, account: str = "") -> None:
        self.store = store
        self.account = account

    def conversations(self, limit: int = 5000, *, search: str | None = None) -> list[ConversationRow]:
        return self.store.read(lambda c: list_conversations(c, limit, search=search, account=self.account))

    def conversation(self, chat_id: str) -> ConversationRow | None:
        return self.store.read(lambda c: get_conversation(c, chat_id, self.account))

    def thread(self, chat_id: str, limit: int, before: tuple[int, int] | None = None) -> list[MessageRow]:
        return self.store.read(lambda c: self._named(c, thread_before(c, chat_id, limit, before, self.account)))

    def thread_after(self, chat_id: str, after_id: int) -> list[MessageRow]:
        return self.store.read(lambda c: self._named(c, thread_after(c, chat_id, after_id, self.account)))

    def _named(self, connection: sqlite3.Connection, rows: list[MessageRow]) -> list[MessageRow]:
        """A group message's writer kept as "unknown number (lid …)" reads as the number learned since (a later
        event, the group's member list, the gateway's look-up)."""
        if not any(row.sender and UNKNOWN_NUMBER in row.sender for row in rows) or not has_table(connection):
            return rows

        def known(lid: str) -> Identity | None:
            return identity_of(connection, lid, self.account)

        return [replace(row, sender=renamed(row.sender, known)) if row.sender and UNKNOWN_NUMBER in row.sender else row
                for row in rows]

    def statuses(self, message_ids: list[str]) -> dict[str, Step]:
        return self.store.read(lambda c: statuses(c, message_ids))

    def timeline(self, message_id: str) -> Timeline | None:
        """One message's steps (`timeline_of`)."""
        return self.store.read(lambda c: timeline_of(c, message_id))

    def record(self, message: NewMessage, at_us: int) -> bool:
        """Store one of the account's own messages (or seeded history)."""
        return self.store.write(lambda c: add_message(c, message, at_us, None, self.account))

    def name(self, chat_id: str, name: str, source: NameSource) -> None:
        self.store.write(lambda c: set_name(c, chat_id, name, source, self.account))

    def enrich(self, names: list[ChatName], chats: list[ListedChat]) -> int:
        """What the gateway's lists say, in one transaction: chat names, and the chats it lists (shown even with
        no message here). Returns how many names were given."""
        def write(connection: sqlite3.Connection) -> int:
            list_chats(connection, chats, self.account)
            return set_names(connection, names, self.account)

        return self.store.write(write) if names or chats else 0

    def set_status(self, message_ids: list[str], status: Status, at_us: int = 0) -> None:
        """Messages reached `status` at `at_us` (0: when is not known)."""
        self.store.write(lambda c: apply(c, [StatusChange(tuple(message_ids), status)], at_us, None, self.account))

    def mark_seen(self, chat_id: str) -> None:
        self.store.write(lambda c: mark_seen(c, chat_id, self.account))

    def identity(self, lid: str) -> Identity | None:
        """What the events taught of a LID (its phone number and name), or None."""
        return self.store.read(lambda c: identity_of(c, lid, self.account) if has_table(c) else None)

    def identity_by_phone(self, phone: str) -> Identity | None:
        return self.store.read(lambda c: identity_by_phone(c, phone, self.account) if has_table(c) else None)

    def learn(self, identity: Identity, at_us: int | None = None) -> None:
        """Keep what the gateway said of a LID (tui.core.lid_lookup)."""
        self.store.write(lambda c: learn(c, identity, at_us if at_us is not None else _now_us(), self.account))

    def learn_all(self, identities: list[Identity]) -> None:
        """Keep what the gateway said of several LIDs (a group's members), in one write."""
        if not identities:
            return
        at_us = _now_us()

        def keep(connection: sqlite3.Connection) -> None:
            for identity in identities:
                learn(connection, identity, at_us, self.account)

        self.store.write(keep)

    def phones_without_lid(self, limit: int) -> list[str]:
        """The numbers of the inbox's person chats whose LID is not known, newest chat first."""
        return self.store.read(lambda c: phones_without_lid(c, limit, self.account) if has_table(c) else [])

    def forget(self, chat_id: str) -> bool:
        """See `forget_chat`: a chat deleted on the gateway."""
        return self.store.write(lambda c: forget_chat(c, chat_id, self.account))


def _now_us() -> int:
    import time

    return time.time_ns() // 1000
