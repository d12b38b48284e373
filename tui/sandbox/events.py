"""Payloads a real gateway delivers after a send, and the exact bytes they travel as.

* `DeliveryCallback` (instance family, docs/gateways/zapi.md §5.1) to the URL of operation 16, always JSON.
* WuzAPI session events (docs/gateways/wuzapi.md §4.3): `ReadReceipt`, `ChatPresence`, `Message`. In JSON mode the
  body is `{"event", "instanceName", "type", "userID", ...}`; in form mode it is
  `instanceName=…&jsonData=<the payload as JSON>&userID=…`. JSON is written as Go's encoder does (compact,
  sorted keys, `<>&` escaped, UTF-8 kept), so a receiver that re-serialises instead of verifying the raw bytes
  gets a different signature, as with the real gateway.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from urllib.parse import urlencode

from tui.sandbox.state import (
    USER_SERVER,
    SandboxState,
    SentMessage,
    group_digits,
    is_group_jid,
    user_jid,
)
from tui.sandbox.wire import iso

JSON_CONTENT_TYPE = "application/json"
FORM_CONTENT_TYPE = "application/x-www-form-urlencoded"
WEBHOOK_FORMATS = ("json", "form")

GO_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def go_json(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    for raw, escaped in GO_ESCAPES.items():
        text = text.replace(raw, escaped)
    return text


def zaap_id(message_id: str) -> str:
    # The real gateway's own queue id: 32 upper-case characters; derived so the pair is stable across runs.
    return hashlib.sha256(f"zaap:{message_id}".encode()).hexdigest()[:32].upper()


def delivery_callback(instance_id: str, sent: SentMessage, now: datetime) -> bytes:
    recipient = f"{group_digits(sent.recipient)}-group" if is_group_jid(sent.recipient) else sent.recipient
    payload: dict[str, Any] = {
        "type": "DeliveryCallback",
        "instanceId": instance_id,
        "phone": recipient,
        "zaapId": zaap_id(sent.message_id),
        "messageId": sent.message_id,
        "momment": int(now.timestamp() * 1000),
    }
    if sent.failure:
        payload["error"] = sent.failure
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


@dataclass(frozen=True)
class Peer:
    """Who answers a send: the recipient, or for a group its first member other than the account."""

    chat: str
    sender: str
    push_name: str
    is_group: bool

    @classmethod
    def of(cls, state: SandboxState, recipient: str) -> Peer:
        if is_group_jid(recipient):
            group = state.group(recipient)
            members = [phone for phone in (group.participants if group else {}) if phone != state.own_phone]
            phone = members[0] if members else state.own_phone
            return cls(recipient, user_jid(phone), state.contact_name(phone), True)
        jid = recipient if recipient.endswith("@lid") else user_jid(recipient)  # a LID is answered from itself
        return cls(jid, jid, state.contact_name(recipient), False)

    def source(self) -> dict[str, Any]:
        """whatsmeow's MessageSource, flattened into every session event."""
        return {
            "Chat": self.chat,
            "Sender": self.sender,
            "IsFromMe": False,
            "IsGroup": self.is_group,
            "AddressingMode": "",
            "SenderAlt": "",
            "RecipientAlt": "",
            "BroadcastListOwner": "",
            "BroadcastRecipients": None,
        }


def read_receipt(peer: Peer, message_id: str, now: datetime) -> dict[str, Any]:
    return {
        "type": "ReadReceipt",
        "state": "Read",
        "event": {**peer.source(), "MessageIDs": [message_id], "Timestamp": iso(now), "Type": "read", "MessageSender": ""},
    }


def chat_presence(peer: Peer, state: str = "composing") -> dict[str, Any]:
    return {"type": "ChatPresence", "event": {**peer.source(), "State": state, "Media": ""}}


def button_reply(peer: Peer, own_phone: str, sent: SentMessage, reply_id: str, now: datetime) -> dict[str, Any]:
    """The recipient pressing the first quick-reply button: its text comes back quoting the sent message."""
    content = {
        "extendedTextMessage": {
            "text": sent.first_button_text or "",
            "contextInfo": {
                "stanzaID": sent.message_id,
                "participant": user_jid(own_phone),
                "quotedMessage": {"conversation": sent.text},
            },
        }
    }
    return incoming_message(peer, reply_id, content, now)


# What a contact answers to a text: believable, and chosen from the text so every run answers the same.
TEXT_REPLIES = (
    "Got it, thanks!",
    "Sure, I'll check and get back to you this afternoon.",
    "Perfect, see you then.",
    "Thanks! Can you send me the order number too?",
    "Ok! Is it still available in black?",
)


def text_reply_for(text: str) -> str:
    return TEXT_REPLIES[int(hashlib.sha256(text.encode("utf-8")).hexdigest(), 16) % len(TEXT_REPLIES)]


def text_reply(peer: Peer, sent: SentMessage, reply_id: str, now: datetime) -> dict[str, Any]:
    """The recipient answering a text message with a text of their own (a group: its first other member)."""
    return incoming_message(peer, reply_id, {"conversation": text_reply_for(sent.text)}, now)


# Seeded contacts sometimes answer with a file: a text that asks for a photo or a PDF gets one back, delivered the way
# each gateway delivers it (WuzAPI: inline base64 in the `Message` event, wmiau.go; Z-API: a URL on its storage,
# served here by the sandbox at MEDIA_PATH, docs/gateways/zapi.md §5.3).
MEDIA_PATH = "/sandbox-media"
MEDIA_REPLY_WORDS = {"document": ("pdf", "document", "catalog"), "image": ("photo", "picture", "image", "pic")}


@dataclass(frozen=True)
class ReplyFile:
    kind: str  # image or document
    name: str
    mime_type: str
    caption: str

    def data(self) -> bytes:
        return _reply_bytes(self.name)


REPLY_FILES = {
    "image": ReplyFile("image", "photo.png", "image/png", "Here it is!"),
    "document": ReplyFile("document", "catalog.pdf", "application/pdf", "Our catalog, as promised"),
}


def media_reply_for(text: str) -> ReplyFile | None:
    """The file a seeded contact answers `text` with, or None (a text answer)."""
    words = set(text.lower().replace("?", " ").replace(",", " ").replace(".", " ").split())
    for kind, asking in MEDIA_REPLY_WORDS.items():
        if words & set(asking):
            return REPLY_FILES[kind]
    return None


_REPLY_BYTES: dict[str, bytes] = {}


def _reply_bytes(name: str) -> bytes:
    """The sandbox's two reply files, made once: a small PNG (Pillow) and a one-page PDF."""
    if name not in _REPLY_BYTES:
        if name.endswith(".png"):
            import io

            from PIL import Image

            out = io.BytesIO()
            Image.new("RGB", (96, 64), (46, 139, 87)).save(out, "PNG")
            _REPLY_BYTES[name] = out.getvalue()
        else:
            _REPLY_BYTES[name] = _MINIMAL_PDF
    return _REPLY_BYTES[name]


_MINIMAL_PDF = (
    b"%PDF-1.4\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n2 0 obj\n<< /Type /Pages /Kids [3 0 R] /Count 1 >>\n"
    b"endobj\n3 0 obj\n<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] >>\nendobj\n"
    b"trailer\n<< /Size 4 /Root 1 0 R >>\n%%EOF\n"
)


def media_reply(peer: Peer, reply: ReplyFile, reply_id: str, now: datetime) -> dict[str, Any]:
    """WuzAPI's `Message` with a file: the protobuf media message, and the file inline as top-level `base64`,
    `mimeType`, `fileName` (its media delivery `base64`, the default)."""
    import base64

    data = reply.data()
    if reply.kind == "image":
        content = {"imageMessage": {"caption": reply.caption, "mimetype": reply.mime_type, "fileLength": len(data)}}
    else:
        content = {"documentMessage": {"caption": reply.caption, "mimetype": reply.mime_type, "title": reply.name,
                                       "fileName": reply.name, "fileLength": len(data)}}
    payload = incoming_message(peer, reply_id, content, now)
    payload["event"]["Info"]["Type"] = "media"
    payload["event"]["Info"]["MediaType"] = reply.kind
    payload.update({"base64": base64.b64encode(data).decode("ascii"), "mimeType": reply.mime_type,
                    "fileName": reply.name})
    return payload


def incoming_message(peer: Peer, message_id: str, content: dict[str, Any], now: datetime) -> dict[str, Any]:
    """A whatsmeow `events.Message` from `peer` (docs/gateways/wuzapi.md §4.3), `content` being its protobuf
    Message."""
    info = {
        **peer.source(),
        "ID": message_id,
        "ServerID": 0,
        "Type": "text",
        "PushName": peer.push_name,
        "Timestamp": iso(now),
        "Category": "",
        "Multicast": False,
        "MediaType": "",
        "Edit": "",
        "MsgBotInfo": {"EditType": "", "EditTargetID": "", "EditSenderTimestampMS": "0001-01-01T00:00:00Z"},
        "MsgMetaInfo": {
            "TargetID": "",
            "TargetSender": "",
            "TargetChat": "",
            "DeprecatedLIDSession": None,
            "ThreadMessageID": "",
            "ThreadMessageSenderJID": "",
        },
        "VerifiedName": None,
        "DeviceSentMeta": None,
    }
    return {
        "type": "Message",
        "event": {
            "Info": info,
            "Message": content,
            "IsEphemeral": False,
            "IsViewOnce": False,
            "IsViewOnceV2": False,
            "IsViewOnceV2Extension": False,
            "IsDocumentWithCaption": False,
            "IsLottieSticker": False,
            "IsBotInvoke": False,
            "IsEdit": False,
            "SourceWebMsg": None,
            "UnavailableRequestID": "",
            "RetryCount": 0,
            "NewsletterMeta": None,
            "RawMessage": content,
        },
    }


def encode_session_event(
    payload: dict[str, Any], *, webhook_format: str, instance_name: str, user_id: str
) -> tuple[bytes, str]:
    """(body, content type) exactly as WuzAPI's `callHookWithHmac` sends them."""
    if webhook_format == "form":
        fields = sorted({"instanceName": instance_name, "jsonData": go_json(payload), "userID": user_id}.items())
        return urlencode(fields).encode("ascii"), FORM_CONTENT_TYPE
    return go_json({**payload, "instanceName": instance_name, "userID": user_id}).encode("utf-8"), JSON_CONTENT_TYPE


# ---------------------------------------------------------------------------------------------------------------
# Connection events (issue 23). WuzAPI (docs/gateways/wuzapi.md §4.3; whatsmeow's events structs): `Connected` and
# `Disconnected` carry an empty struct, `PairSuccess` the device's IDs, `LoggedOut` `{OnConnect, Reason}` where
# 401 is whatsmeow's ConnectFailureLoggedOut. (Z-API's ConnectedCallback and DisconnectedCallback: tui.gateways.zapi.)


def session_connected() -> dict[str, Any]:
    return {"type": "Connected", "event": {}}


def session_disconnected() -> dict[str, Any]:
    return {"type": "Disconnected", "event": {}}


def session_pair_success(number: str, device: int) -> dict[str, Any]:
    lid = str(int(hashlib.sha256(f"lid:{number}".encode()).hexdigest(), 16))[:15]
    return {
        "type": "PairSuccess",
        "event": {"ID": f"{number}:{device}@{USER_SERVER}", "LID": f"{lid}:{device}@lid", "BusinessName": "",
                  "Platform": "android"},
    }


def session_logged_out(reason: int = 401) -> dict[str, Any]:
    return {"type": "LoggedOut", "event": {"OnConnect": False, "Reason": reason}}
