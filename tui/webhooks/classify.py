"""Name a webhook payload's kind, say in one line who did what, and list the gateway message ids it refers to.

Shapes come from the research notes: WuzAPI session events (`{"type", "event", ...}`, wuzapi.md §4.3) and the
instance family's callbacks (`DeliveryCallback`, `MessageStatusCallback`, ... zapi.md §5). Payloads are
untrusted input, so every lookup tolerates missing keys and wrong types.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

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
    return kind, _one_line(summary), _unique(ids)


def _describe_message(kind: str, payload: dict) -> tuple[str, list[Any]]:
    event = _dict(payload.get("event"))
    info = _dict(event.get("Info"))
    message = _dict(event.get("Message"))
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
        part = _dict(part)
        ids.append(_dict(part.get("contextInfo")).get("stanzaID"))
        ids.append(_dict(part.get("key")).get("ID"))  # reactions point at the message they react to
    ids.append(_dict(payload.get("pollVote")).get("pollCreationMsgID"))
    return f"{kind} {where}: {_message_text(message)}", ids


def _message_text(message: dict) -> str:
    if isinstance(message.get("conversation"), str):
        return message["conversation"]
    for name, part in message.items():
        if not isinstance(part, dict):
            continue
        label = name.removesuffix("Message") or name
        for field in ("text", "caption", "displayName", "fileName", "name", "title"):
            if isinstance(part.get(field), str) and part[field]:
                return part[field] if name == "extendedTextMessage" else f"[{label}] {part[field]}"
        return f"[{label}]"
    return "(no content)"


def _describe_read_receipt(kind: str, payload: dict) -> tuple[str, list[Any]]:
    event = _dict(payload.get("event"))
    state = _text(payload.get("state")) or _text(event.get("Type")) or "receipt"
    ids = _list(event.get("MessageIDs"))
    who = _who(event.get("Sender")) or _who(event.get("Chat")) or "?"
    return f"{kind} {state} by {who} ({_count(len(ids), 'message')})", ids


def _describe_chat_presence(kind: str, payload: dict) -> tuple[str, list[Any]]:
    event = _dict(payload.get("event"))
    who = _who(event.get("Sender")) or _who(event.get("Chat")) or "?"
    state = _text(event.get("State")) or "?"
    media = _text(event.get("Media"))
    return f"{kind} {who} {state}{' ' + media if media else ''}", []


def _describe_delivery(kind: str, payload: dict) -> tuple[str, list[Any]]:
    who = _who(payload.get("phone")) or "?"
    error = _text(payload.get("error"))
    outcome = f"failed: {error}" if error else "delivered"
    code = _text(payload.get("errorCode"))
    return f"{kind} to {who} {outcome}{f' ({code})' if code else ''}", [
        payload.get("messageId"),
        payload.get("zaapId"),
    ]


def _describe_message_status(kind: str, payload: dict) -> tuple[str, list[Any]]:
    ids = _list(payload.get("ids")) or [payload.get("id")]
    who = _who(payload.get("phone")) or "?"
    status = _text(payload.get("status")) or "?"
    counted = len([i for i in ids if _text(i)])
    return f"{kind} {status} {who} ({_count(counted, 'message')})", ids


def _describe_received(kind: str, payload: dict) -> tuple[str, list[Any]]:
    who = _who(payload.get("phone")) or "?"
    name = _text(payload.get("senderName"))
    sender = f"{name} ({who})" if name and name != who else who
    direction = "to" if payload.get("fromMe") is True else "from"
    notification = _text(payload.get("notification"))
    ids = [payload.get("messageId"), payload.get("referenceMessageId")]
    reaction = _dict(payload.get("reaction"))
    ids.append(_dict(reaction.get("referencedMessage")).get("messageId"))
    if notification:
        return f"{kind} {notification} {direction} {sender}", ids
    return f"{kind} {direction} {sender}: {_received_text(payload)}", ids


def _received_text(payload: dict) -> str:
    text = _dict(payload.get("text"))
    if isinstance(text.get("message"), str):
        return text["message"]
    reaction = _dict(payload.get("reaction"))
    if reaction:
        return f"[reaction] {_text(reaction.get('value'))}"
    for key in ("image", "video", "audio", "document", "sticker", "location", "contact", "poll", "pollVote"):
        part = payload.get(key)
        if isinstance(part, dict):
            detail = next(
                (part[f] for f in ("caption", "fileName", "title", "displayName", "question", "address") if _text(part.get(f))),
                "",
            )
            return f"[{key}] {detail}".rstrip()
    return "(no content)"


def _describe_presence(kind: str, payload: dict) -> tuple[str, list[Any]]:
    event = _dict(payload.get("event"))
    who = _who(event.get("From")) or _who(payload.get("phone")) or "?"
    state = _text(payload.get("state")) or _text(payload.get("status")) or "?"
    return f"{kind} {who} {state}", []


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
}


def _who(value: Any) -> str:
    """A JID or phone as people read it: `5511999999999@s.whatsapp.net` → `5511999999999`; groups keep `@g.us`."""
    text = _text(value)
    for suffix in ("@s.whatsapp.net", "@c.us"):
        text = text.removesuffix(suffix)
    return text


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    return ""


def _dict(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list:
    return value if isinstance(value, list) else []


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _unique(ids: list[Any]) -> tuple[str, ...]:
    seen: dict[str, None] = {}
    for value in ids:
        text = _text(value)
        if text:
            seen.setdefault(text, None)
    return tuple(seen)


def _compact(payload: Any) -> str:
    try:
        return json.dumps(payload, ensure_ascii=False, separators=(",", ":"))[: SUMMARY_LIMIT * 2]
    except (TypeError, ValueError, RecursionError):
        return repr(payload)[: SUMMARY_LIMIT * 2]


def _one_line(text: str) -> str:
    line = " ".join(text.split())
    # Lone surrogates (from `\ud800` escapes) cannot be stored or printed; replace them rather than fail.
    line = line.encode("utf-8", "replace").decode("utf-8")
    return line if len(line) <= SUMMARY_LIMIT else line[: SUMMARY_LIMIT - 1] + "…"
