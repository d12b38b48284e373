"""The Evolution sandbox's webhook deliveries, as Evolution v2.3.6 posts them (the envelope: deliveries.py), to the
webhook `/webhook/set` stored (`enabled`, `events`, `webhookByEvents`: `<url>/<event-path>`, `webhookBase64`).

What the sandbox sends, and where in Evolution's code each comes from (whatsapp.baileys.service.ts):
* after a send: `send.message` (sendMessageWithTyping: the send's own answer, `prepareMessage`), then
  `messages.update` SERVER_ACK, DELIVERY_ACK and READ (the messages.update handler: `keyId` is WhatsApp's id,
  `messageId` Evolution's database id; renderStatus.ts), while the instance is open; a text to a contact is
  answered with a `messages.upsert` (a text, or a photo or a PDF when asked for one: its media message, and
  `message.base64` when `webhookBase64` is on), as the other dialects' contacts answer;
* the link: `connection.update` `open` (with `wuid` and `profileName`), `connecting` (a pairing starts, or the
  network dropped: Baileys reconnects, and Evolution tells only the `connecting`), `close` with statusReason 401
  (logged out: Evolution does not reconnect);
* pairing: `qrcode.updated` with the code (and `pairingCode` when `?number=` asked for one), each time the
  client's `connect` is handed a new code (Evolution pushes one per QR Baileys makes; here a code lives one window).

`apikey` is the instance's key while `evolution_expose_apikey` is on (the default: Evolution's .env.example sets
AUTHENTICATION_EXPOSE_IN_FETCH_INSTANCES=true), null otherwise; `POST /sandbox/evolution {"expose_apikey": false}`
switches it. Nothing is signed: Evolution has no HMAC.
"""

from __future__ import annotations

import base64
import uuid
from collections.abc import Callable
from datetime import datetime
from typing import Any

from tui.gateways.evolution.envelope import by_events_path, encode, envelope
from tui.sandbox.context import Context
from tui.sandbox.delivery import answers_text
from tui.sandbox.incoming import lid_of
from tui.sandbox.events import JSON_CONTENT_TYPE, Peer, ReplyFile, media_reply_for, text_reply_for
from tui.sandbox.pairing import LinkEvent
from tui.sandbox.state import SentMessage, is_group_jid, user_jid
from tui.sandbox.webhook_posts import Post, Step

ACKS = ("SERVER_ACK", "DELIVERY_ACK", "READ")  # renderStatus.ts 2, 3, 4: what a send to an online contact gets
LOGGED_OUT_REASON = 401  # Baileys' DisconnectReason.loggedOut
OPEN_REASON = 200


def instance_uuid(name: str) -> str:
    """The instance's id in Evolution's rows (`instanceId`), stable per instance name."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"sandbox-evolution:{name}"))


def database_id(message_id: str) -> str:
    """Evolution's own id of a stored message (a Prisma cuid, 25 characters), stable per message."""
    return "c" + uuid.uuid5(uuid.NAMESPACE_URL, f"evolution-row:{message_id}").hex[:24]


def date_time(now: datetime) -> str:
    """`date_time` as Evolution writes it (channel.service.ts sendDataWebhook): the server's local wall-clock time in
    ISO form with milliseconds, labelled `Z` although it is not UTC."""
    return now.replace(tzinfo=None).isoformat(timespec="milliseconds") + "Z"


class EvolutionWebhooks:
    """The instance family's webhooks in Evolution's dialect (tui.sandbox.webhook_posts.InstanceWebhooks)."""

    def __init__(self, context: Context) -> None:
        self.context = context
        self.state = context.state

    @property
    def name(self) -> str:
        return self.context.instance_id

    # -- the envelope -----------------------------------------------------------------------------------------

    def step(self, event: str, data: Callable[[], Any]) -> Step:
        """One delivery of `event`, built when its turn comes: posted when the webhook is enabled, its URL is http(s)
        and its events name this one (webhook.controller.ts `emit`), and the `drop` fault does not name it."""

        def build() -> Post | None:
            row = self.state.evolution_webhook
            name = event.replace(".", "_").replace("-", "_").upper()
            if not row or row.get("enabled") is not True or name not in (row.get("events") or []):
                return None
            url = str(row.get("url") or "")
            if not url.startswith(("http://", "https://")) or self.state.faults.drops(event):
                return None
            target = f"{url}/{by_events_path(event)}" if row.get("webhookByEvents") else url
            link = self.state.instance_link
            body = envelope(event, self.name, data(), destination=url, date_time=date_time(self.context.clock()),
                            sender=f"{link.number}@s.whatsapp.net" if link.paired and link.number else None,
                            server_url=self.context.server_url(),
                            apikey=self.context.instance_token if self.state.evolution_expose_apikey else None)
            return Post(target, encode(body), JSON_CONTENT_TYPE, signed=False)

        return build

    # -- after a send -----------------------------------------------------------------------------------------

    def after_send(self, sent: SentMessage) -> list[Step]:
        answered = self.state.evolution_sends.pop(sent.message_id, None)
        steps = [self.step("send.message", lambda: answered or self._sent_row(sent))]
        if sent.failure:
            return [*steps, self.step("messages.update", lambda: self._ack(sent, "ERROR"))]
        steps += [self._while_open(self.step("messages.update", self._acked(sent, status))) for status in ACKS]
        if answers_text(sent):
            reply = media_reply_for(sent.text)
            reply_id = self.context.new_id()
            steps.append(self._while_open(self.step("messages.upsert", lambda: self._reply(sent, reply, reply_id))))
        return steps

    def _while_open(self, step: Step) -> Step:
        """A step that happens on WhatsApp's side: nothing comes while the instance is not connected."""
        return lambda: step() if self.state.instance_link.connected else None

    def _acked(self, sent: SentMessage, status: str) -> Callable[[], dict[str, Any]]:
        return lambda: self._ack(sent, status)

    def _sent_row(self, sent: SentMessage) -> dict[str, Any]:
        """A send the dialect did not record (the host's own sends): its row rebuilt with a text message."""
        return {"key": {"remoteJid": _jid(sent.recipient), "fromMe": True, "id": sent.message_id},
                "pushName": "Você", "status": "PENDING", "message": {"conversation": sent.text},
                "messageType": "conversation", "messageTimestamp": int(self.context.clock().timestamp()),
                "instanceId": instance_uuid(self.name), "source": "web"}

    def _ack(self, sent: SentMessage, status: str) -> dict[str, Any]:
        """The messages.update handler's `message` (JSON.stringify leaves out the undefined `participant` of a
        contact's receipt and the undefined `pollUpdates`)."""
        row: dict[str, Any] = {"keyId": sent.message_id, "remoteJid": _jid(sent.recipient), "fromMe": True}
        if is_group_jid(sent.recipient):
            row["participant"] = Peer.of(self.state, sent.recipient).sender
        row.update({"status": status, "instanceId": instance_uuid(self.name), "messageId": database_id(sent.message_id)})
        return row

    def _reply(self, sent: SentMessage, reply: ReplyFile | None, reply_id: str) -> dict[str, Any]:
        """`prepareMessage` of the contact's answer: DELIVERY_ACK (an incoming message), sent from a phone."""
        peer = Peer.of(self.state, sent.recipient)
        key: dict[str, Any] = {"remoteJid": peer.chat, "fromMe": False, "id": reply_id}
        if peer.is_group:
            key["participant"] = peer.sender
        message: dict[str, Any]
        if reply is None:
            message, kind = {"conversation": text_reply_for(sent.text)}, "conversation"
        else:
            message, kind = self._media(reply), f"{reply.kind}Message"
        return {"key": key, "pushName": peer.push_name.split(" ")[0] or None, "status": "DELIVERY_ACK",
                "message": message, "messageType": kind, "messageTimestamp": int(self.context.clock().timestamp()),
                "instanceId": instance_uuid(self.name), "source": "android"}

    def _media(self, reply: ReplyFile) -> dict[str, Any]:
        data = reply.data()
        content: dict[str, Any] = {"url": "https://mmg.whatsapp.net/v/t62.7118-24/sandbox.enc", "mimetype": reply.mime_type,
                                   "caption": reply.caption,
                                   "fileLength": {"low": len(data), "high": 0, "unsigned": True}}
        if reply.kind == "image":
            content.update({"height": 64, "width": 96})
        else:
            content.update({"title": reply.name, "fileName": reply.name, "pageCount": 1})
        message: dict[str, Any] = {f"{reply.kind}Message": content}
        row = self.state.evolution_webhook or {}
        if row.get("webhookBase64"):  # the messages.upsert handler downloads it and adds `message.base64`
            message["base64"] = base64.b64encode(data).decode("ascii")
        return message

    def received(self, payload: dict[str, Any]) -> list[Step]:
        return []  # its incoming messages are messages.upsert (`incoming`)

    def incoming(self, phone: str, text: str, message_id: str, *, alt: bool) -> list[Step]:
        """A contact writing first from a LID: `messages.upsert` with the LID as `remoteJid` and, when WhatsApp gives
        it, the phone as `remoteJidAlt` (Baileys decode-wa-message.ts; addressingMode "lid")."""
        lid = lid_of(phone)
        key: dict[str, Any] = {"remoteJid": lid}
        if alt:
            key["remoteJidAlt"] = user_jid(phone)
        key.update({"fromMe": False, "id": message_id, "addressingMode": "lid"})
        return [self.step("messages.upsert", lambda: {
            "key": key, "pushName": self.state.push_name(phone) or None, "status": "DELIVERY_ACK",
            "message": {"conversation": text}, "messageType": "conversation",
            "messageTimestamp": int(self.context.clock().timestamp()), "instanceId": instance_uuid(self.name),
            "source": "android"})]

    # -- the link and pairing ---------------------------------------------------------------------------------

    def link_changed(self, event: LinkEvent) -> list[Step]:
        if event in (LinkEvent.PAIRED, LinkEvent.CONNECTED):
            return [self.step("connection.update", self._open)]
        if event is LinkEvent.LOGGED_OUT:
            return [self.step("connection.update", lambda: self.state_row("close", LOGGED_OUT_REASON))]
        return [self.step("connection.update", lambda: self.state_row("connecting", OPEN_REASON))]

    def _open(self) -> dict[str, Any]:
        number = self.state.instance_link.number or self.state.own_phone
        return {"instance": self.name, "wuid": f"{number}@s.whatsapp.net", "profileName": self.state.own_name,
                "profilePictureUrl": None, "state": "open", "statusReason": OPEN_REASON}

    def state_row(self, state: str, reason: int) -> dict[str, Any]:
        return {"instance": self.name, "state": state, "statusReason": reason}

    def connecting(self) -> list[Step]:
        """A pairing starts (connect while closed): Baileys connects, Evolution says `connecting`."""
        return [self.step("connection.update", lambda: self.state_row("connecting", OPEN_REASON))]

    def qrcode_updated(self, code: str, image: str, pairing_code: str | None) -> list[Step]:
        qrcode = {"instance": self.name, "pairingCode": pairing_code, "code": code, "base64": image}
        return [self.step("qrcode.updated", lambda: {"qrcode": qrcode})]


def _jid(recipient: str) -> str:
    return recipient if "@" in recipient else user_jid(recipient)
