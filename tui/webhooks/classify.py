"""Name a webhook payload's kind, say in one line who did what, and list the gateway message ids it refers to.

Shapes come from the gateway notes: WuzAPI session events (`{"type", "event", ...}`, docs/gateways/wuzapi.md §4.3)
and the instance family's callbacks (`DeliveryCallback`, `MessageStatusCallback`, ... docs/gateways/zapi.md §5).
Payloads are untrusted input, so every lookup tolerates missing keys and wrong types.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from tui.api.fields import dict_of, list_of, text_of
from tui.webhooks.identities import identities_in, spoken
from tui.gateways.render import render_zapi

UNKNOWN = "unknown"
DELIVERY = "Delivery"
SUMMARY_LIMIT = 200

Classification = tuple[str, str, tuple[str, ...]]


def classify(payload: Any) -> Classification:
    """(kind, one-line summary, message ids) of a parsed payload; never raises."""
    if not isinstance(payload, dict):
        return UNKNOWN, _one_line(f"{UNKNOWN}: {_compact(payload)}"), ()
    event_type = payload.get("type")
    if not isinstance(event_type, str) or not event_type.strip():
        return UNKNOWN, _one_line(f"{UNKNOWN}: {_compact(payload)}"), ()
    kind = _KIND_ALIASES.get(event_type.strip().lower(), event_type.strip())
    describe = _DESCRIBERS.get(kind, _describe_other)
    summary, ids = describe(kind, payload)
    return kind, _one_line(spoken(summary, identities_in(payload))), _unique(ids)


def _describe_message(kind: str, payload: dict) -> tuple[str, list[Any]]:
    event = dict_of(payload.get("event"))
    info = dict_of(event.get("Info"))
    message = dict_of(event.get("Message"))
    sender = _who(info.get("Sender")) or _who(info.get("Chat")) or "?"
    chat = _who(info.get("Chat"))
    if info.get("IsFromMe") is True:
        where = f"to {chat or '?'}"
    elif info.get("IsGroup") is True and chat:
        where = f"from {sender} in {chat}"
    else:
        where = f"from {sender}"
    ids: list[Any] = [info.get("ID")]
    for part in message.values():
        part = dict_of(part)
        ids.append(dict_of(part.get("contextInfo")).get("stanzaID"))
        ids.append(dict_of(part.get("key")).get("ID"))  # reactions point at the message they react to
    vote = dict_of(payload.get("pollVote"))
    ids.append(vote.get("pollCreationMsgID"))
    for part in message.values():
        ids.append(dict_of(dict_of(part).get("pollCreationMessageKey")).get("ID"))
    if vote:  # WuzAPI decrypts a vote into this top-level extra (docs/gateways/wuzapi.md §4.3)
        return f"{kind} {where}: [poll vote] {_names(vote.get('selectedOptions'))}", ids
    return f"{kind} {where}: {_message_text(message)}", ids


# Protobuf parts that ride along with the content and say nothing about it.
_MESSAGE_METADATA = {"messageContextInfo", "senderKeyDistributionMessage"}
_MEDIA_PARTS = {
    "imageMessage": "image",
    "videoMessage": "video",
    "audioMessage": "audio",
    "documentMessage": "document",
    "stickerMessage": "sticker",
    "ptvMessage": "video",
}


def _message_text(message: dict) -> str:
    """The content of a WuzAPI `Message` (whatsmeow's protobuf as JSON, lowerCamel), never a field name alone."""
    conversation = message.get("conversation")
    if isinstance(conversation, str):
        return conversation
    wrapped = dict_of(dict_of(message.get("documentWithCaptionMessage")).get("message"))
    if wrapped:
        return _message_text(wrapped)
    for name, part in message.items():
        if name in _MESSAGE_METADATA or not isinstance(part, dict):
            continue
        text = _part_text(name, part)
        if text is not None:
            return text
    return "(no content)"


def _part_text(name: str, part: dict) -> str | None:
    if name == "extendedTextMessage":
        return text_of(part.get("text")) or "(no text)"
    if name == "reactionMessage":
        target = text_of(dict_of(part.get("key")).get("ID")) or "?"
        emoji = text_of(part.get("text"))
        return f"[reaction] {emoji} to {target}" if emoji else f"[reaction removed] from {target}"
    if name.startswith("pollCreationMessage"):  # V2, V3… carry the same fields
        options = _names(part.get("options"), "optionName")
        return f"[poll] {text_of(part.get('name')) or '?'} ({options})"
    if name == "pollUpdateMessage":
        return "[poll vote] (encrypted)"
    if name in ("buttonsResponseMessage", "templateButtonReplyMessage"):
        chosen = text_of(part.get("selectedDisplayText")) or text_of(part.get("selectedButtonID")) or text_of(part.get("selectedID"))
        return f"[button reply] {chosen or '?'}"
    if name == "listResponseMessage":
        chosen = text_of(part.get("title")) or text_of(dict_of(part.get("singleSelectReply")).get("selectedRowID"))
        return f"[list reply] {chosen or '?'}"
    if name in _MEDIA_PARTS:
        label = _MEDIA_PARTS[name]
        detail = text_of(part.get("caption")) or text_of(part.get("fileName")) or text_of(part.get("title"))
        if not detail and label == "audio" and text_of(part.get("seconds")):
            detail = f"{text_of(part.get('seconds'))} s"
        return f"[{label}] {detail}".rstrip()
    if name == "locationMessage":
        return f"[location] {text_of(part.get('name')) or text_of(part.get('address'))}".rstrip()
    if name in ("contactMessage", "contactsArrayMessage"):
        return f"[contact] {text_of(part.get('displayName'))}".rstrip()
    if name == "protocolMessage":
        return "[protocol message]"
    label = name.removesuffix("Message") or name
    for field in ("text", "caption", "displayName", "fileName", "name", "title"):
        if text_of(part.get(field)):
            return f"[{label}] {text_of(part[field])}"
    return f"[{label}]"


def _names(options: Any, field: str = "name") -> str:
    """`a, b, c` from a list of option names or of objects holding them."""
    names = [text_of(dict_of(item).get(field)) if isinstance(item, dict) else text_of(item) for item in list_of(options)]
    return ", ".join(name for name in names if name) or "no options"


def _describe_read_receipt(kind: str, payload: dict) -> tuple[str, list[Any]]:
    event = dict_of(payload.get("event"))
    state = text_of(payload.get("state")) or text_of(event.get("Type")) or "receipt"
    ids = list_of(event.get("MessageIDs"))
    who = _who(event.get("Sender")) or _who(event.get("Chat")) or "?"
    return f"{kind} {state} by {who} ({_count(len(ids), 'message')})", ids


def _describe_chat_presence(kind: str, payload: dict) -> tuple[str, list[Any]]:
    event = dict_of(payload.get("event"))
    who = _who(event.get("Sender")) or _who(event.get("Chat")) or "?"
    state = text_of(event.get("State")) or "?"
    media = text_of(event.get("Media"))
    return f"{kind} {who} {state}{' ' + media if media else ''}", []


def _describe_delivery(kind: str, payload: dict) -> tuple[str, list[Any]]:
    who = _who(payload.get("phone")) or "?"
    error = text_of(payload.get("error"))
    outcome = f"failed: {error}" if error else "sent"  # handed to WhatsApp, not yet on the phone (receipts.py)
    code = text_of(payload.get("errorCode"))
    return f"{kind} to {who} {outcome}{f' ({code})' if code else ''}", [
        payload.get("messageId"),
        payload.get("zaapId"),
    ]


def _describe_message_status(kind: str, payload: dict) -> tuple[str, list[Any]]:
    ids = list_of(payload.get("ids")) or [payload.get("id")]
    who = _who(payload.get("phone")) or "?"
    status = text_of(payload.get("status")) or "?"
    counted = len([i for i in ids if text_of(i)])
    return f"{kind} {status} {who} ({_count(counted, 'message')})", ids


def _describe_received(kind: str, payload: dict) -> tuple[str, list[Any]]:
    who = _who(payload.get("phone")) or "?"
    name = text_of(payload.get("senderName"))
    sender = f"{name} ({who})" if name and name != who else who
    direction = "to" if payload.get("fromMe") is True else "from"
    notification = text_of(payload.get("notification"))
    ids = [payload.get("messageId"), payload.get("referenceMessageId")]
    for key in ("reaction", "eventResponse", "pinMessage"):  # each points at the message it is about
        ids.append(dict_of(dict_of(payload.get(key)).get("referencedMessage")).get("messageId"))
    if notification:
        return f"{kind} {notification} {direction} {sender}", ids
    return f"{kind} {direction} {sender}: {_received_text(payload)}", ids


def _received_text(payload: dict) -> str:
    text = dict_of(payload.get("text"))
    message = text.get("message")
    if isinstance(message, str):
        return message
    reaction = dict_of(payload.get("reaction"))
    if reaction:
        target = text_of(dict_of(reaction.get("referencedMessage")).get("messageId")) or "?"
        return f"[reaction] {text_of(reaction.get('value'))} to {target}"
    poll = dict_of(payload.get("poll"))
    if poll:
        return f"[poll] {text_of(poll.get('question')) or '?'} ({_names(poll.get('options'))})"
    vote = dict_of(payload.get("pollVote"))
    if vote:
        return f"[poll vote] {_names(vote.get('options'))}"
    buttons = dict_of(payload.get("buttonsResponseMessage"))
    if buttons:
        return f"[button reply] {text_of(buttons.get('message')) or text_of(buttons.get('buttonId')) or '?'}"
    listed = dict_of(payload.get("listResponseMessage"))
    if listed:
        chosen = text_of(listed.get("title")) or text_of(listed.get("message")) or text_of(listed.get("selectedRowId"))
        return f"[list reply] {chosen or '?'}"
    for key in ("image", "video", "audio", "document", "sticker", "location", "contact"):
        part = payload.get(key)
        if isinstance(part, dict):
            detail = next(
                (text_of(part[f]) for f in ("caption", "fileName", "title", "displayName", "address") if text_of(part.get(f))),
                "",
            )
            if not detail and key == "audio" and text_of(part.get("seconds")):
                detail = f"{text_of(part.get('seconds'))} s"
            return f"[{key}] {detail}".rstrip()
    return render_zapi(payload)[1]  # templates, carousels, orders, payments, events…: the inbox's words, on one line


def _describe_presence(kind: str, payload: dict) -> tuple[str, list[Any]]:
    event = dict_of(payload.get("event"))
    who = _who(event.get("From")) or _who(payload.get("phone")) or "?"
    state = text_of(payload.get("state")) or text_of(payload.get("status")) or "?"
    return f"{kind} {who} {state}", []


def _describe_call_offer(kind: str, payload: dict) -> tuple[str, list[Any]]:
    event = dict_of(payload.get("event"))
    caller = _who(event.get("CallCreator")) or _who(event.get("From")) or "?"
    return f"{kind} from {caller}", [event.get("CallID")]


def _describe_group_info(kind: str, payload: dict) -> tuple[str, list[Any]]:
    """whatsmeow's events.GroupInfo: one notification may carry several changes, each a set field."""
    event = dict_of(payload.get("event"))
    group = _who(event.get("JID")) or "?"
    changes = []
    name = text_of(dict_of(event.get("Name")).get("Name"))
    if name:
        changes.append(f"name → {name}")
    if event.get("Topic") is not None:
        topic = text_of(dict_of(event.get("Topic")).get("Topic"))
        changes.append(f"description → {topic}" if topic else "description removed")
    for field, words in (("Join", "joined"), ("Leave", "left"), ("Promote", "made admin"), ("Demote", "no longer admin")):
        people = [_who(jid) for jid in list_of(event.get(field)) if _who(jid)]
        if people:
            changes.append(f"{words}: {', '.join(people)}")
    for field, words in (("Locked", "settings locked"), ("Announce", "only admins send")):
        setting = dict_of(event.get(field))
        if setting:
            flag = setting.get(f"Is{field}")
            changes.append(f"{words}: {'on' if flag is True else 'off'}")
    if event.get("Delete") is not None:
        changes.append("group deleted")
    if text_of(event.get("NewInviteLink")):
        changes.append("invite link reset")
    by = _who(event.get("Sender"))
    return f"{kind} {group}: {'; '.join(changes) or 'changed'}{f' (by {by})' if by else ''}", []


def _describe_pair_success(kind: str, payload: dict) -> tuple[str, list[Any]]:
    """whatsmeow's PairSuccess (`{"ID", "LID", "BusinessName", "Platform"}`): the number now paired, and on what."""
    event = dict_of(payload.get("event"))
    number = _who(event.get("ID")).partition(":")[0] or _who(event.get("LID")).partition(":")[0] or "?"
    details = ", ".join(word for word in (text_of(event.get("BusinessName")), text_of(event.get("Platform"))) if word)
    return f"{kind} {number}{f' ({details})' if details else ''}", []


def _describe_undecryptable(kind: str, payload: dict) -> tuple[str, list[Any]]:
    """whatsmeow's UndecryptableMessage: which chat's message could not be read (its content may follow, same id)."""
    event = dict_of(payload.get("event"))
    info = dict_of(event.get("Info"))
    chat = _who(info.get("Chat")) or "?"
    sender = _who(info.get("Sender"))
    if info.get("IsFromMe") is True:
        where = f"to {chat}"
    elif info.get("IsGroup") is True and sender and sender != chat:
        where = f"from {sender} in {chat}"
    else:
        where = f"from {sender or chat}"
    reason = "unavailable" if event.get("IsUnavailable") is True else "could not be decrypted"
    message_id = text_of(info.get("ID"))
    return f"{kind} {where}: message {message_id or '?'} {reason} (waiting for it)", [info.get("ID")]


def _describe_history_sync(kind: str, payload: dict) -> tuple[str, list[Any]]:
    data = dict_of(dict_of(payload.get("event")).get("Data"))
    conversations = list_of(data.get("conversations"))
    messages = sum(len(list_of(dict_of(chat).get("messages"))) for chat in conversations)
    return f"{kind}: {_count(len(conversations), 'conversation')}, {_count(messages, 'message')}", []


def _describe_connection(kind: str, payload: dict) -> tuple[str, list[Any]]:
    """WuzAPI's Connected/Disconnected (an empty event) and Z-API's Connected/DisconnectedCallback."""
    parts = [kind]
    phone = _who(payload.get("phone"))
    if phone:
        parts.append(phone)
    error = text_of(payload.get("error"))
    if error:
        parts.append(f"({error})")
    return " ".join(parts), []


def _describe_other(kind: str, payload: dict) -> tuple[str, list[Any]]:
    parts = [kind]
    for key in ("phone", "state", "status", "error", "reason"):
        value = payload.get(key)
        if isinstance(value, (str, int, float)) and not isinstance(value, bool) and str(value):
            parts.append(f"{key}={value}")
    event = payload.get("event")
    if isinstance(event, str) and event and event != kind:
        parts.append(event)
    return " ".join(parts), [payload.get("messageId")]


_KIND_ALIASES = {"deliverycallback": DELIVERY, "delivery": DELIVERY}

_DESCRIBERS: dict[str, Callable[[str, dict], tuple[str, list[Any]]]] = {
    "Message": _describe_message,
    "ReadReceipt": _describe_read_receipt,
    "ChatPresence": _describe_chat_presence,
    DELIVERY: _describe_delivery,
    "MessageStatusCallback": _describe_message_status,
    "ReceivedCallback": _describe_received,
    "Presence": _describe_presence,
    "PresenceChatCallback": _describe_presence,
    "CallOffer": _describe_call_offer,
    "GroupInfo": _describe_group_info,
    "HistorySync": _describe_history_sync,
    "PairSuccess": _describe_pair_success,
    "UndecryptableMessage": _describe_undecryptable,
    "Connected": _describe_connection,
    "Disconnected": _describe_connection,
    "ConnectedCallback": _describe_connection,
    "DisconnectedCallback": _describe_connection,
}


def _who(value: Any) -> str:
    """A JID or phone as people read it: `5511999999999@s.whatsapp.net` → `5511999999999`; groups keep `@g.us`."""
    text = text_of(value)
    for suffix in ("@s.whatsapp.net", "@c.us"):
        text = text.removesuffix(suffix)
    return text


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _unique(ids: list[Any]) -> tuple[str, ...]:
    seen: dict[str, None] = {}
    for value in ids:
        text = text_of(value)
        if text:
            seen.setdefault(text, None)
    return tuple(seen)


def _compact(payload: Any) -> str:
    try:
        return json.dumps(payload, ensure_ascii=False, separators=(",", ":"))[: SUMMARY_LIMIT * 2]
    except (TypeError, ValueError, RecursionError):
        return repr(payload)[: SUMMARY_LIMIT * 2]


def _one_line(text: str) -> str:
    head = text[: SUMMARY_LIMIT + 1]
    if head.isprintable() and "  " not in head and head[:1] != " " and head[-1:] != " ":
        # Already one line of single spaces (the usual summary): collapsing would give these characters back.
        # isprintable() is False for every other whitespace and for lone surrogates, which take the long way.
        return head if len(head) <= SUMMARY_LIMIT else head[: SUMMARY_LIMIT - 1] + "…"
    # Collapsing whitespace only shortens text, so a prefix four times the limit decides the summary unless it is
    # nearly all whitespace; a long message is not split word by word to keep its first 200 characters.
    head = text[: SUMMARY_LIMIT * 4]
    line = " ".join(head.split())
    if len(head) < len(text) and len(line) <= SUMMARY_LIMIT:
        line = " ".join(text.split())
    # Lone surrogates (from `\ud800` escapes) cannot be stored or printed; replace them rather than fail.
    if not line.isascii():
        line = line.encode("utf-8", "replace").decode("utf-8")
    return line if len(line) <= SUMMARY_LIMIT else line[: SUMMARY_LIMIT - 1] + "…"
