"""The account's own sends as inbox messages: what the app and `gateway-tui call` record after the gateway
accepted a message, so a conversation holds both sides wherever the message was sent from.

    message = sent_message(OperationId.SEND_TEXT, SendText(phone="5511999999999", message="hi"), "3EB0...")
    store.record_sent(message)    # same SQLite file, same tables as the received events (conversations.py)

Each kind is rendered for reading here, from the request that was sent (the gateway's answer only adds the id).
"""

from __future__ import annotations

from typing import Any

from tui.api.models import (
    ContactCard,
    ForwardMessage,
    SendButtonActions,
    SendButtonList,
    SendLink,
    SendLocation,
    SendPoll,
    SendSticker,
    SendText,
)
from tui.api.operations import OperationId
from tui.webhooks.conversations import NewMessage, chat_id_of

SEND_OPERATIONS = frozenset({
    OperationId.SEND_TEXT, OperationId.SEND_BUTTON_ACTIONS, OperationId.SEND_BUTTON_LIST, OperationId.SEND_LINK,
    OperationId.SEND_POLL, OperationId.SEND_LOCATION, OperationId.SEND_STICKER, OperationId.FORWARD_MESSAGE,
    OperationId.SEND_CONTACT,
})


def sent_message(op_id: OperationId | str, request: Any, message_id: str | None) -> NewMessage | None:
    """The inbox message for one accepted send, or None when the operation sends no message."""
    rendered = _render(request)
    if rendered is None or OperationId(op_id) not in SEND_OPERATIONS:
        return None
    recipient, kind, body = rendered
    return NewMessage(chat_id_of(recipient), True, kind, body, message_id or None)


def message_id_of(result: Any) -> str | None:
    """The gateway's id for a sent message, whichever answer shape the operation has."""
    for name in ("message_id", "Id"):
        value = getattr(result, name, None)
        if isinstance(value, str) and value:
            return value
    return None


def _render(request: Any) -> tuple[str, str, str] | None:
    if isinstance(request, SendText):
        return request.phone, "text", request.message
    if isinstance(request, SendButtonActions):
        labels = "  ".join(f"[ {button.text} ]" for button in request.buttons)
        return request.phone, "buttons", _lines(request.title, request.message, request.footer, labels)
    if isinstance(request, SendButtonList):
        options = [f"  • {button.label}" for button in request.buttonList.buttons]
        return request.phone, "list", _lines(request.message, *options)
    if isinstance(request, SendLink):
        preview = " — ".join(part for part in (request.title, request.linkDescription) if part)
        return request.phone, "link", _lines(request.message, f"  ⧉ {request.linkUrl}", preview and f"  {preview}")
    if isinstance(request, SendPoll):
        options = [f"  ○ {option.name}" for option in request.poll]
        return request.phone, "poll", _lines(f"[poll] {request.message}", *options)
    if isinstance(request, SendLocation):
        return request.phone, "location", _lines(
            f"[location] {request.title}", f"  {request.address} ({request.lat}, {request.lng})"
        )
    if isinstance(request, SendSticker):
        return request.phone, "sticker", f"[sticker] {request.sticker.rsplit('/', 1)[-1]}"
    if isinstance(request, ContactCard):
        return request.Phone, "contact", f"[contact] {request.Name}"
    if isinstance(request, ForwardMessage):
        return request.phone, "forward", f"[forwarded] message {request.messageId}"
    return None


def _lines(*parts: str | None) -> str:
    return "\n".join(part for part in parts if part)
