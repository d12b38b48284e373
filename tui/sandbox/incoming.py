"""A contact writes first, from a LID: the sandbox sends the session webhook a message the way WhatsApp now often
addresses one, so the app's identity mapping (tui.webhooks.identities) can be tried without a phone.

    POST /sandbox/incoming {"from": "5511987654321", "text": "hi"}                chat and sender are the LID,
                                                                                  SenderAlt the phone JID
    POST /sandbox/incoming {"from": "5511987654321", "text": "hi", "alt": false}  the LID alone (number unknown)
    POST /sandbox/incoming {"from": "5511987654321", "text": "hi", "lid": false}  from the phone JID, as before LIDs
    POST /sandbox/incoming {..., "family": "instance"}                            Z-API's callback instead
    POST /sandbox/redeliver {"ids": ["3EB0…", …]}                                 the same events sent again

Each session message is kept (`SandboxState.received`): the gateways' message histories list it afterwards, whether
the webhook took it or not (tui.gateways.<name>.sandbox), and `/sandbox/redeliver` sends it again with its id, as a
gateway retrying a delivery does.

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
from tui.sandbox.state import ReceivedMessage, SandboxState, is_registered, user_jid

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
                 clock: Callable[[], datetime], new_id: Callable[[], str],
                 instance: Callable[[str, str, str, bool], None] | None = None, *, instance_id: str = "",
                 received: Callable[[dict[str, Any]], None] | None = None) -> None:
        self.state = state
        self.send = send  # to the session webhook, when it is subscribed to Message
        self.instance = instance  # the instance dialect's own delivery of it (Evolution's messages.upsert)
        self.clock = clock
        self.new_id = new_id
        self.instance_id = instance_id
        self.received = received  # Z-API's received callback; None in a dialect without one

    def routes(self) -> list[web.RouteDef]:
        return [web.post("/sandbox/incoming", self.incoming), web.post("/sandbox/redeliver", self.redeliver)]

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
        alt, lid = body.get("alt", True), body.get("lid", True)
        if not isinstance(alt, bool) or not isinstance(lid, bool):
            return _refused("alt and lid: must be true or false")
        family = body.get("family", "session")
        if family not in ("session", "instance"):
            return _refused('family: must be "session" (the session webhook) or "instance" (Z-API\'s callback)')
        if family == "instance" and self.received is None:
            return _refused("family: only the Z-API instance dialect has an incoming message callback "
                            "(start the sandbox with --instance-dialect zapi)")
        state, message_id, now = self.state(), self.new_id(), self.clock()
        if family == "instance" and self.received is not None:
            self.received(zapi_lid_message(state, self.instance_id, phone, text, message_id, now, alt=alt))
            return web.json_response({"id": message_id, "lid": lid_of(phone)})
        if lid:
            event = lid_message(state, phone, text, message_id, now, alt=alt)
        else:
            jid = user_jid(phone)
            event = incoming_message(Peer(jid, jid, state.contact_name(phone), False), message_id,
                                     {"conversation": text}, now)
        info = event["event"]["Info"]
        state.received.append(ReceivedMessage(message_id, info["Chat"], info["Sender"], info["PushName"], text, now,
                                              event))
        self.send(event)
        if self.instance is not None:
            self.instance(phone, text, message_id, alt)
        return web.json_response({"id": message_id, "lid": lid_of(phone)})

    async def redeliver(self, request: web.Request) -> web.Response:
        raw = await request.read()
        try:
            body = json.loads(raw) if raw.strip() else None
        except ValueError:
            body = None
        ids = body.get("ids") if isinstance(body, dict) else None
        if not isinstance(ids, list) or not all(isinstance(one, str) for one in ids):
            return _refused('the body must be a JSON object such as {"ids": ["3EB0…"]}: the ids /sandbox/incoming gave')
        kept = {message.message_id: message for message in self.state().received}
        unknown = [one for one in ids if one not in kept]
        if unknown:
            return _refused(f"ids: no such message received: {', '.join(unknown)}")
        for one in ids:
            self.send(kept[one].event)
        return web.json_response({"redelivered": len(ids)})


def _refused(words: str) -> web.Response:
    return web.json_response({"error": words}, status=400)
