"""Realistic sample webhook events, one per kind, as the gateways send them (`gateway-tui trigger KIND`).

Session kinds are WuzAPI events (docs/gateways/wuzapi.md §4.3), built with the sandbox's own payload builders and
encoded as WuzAPI does (JSON, or the form with `jsonData`). Instance kinds are Z-API callbacks
(docs/gateways/zapi.md §5), always JSON. The sender is the demo contact Ana Souza writing to the sandbox account.

Dialects differ in signing: WuzAPI signs with the account's HMAC key; Z-API never signs; the gateway of the
spec (`gateway`, what the sandbox runs) signs every webhook of both families when a key is set.
"""

from __future__ import annotations

import enum
import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from tui.sandbox.events import (
    WEBHOOK_FORMATS,
    Peer,
    chat_presence,
    delivery_callback,
    encode_session_event,
    incoming_message,
    read_receipt,
)
from tui.sandbox.state import DEMO_CONTACTS, OWN_PHONE, SentMessage, user_jid
from tui.sandbox.wire import iso

SAMPLE_INSTANCE_ID = "3C0FFEE0A1B2C3D4E5F6A7B8C9D0E1F2"
SAMPLE_INSTANCE_NAME = "sandbox"
SAMPLE_MESSAGE_ID = "3EB0C431C26A1916E8F1A2"
SAMPLE_TEXT = "Hi! Is the order #1042 on its way?"
_PEER_PHONE, _PEER_NAME = DEMO_CONTACTS[0]


class Dialect(enum.StrEnum):
    SPEC = "spec"  # the spec's service (and the sandbox): both families, signed when a key is set
    WUZAPI = "wuzapi"  # session family only, signed
    ZAPI = "zapi"  # instance family only, never signed


class Family(enum.StrEnum):
    SESSION = "session"
    INSTANCE = "instance"


class SampleRefused(ValueError):
    """The kind, dialect and format do not go together; the message says why."""


@dataclass(frozen=True)
class Sample:
    kind: str
    family: Family
    description: str
    build: Callable[[datetime], dict[str, Any]]


def _peer() -> Peer:
    phone = user_jid(_PEER_PHONE)
    return Peer(chat=phone, sender=phone, push_name=_PEER_NAME, is_group=False)


def _message(now: datetime) -> dict[str, Any]:
    return incoming_message(_peer(), SAMPLE_MESSAGE_ID, {"conversation": SAMPLE_TEXT}, now)


def _read_receipt(now: datetime) -> dict[str, Any]:
    return read_receipt(_peer(), SAMPLE_MESSAGE_ID, now)


def _chat_presence(now: datetime) -> dict[str, Any]:
    return chat_presence(_peer())


def _presence(now: datetime) -> dict[str, Any]:
    return {"type": "Presence", "state": "online", "event": {"From": user_jid(_PEER_PHONE), "Unavailable": False, "LastSeen": iso(now)}}


def _connected(now: datetime) -> dict[str, Any]:
    return {"type": "Connected", "event": {}}


def _millis(now: datetime) -> int:
    return int(now.timestamp() * 1000)


def _delivery(now: datetime) -> dict[str, Any]:
    body = delivery_callback(SAMPLE_INSTANCE_ID, SentMessage(SAMPLE_MESSAGE_ID, _PEER_PHONE, "send-text"), now)
    payload: dict[str, Any] = json.loads(body)
    return payload


def _received(now: datetime) -> dict[str, Any]:
    return {
        "isStatusReply": False,
        "chatLid": None,
        "connectedPhone": OWN_PHONE,
        "waitingMessage": False,
        "isEdit": False,
        "isGroup": False,
        "isNewsletter": False,
        "instanceId": SAMPLE_INSTANCE_ID,
        "messageId": SAMPLE_MESSAGE_ID,
        "phone": _PEER_PHONE,
        "fromMe": False,
        "momment": _millis(now),
        "status": "RECEIVED",
        "chatName": _PEER_NAME,
        "senderPhoto": None,
        "senderName": _PEER_NAME,
        "photo": None,
        "broadcast": False,
        "participantPhone": None,
        "participantLid": None,
        "forwarded": False,
        "type": "ReceivedCallback",
        "fromApi": False,
        "text": {"message": SAMPLE_TEXT},
    }


def _message_status(now: datetime) -> dict[str, Any]:
    return {
        "instanceId": SAMPLE_INSTANCE_ID,
        "status": "READ",
        "ids": [SAMPLE_MESSAGE_ID],
        "momment": _millis(now),
        "phoneDevice": 0,
        "phone": _PEER_PHONE,
        "type": "MessageStatusCallback",
        "isGroup": False,
    }


def _presence_chat(now: datetime) -> dict[str, Any]:
    return {"type": "PresenceChatCallback", "phone": _PEER_PHONE, "status": "COMPOSING", "lastSeen": None, "instanceId": SAMPLE_INSTANCE_ID}


def _connected_callback(now: datetime) -> dict[str, Any]:
    return {"type": "ConnectedCallback", "instanceId": SAMPLE_INSTANCE_ID, "connected": True, "phone": OWN_PHONE, "momment": _millis(now)}


def _disconnected_callback(now: datetime) -> dict[str, Any]:
    return {
        "type": "DisconnectedCallback",
        "instanceId": SAMPLE_INSTANCE_ID,
        "disconnected": True,
        "error": "Device has been disconnected",
        "momment": _millis(now),
    }


SAMPLES: dict[str, Sample] = {
    sample.kind: sample
    for sample in (
        Sample("Message", Family.SESSION, "an incoming text message", _message),
        Sample("ReadReceipt", Family.SESSION, "the recipient read your message", _read_receipt),
        Sample("ChatPresence", Family.SESSION, "the contact is typing", _chat_presence),
        Sample("Presence", Family.SESSION, "the contact came online", _presence),
        Sample("Connected", Family.SESSION, "the session connected", _connected),
        Sample("ReceivedCallback", Family.INSTANCE, "an incoming text message", _received),
        Sample("DeliveryCallback", Family.INSTANCE, "your message was handed to the network", _delivery),
        Sample("MessageStatusCallback", Family.INSTANCE, "your message was read", _message_status),
        Sample("PresenceChatCallback", Family.INSTANCE, "the contact is typing", _presence_chat),
        Sample("ConnectedCallback", Family.INSTANCE, "the instance connected", _connected_callback),
        Sample("DisconnectedCallback", Family.INSTANCE, "the instance lost its connection", _disconnected_callback),
    )
}


def signs(dialect: Dialect) -> bool:
    return dialect is not Dialect.ZAPI


def find_sample(kind: str) -> Sample:
    """The sample named `kind` (case-insensitive); SampleRefused listing the kinds otherwise."""
    for name, sample in SAMPLES.items():
        if name.lower() == kind.strip().lower():
            return sample
    raise SampleRefused(f"no sample event {kind!r}; kinds: {', '.join(SAMPLES)}")


def sample_body(kind: str, dialect: Dialect, webhook_format: str | None, now: datetime) -> tuple[bytes, str]:
    """(body, content type) of the sample event `kind` exactly as the dialect's gateway would send it.

    `webhook_format` (json or form) applies to session events only; None means JSON.
    """
    sample = find_sample(kind)
    if dialect is Dialect.WUZAPI and sample.family is Family.INSTANCE:
        raise SampleRefused(f"{sample.kind} is a Z-API callback; WuzAPI sends session events ({_kinds(Family.SESSION)})")
    if dialect is Dialect.ZAPI and sample.family is Family.SESSION:
        raise SampleRefused(f"{sample.kind} is a WuzAPI event; Z-API sends callbacks ({_kinds(Family.INSTANCE)})")
    if webhook_format is not None and webhook_format not in WEBHOOK_FORMATS:
        raise SampleRefused(f"format {webhook_format!r}: one of {', '.join(WEBHOOK_FORMATS)}")
    payload = sample.build(now)
    if sample.family is Family.INSTANCE:
        if webhook_format == "form":
            raise SampleRefused(f"{sample.kind} is an instance-family callback, always sent as JSON; drop --format form")
        return json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode("utf-8"), "application/json"
    return encode_session_event(
        payload, webhook_format=webhook_format or "json", instance_name=SAMPLE_INSTANCE_NAME, user_id=_user_id()
    )


def _kinds(family: Family) -> str:
    return ", ".join(name for name, sample in SAMPLES.items() if sample.family is family)


def _user_id() -> str:
    # WuzAPI's 32-hex user id, derived as the sandbox derives its own so the pair looks the same.
    return hashlib.sha256(f"sandbox-user:{SAMPLE_INSTANCE_NAME}".encode()).hexdigest()[:32]
