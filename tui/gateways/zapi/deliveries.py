"""Z-API's callbacks as the listener reads them (docs/gateways/zapi.md §5: `DeliveryCallback`,
`MessageStatusCallback`, `ReceivedCallback`, ...): each named by its top-level `type`."""

from __future__ import annotations

from typing import Any

from tui.api.deliveries import TypedDeliveries, count, names, who
from tui.api.fields import dict_of, list_of, text_of
from tui.gateways.deliveries import describe_connection, describe_presence
from tui.gateways.render import render_zapi

DELIVERY = "Delivery"


def describe_delivery(kind: str, payload: dict) -> tuple[str, list[Any]]:
    person = who(payload.get("phone")) or "?"
    error = text_of(payload.get("error"))
    outcome = f"failed: {error}" if error else "sent"  # handed to WhatsApp, not yet on the phone (receipts.py)
    code = text_of(payload.get("errorCode"))
    return f"{kind} to {person} {outcome}{f' ({code})' if code else ''}", [
        payload.get("messageId"),
        payload.get("zaapId"),
    ]


def _describe_message_status(kind: str, payload: dict) -> tuple[str, list[Any]]:
    ids = list_of(payload.get("ids")) or [payload.get("id")]
    person = who(payload.get("phone")) or "?"
    status = text_of(payload.get("status")) or "?"
    counted = len([i for i in ids if text_of(i)])
    return f"{kind} {status} {person} ({count(counted, 'message')})", ids


def _describe_received(kind: str, payload: dict) -> tuple[str, list[Any]]:
    person = who(payload.get("phone")) or "?"
    name = text_of(payload.get("senderName"))
    sender = f"{name} ({person})" if name and name != person else person
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
        return f"[poll] {text_of(poll.get('question')) or '?'} ({names(poll.get('options'))})"
    vote = dict_of(payload.get("pollVote"))
    if vote:
        return f"[poll vote] {names(vote.get('options'))}"
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


ZAPI_DELIVERIES = TypedDeliveries(
    kinds={
        DELIVERY: describe_delivery,
        "MessageStatusCallback": _describe_message_status,
        "ReceivedCallback": _describe_received,
        "PresenceChatCallback": describe_presence,
        "ConnectedCallback": describe_connection,
        "DisconnectedCallback": describe_connection,
    },
    aliases={"deliverycallback": DELIVERY},
)
