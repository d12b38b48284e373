"""A contact writes first, from a LID: the sandbox sends the session webhook a message the way WhatsApp now often
addresses one, so the app's identity mapping (tui.webhooks.identities) can be tried without a phone.

    POST /sandbox/incoming {"from": "5511987654321", "text": "hi"}                chat and sender are the LID,
                                                                                  SenderAlt the phone JID
    POST /sandbox/incoming {"from": "5511987654321", "text": "hi", "alt": false}  the LID alone (number unknown)
    POST /sandbox/incoming {..., "family": "instance"}                            Z-API's callback instead

The event is whatsmeow's `events.Message` as WuzAPI forwards it (tui.sandbox.events.incoming_message), with
`AddressingMode` "lid" and, unless `alt` is false, `SenderAlt` set (whatsmeow types/message.go `MessageSource`).
With `"family": "instance"` (the Z-API instance dialect only: the spec's instance family has no incoming callback)
it is Z-API's `ReceivedCallback` to the received URL: `phone` the number beside `chatLid` and `senderLid` (Z-API's
docs, on-message-received), or, unless `alt`, the LID in `phone` too, as Z-API sends a chat it knows only by LID.
Each contact's LID is fixed (`lid_of`), so the same person always writes from the same one.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from datetime import datetime
from typing import Any

from aiohttp import web

from tui.sandbox.events import Peer, incoming_message
from tui.sandbox.state import SandboxState, is_registered, user_jid

LID_SERVER = "lid"


def lid_of(phone: str) -> str:
    """The sandbox's LID for a phone number: 15 digits derived from it (never the number itself, as WhatsApp's)."""
    digits = str(int.from_bytes(hashlib.sha256(f"lid:{phone}".encode()).digest()[:8], "big"))
    return f"{(digits + '0' * 15)[:15]}@{LID_SERVER}"


def lid_message(state: SandboxState, phone: str, text: str, message_id: str, now: datetime, *,
                alt: bool = True) -> dict[str, Any]:
    lid = lid_of(phone)
    payload = incoming_message(Peer(lid, lid, state.contact_name(phone), False), message_id,
                               {"conversation": text}, now)
    info = payload["event"]["Info"]
    info["AddressingMode"] = "lid"
    info["SenderAlt"] = user_jid(phone) if alt else ""
    return payload


def zapi_lid_message(state: SandboxState, instance_id: str, phone: str, text: str, message_id: str, now: datetime,
                     *, alt: bool = True) -> dict[str, Any]:
    """Z-API's `ReceivedCallback` of a text from a contact WhatsApp names by a LID, in the docs' key order."""
    lid, name = lid_of(phone), state.contact_name(phone)
    return {
        "isStatusReply": False, "chatLid": lid, "senderLid": lid, "connectedPhone": state.own_phone,
        "waitingMessage": False, "isEdit": False, "isGroup": False, "isNewsletter": False, "instanceId": instance_id,
        "messageId": message_id, "phone": phone if alt else lid, "fromMe": False,
        "momment": int(now.timestamp() * 1000), "status": "RECEIVED", "chatName": name,
        "senderPhoto": None, "senderName": name, "participantPhone": None, "participantLid": None, "photo": None,
        "broadcast": False, "forwarded": False, "type": "ReceivedCallback", "fromApi": False,
        "text": {"message": text},
    }


class IncomingRoutes:
    def __init__(self, state: Callable[[], SandboxState], send: Callable[[dict[str, Any]], None],
                 clock: Callable[[], datetime], new_id: Callable[[], str], *, instance_id: str = "",
                 received: Callable[[dict[str, Any]], None] | None = None) -> None:
        self.state = state
        self.send = send  # to the session webhook, when it is subscribed to Message
        self.clock = clock
        self.new_id = new_id
        self.instance_id = instance_id
        self.received = received  # Z-API's received callback; None in a dialect without one

    def routes(self) -> list[web.RouteDef]:
        return [web.post("/sandbox/incoming", self.incoming)]

    async def incoming(self, request: web.Request) -> web.Response:
        raw = await request.read()
        try:
            body = json.loads(raw) if raw.strip() else None
        except ValueError:
            body = None
        if not isinstance(body, dict):
            return _refused('the body must be a JSON object such as {"from": "5511987654321", "text": "hi"}')
        phone, text = body.get("from"), body.get("text")
        if not isinstance(phone, str) or not phone.isdigit() or not is_registered(phone):
            return _refused("from: must be the digits of a number on WhatsApp, e.g. 5511987654321")
        if not isinstance(text, str) or not text.strip():
            return _refused("text: must not be empty")
        alt = body.get("alt", True)
        if not isinstance(alt, bool):
            return _refused("alt: must be true or false")
        family = body.get("family", "session")
        if family not in ("session", "instance"):
            return _refused('family: must be "session" (the session webhook) or "instance" (Z-API\'s callback)')
        if family == "instance" and self.received is None:
            return _refused("family: only the Z-API instance dialect has an incoming message callback "
                            "(start the sandbox with --instance-dialect zapi)")
        message_id = self.new_id()
        if family == "instance" and self.received is not None:
            self.received(zapi_lid_message(self.state(), self.instance_id, phone, text, message_id, self.clock(),
                                           alt=alt))
        else:
            self.send(lid_message(self.state(), phone, text, message_id, self.clock(), alt=alt))
        return web.json_response({"id": message_id, "lid": lid_of(phone)})


def _refused(words: str) -> web.Response:
    return web.json_response({"error": words}, status=400)
