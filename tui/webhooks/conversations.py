"""Conversations: the inbox's view of the event store (who wrote, what, what was delivered and read).

Derived at append time, so reading is cheap: every stored event that carries a message, a status or a typing
notice updates three tables in the same transaction as the event itself (see `apply`), and every message the
app or `gateway-tui call` sends is recorded beside them (`tui.webhooks.sent`):

* `chat_messages`: one row per message, incoming or outgoing, with the fields the thread shows already
  rendered (kind, text, sender name, time). A thread is one indexed range query on (chat_id, at_us, id).
* `message_status`: the best status known per gateway message id (sent < handed < delivered < read < played;
  failed). Kept apart from the message, so a receipt that arrives before the send is recorded still counts.
* `message_steps`: each step a message reached, with when it was first learned here (the send's 2xx, the status
  event's arrival) and, for a failure, the gateway's words: the message's timeline (`timeline_of`). Only what an event said is there: a read with no delivered before it has
  no delivered row, and a late or repeated event never moves a time later.
* `conversations`: one row per chat with its name, last preview, time, unread count and typing time. The list
  is one indexed query on last_us.

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

import enum
import json
import re
import sqlite3
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from tui.webhooks.families import split_account
from tui.webhooks.fields import dict_of, list_of, text_of
from tui.webhooks.receipts import (  # noqa: F401 (the UI reads the marks and words here)
    LEGACY_STATUS,
    STATUS_MARKS,
    Receipt,
    Status,
    failure_of,
    receipt_of,
    stuck,
)
from tui.webhooks.render import WAITING, WAITING_TEXT, names_of, render_whatsmeow, render_zapi
from tui.webhooks.rows import (  # noqa: F401 (read here by the inbox's callers)
    MEDIA_KINDS,
    ConversationRow,
    MediaInfo,
    MessageRow,
    Step,
    Timeline,
)
from tui.api.signing import Verdict

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


class NameSource(enum.IntEnum):
    """Where a chat's name came from; a better source replaces a worse one, never the other way round."""

    NONE = 0
    PUSH_NAME = 1  # what the peer calls themselves
    LIST = 2  # the gateway's contact or group list (or the sandbox's demo data)


# -- what an event means for the inbox -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class NewMessage:
    chat_id: str
    outgoing: bool
    kind: str
    body: str
    message_id: str | None
    sender: str | None = None  # groups: who wrote it
    push_name: str | None = None  # the name a contact's chat gets when nothing better is known
    chat_name: str | None = None  # a group's name when the event carries it (Z-API's chatName)


@dataclass(frozen=True, slots=True)
class StatusChange:
    message_ids: tuple[str, ...]
    status: Status
    error: str | None = None  # failed: the gateway's words


@dataclass(frozen=True, slots=True)
class Seen:
    """The account read what it received in a chat (on the phone or another device): up to `message_ids` when the
    inbox has them, else all of it."""

    chat_id: str
    message_ids: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Typing:
    chat_id: str
    typing: bool


Change = NewMessage | StatusChange | Seen | Typing


TRUSTED_VERDICTS = frozenset({Verdict.VALID, Verdict.NO_KEY})  # a StrEnum hashes as its text: "valid" matches too


def inbox_of(path: str) -> str:
    """Whose inbox an event stored from `path` feeds: the account of its `/a/<profile>/` path, else "" (the old
    paths: the store of one account)."""
    return split_account(path)[0] or ""


def trusted(verdict: Verdict | str, rejected: bool) -> bool:
    """Whether an event may become a message: accepted, and its signature valid (or no key set at all)."""
    return not rejected and verdict in TRUSTED_VERDICTS


def changes_of(kind: str, payload: Any) -> list[Change]:
    """What one event (its kind and parsed payload) changes in the inbox; never raises on odd payloads."""
    if not isinstance(payload, dict):
        return []
    try:
        reader = _READERS.get(kind)
        return reader(payload) if reader is not None else []
    except (AttributeError, TypeError, ValueError, KeyError):
        return []


def chat_id_of(value: Any) -> str:
    """A JID, a Z-API phone or a recipient as the inbox names chats: digits for people, digits@g.us for groups."""
    text = text_of(value)
    if text.endswith("-group"):
        return text.removesuffix("-group") + "@g.us"
    user, _, server = text.partition("@")
    user = user.partition(":")[0]  # device suffix: 5511999999999:12@s.whatsapp.net
    if server in ("s.whatsapp.net", "c.us", ""):
        return user
    return f"{user}@{server}"


def is_group(chat_id: str) -> bool:
    return chat_id.endswith("@g.us")


def _wuzapi_message(payload: dict) -> list[Change]:
    event = dict_of(payload.get("event"))
    info = dict_of(event.get("Info"))
    chat = chat_id_of(info.get("Chat") or info.get("Sender"))
    if not chat:
        return []
    outgoing = info.get("IsFromMe") is True
    push = text_of(info.get("PushName")) or None
    sender = None
    if is_group(chat) and not outgoing:
        sender = push or chat_id_of(info.get("Sender")) or None
    vote = dict_of(payload.get("pollVote"))
    if vote:
        kind, body = "vote", f"voted: {names_of(vote.get('selectedOptions'))}"
    else:
        kind, body = render_whatsmeow(dict_of(event.get("Message")))
    return [
        NewMessage(chat, outgoing, kind, body, text_of(info.get("ID")) or None, sender,
                   push_name=None if is_group(chat) or outgoing else push)
    ]


def _wuzapi_undecryptable(payload: dict) -> list[Change]:
    """whatsmeow's UndecryptableMessage (`{"Info": {...}, "IsUnavailable", "UnavailableType", "DecryptFailMode"}`):
    the chat shows "waiting for this message" under its id until the Message with that id brings the content."""
    info = dict_of(dict_of(payload.get("event")).get("Info"))
    chat = chat_id_of(info.get("Chat") or info.get("Sender"))
    message_id = text_of(info.get("ID"))
    if not chat or not message_id:
        return []
    outgoing = info.get("IsFromMe") is True
    push = text_of(info.get("PushName")) or None
    sender = (push or chat_id_of(info.get("Sender")) or None) if is_group(chat) and not outgoing else None
    return [NewMessage(chat, outgoing, WAITING, WAITING_TEXT, message_id, sender,
                       push_name=None if is_group(chat) or outgoing else push)]


def _zapi_received(payload: dict) -> list[Change]:
    if text_of(payload.get("notification")):
        return []
    chat = chat_id_of(payload.get("phone"))
    if not chat:
        return []
    if payload.get("isGroup") is True and not is_group(chat):
        chat = chat + "@g.us"
    outgoing = payload.get("fromMe") is True
    name = text_of(payload.get("senderName")) or None
    sender = None
    if is_group(chat) and not outgoing:
        sender = name or text_of(payload.get("participantPhone")) or None
    kind, body = render_zapi(payload)
    return [
        NewMessage(chat, outgoing, kind, body, text_of(payload.get("messageId")) or None, sender,
                   push_name=None if is_group(chat) or outgoing else (name or text_of(payload.get("chatName")) or None),
                   chat_name=text_of(payload.get("chatName")) or None if is_group(chat) else None)
    ]


def _receipt(kind: str) -> Callable[[dict], list[Change]]:
    """Z-API's DeliveryCallback and MessageStatusCallback, WuzAPI's ReadReceipt: what `receipts.RECEIPTS` says.
    READ_BY_ME (the account read what it received) never marks a sent message; it clears the chat's unread count."""
    def read(payload: dict) -> list[Change]:
        receipt = receipt_of(kind, payload)
        if kind == "Delivery":
            ids = tuple(i for i in (text_of(payload.get("messageId")),) if i)
        elif kind == "ReadReceipt":
            ids = tuple(text_of(i) for i in list_of(dict_of(payload.get("event")).get("MessageIDs")) if text_of(i))
        else:
            ids = tuple(text_of(i) for i in (list_of(payload.get("ids")) or [payload.get("id")]) if text_of(i))
        if receipt is Receipt.READ_BY_ME:
            chat = _receipt_chat(kind, payload)
            return [Seen(chat, ids)] if chat else []
        status = receipt.status if receipt is not None else None
        if status is None or not ids:
            return []
        return [StatusChange(ids, status, failure_of(kind, payload))]
    return read


def _receipt_chat(kind: str, payload: dict) -> str:
    if kind == "ReadReceipt":
        return chat_id_of(dict_of(payload.get("event")).get("Chat"))
    chat = chat_id_of(payload.get("phone"))
    return chat + "@g.us" if chat and payload.get("isGroup") is True and not is_group(chat) else chat


def _chat_presence(payload: dict) -> list[Change]:
    event = dict_of(payload.get("event"))
    chat = chat_id_of(event.get("Chat") or event.get("Sender"))
    state = text_of(event.get("State")).lower()
    return [Typing(chat, state == "composing")] if chat else []


def _zapi_presence(payload: dict) -> list[Change]:
    chat = chat_id_of(payload.get("phone"))
    status = text_of(payload.get("status")).upper()
    return [Typing(chat, status in ("COMPOSING", "RECORDING"))] if chat else []


_READERS = {
    "Message": _wuzapi_message,
    "UndecryptableMessage": _wuzapi_undecryptable,
    "ReceivedCallback": _zapi_received,
    "Delivery": _receipt("Delivery"),
    "MessageStatusCallback": _receipt("MessageStatusCallback"),
    "ReadReceipt": _receipt("ReadReceipt"),
    "ChatPresence": _chat_presence,
    "PresenceChatCallback": _zapi_presence,
}


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
    for line in SCHEMA.splitlines(keepends=True):
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
    return ("message_steps" in tables and {"listed", "account"} <= _columns(connection, "conversations")
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
        if isinstance(change, NewMessage):
            add_message(connection, change, at_us, event_id, account)
        elif isinstance(change, StatusChange):
            connection.executemany(
                """INSERT INTO message_status(message_id, status) VALUES (?, ?)
                   ON CONFLICT(message_id) DO UPDATE SET status = max(status, excluded.status)""",
                [(message_id, int(change.status)) for message_id in change.message_ids],
            )
            add_steps(connection, change.message_ids, change.status, at_us if at_us > 0 else None, change.error)
        elif isinstance(change, Seen):
            seen(connection, change.chat_id, change.message_ids, account)
        else:
            connection.execute(
                """INSERT INTO conversations(account, chat_id, last_us, last_body, typing_us) VALUES (?, ?, ?, '', ?)
                   ON CONFLICT(account, chat_id) DO UPDATE SET typing_us = excluded.typing_us""",
                (account, change.chat_id, at_us, at_us if change.typing else None),
            )


def add_message(connection: sqlite3.Connection, message: NewMessage, at_us: int, event_id: int | None,
                account: str = "") -> bool:
    """Store one message in `account`'s inbox and update its conversation; False when that message id is already in
    this chat."""
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


@dataclass(frozen=True, slots=True)
class ChatName:
    chat_id: str
    name: str
    source: NameSource


def names_from_contacts(contacts: Iterable[Any]) -> list[ChatName]:
    """A contact list's names (`tui.api.models.ContactEntry`): the name the account saved wins over a push name,
    which still beats nothing (and never replaces a saved name already known)."""
    names = []
    for contact in contacts:
        chat = chat_id_of(contact.phone)
        if not chat or is_group(chat):
            continue
        if contact.saved_name:
            names.append(ChatName(chat, contact.saved_name, NameSource.LIST))
        elif contact.push_name:
            names.append(ChatName(chat, contact.push_name, NameSource.PUSH_NAME))
    return names


def _chat_list_id(chat: Any) -> str:
    """A chat list entry's chat id: Z-API may list a group by its bare digits, flagged only by `isGroup`."""
    chat_id = chat_id_of(chat.phone)
    return chat_id + "@g.us" if chat.isGroup and not is_group(chat_id) else chat_id


def names_from_chats(chats: Iterable[Any]) -> list[ChatName]:
    """A chat list's names (`tui.api.models.ChatEntry`): a group's name is its own (LIST); a person's chat name is
    whatever the gateway shows, which may be only a push name, so it never overrides a saved contact name."""
    names = []
    for chat in chats:
        chat_id = _chat_list_id(chat)
        name = chat.name.strip()
        if not chat_id or not name or name == chat_id or name == chat.phone:
            continue
        names.append(ChatName(chat_id, name, NameSource.LIST if is_group(chat_id) else NameSource.PUSH_NAME))
    return names


@dataclass(frozen=True, slots=True)
class ListedChat:
    """A chat the gateway lists: when its last message was (0: not said) and how many the phone has unread."""

    chat_id: str
    last_us: int
    unread: int


def chats_from_chat_list(chats: Iterable[Any]) -> list[ListedChat]:
    """Z-API's `/chats` and `/groups` entries (`tui.api.models.ChatEntry`) as chats to list: the phone's unread
    count and last message time, so a chat with no history here still shows, in its place."""
    listed = []
    for chat in chats:
        chat_id = _chat_list_id(chat)
        if not chat_id:
            continue
        at = chat.lastMessageTime
        listed.append(ListedChat(chat_id, int(at.timestamp() * 1_000_000) if at is not None else 0, chat.unread_count))
    return listed


def chats_from_group_list(groups: Iterable[Any]) -> list[ListedChat]:
    """WuzAPI's group list (`tui.api.models.GroupInfo`): the groups the account is in (no time, no unread)."""
    return [ListedChat(chat_id_of(group.JID), 0, 0) for group in groups if is_group(chat_id_of(group.JID))]


def names_from_groups(groups: Iterable[Any]) -> list[ChatName]:
    """WuzAPI's group list (`tui.api.models.GroupInfo`): each group's name."""
    return [ChatName(chat_id_of(group.JID), group.Name.strip(), NameSource.LIST)
            for group in groups if group.Name.strip() and is_group(chat_id_of(group.JID))]


# -- reading -------------------------------------------------------------------------------------------------------


_INLINE_NOTE = re.compile(r"^\((\d+) characters of base64 media")


def media_info(event_kind: str, payload: Any, kind: str) -> MediaInfo | None:
    """The media a message of `kind` (`MEDIA_KINDS`) describes in its event's payload; None for other kinds or
    payloads. Never raises on odd payloads."""
    if kind not in MEDIA_KINDS or not isinstance(payload, dict):
        return None
    if event_kind == "ReceivedCallback":  # Z-API: image {imageUrl, caption, mimeType}, document {documentUrl, fileName, ...}
        part = dict_of(payload.get(kind))
        url_field = {"image": "imageUrl", "video": "videoUrl", "audio": "audioUrl", "document": "documentUrl",
                     "sticker": "stickerUrl"}[kind]
        size = part.get("fileLength") if isinstance(part.get("fileLength"), int) else None
        return MediaInfo(kind, text_of(part.get("mimeType")), text_of(part.get("fileName")) or None,
                         text_of(part.get("caption")) or None, size, text_of(part.get(url_field)) or None)
    if event_kind != "Message":
        return None
    message = dict_of(dict_of(payload.get("event")).get("Message"))
    message = dict_of(dict_of(message.get("documentWithCaptionMessage")).get("message")) or message
    part = dict_of(message.get(f"{kind}Message")) or (dict_of(message.get("ptvMessage")) if kind == "video" else {})
    size = _int(part.get("fileLength"))
    value = payload.get("base64")
    inline = value if isinstance(value, str) else ""
    has_inline = bool(inline)
    if size is None and has_inline:
        note = _INLINE_NOTE.match(inline)
        characters = int(note.group(1)) if note else len(inline)
        size = characters * 3 // 4 - (inline.count("=", -2) if not note else 0)
    s3 = dict_of(payload.get("s3"))
    return MediaInfo(kind, text_of(payload.get("mimeType")) or text_of(part.get("mimetype")),
                     text_of(payload.get("fileName")) or text_of(part.get("fileName")) or None,
                     text_of(part.get("caption")) or None, size, text_of(s3.get("url")) or None, has_inline)


def _int(value: Any) -> int | None:
    """whatsmeow's uint64 as JSON: a number, or protojson's decimal string."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.isdigit():
        return int(value)
    return None


_CONVERSATION_COLUMNS = "chat_id, name, last_us, last_body, last_outgoing, unread, typing_us, messages"
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
    return ConversationRow(row[0], row[1], row[2], row[3], bool(row[4]), row[5], row[6], row[7])


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
            f"""SELECT {_CONVERSATION_COLUMNS} FROM conversations WHERE account = ? AND (messages > 0 OR listed)
                ORDER BY last_us DESC LIMIT ?""",
            (account, limit),
        ).fetchall()
        return [_conversation(row) for row in rows]
    pattern = "%" + search.strip().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
    rows = connection.execute(
        f"""SELECT {_CONVERSATION_COLUMNS} FROM conversations
            WHERE account = ?3 AND (messages > 0 OR listed)
                AND (name LIKE ?1 ESCAPE '\\' OR chat_id LIKE ?1 ESCAPE '\\' OR chat_id IN
                    (SELECT DISTINCT chat_id FROM chat_messages WHERE account = ?3 AND body LIKE ?1 ESCAPE '\\'))
            ORDER BY last_us DESC LIMIT ?2""",
        (pattern, limit, account),
    ).fetchall()
    return [_conversation(row) for row in rows]


def get_conversation(connection: sqlite3.Connection, chat_id: str, account: str = "") -> ConversationRow | None:
    row = connection.execute(f"SELECT {_CONVERSATION_COLUMNS} FROM conversations WHERE account = ? AND chat_id = ?",
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


# -- small helpers --------------------------------------------------------------------------------------------------


def payload_of(body: bytes, payload_text: str | None) -> Any:
    """The parsed payload as the store keeps it (payload column, else the body's JSON)."""
    try:
        return json.loads(payload_text if payload_text is not None else body)
    except (ValueError, RecursionError):
        return None


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
        return self.store.read(lambda c: thread_before(c, chat_id, limit, before, self.account))

    def thread_after(self, chat_id: str, after_id: int) -> list[MessageRow]:
        return self.store.read(lambda c: thread_after(c, chat_id, after_id, self.account))

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

    def forget(self, chat_id: str) -> bool:
        """See `forget_chat`: a chat deleted on the gateway."""
        return self.store.write(lambda c: forget_chat(c, chat_id, self.account))
