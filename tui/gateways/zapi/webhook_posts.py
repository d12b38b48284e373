"""Z-API's callbacks as the sandbox posts them in the zapi instance dialect (docs/gateways/zapi.md §5): unsigned JSON
(Z-API has no signing), `momment` in epoch milliseconds, groups as `-group`, each kind to its own URL (Z-API's
`update-webhook-*` calls) or, while that is unset, the delivery URL.

After a send: the `DeliveryCallback` (with `error` when it failed; nothing else follows a failed send), then, while
the instance is connected, `MessageStatusCallback` RECEIVED and READ, `PresenceChatCallback` COMPOSING and, for
send-button-actions, a `ReceivedCallback` with `buttonsResponseMessage` (a text to a contact: one with `text`, or
a photo or a PDF on the sandbox's storage when asked for one). A link's change: `ConnectedCallback` or
`DisconnectedCallback`. The `drop` fault names these by their `type`.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from tui.sandbox.context import Context
from tui.sandbox.delivery import answers_text
from tui.sandbox.events import JSON_CONTENT_TYPE, MEDIA_PATH, Peer, ReplyFile, media_reply_for, text_reply_for, zaap_id
from tui.sandbox.pairing import LinkEvent
from tui.sandbox.state import SandboxState, SentMessage, group_digits, is_group_jid
from tui.sandbox.webhook_posts import Post, Step

# Z-API's callback routes' kinds (tui.gateways.zapi.sandbox) by the `type` their bodies carry; /sandbox/fault names these.
ZAPI_CALLBACK_TYPES = {
    "delivery": "DeliveryCallback", "received": "ReceivedCallback", "message-status": "MessageStatusCallback",
    "chat-presence": "PresenceChatCallback", "connected": "ConnectedCallback", "disconnected": "DisconnectedCallback",
}


class ZapiWebhooks:
    """The instance family's webhooks in Z-API's dialect (tui.sandbox.webhook_posts.InstanceWebhooks)."""

    def __init__(self, context: Context) -> None:
        self.context = context
        self.state = context.state

    @property
    def instance_id(self) -> str:
        return self.context.instance_id

    def _callback(self, kind: str, build: Any, *, while_connected: bool = True) -> Step:
        """`build()`'s callback to its kind's URL (else the delivery URL), unsigned; nothing while the instance is
        not connected (`while_connected`) or the `drop` fault names its type."""

        def step() -> Post | None:
            url = self.state.zapi_callback_urls.get(kind) or self.state.delivery_url
            if not url or (while_connected and not self.state.instance_link.connected):
                return None
            if self.state.faults.drops(ZAPI_CALLBACK_TYPES[kind]):
                return None
            return Post(url, zapi_json(build()), JSON_CONTENT_TYPE, signed=False)

        return step

    def after_send(self, sent: SentMessage) -> list[Step]:
        now, new_id, state, instance_id = self.context.clock, self.context.new_id, self.state, self.instance_id

        def delivery() -> Post | None:  # to the delivery URL itself, connected or not
            if not state.delivery_url or state.faults.drops("DeliveryCallback"):
                return None
            return Post(state.delivery_url, zapi_json(zapi_delivery(instance_id, sent, now())), JSON_CONTENT_TYPE,
                        signed=False)

        if sent.failure:
            return [delivery]
        steps = [
            delivery,
            self._callback("message-status", lambda: zapi_message_status(instance_id, sent, "RECEIVED", now())),
            self._callback("message-status", lambda: zapi_message_status(instance_id, sent, "READ", now())),
            self._callback("chat-presence", lambda: zapi_presence(instance_id, sent)),
        ]
        if sent.first_button_text is not None:
            steps.append(self._callback("received", lambda: zapi_button_reply(instance_id, state, sent, new_id(), now())))
        elif answers_text(sent) and (reply := media_reply_for(sent.text)) is not None:
            steps.append(self._callback("received", lambda: zapi_media_reply(
                instance_id, state, sent, reply, self.context.server_url(), new_id(), now())))
        elif answers_text(sent):
            steps.append(self._callback("received", lambda: zapi_text_reply(instance_id, state, sent, new_id(), now())))
        return steps

    def received(self, payload: dict[str, Any]) -> list[Step]:
        return [self._callback("received", lambda: payload)]  # to the received URL, else the delivery URL

    def incoming(self, phone: str, text: str, message_id: str, *, alt: bool) -> list[Step]:
        return []  # the session family's `Message` says it

    def link_changed(self, event: LinkEvent) -> list[Step]:
        now = self.context.clock
        if event in (LinkEvent.PAIRED, LinkEvent.CONNECTED):
            number = self.state.instance_link.number or self.state.own_phone
            return [self._callback("connected", lambda: zapi_connected(self.instance_id, number, now()),
                                   while_connected=False)]
        return [self._callback("disconnected", lambda: zapi_disconnected(self.instance_id, now()),
                               while_connected=False)]


def zapi_phone(recipient: str) -> str:
    return f"{group_digits(recipient)}-group" if is_group_jid(recipient) else recipient


def _millis(now: datetime) -> int:
    return int(now.timestamp() * 1000)


def zapi_json(payload: dict[str, Any]) -> bytes:
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def zapi_delivery(instance_id: str, sent: SentMessage, now: datetime) -> dict[str, Any]:
    """`DeliveryCallback` (§5.1): handed to WhatsApp, or `error` when it failed."""
    payload: dict[str, Any] = {
        "type": "DeliveryCallback",
        "instanceId": instance_id,
        "phone": zapi_phone(sent.recipient),
        "zaapId": zaap_id(sent.message_id),
        "messageId": sent.message_id,
        "momment": _millis(now),
    }
    if sent.failure:
        payload["error"] = sent.failure
    return payload


def zapi_message_status(instance_id: str, sent: SentMessage, status: str, now: datetime) -> dict[str, Any]:
    """`MessageStatusCallback` (§5.2): `ids` is a list, status one of SENT, RECEIVED, READ, READ_BY_ME, PLAYED."""
    return {
        "type": "MessageStatusCallback",
        "instanceId": instance_id,
        "status": status,
        "ids": [sent.message_id],
        "momment": _millis(now),
        "phoneDevice": 0,
        "phone": zapi_phone(sent.recipient),
        "isGroup": is_group_jid(sent.recipient),
    }


def zapi_presence(instance_id: str, sent: SentMessage, status: str = "COMPOSING") -> dict[str, Any]:
    """`PresenceChatCallback` (§5.4): the recipient typing."""
    return {
        "type": "PresenceChatCallback",
        "instanceId": instance_id,
        "phone": zapi_phone(sent.recipient),
        "status": status,
        "lastSeen": None,
    }


def zapi_button_reply(
    instance_id: str, state: SandboxState, sent: SentMessage, reply_id: str, now: datetime
) -> dict[str, Any]:
    """`ReceivedCallback` (§5.3) with `buttonsResponseMessage`: the recipient pressed the first REPLY button."""
    peer = Peer.of(state, sent.recipient)
    sender = peer.sender.partition("@")[0]
    group = state.group(sent.recipient) if is_group_jid(sent.recipient) else None
    return {
        "isStatusReply": False,
        "chatLid": None,
        "connectedPhone": state.own_phone,
        "waitingMessage": False,
        "isEdit": False,
        "isGroup": peer.is_group,
        "isNewsletter": False,
        "instanceId": instance_id,
        "messageId": reply_id,
        "phone": zapi_phone(sent.recipient),
        "fromMe": False,
        "momment": _millis(now),
        "status": "RECEIVED",
        "chatName": group.name if group else peer.push_name,
        "senderPhoto": None,
        "senderName": peer.push_name,
        "photo": None,
        "broadcast": False,
        "participantPhone": sender if peer.is_group else None,
        "participantLid": None,
        "referenceMessageId": sent.message_id,
        "forwarded": False,
        "type": "ReceivedCallback",
        "fromApi": False,
        "buttonsResponseMessage": {"buttonId": sent.first_button_id or "1", "message": sent.first_button_text or ""},
    }


def zapi_text_reply(
    instance_id: str, state: SandboxState, sent: SentMessage, reply_id: str, now: datetime
) -> dict[str, Any]:
    """`ReceivedCallback` (§5.3) with `text.message`: the recipient answering a text."""
    payload = zapi_button_reply(instance_id, state, sent, reply_id, now)
    del payload["buttonsResponseMessage"]
    payload["referenceMessageId"] = None
    payload["text"] = {"message": text_reply_for(sent.text)}
    return payload


def zapi_media_reply(
    instance_id: str, state: SandboxState, sent: SentMessage, reply: ReplyFile, base_url: str, reply_id: str,
    now: datetime,
) -> dict[str, Any]:
    """`ReceivedCallback` with `image` or `document`: a URL on the sandbox standing in for Z-API's storage."""
    payload = zapi_text_reply(instance_id, state, sent, reply_id, now)
    del payload["text"]
    url = f"{base_url}{MEDIA_PATH}/{reply.name}"
    if reply.kind == "image":
        payload["image"] = {"mimeType": reply.mime_type, "imageUrl": url, "thumbnailUrl": url, "caption": reply.caption,
                            "width": 96, "height": 64, "viewOnce": False}
    else:
        payload["document"] = {"documentUrl": url, "mimeType": reply.mime_type, "title": reply.name, "pageCount": 1,
                               "fileName": reply.name}
    return payload


def zapi_connected(instance_id: str, number: str, now: datetime) -> dict[str, Any]:
    return {"type": "ConnectedCallback", "instanceId": instance_id, "connected": True, "phone": number,
            "momment": _millis(now)}


def zapi_disconnected(instance_id: str, now: datetime) -> dict[str, Any]:
    return {"type": "DisconnectedCallback", "instanceId": instance_id, "disconnected": True,
            "error": "Device has been disconnected", "momment": _millis(now)}
