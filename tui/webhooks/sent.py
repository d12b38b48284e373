"""The account's own sends as inbox messages: what the app and `gateway-tui call` record after the gateway
accepted a message, so a conversation holds both sides wherever the message was sent from.

    message = sent_message(OperationId.SEND_TEXT, SendText(phone="5511999999999", message="hi"), "3EB0...")
    store.record_sent(message)    # same SQLite file, same tables as the received events (conversations.py)

Each kind is rendered for reading here, from the request that was sent (the gateway's answer only adds the id).
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from tui.api.models import (
    ChatSendAudio,
    ChatSendDocument,
    ChatSendImage,
    ChatSendVideo,
    ContactCard,
    ContactSent,
    ForwardMessage,
    Request,
    SendAudio,
    SendButtonActions,
    SendButtonList,
    SendDocument,
    SendImage,
    SendLink,
    SendLocation,
    SendPoll,
    SendSticker,
    SendText,
    SendVideo,
    data_url_payload,
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
    return _render_media(request)


_MEDIA_LABELS: dict[type[Request], str] = {
    SendImage: "image", ChatSendImage: "image", SendVideo: "video", ChatSendVideo: "video",
    SendAudio: "audio", ChatSendAudio: "audio", SendDocument: "document", ChatSendDocument: "document",
}


def _render_media(request: Request) -> tuple[str, str] | None:
    """`[image] 12 KB  caption`, `[document] invoice.pdf, 80 KB  caption`: never the file's bytes."""
    if isinstance(request, SendImage | SendVideo | SendAudio | SendDocument):
        phone, source = request.phone, _media_source(request)
        name = request.fileName if isinstance(request, SendDocument) else None
        caption = None if isinstance(request, SendAudio) else request.caption
    elif isinstance(request, ChatSendImage | ChatSendVideo):
        phone, source, name, caption = request.Phone, _media_source(request), None, request.Caption
    elif isinstance(request, ChatSendAudio | ChatSendDocument):
        phone, source, caption = request.Phone, _media_source(request), None
        name = request.FileName if isinstance(request, ChatSendDocument) else None
    else:
        return None
    kind = _MEDIA_LABELS[type(request)]
    what = ", ".join(part for part in (name, source) if part)
    return phone, f"[{kind}] {what}" + (f"  {caption}" if caption else "")


def _media_source(request: Request) -> str:
    """A media send's link, or the size of the file it carried inline."""
    from tui.api.media import size_text

    value = next(str(v) for k, v in request.wire().items() if k.lower() in ("image", "video", "audio", "document"))
    payload = data_url_payload(value)
    if not payload:
        return value
    return size_text(len(payload) * 3 // 4 - payload[-2:].count("="))


def _lines(*parts: str | None) -> str:
    return "\n".join(part for part in parts if part)
