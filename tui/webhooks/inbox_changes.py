"""What a gateway's payload means for the inbox: the changes one stored event makes (a new message, a status, a
"seen", a typing notice), read from each family's event kinds; the chat names and listed chats a gateway's
contact, chat and group lists give; the media a message's payload describes. Plain functions of parsed JSON that
never raise on odd payloads; the SQL that applies them is tui.webhooks.inbox_sql.
"""

from __future__ import annotations

import enum
import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from tui.api.fields import long_value  # not from Evolution's package: that loads every gateway (pydantic) at start
from tui.webhooks.families import inbox_of as inbox_of  # re-exported: where the inbox code looks for it
from tui.api.fields import dict_of, list_of, text_of
from tui.webhooks.identities import Identity, identities_in, sender_identity, who
from tui.webhooks.receipts import (
    EVOLUTION_ACK,
    Receipt,
    Status,
    failure_of,
    receipt_of,
)
from tui.gateways.render import WAITING, WAITING_TEXT, names_of, render_whatsmeow, render_zapi
from tui.webhooks.rows import (
    MEDIA_KINDS,
    MediaInfo,
)
from tui.api import signing
from tui.api.signing import Verdict


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


@dataclass(frozen=True, slots=True)
class Learned:
    """An event named a LID beside its phone number or name (tui.webhooks.identities)."""

    identity: Identity


Change = NewMessage | StatusChange | Seen | Typing | Learned


TRUSTED_VERDICTS = signing.TRUSTED_VERDICTS  # a StrEnum hashes as its text: "valid" matches too


def trusted(verdict: Verdict | str, rejected: bool) -> bool:
    """Whether an event may become a message: accepted, and its signature valid (or no key set at all)."""
    return not rejected and verdict in TRUSTED_VERDICTS


def changes_of(kind: str, payload: Any) -> list[Change]:
    """What one event (its kind and parsed payload) changes in the inbox; never raises on odd payloads."""
    if not isinstance(payload, dict):
        return []
    try:
        reader = _READERS.get(kind)
        changes = reader(payload) if reader is not None else []
    except (AttributeError, TypeError, ValueError, KeyError):
        changes = []
    # First: the message an event brings goes to the chat its sender is already known under.
    learned: list[Change] = [Learned(identity) for identity in identities_in(payload)]
    return learned + changes


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
        sender = _member(info.get("Sender"), push, info.get("SenderAlt")) or None
    vote = dict_of(payload.get("pollVote"))
    if vote:
        kind, body = "vote", f"voted: {names_of(vote.get('selectedOptions'))}"
    else:
        kind, body = render_whatsmeow(dict_of(event.get("Message")))
    return [
        NewMessage(chat, outgoing, kind, body, text_of(info.get("ID")) or None, sender,
                   push_name=None if is_group(chat) or outgoing else push)
    ]


def _member(jid: Any, name: str | None, alt: Any) -> str:
    """Who wrote in a group: a member WhatsApp names by a LID as their name and number (tui.webhooks.identities),
    anyone else by their name, else their number."""
    identity = sender_identity(jid, alt, name or "")
    if identity is not None:
        return who(identity.lid, identity)
    return name or chat_id_of(jid)


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
    sender = (_member(info.get("Sender"), push, info.get("SenderAlt")) or None) if is_group(chat) and not outgoing else None
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
        phone = text_of(payload.get("participantPhone"))
        sender = (_member(payload.get("participantLid"), name or "", phone) if not phone or name else phone) or None
    kind, body = render_zapi(payload)
    return [
        NewMessage(chat, outgoing, kind, body, text_of(payload.get("messageId")) or None, sender,
                   push_name=None if is_group(chat) or outgoing else (name or text_of(payload.get("chatName")) or None),
                   chat_name=text_of(payload.get("chatName")) or None if is_group(chat) else None)
    ]


def _evolution_message(payload: dict) -> list[Change]:
    """Evolution's messages.upsert and send.message: `data` is the message as its `prepareMessage` makes it
    (Baileys' key, WhatsApp's protobuf message as whatsmeow writes it too)."""
    data = dict_of(payload.get("data"))
    key = dict_of(data.get("key"))
    chat = chat_id_of(key.get("remoteJid"))
    if not chat:
        return []
    outgoing = key.get("fromMe") is True
    push = None if outgoing else text_of(data.get("pushName")) or None
    sender = None
    if is_group(chat) and not outgoing:
        sender = _member(key.get("participant"), push, key.get("participantAlt") or key.get("participantPn")) or None
    kind, body = render_whatsmeow(dict_of(data.get("message")))
    return [NewMessage(chat, outgoing, kind, body, text_of(key.get("id")) or None, sender,
                       push_name=None if is_group(chat) else push)]


def _receipt(kind: str) -> Callable[[dict], list[Change]]:
    """Z-API's DeliveryCallback and MessageStatusCallback, WuzAPI's ReadReceipt, Evolution's messages.update: what
    `receipts.RECEIPTS` says. READ_BY_ME (the account read what it received) never marks a sent message; it clears
    the chat's unread count."""
    def read(payload: dict) -> list[Change]:
        receipt = receipt_of(kind, payload)
        if kind == "Delivery":
            ids = tuple(i for i in (text_of(payload.get("messageId")),) if i)
        elif kind == EVOLUTION_ACK:  # keyId is WhatsApp's id; messageId is Evolution's database row
            ids = tuple(i for i in (text_of(dict_of(payload.get("data")).get("keyId")),) if i)
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
    if kind == EVOLUTION_ACK:
        return chat_id_of(dict_of(payload.get("data")).get("remoteJid"))
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


def _evolution_presence(payload: dict) -> list[Change]:
    """Evolution's presence.update: Baileys' `{"id": chat, "presences": {jid: {"lastKnownPresence"}}}`; typing
    while anyone in the chat composes or records."""
    data = dict_of(payload.get("data"))
    chat = chat_id_of(data.get("id"))
    states = [text_of(dict_of(state).get("lastKnownPresence")).lower() for state in dict_of(data.get("presences")).values()]
    return [Typing(chat, any(state in ("composing", "recording") for state in states))] if chat else []


_READERS = {
    "Message": _wuzapi_message,
    "UndecryptableMessage": _wuzapi_undecryptable,
    "ReceivedCallback": _zapi_received,
    "Delivery": _receipt("Delivery"),
    "MessageStatusCallback": _receipt("MessageStatusCallback"),
    "ReadReceipt": _receipt("ReadReceipt"),
    "ChatPresence": _chat_presence,
    "PresenceChatCallback": _zapi_presence,
    "messages.upsert": _evolution_message,
    "send.message": _evolution_message,
    EVOLUTION_ACK: _receipt(EVOLUTION_ACK),
    "presence.update": _evolution_presence,
}


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
    if event_kind in ("messages.upsert", "send.message"):
        return _evolution_media(payload, kind)
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


def _evolution_media(payload: dict, kind: str) -> MediaInfo:
    """Evolution's message (`data.message`): the part as Baileys wrote it (`fileLength` a 64-bit Long), the bytes in
    `base64` when its webhook sends them, `mediaUrl` when it uploaded the file to its own S3 (the part's `url` is
    WhatsApp's encrypted copy: no use to anyone without the media key)."""
    message = dict_of(dict_of(payload.get("data")).get("message"))
    part = dict_of(message.get(f"{kind}Message")) or (dict_of(message.get("ptvMessage")) if kind == "video" else {})
    inline = message.get("base64")
    return MediaInfo(kind, text_of(part.get("mimetype")), text_of(part.get("fileName")) or None,
                     text_of(part.get("caption")) or None, long_value(part.get("fileLength")),
                     text_of(message.get("mediaUrl")) or None, isinstance(inline, str) and bool(inline))


def _int(value: Any) -> int | None:
    """whatsmeow's uint64 as JSON: a number, or protojson's decimal string."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.isdigit():
        return int(value)
    return None



def payload_of(body: bytes, payload_text: str | None) -> Any:
    """The parsed payload as the store keeps it (payload column, else the body's JSON)."""
    try:
        return json.loads(payload_text if payload_text is not None else body)
    except (ValueError, RecursionError):
        return None
