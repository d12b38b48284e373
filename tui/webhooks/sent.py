"""The account's own sends as inbox messages: what the app and `gateway-tui call` record after the gateway
accepted a message, so a conversation holds both sides wherever the message was sent from.

    message = sent_message(OperationId.SEND_TEXT, SendText(phone="5511999999999", message="hi"), "3EB0...")
    store.record_sent(message)    # same SQLite file, same tables as the received events (conversations.py)

Each kind is rendered for reading here, from the request that was sent (the gateway's answer only adds the id).
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from tui.api.models import (
    ContactCard,
    ContactSent,
    ForwardMessage,
    Request,
    SendButtonActions,
    SendButtonList,
    SendLink,
    SendLocation,
    SendPoll,
    SendSticker,
    SendText,
)
from tui.api.operations import OPERATIONS, OperationId
from tui.webhooks.conversations import NewMessage, chat_id_of

# The operations that send a message: the table's `sends` column, not a list of our own.
SEND_OPERATIONS = frozenset(op.id for op in OPERATIONS.values() if op.sends is not None)


def sent_message(op_id: OperationId | str, request: Request, message_id: str | None) -> NewMessage | None:
    """The inbox message for one accepted send, or None when the operation sends no message."""
    kind = OPERATIONS[OperationId(op_id)].sends
    rendered = _render(request)
    if rendered is None or kind is None:
        return None
    recipient, body = rendered
    return NewMessage(chat_id_of(recipient), True, kind.value, body, message_id or None)


@runtime_checkable
class SentAnswer(Protocol):
    """An answer that names the message it sent: `SendResult`, or anything else that reads the same."""

    @property
    def message_id(self) -> str: ...


def message_id_of(result: object) -> str | None:
    """The gateway's id for a sent message, whichever answer shape the operation has."""
    if isinstance(result, SentAnswer):
        message_id = result.message_id
    elif isinstance(result, ContactSent):
        message_id = result.Id
    else:
        return None
    return message_id if isinstance(message_id, str) and message_id else None


def _render(request: Request) -> tuple[str, str] | None:
    """(recipient, text for reading) of a send's request."""
    if isinstance(request, SendText):
        return request.phone, request.message
    if isinstance(request, SendButtonActions):
        labels = "  ".join(f"[ {button.text} ]" for button in request.buttons)
        return request.phone, _lines(request.title, request.message, request.footer, labels)
    if isinstance(request, SendButtonList):
        options = [f"  • {button.label}" for button in request.buttonList.buttons]
        return request.phone, _lines(request.message, *options)
    if isinstance(request, SendLink):
        preview = " — ".join(part for part in (request.title, request.linkDescription) if part)
        return request.phone, _lines(request.message, f"  ⧉ {request.linkUrl}", preview and f"  {preview}")
    if isinstance(request, SendPoll):
        options = [f"  ○ {option.name}" for option in request.poll]
        return request.phone, _lines(f"[poll] {request.message}", *options)
    if isinstance(request, SendLocation):
        return request.phone, _lines(f"[location] {request.title}", f"  {request.address} ({request.lat}, {request.lng})")
    if isinstance(request, SendSticker):
        return request.phone, f"[sticker] {request.sticker.rsplit('/', 1)[-1]}"
    if isinstance(request, ContactCard):
        return request.Phone, f"[contact] {request.Name}"
    if isinstance(request, ForwardMessage):
        return request.phone, f"[forwarded] message {request.messageId}"
    return None


def _lines(*parts: str | None) -> str:
    return "\n".join(part for part in parts if part)
