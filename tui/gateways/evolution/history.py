"""Evolution API's stored messages, read (issue 35 item 4): `POST /chat/findMessages/{instance}` pages through the
instance's message table, newest first (2.3.6 channel.service.ts fetchMessages: `offset` a page's size, `page` from
1, `{messages: {total, pages, currentPage, records}}`). Evolution keeps them while DATABASE_SAVE_DATA_NEW_MESSAGE is
on; a record is the Baileys message it stored: `key {id, fromMe, remoteJid, participant?}`, `messageTimestamp` in
seconds, `message` the content."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from datetime import UTC, datetime

from tui.api.history import HistoryCutShort, ListedMessage
from tui.api.models import ChatMessagesQuery, MessageHistory

PAGE = 100
"""Records asked per page."""
MOST_PAGES = 50
"""Pages read at most in one catch-up (5000 messages): a longer gap is said to be cut short."""

Read = Callable[[ChatMessagesQuery], Awaitable[MessageHistory]]
"""The account's FIND_MESSAGES request (its instance client)."""

# messageType -> our kind; what the content carries as text, by its key (Baileys' proto.Message)
_KINDS = {"conversation": "text", "extendedTextMessage": "text", "imageMessage": "image", "videoMessage": "video",
          "audioMessage": "audio", "documentMessage": "document", "stickerMessage": "sticker",
          "locationMessage": "location", "contactMessage": "contact", "pollCreationMessageV3": "poll",
          "reactionMessage": "reaction"}


def records(rows: Iterable[dict[str, object]]) -> list[ListedMessage]:
    """findMessages' records as listed messages, oldest first; a record without a key id, a chat or a time is
    skipped. Evolution answers newest first: read backwards, so messages of one second keep their order."""
    listed = [message for row in reversed(list(rows)) if (message := _record(row)) is not None]
    return sorted(listed, key=lambda message: message.at)


def _record(row: dict[str, object]) -> ListedMessage | None:
    key, seconds = row.get("key"), row.get("messageTimestamp")
    if not isinstance(key, dict) or not isinstance(seconds, int | float) or isinstance(seconds, bool):
        return None
    message_id, chat = key.get("id"), key.get("remoteJid")
    if not isinstance(message_id, str) or not message_id or not isinstance(chat, str) or not chat:
        return None
    from_me = key.get("fromMe") is True
    participant = key.get("participant")
    sender = None if from_me else participant if isinstance(participant, str) and participant else chat
    kind = row.get("messageType")
    return ListedMessage(message_id, chat, sender, datetime.fromtimestamp(seconds, UTC),
                         _KINDS.get(kind, kind) if isinstance(kind, str) and kind else "text",
                         _text(row.get("message")), from_me)


def _text(content: object) -> str:
    if not isinstance(content, dict):
        return ""
    said = content.get("conversation")
    if isinstance(said, str):
        return said
    for key in ("extendedTextMessage", "imageMessage", "videoMessage", "documentMessage"):
        inner = content.get(key)
        if isinstance(inner, dict):
            text = inner.get("text") or inner.get("caption")
            if isinstance(text, str):
                return text
    return ""


async def list_since(read: Read, since: datetime) -> list[ListedMessage]:
    """Every message Evolution stored from `since` on, every chat at once: pages newest first until one reaches
    back past `since` (or the last page). HistoryCutShort, with the newest, when more than MOST_PAGES pages are that
    recent."""
    since = since.replace(microsecond=0)  # Evolution keeps whole seconds: a message of the same second counts
    listed: list[ListedMessage] = []
    for page in range(1, MOST_PAGES + 1):
        answer = await read(ChatMessagesQuery(amount=PAGE, page=page))
        found = records(answer.items)
        listed = [message for message in found if message.at >= since] + listed  # each page is older
        if not found or found[0].at < since or page >= answer.pages:
            return sorted(listed, key=lambda message: message.at)
    raise HistoryCutShort(f"more than {MOST_PAGES * PAGE} messages since then: only the newest were read",
                          sorted(listed, key=lambda message: message.at))
