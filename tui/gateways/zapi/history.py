"""Z-API's chat messages, read (issue 35 item 4): `GET /chat-messages/{phone}?amount=N&lastMessageId=ID` lists one
chat's messages newest first, the next page after the oldest id of the one before (developer.z-api.io
en/chats/get-message-chats); `GET /chats` says which chats spoke since when (`lastMessageTime`). A row is the
received callback's shape: `messageId`, `phone`, `fromMe`, `momment` in milliseconds, `participantPhone` in a
group, the content under its kind (`text.message`, `image.caption`, ...)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from datetime import UTC, datetime

from tui.api.history import HistoryCutShort, ListedMessage
from tui.api.models import ChatList, ChatMessagesQuery, ListPage, MessageHistory

PAGE = 50
"""Messages asked per page (Z-API suggests 10 at a time; a gap's catch-up reads more at once)."""
MOST_PAGES = 20
"""Pages read at most per chat (1000 messages)."""
CHAT_PAGES = 10
"""Pages of 100 chats read at most to find those that spoke."""

ReadMessages = Callable[[ChatMessagesQuery], Awaitable[MessageHistory]]
ReadChats = Callable[[ListPage], Awaitable[ChatList]]

_KINDS = ("text", "image", "video", "audio", "document", "sticker", "location", "contact", "reaction", "poll")


def chat_rows(rows: Iterable[dict[str, object]], chat_phone: str) -> list[ListedMessage]:
    """One chat's rows (newest first, as Z-API answers) as listed messages, oldest first; the chat is `chat_phone`
    (digits, or `<digits>-group`)."""
    listed = [message for row in reversed(list(rows)) if (message := _row(row, chat_phone)) is not None]
    return sorted(listed, key=lambda message: message.at)


def _row(row: dict[str, object], chat_phone: str) -> ListedMessage | None:
    message_id, moment = row.get("messageId"), row.get("momment")
    if not isinstance(message_id, str) or not message_id or not isinstance(moment, int | float) or isinstance(
            moment, bool):
        return None
    group = chat_phone.endswith("-group")
    chat = f"{chat_phone.removesuffix('-group')}@g.us" if group else f"{chat_phone}@s.whatsapp.net"
    from_me = row.get("fromMe") is True
    participant = row.get("participantPhone")
    sender = None if from_me else (f"{participant}@s.whatsapp.net" if group and isinstance(participant, str)
                                   and participant else chat)
    kind = next((name for name in _KINDS if isinstance(row.get(name), dict)), "text")
    content = row.get(kind)
    text = ""
    if isinstance(content, dict):
        said = content.get("message") or content.get("caption")
        text = said if isinstance(said, str) else ""
    return ListedMessage(message_id, chat, sender, datetime.fromtimestamp(moment / 1000, UTC), kind, text, from_me)


async def list_since(read_chats: ReadChats, read_messages: ReadMessages, since: datetime) -> list[ListedMessage]:
    """Every message of the chats that spoke since `since`, from then on, oldest first: the chats first (their
    `lastMessageTime`), then each chat's pages back past `since`. HistoryCutShort, with what was read, when a chat
    has more than MOST_PAGES pages that recent."""
    since = since.replace(microsecond=0)  # Z-API says a chat's last message in seconds: the same second counts
    chats: list[str] = []
    for page in range(1, CHAT_PAGES + 1):
        listed_chats = (await read_chats(ListPage(page=page, pageSize=100))).items
        chats += [chat.phone for chat in listed_chats
                  if chat.lastMessageTime is not None and chat.lastMessageTime >= since]
        if len(listed_chats) < 100:
            break
    listed: list[ListedMessage] = []
    for phone in dict.fromkeys(chats):
        chat: list[ListedMessage] = []
        last_id: str | None = None
        for _page in range(MOST_PAGES):
            found = chat_rows((await read_messages(ChatMessagesQuery(phone=phone, amount=PAGE,
                                                                      lastMessageId=last_id))).items, phone)
            chat = [message for message in found if message.at >= since] + chat  # each page is older
            if len(found) < PAGE or found[0].at < since:
                break
            last_id = found[0].message_id
        else:
            raise HistoryCutShort(f"more than {MOST_PAGES * PAGE} messages in {phone} since then: only the newest "
                                  "were read", sorted(listed + chat, key=lambda message: message.at))
        listed += chat
    return sorted(listed, key=lambda message: message.at)
