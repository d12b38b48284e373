"""The account's own sends as inbox messages: what the app and `gateway-tui call` record after the gateway
accepted a message, so a conversation holds both sides wherever the message was sent from.

    message = sent_message(OperationId.SEND_TEXT, SendText(phone="5511999999999", message="hi"), "3EB0...")
    store.record_sent(message)    # same SQLite file, same tables as the received events (conversations.py)

Each kind reads as its request model says (`Sendable.reads_as`); the gateway's answer only adds the id.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from tui.api.models import ContactSent, Request, Sendable
from tui.api.operations import OperationId, all_operations, operation
from tui.webhooks.inbox_changes import NewMessage, chat_id_of


def send_operations() -> frozenset[OperationId]:
    """The operations that send a message: the table's `sends` column, not a list of our own."""
    return frozenset(op.id for op in all_operations() if op.sends is not None)


def sent_message(op_id: OperationId | str, request: Request, message_id: str | None) -> NewMessage | None:
    """The inbox message for one accepted send, or None when the operation sends no message. How it reads is
    the request model's own (`tui.api.models.Sendable`)."""
    kind = operation(op_id).sends
    if kind is None or not isinstance(request, Sendable):
        return None
    return NewMessage(chat_id_of(request.recipient), True, kind.value, request.reads_as(), message_id or None)


UNANSWERED_NOTE = "· no answer: it may have been sent"


def unanswered_message(op_id: OperationId | str, request: Request) -> NewMessage | None:
    """The inbox message for a send that got no answer (cancelled, timed out, its connection lost): it may have
    reached the gateway, and the thread says so; it has no id (none came back)."""
    message = sent_message(op_id, request, None)
    if message is None:
        return None
    return NewMessage(message.chat_id, True, message.kind, f"{message.body} {UNANSWERED_NOTE}", None)


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
