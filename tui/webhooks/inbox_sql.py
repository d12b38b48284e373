"""The inbox's SQL: its tables (created and upgraded in the event store's schema) and every write to them, made
inside the store's transactions.

* `chat_messages`: one row per message, incoming or outgoing, with the fields the thread shows already
  rendered (kind, text, sender name, time). A thread is one indexed range query on (chat_id, at_us, id).
* `message_status`: the best status known per gateway message id (sent < handed < delivered < read < played;
  failed). Kept apart from the message, so a receipt that arrives before the send is recorded still counts.
* `message_steps`: each step a message reached, with when it was first learned here (the send's 2xx, the status
  event's arrival) and, for a failure, the gateway's words: the message's timeline (`timeline_of`). Only what an event said is there: a read with no delivered before it has
  no delivered row, and a late or repeated event never moves a time later.
* `conversations`: one row per chat with its name, last preview, time, unread count and typing time. The list
  is one indexed query on last_us.
* `identities` (tui.webhooks.identities): who each LID is, as the events (and the gateway's look-ups) said; a
  message for one of a person's addresses goes to the chat they already have under the other (`same_person_chat`).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from dataclasses import replace

from tui.webhooks import identities
from tui.webhooks.inbox_changes import (
    Change,
    ChatName,
    Learned,
    ListedChat,
    NameSource,
    NewMessage,
    Seen,
    StatusChange,
)
from tui.webhooks.receipts import (
    LEGACY_STATUS,
    Status,
)
from tui.gateways.render import WAITING

SCHEMA = """
CREATE TABLE IF NOT EXISTS chat_messages (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    chat_id TEXT NOT NULL,              -- digits with country code, or a group JID (digits@g.us)
    at_us INTEGER NOT NULL,             -- when it was stored (microseconds since the epoch, UTC)
    outgoing INTEGER NOT NULL,          -- 1: sent by this account
    kind TEXT NOT NULL,                 -- text, buttons, list, link, poll, vote, location, sticker, contact, ...
    body TEXT NOT NULL,                 -- rendered for reading (may hold several lines)
    message_id TEXT,                    -- the gateway's id, when known
    sender TEXT,                        -- who wrote it (groups: push name or number)
    event_id INTEGER,                   -- the event it came from (NULL for the app's own sends)
    account TEXT NOT NULL DEFAULT ''    -- whose inbox ("" in a store of one account)
);
CREATE INDEX IF NOT EXISTS chat_messages_by_chat ON chat_messages(chat_id, at_us, id);
CREATE INDEX IF NOT EXISTS chat_messages_by_message_id ON chat_messages(message_id);
CREATE TABLE IF NOT EXISTS message_status (
    message_id TEXT PRIMARY KEY,
    status INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS message_steps (
    message_id TEXT NOT NULL,
    status INTEGER NOT NULL,            -- a step reached (receipts.Status)
    at_us INTEGER,                      -- when this app first learned it (the 2xx, the event's arrival); NULL: not known
    error TEXT,                         -- failed: the gateway's words
    PRIMARY KEY (message_id, status)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS conversations (
    account TEXT NOT NULL DEFAULT '',   -- whose inbox ("" in a store of one account)
    chat_id TEXT NOT NULL,
    name TEXT,                          -- best name known (see NameSource); NULL: show the number
    name_source INTEGER NOT NULL DEFAULT 0,
    last_us INTEGER NOT NULL,
    last_body TEXT NOT NULL,
    last_outgoing INTEGER NOT NULL DEFAULT 0,
    unread INTEGER NOT NULL DEFAULT 0,
    typing_us INTEGER,                  -- when the peer was last seen typing (NULL: not typing)
    messages INTEGER NOT NULL DEFAULT 0,
    listed INTEGER NOT NULL DEFAULT 0,  -- 1: the gateway's chat list has it (listed here even with no message)
    PRIMARY KEY (account, chat_id)
);
CREATE INDEX IF NOT EXISTS conversations_by_account_time ON conversations(account, last_us DESC);
"""

PREVIEW_LIMIT = 120


def preview_of(body: str) -> str:
    line = " ".join(body.split())
    return line if len(line) <= PREVIEW_LIMIT else line[: PREVIEW_LIMIT - 1] + "…"


# -- writing (inside the store's transactions) -------------------------------------------------------------------


def create_schema(connection: sqlite3.Connection) -> bool:
    """Create the inbox's tables where missing; True when the timeline's table is new in a store that already kept
    statuses (their old values are renumbered here; the caller derives the steps from the stored events)."""
    tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    upgraded = "message_status" in tables and "message_steps" not in tables
    if "conversations" in tables and "account" not in _columns(connection, "conversations"):
        _add_accounts(connection)
    pending = ""
    for line in (SCHEMA + identities.SCHEMA).splitlines(keepends=True):
        pending += line
        if sqlite3.complete_statement(pending):
            connection.execute(pending)
            pending = ""
    if "listed" not in _columns(connection, "conversations"):  # a store from before the gateway's chat lists were kept
        connection.execute("ALTER TABLE conversations ADD COLUMN listed INTEGER NOT NULL DEFAULT 0")
    if "account" not in _columns(connection, "chat_messages"):  # a store from before accounts were told apart
        connection.execute("ALTER TABLE chat_messages ADD COLUMN account TEXT NOT NULL DEFAULT ''")
    if upgraded:
        connection.execute(
            "UPDATE message_status SET status = CASE status "
            + " ".join(f"WHEN {old} THEN {int(new)}" for old, new in LEGACY_STATUS.items())
            + " ELSE status END"
        )
    return upgraded


def schema_is_current(connection: sqlite3.Connection) -> bool:
    """The inbox's tables exist with every column this version writes."""
    tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    return ("message_steps" in tables and "identities" in tables and {"listed", "account"} <= _columns(connection, "conversations")
            and "account" in _columns(connection, "chat_messages"))


def _columns(connection: sqlite3.Connection, table: str) -> set[str]:
    return {row[1] for row in connection.execute(f"PRAGMA table_info({table})")}


def _add_accounts(connection: sqlite3.Connection) -> None:
    """A store from before each account had its inbox: every row is the one account's (""); the conversations
    are keyed by (account, chat) from now on (a primary key SQLite cannot alter: the table is copied)."""
    if "listed" not in _columns(connection, "conversations"):
        connection.execute("ALTER TABLE conversations ADD COLUMN listed INTEGER NOT NULL DEFAULT 0")
    connection.execute("ALTER TABLE conversations RENAME TO conversations_before_accounts")
    connection.execute("DROP INDEX IF EXISTS conversations_by_time")
    table = ""
    for line in SCHEMA[SCHEMA.index("CREATE TABLE IF NOT EXISTS conversations"):].splitlines(keepends=True):
        table += line  # up to the statement's end (its comments may hold a semicolon)
        if sqlite3.complete_statement(table):
            break
    connection.execute(table)
    columns = "chat_id, name, name_source, last_us, last_body, last_outgoing, unread, typing_us, messages, listed"
    connection.execute(f"INSERT INTO conversations({columns}) SELECT {columns} FROM conversations_before_accounts")
    connection.execute("DROP TABLE conversations_before_accounts")
    if "account" not in _columns(connection, "chat_messages"):
        connection.execute("ALTER TABLE chat_messages ADD COLUMN account TEXT NOT NULL DEFAULT ''")


def apply(connection: sqlite3.Connection, changes: Iterable[Change], at_us: int, event_id: int | None,
          account: str = "") -> None:
    """Write what one event or send changes in `account`'s inbox; call inside the transaction that stores it."""
    for change in changes:
        if isinstance(change, Learned):
            identities.learn(connection, change.identity, at_us, account)
        elif isinstance(change, NewMessage):
            add_message(connection, change, at_us, event_id, account)
        elif isinstance(change, StatusChange):
            connection.executemany(
                """INSERT INTO message_status(message_id, status) VALUES (?, ?)
                   ON CONFLICT(message_id) DO UPDATE SET status = max(status, excluded.status)""",
                [(message_id, int(change.status)) for message_id in change.message_ids],
            )
            add_steps(connection, change.message_ids, change.status, at_us if at_us > 0 else None, change.error)
        elif isinstance(change, Seen):
            seen(connection, same_person_chat(connection, change.chat_id, account), change.message_ids, account)
        else:
            connection.execute(
                """INSERT INTO conversations(account, chat_id, last_us, last_body, typing_us) VALUES (?, ?, ?, '', ?)
                   ON CONFLICT(account, chat_id) DO UPDATE SET typing_us = excluded.typing_us""",
                (account, same_person_chat(connection, change.chat_id, account), at_us,
                 at_us if change.typing else None),
            )


def add_message(connection: sqlite3.Connection, message: NewMessage, at_us: int, event_id: int | None,
                account: str = "") -> bool:
    """Store one message in `account`'s inbox and update its conversation; False when that message id is already in
    this chat."""
    chat_id = same_person_chat(connection, message.chat_id, account)
    if chat_id != message.chat_id:
        message = replace(message, chat_id=chat_id)
    # One statement, not a look-up then an insert: this runs for every stored message (the listener's hot path).
    inserted = connection.execute(
        """INSERT INTO chat_messages(chat_id, at_us, outgoing, kind, body, message_id, sender, event_id, account)
           SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9
           WHERE ?6 IS NULL OR NOT EXISTS
               (SELECT 1 FROM chat_messages WHERE message_id = ?6 AND chat_id = ?1 AND outgoing = ?3 AND account = ?9)""",
        (message.chat_id, at_us, int(message.outgoing), message.kind, message.body, message.message_id,
         message.sender, event_id, account),
    ).rowcount
    if not inserted:
        if message.message_id and message.kind != WAITING:
            _replace_placeholder(connection, message, account)
        return False
    if message.outgoing and message.message_id:
        connection.execute(
            "INSERT OR IGNORE INTO message_status(message_id, status) VALUES (?, ?)", (message.message_id, int(Status.SENT))
        )
        add_steps(connection, (message.message_id,), Status.SENT, at_us if at_us > 0 else None, None)
    name = message.chat_name or message.push_name
    source = NameSource.LIST if message.chat_name else NameSource.PUSH_NAME if name else NameSource.NONE
    connection.execute(
        """INSERT INTO conversations(chat_id, name, name_source, last_us, last_body, last_outgoing, unread, messages,
                                     account)
           VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 1, ?8)
           ON CONFLICT(account, chat_id) DO UPDATE SET
               name = CASE WHEN ?3 >= name_source AND ?2 IS NOT NULL THEN ?2 ELSE name END,
               name_source = CASE WHEN ?3 >= name_source AND ?2 IS NOT NULL THEN ?3 ELSE name_source END,
               last_us = max(last_us, ?4),
               last_body = CASE WHEN ?4 >= last_us THEN ?5 ELSE last_body END,
               last_outgoing = CASE WHEN ?4 >= last_us THEN ?6 ELSE last_outgoing END,
               unread = CASE WHEN ?6 THEN 0 ELSE unread + 1 END,
               typing_us = CASE WHEN ?6 THEN typing_us ELSE NULL END,
               messages = messages + 1""",
        (message.chat_id, name, int(source), at_us, preview_of(message.body), int(message.outgoing),
         0 if message.outgoing else 1, account),
    )
    return True


def same_person_chat(connection: sqlite3.Connection, chat_id: str, account: str = "") -> str:
    """The chat a message for `chat_id` goes to: the one the same person already has under their other address
    (their phone number for a LID, their LID for a phone number) when only that one exists, so a person stays one
    chat whichever address an event or a send names; else `chat_id`. One indexed look-up when a LID is known."""
    if identities.is_lid(chat_id):
        identity = identities.identity_of(connection, chat_id, account)
        other = identity.phone if identity is not None else ""
    elif chat_id.isdigit():
        identity = identities.identity_by_phone(connection, chat_id, account)
        other = identity.lid if identity is not None else ""
    else:
        return chat_id
    if not other or _has_chat(connection, chat_id, account) or not _has_chat(connection, other, account):
        return chat_id
    return other


def _has_chat(connection: sqlite3.Connection, chat_id: str, account: str) -> bool:
    return connection.execute("SELECT 1 FROM conversations WHERE account = ? AND chat_id = ?",
                              (account, chat_id)).fetchone() is not None


def add_steps(connection: sqlite3.Connection, message_ids: Iterable[str], status: Status, at_us: int | None,
              error: str | None) -> None:
    """Record that these messages reached `status` at `at_us` (None: not known). A step seen again keeps its
    earliest known time and its first error: a repeated or late event never moves the timeline."""
    connection.executemany(
        """INSERT INTO message_steps(message_id, status, at_us, error) VALUES (?, ?, ?, ?)
           ON CONFLICT(message_id, status) DO UPDATE SET
               at_us = CASE WHEN at_us IS NULL THEN excluded.at_us WHEN excluded.at_us IS NULL THEN at_us
                            ELSE min(at_us, excluded.at_us) END,
               error = coalesce(error, excluded.error)""",
        [(message_id, int(status), at_us, error) for message_id in message_ids],
    )


def _replace_placeholder(connection: sqlite3.Connection, message: NewMessage, account: str) -> None:
    """The content of a message shown as "waiting for this message": it takes the placeholder's place (counted
    once, in its place in the thread), and the chat's preview when the placeholder was the last message."""
    key = (message.message_id, message.chat_id, int(message.outgoing), WAITING, account)
    row = connection.execute(
        "SELECT id, at_us FROM chat_messages WHERE message_id = ? AND chat_id = ? AND outgoing = ? AND kind = ?"
        " AND account = ?", key
    ).fetchone()
    if row is None:
        return
    connection.execute("UPDATE chat_messages SET kind = ?, body = ?, sender = coalesce(?, sender) WHERE id = ?",
                       (message.kind, message.body, message.sender, row[0]))
    connection.execute("UPDATE conversations SET last_body = ? WHERE chat_id = ? AND account = ? AND last_us <= ?",
                       (preview_of(message.body), message.chat_id, account, row[1]))


_SET_NAME = """INSERT INTO conversations(chat_id, name, name_source, last_us, last_body, account)
           VALUES (?1, ?2, ?3, 0, '', ?4)
           ON CONFLICT(account, chat_id) DO UPDATE SET
               name = CASE WHEN ?3 >= name_source THEN ?2 ELSE name END,
               name_source = max(name_source, ?3)"""


def set_name(connection: sqlite3.Connection, chat_id: str, name: str, source: NameSource, account: str = "") -> None:
    """Name a chat (from a contact or group list); a chat not seen yet waits, unlisted, for its first message."""
    connection.execute(_SET_NAME, (chat_id, name, int(source), account))


def set_names(connection: sqlite3.Connection, names: Iterable[ChatName], account: str = "") -> int:
    """Name many chats in one statement (a gateway's lists); returns how many names were given."""
    rows = [(name.chat_id, name.name, int(name.source), account) for name in names]
    connection.executemany(_SET_NAME, rows)
    return len(rows)


_LIST_CHAT = """INSERT INTO conversations(chat_id, last_us, last_body, unread, listed, account)
           VALUES (?1, ?2, '', ?3, 1, ?4)
           ON CONFLICT(account, chat_id) DO UPDATE SET
               listed = 1,
               last_us = max(last_us, ?2),
               unread = CASE WHEN messages = 0 THEN ?3 ELSE max(unread, ?3) END"""


def list_chats(connection: sqlite3.Connection, chats: Iterable[ListedChat], account: str = "") -> int:
    """Keep the chats a gateway lists, so they show with no message stored here; returns how many were given."""
    rows = [(chat.chat_id, chat.last_us, chat.unread, account) for chat in chats]
    connection.executemany(_LIST_CHAT, rows)
    return len(rows)


def mark_seen(connection: sqlite3.Connection, chat_id: str, account: str = "") -> None:
    connection.execute("UPDATE conversations SET unread = 0 WHERE chat_id = ? AND account = ?", (chat_id, account))


def seen(connection: sqlite3.Connection, chat_id: str, message_ids: tuple[str, ...], account: str = "") -> None:
    """The account read a chat up to the newest of `message_ids`: what came in after it stays unread (a receipt
    that arrives late never hides newer messages, and never raises the count). Ids the inbox lacks: all read."""
    marks = ",".join("?" * len(message_ids))
    newest = connection.execute(
        f"""SELECT at_us, id FROM chat_messages WHERE chat_id = ? AND account = ? AND message_id IN ({marks})
            ORDER BY at_us DESC, id DESC LIMIT 1""",
        (chat_id, account, *message_ids),
    ).fetchone() if message_ids else None
    if newest is None:
        mark_seen(connection, chat_id, account)
        return
    connection.execute(
        """UPDATE conversations SET unread = min(unread, (SELECT count(*) FROM chat_messages
               WHERE chat_id = ?1 AND account = ?4 AND NOT outgoing AND (at_us, id) > (?2, ?3)))
           WHERE chat_id = ?1 AND account = ?4""",
        (chat_id, *newest, account),
    )


def forget_chat(connection: sqlite3.Connection, chat_id: str, account: str = "") -> bool:
    """A chat deleted on the gateway leaves the inbox: its row and its messages here go (a message arriving later
    starts it again, as on the phone). The events it came from stay in the store, found in Events. Returns
    whether the inbox had it."""
    connection.execute("DELETE FROM chat_messages WHERE chat_id = ? AND account = ?", (chat_id, account))
    return connection.execute("DELETE FROM conversations WHERE chat_id = ? AND account = ?",
                              (chat_id, account)).rowcount > 0


# -- names from the gateways' lists (Z-API /contacts, /chats, /groups; WuzAPI /user/contacts, /group/list) -----------
