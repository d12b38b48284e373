"""What several gateways' deliveries share: WhatsApp's own message (the protobuf `Message` as JSON, written by
whatsmeow for WuzAPI and by Baileys for Evolution API) in one line, and the connection and presence notices that
Z-API and WuzAPI describe alike. Each gateway's own kinds are in its package (`tui.gateways.<name>.deliveries`).
"""

from __future__ import annotations

from typing import Any

from tui.api.deliveries import names, who
from tui.api.fields import dict_of, text_of

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


def message_text(message: dict) -> str:
    """The content of a WhatsApp `Message` (protobuf as JSON, lowerCamel), never a field name alone."""
    conversation = message.get("conversation")
    if isinstance(conversation, str):
        return conversation
    wrapped = dict_of(dict_of(message.get("documentWithCaptionMessage")).get("message"))
    if wrapped:
        return message_text(wrapped)
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
        target = key_id(part.get("key")) or "?"
        emoji = text_of(part.get("text"))
        return f"[reaction] {emoji} to {target}" if emoji else f"[reaction removed] from {target}"
    if name.startswith("pollCreationMessage"):  # V2, V3… carry the same fields
        options = names(part.get("options"), "optionName")
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


def key_id(key: Any) -> str:
    """The message id in a protobuf `MessageKey`: whatsmeow writes it `ID`, Baileys `id`."""
    key = dict_of(key)
    return text_of(key.get("ID")) or text_of(key.get("id"))


def describe_presence(kind: str, payload: dict) -> tuple[str, list[Any]]:
    """WuzAPI's Presence (`event.From`, `state`) and Z-API's PresenceChatCallback (`phone`, `status`)."""
    event = dict_of(payload.get("event"))
    person = who(event.get("From")) or who(payload.get("phone")) or "?"
    state = text_of(payload.get("state")) or text_of(payload.get("status")) or "?"
    return f"{kind} {person} {state}", []


def describe_connection(kind: str, payload: dict) -> tuple[str, list[Any]]:
    """WuzAPI's Connected/Disconnected (an empty event) and Z-API's Connected/DisconnectedCallback."""
    parts = [kind]
    phone = who(payload.get("phone"))
    if phone:
        parts.append(phone)
    error = text_of(payload.get("error"))
    if error:
        parts.append(f"({error})")
    return " ".join(parts), []
