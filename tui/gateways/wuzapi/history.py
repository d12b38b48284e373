"""WuzAPI's message history, read (issue 35 item 4): `GET /chat/history?chat_jid=<jid>&limit=<n>` lists one chat's
messages newest first, `?chat_jid=index` each user's chats with the time of their newest message (handlers.go
GetHistory). WuzAPI keeps them only while the user's `history` setting is above 0 (else 501 "message history is
disabled for this user"), and only the newest `history` per chat."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from datetime import datetime

from tui.api.history import HistoryUnreadable, ListedMessage
from tui.api.models import ChatHistoryQuery, MessageHistory

__all__ = ["HistoryUnreadable", "list_since", "read_chat_history", "read_history_index"]

INDEX = "index"
"""The `chat_jid` that asks for the index of chats instead of one chat's messages."""
OWN_SENDER = "me"
"""The `sender_jid` WuzAPI stores for the account's own messages (handlers.go, syncHistoryForChat)."""


def read_chat_history(answer: object) -> list[ListedMessage]:
    """The messages of one whole `/chat/history` answer (its envelope too), oldest first. HistoryUnreadable for
    anything else."""
    rows = _data(answer)
    if not isinstance(rows, list):
        raise HistoryUnreadable("WuzAPI's history answer holds no list of messages")
    return history_rows(row for row in rows if isinstance(row, dict))


def history_rows(rows: Iterable[dict[str, object]]) -> list[ListedMessage]:
    """HistoryMessage rows (newest first, as WuzAPI answers) as listed messages, oldest first; a row without an id, a
    chat or a time is skipped."""
    listed = [message for row in reversed(list(rows)) if (message := _message(row)) is not None]
    return sorted(listed, key=lambda message: message.at)


def read_history_index(answer: object) -> list[tuple[str, datetime]]:
    """(chat JID, its newest message's time) of a whole `chat_jid=index` answer, for every user it lists (WuzAPI
    lists them all; a token sees its own chats among them)."""
    users = _data(answer)
    if not isinstance(users, dict):
        raise HistoryUnreadable("WuzAPI's history index holds no chats")
    return index_rows(entry for entries in users.values() if isinstance(entries, list)
                      for entry in entries if isinstance(entry, dict))


def index_rows(rows: Iterable[dict[str, object]]) -> list[tuple[str, datetime]]:
    chats: list[tuple[str, datetime]] = []
    for entry in rows:
        chat, at = entry.get("chat_jid"), _time(entry.get("last_updated"))
        if isinstance(chat, str) and at is not None:
            chats.append((chat, at))
    return chats


def _data(answer: object) -> object:
    if not isinstance(answer, dict):
        raise HistoryUnreadable("WuzAPI's history answer is not a JSON object")
    if answer.get("success") is not True:
        said = answer.get("error")
        raise HistoryUnreadable(f"WuzAPI keeps no history here: {said}" if isinstance(said, str) and said else
                                "WuzAPI's history answer says it failed")
    return answer.get("data")


def _message(row: dict[str, object]) -> ListedMessage | None:
    message_id, chat, at = row.get("message_id"), row.get("chat_jid"), _time(row.get("timestamp"))
    if not isinstance(message_id, str) or not message_id or not isinstance(chat, str) or not chat or at is None:
        return None
    sender = row.get("sender_jid")
    from_me = sender == OWN_SENDER
    text = row.get("text_content")
    kind = row.get("message_type")
    return ListedMessage(message_id, chat, None if from_me or not isinstance(sender, str) else sender, at,
                         kind if isinstance(kind, str) and kind else "text", text if isinstance(text, str) else "",
                         from_me)


def _time(value: object) -> datetime | None:
    """Go's RFC 3339 with up to nine fractional digits (Python reads six)."""
    if not isinstance(value, str) or not value:
        return None
    text = value.replace("Z", "+00:00")
    head, dot, rest = text.partition(".")
    if dot:
        digits = rest[: len(rest) - len(rest.lstrip("0123456789"))]
        zone = rest[len(digits):]
        text = f"{head}.{digits[:6]}{zone}"
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        return None
    return parsed if parsed.tzinfo is not None else None


Read = Callable[[ChatHistoryQuery], Awaitable[MessageHistory]]
"""The account's MESSAGE_HISTORY request (its session client)."""
PER_CHAT = 1000
"""Messages read per chat: the most WuzAPI's spec documents (it keeps at most the user's `history` anyway)."""


async def list_since(read: Read, since: datetime) -> list[ListedMessage]:
    """Every message WuzAPI's history holds from `since` on: the index first, then each chat whose newest message
    is that recent (a chat quiet since then has nothing to give), oldest first."""
    chats = [jid for jid, newest in index_rows((await read(ChatHistoryQuery(chat_jid=INDEX))).items)
             if newest >= since]
    listed: list[ListedMessage] = []
    for jid in dict.fromkeys(chats):
        answer = await read(ChatHistoryQuery(chat_jid=jid, limit=PER_CHAT))
        listed += [message for message in history_rows(answer.items) if message.at >= since]
    return sorted(listed, key=lambda message: message.at)
