"""The instance family in Evolution API's dialect (docs/gateways/evolution.md), for `gateway-tui sandbox
--instance-dialect evolution`: Evolution's own routes off the server's root, the instance's name in the path, its
key in the `apikey` header, Evolution's validation messages, answers and error envelope.

Only Evolution's shapes are accepted: a Z-API or spec body (`phone`, `message`, `lat`/`lng`, a flat webhook body)
fails Evolution's schema as the real server's would (`instance requires property "number"`), so a client that
forgets to translate is caught. Errors are `{"status", "error", "response": {"message": […]}}` (§1.3).

Sandbox rules beyond the code, chosen to be simple and predictable:
* the instance's name is the sandbox's instance id, its key the instance token; a single sandbox has no global
  key; a fleet (`--accounts N`) names its instances `sandbox-01`, … and its admin token is the global key of
  `GET /instance/fetchInstances`, which lists them all (`fleet_routes`);
* numbers ending 0000 are not on WhatsApp (the sandbox's rule), answered as Evolution's number check does (§2.2);
* a send while the instance is not `open` answers Evolution's 500 "Connection Closed" (§2.2);
* the first `connect` of a run of codes answers `{"count": 0}` (no code yet), as Evolution often does (§3.2): a
  client must ask again;
* the webhook configuration is kept and read back (§4), and Evolution's deliveries go to it (sandbox_webhooks.py):
  `send.message` and the acks after a send, a contact's answer, `connection.update`, `qrcode.updated`; with the
  instance's key as `apikey` unless `POST /sandbox/evolution {"expose_apikey": false}` turned that off.
"""

from __future__ import annotations

import json
import uuid
from datetime import datetime
from typing import Any, ClassVar

from aiohttp import web

from tui.api.operations import Family, OperationId
from tui.sandbox.context import Context, _same_secret
from tui.sandbox.handlers import DialectApi, FleetAdmin
from tui.sandbox.pairing import Link, LinkEvent, png_data_url
from tui.sandbox.state import Group, Participant, SentMessage, group_digits, is_registered
from tui.sandbox.wire import ApiError, Handler
from tui.gateways.evolution.sandbox_webhooks import EvolutionWebhooks, instance_uuid

SENDS_KEPT = 1000  # send answers waiting for their `send.message` delivery (none waits while nothing delivers)

INSTANCE = "instance_id"  # the route's match key: a fleet of sandboxes tells its accounts apart by it
REASONS = {400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found", 500: "Internal Server Error"}
OWN_PUSH_NAME = "Você"  # what Evolution stores as an own message's pushName (§2.2)
MEDIA_TYPES = ("image", "document", "video", "audio")
WEBHOOK_EVENTS = (
    "APPLICATION_STARTUP", "QRCODE_UPDATED", "MESSAGES_SET", "MESSAGES_UPSERT", "MESSAGES_EDITED", "MESSAGES_UPDATE",
    "MESSAGES_DELETE", "SEND_MESSAGE", "SEND_MESSAGE_UPDATE", "CONTACTS_SET", "CONTACTS_UPSERT", "CONTACTS_UPDATE",
    "PRESENCE_UPDATE", "CHATS_SET", "CHATS_UPSERT", "CHATS_UPDATE", "CHATS_DELETE", "GROUPS_UPSERT", "GROUP_UPDATE",
    "GROUP_PARTICIPANTS_UPDATE", "CONNECTION_UPDATE", "LABELS_EDIT", "LABELS_ASSOCIATION", "CALL", "TYPEBOT_START",
    "TYPEBOT_CHANGE_STATUS", "REMOVE_INSTANCE", "LOGOUT_INSTANCE", "INSTANCE_CREATE", "INSTANCE_DELETE",
    "STATUS_INSTANCE")
PARTICIPANT_ACTIONS = ("add", "remove", "promote", "demote")
SCOPE_WORDS = {"ALL": "all", "CONTACT": "contacts", "CONTACT_BLACKLIST": "contact_blacklist", "NONE": "none"}
_WHO = ("all", "contacts", "contact_blacklist", "none")
PRIVACY_VALUES = {"readreceipts": ("all", "none"), "profile": _WHO, "status": _WHO, "online": ("all", "match_last_seen"),
                  "last": _WHO, "groupadd": _WHO}  # privacySettingsSchema (§2.7), in its order


class EvolutionError(ApiError):
    """An error in Evolution's envelope: `message` is what was thrown (a list of texts or rows, a list inside the
    list for schema failures, a bare text for 401 and a JavaScript error)."""

    def __init__(self, status: int, message: Any, *, reason: str | None = None) -> None:
        super().__init__(status, json.dumps(message))
        self.thrown = message
        self.reason = reason or REASONS.get(status, "Internal Server Error")


def evolution_error(error: ApiError) -> web.Response:
    if isinstance(error, EvolutionError):
        thrown, reason = error.thrown, error.reason
    else:
        thrown, reason = [error.message], REASONS.get(error.status, "Internal Server Error")
    body = {"status": error.status, "error": reason, "response": {"message": thrown}}
    return web.json_response(body, status=error.status, headers=error.headers)


def schema_error(*problems: str) -> EvolutionError:
    """The common validator's 400: one list holding a text per failed rule (§1.4)."""
    return EvolutionError(400, [list(problems)])


class Body:
    """A request body read as Evolution's JSON schemas read it (§1.4): unknown keys ignored, a missing key is
    `instance requires property "x"`, a wrong type `x is not of a type(s) string`."""

    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data

    def require(self, *names: str) -> None:
        missing = [f'instance requires property "{name}"' for name in names if name not in self.data]
        if missing:
            raise schema_error(*missing)

    def schema(self, required: tuple[str, ...], *, strings: tuple[str, ...] = (), numbers: tuple[str, ...] = (),
               integers: tuple[str, ...] = ()) -> None:
        """Every rule at once, as the validator reports them (§1.4): the missing properties, then each present one
        of the wrong type; `number` is a string whose rule reads "Invalid format"."""
        problems = [f'instance requires property "{name}"' for name in required if name not in self.data]
        if "number" in self.data and not isinstance(self.data["number"], str):
            problems.append("Invalid format")
        for names, kind, fits in ((strings, "string", lambda value: isinstance(value, str)),
                                  (numbers, "number", _is_number),
                                  (integers, "integer", lambda value: _is_number(value) and float(value).is_integer())):
            problems += [f"{name} is not of a type(s) {kind}" for name in names
                         if name in self.data and not fits(self.data[name])]
        if problems:
            raise schema_error(*problems)

    def text(self, name: str, *, required: bool = True) -> str:
        if required:
            self.require(name)
        value = self.data.get(name, "")
        if not isinstance(value, str):
            raise schema_error(f"{name} is not of a type(s) string")
        return value

    def number_field(self) -> str:
        """`number`: a string of digits or a JID; declared with the description "Invalid format" (§1.4)."""
        self.require("number")
        value = self.data["number"]
        if not isinstance(value, str):
            raise schema_error("Invalid format")
        return value

    def numeric(self, name: str) -> float:
        self.require(name)
        value = self.data[name]
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise schema_error(f"{name} is not of a type(s) number")
        return float(value)

    def integer(self, name: str, *, required: bool = False) -> int | None:
        if required:
            self.require(name)
        value = self.data.get(name)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            raise schema_error(f"{name} is not of a type(s) integer")
        return value

    def boolean(self, name: str) -> bool | None:
        value = self.data.get(name)
        if value is not None and not isinstance(value, bool):
            raise schema_error(f"{name} is not of a type(s) boolean")
        return value

    def items(self, name: str, minimum: int = 1) -> list[Any]:
        self.require(name)
        value = self.data[name]
        if not isinstance(value, list):
            raise schema_error(f"{name} is not of a type(s) array")
        if len(value) < minimum:
            raise schema_error(f"{name} does not meet minimum length of {minimum}")
        return value


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def create_jid(number: str) -> str:
    """Evolution's `createJid` (§1.5): a full JID as is; digits (a `+`, spaces and parentheses stripped) as a
    person's JID, or a group's when they look like one (a `-` and 24+ characters, or 18+ digits)."""
    if "@" in number:
        return number
    digits = "".join(character for character in number if character not in "+ ()")
    if ("-" in digits and len(digits) >= 24) or (digits.isdigit() and len(digits) >= 18):
        return f"{digits}@g.us"
    return f"{digits}@s.whatsapp.net"


def group_jid(request: web.Request, body: Body | None) -> str:
    """`groupJid` from the body or the query, `@g.us` appended when missing (§1.4)."""
    value = body.data.get("groupJid") if body is not None else None
    value = value or request.query.get("groupJid")
    if not isinstance(value, str) or not value:
        raise EvolutionError(400, ["The group id needs to be informed in the query", 'ex: "groupJid=120362@g.us"'])
    return value if value.endswith("@g.us") else f"{value}@g.us"


def _long(value: int) -> dict[str, Any]:
    """A 64-bit number as Evolution's answers carry it (§5.5)."""
    return {"low": value & 0xFFFFFFFF, "high": value >> 32, "unsigned": True}


class EvolutionInstanceApi(DialectApi):
    REFUSED: ClassVar[frozenset[OperationId]] = frozenset()

    def __init__(self, context: Context) -> None:
        super().__init__(context)
        self._pairing_number: str | None = None
        self._webhooks = EvolutionWebhooks(context)
        self._code_announced: tuple[str, str | None] | None = None

    @classmethod
    def webhooks(cls, context: Context) -> EvolutionWebhooks:
        return EvolutionWebhooks(context)

    def extra_routes(self, prefix: str) -> list[web.RouteDef]:
        return [web.post("/sandbox/evolution", self.sandbox_settings)]

    async def sandbox_settings(self, request: web.Request) -> web.Response:
        """The sandbox's own switch (not Evolution's): whether deliveries carry the instance's key as `apikey`."""
        try:
            body = json.loads(await request.read() or b"{}")
        except ValueError:
            body = None
        expose = body.get("expose_apikey") if isinstance(body, dict) else None
        if not isinstance(expose, bool):
            return web.json_response({"error": 'the body must be {"expose_apikey": true} or {"expose_apikey": false}'},
                                     status=400)
        self.state.evolution_expose_apikey = expose
        return web.json_response({"expose_apikey": expose})

    def handlers(self) -> dict[OperationId, Handler]:
        return {}  # Evolution's routes are its own (`routes`): several operations share one

    def routes(self, prefix: str) -> list[web.RouteDef]:
        """Every Evolution route the adapter writes (tui.gateways.evolution.wire), off the server's root."""
        guard = self._guarded
        return [
            web.post(f"/message/sendText/{{{INSTANCE}}}", guard(self.send_text)),
            web.post(f"/message/sendMedia/{{{INSTANCE}}}", guard(self.send_media)),
            web.post(f"/message/sendWhatsAppAudio/{{{INSTANCE}}}", guard(self.send_audio)),
            web.post(f"/message/sendSticker/{{{INSTANCE}}}", guard(self.send_sticker)),
            web.post(f"/message/sendLocation/{{{INSTANCE}}}", guard(self.send_location)),
            web.post(f"/message/sendContact/{{{INSTANCE}}}", guard(self.send_contact)),
            web.post(f"/message/sendPoll/{{{INSTANCE}}}", guard(self.send_poll)),
            web.post(f"/message/sendButtons/{{{INSTANCE}}}", guard(self.send_buttons)),
            web.post(f"/message/sendList/{{{INSTANCE}}}", guard(self.send_list)),
            web.post(f"/group/updateParticipant/{{{INSTANCE}}}", guard(self.update_participant)),
            web.post(f"/group/updateGroupSubject/{{{INSTANCE}}}", guard(self.update_subject)),
            web.get(f"/group/findGroupInfos/{{{INSTANCE}}}", guard(self.find_group)),
            web.post(f"/group/revokeInviteCode/{{{INSTANCE}}}", guard(self.revoke_invite)),
            web.get(f"/group/fetchAllGroups/{{{INSTANCE}}}", guard(self.fetch_all_groups)),
            web.post(f"/group/create/{{{INSTANCE}}}", guard(self.create_group)),
            web.post(f"/proxy/set/{{{INSTANCE}}}", guard(self.set_proxy)),
            web.get(f"/proxy/find/{{{INSTANCE}}}", guard(self.find_proxy)),
            web.post(f"/chat/updateProfileStatus/{{{INSTANCE}}}", guard(self.update_profile_status)),
            web.get(f"/chat/fetchPrivacySettings/{{{INSTANCE}}}", guard(self.fetch_privacy)),
            web.post(f"/chat/updatePrivacySettings/{{{INSTANCE}}}", guard(self.update_privacy)),
            web.post(f"/chat/findChats/{{{INSTANCE}}}", guard(self.find_chats)),
            web.post(f"/chat/findContacts/{{{INSTANCE}}}", guard(self.find_contacts)),
            web.post(f"/chat/findMessages/{{{INSTANCE}}}", guard(self.find_messages)),
            web.post(f"/webhook/set/{{{INSTANCE}}}", guard(self.set_webhook)),
            web.get(f"/webhook/find/{{{INSTANCE}}}", guard(self.find_webhook)),
            web.get(f"/instance/connectionState/{{{INSTANCE}}}", guard(self.connection_state)),
            web.get(f"/instance/connect/{{{INSTANCE}}}", guard(self.connect)),
            web.post(f"/instance/restart/{{{INSTANCE}}}", guard(self.restart)),
            web.delete(f"/instance/logout/{{{INSTANCE}}}", guard(self.logout)),
            web.get("/instance/fetchInstances", self._guarded(self.fetch_instances, named=False)),
            # Last: any other method or path under Evolution's own prefixes is its catch-all 404 (§1.3). Only these
            # two: `/group/…` and `/chat/…` are the session family's too.
            web.route("*", "/message/{tail:.*}", _unknown_route),
            web.route("*", "/instance/{tail:.*}", _unknown_route),
        ]

    def _guarded(self, handler: Handler, *, named: bool = True) -> Handler:
        """Evolution's guards in its order (§1.1): the instance exists (404, before the key), then the key (401)."""

        async def run(request: web.Request) -> web.Response:
            try:
                name = request.match_info.get(INSTANCE)
                if named and name != self.context.instance_id:
                    raise EvolutionError(404, [f'The "{name}" instance does not exist'])
                key = request.headers.get("apikey")
                if not _same_secret(key, self.context.instance_token):
                    raise EvolutionError(401, "Unauthorized")
                return await handler(request)
            except ApiError as error:
                return evolution_error(error)

        return run

    @property
    def link(self) -> Link:
        return self.state.instance_link

    @property
    def name(self) -> str:
        return self.context.instance_id

    async def _body(self, request: web.Request) -> Body:
        raw = await request.read()
        try:
            data = json.loads(raw) if raw.strip() else {}
        except json.JSONDecodeError as error:  # Express' parser, before the router, in Node's words
            text = raw.decode("utf-8", "replace")
            token = text[error.pos] if error.pos < len(text) else "end of JSON input"
            said = f"Unexpected token '{token}', \"{text}\" is not valid JSON" if error.pos < len(text) else \
                "Unexpected end of JSON input"
            raise EvolutionError(400, said, reason="Internal Server Error") from None
        except (ValueError, RecursionError):
            raise EvolutionError(400, "Unexpected end of JSON input", reason="Internal Server Error") from None
        if not isinstance(data, dict):
            raise schema_error("instance is not of a type(s) object")
        return Body(data)

    # -- sends (§2.2-§2.5) --------------------------------------------------------------------------------------

    def _recipient(self, number: str) -> str:
        """The number check every send makes (§2.2): 500 "Connection Closed" while not open; 400 with the check's
        row for a number not on WhatsApp; a group must be known ("[object Object]", as Evolution prints it)."""
        if not self.link.connected:
            raise EvolutionError(500, "Connection Closed")
        jid = create_jid(number)
        if jid.endswith("@g.us"):
            if self.state.group(jid) is None:
                raise EvolutionError(400, ["[object Object]"])
            return jid
        digits = jid.split("@")[0]
        if jid.endswith("@s.whatsapp.net") and not is_registered(digits):
            raise EvolutionError(400, [{"jid": jid, "exists": False, "number": digits}])
        return jid

    def _sent(self, operation: str, jid: str, message_type: str, message: dict[str, Any], text: str,
              **extra: Any) -> web.Response:
        recipient = jid if jid.endswith("@g.us") else jid.split("@")[0]
        sent = SentMessage(self.context.new_id(), recipient, operation, text, **extra)
        answer: dict[str, Any] = {
            "key": {"remoteJid": jid, "fromMe": True, "id": sent.message_id}, "pushName": OWN_PUSH_NAME,
            "status": "PENDING", "message": message, "messageType": message_type,
            "messageTimestamp": int(self.context.clock().timestamp()), "instanceId": self._instance_uuid(),
            "source": "web"}
        if not jid.endswith("@g.us"):
            answer["contextInfo"] = {"ephemeralSettingTimestamp": {"low": 0, "high": 0, "unsigned": False}}
        self.state.record_send(sent)
        waiting = self.state.evolution_sends
        while len(waiting) >= SENDS_KEPT:
            waiting.pop(next(iter(waiting)))
        waiting[sent.message_id] = answer  # its `send.message` delivery carries the answer (sandbox_webhooks.py)
        self.context.on_sent(sent)
        return web.json_response(answer, status=201)

    def _instance_uuid(self) -> str:
        return instance_uuid(self.name)

    async def send_text(self, request: web.Request) -> web.Response:
        body = await self._body(request)
        body.schema(("number", "text"), strings=("text",), integers=("delay",))
        number, text = body.number_field(), body.text("text")
        if not text.strip():
            raise EvolutionError(400, ["Text is required"])
        jid = self._recipient(number)
        return self._sent("send-text", jid, "conversation", {"conversation": text}, text)

    async def send_media(self, request: web.Request) -> web.Response:
        body = await self._body(request)
        body.require("number", "mediatype")
        number = body.number_field()
        kind = body.data.get("mediatype")
        if kind not in MEDIA_TYPES:
            raise schema_error(f"mediatype is not one of enum values: {','.join(MEDIA_TYPES)}")
        media = body.text("media", required=False)
        file_name = body.text("fileName", required=False)
        caption = body.text("caption", required=False)
        url = media.startswith(("http://", "https://"))
        if kind == "document" and not url and not file_name:
            raise EvolutionError(400, ["For base64 the file name must be informed."])
        data = _base64(media) if not url else None
        if not media or (not url and data is None):
            raise EvolutionError(400, ["Owned media must be a url or base64"])
        jid = self._recipient(number)
        name = file_name or {"image": "image.jpg", "video": "video.mp4"}.get(str(kind), "")
        mime_type = _mime_of(name)
        content = {"url": media if url else "https://mmg.whatsapp.net/sandbox", "mimetype": mime_type,
                   "fileLength": _long(len(data) if data is not None else 0)}
        if caption:
            content["caption"] = caption
        if kind == "document":
            content["fileName"] = name
        return self._sent(f"send-{kind}", jid, f"{kind}Message", {f"{kind}Message": content}, caption,
                          media=data, media_type=mime_type, media_url=media if url else None, file_name=name or None)

    async def send_audio(self, request: web.Request) -> web.Response:
        body = await self._body(request)
        body.require("number")
        number = body.number_field()
        audio = body.text("audio", required=False)
        url = audio.startswith(("http://", "https://"))
        data = _base64(audio) if not url else None
        if not audio or (not url and data is None):
            raise EvolutionError(400, ["Owned media must be a url, base64, or valid file with buffer"])
        jid = self._recipient(number)
        content = {"url": audio if url else "https://mmg.whatsapp.net/sandbox", "mimetype": "audio/ogg; codecs=opus",
                   "ptt": True, "fileLength": _long(len(data) if data is not None else 0)}
        return self._sent("send-audio", jid, "audioMessage", {"audioMessage": content}, "", media=data,
                          media_type="audio/ogg", media_url=audio if url else None)

    async def send_sticker(self, request: web.Request) -> web.Response:
        body = await self._body(request)
        body.require("number", "sticker")
        number, sticker = body.number_field(), body.text("sticker")
        if not sticker.startswith(("http://", "https://")) and _base64(sticker) is None:
            raise EvolutionError(400, ["Owned media must be a url or base64"])
        jid = self._recipient(number)
        return self._sent("send-sticker", jid, "stickerMessage", {"stickerMessage": {"mimetype": "image/webp"}}, "")

    async def send_location(self, request: web.Request) -> web.Response:
        body = await self._body(request)
        body.schema(("number", "latitude", "longitude", "name", "address"), strings=("name", "address"),
                    numbers=("latitude", "longitude"))  # all five required, the coordinates numbers (§2.5)
        number = body.number_field()
        latitude, longitude = body.numeric("latitude"), body.numeric("longitude")
        name, address = body.text("name"), body.text("address")
        jid = self._recipient(number)
        content = {"degreesLatitude": latitude, "degreesLongitude": longitude, "name": name, "address": address}
        return self._sent("send-location", jid, "locationMessage", {"locationMessage": content}, name)

    async def send_contact(self, request: web.Request) -> web.Response:
        """contactMessageSchema: `number` and `contact` (at least one `{fullName, phoneNumber}`, the phone 10 characters
        or more, `wuid` digits); the card is written as contactMessage writes it (whatsapp.baileys.service.ts)."""
        body = await self._body(request)
        body.require("number", "contact")
        number = body.number_field()
        contacts = body.items("contact", minimum=1)
        cards = []
        for contact in contacts:
            if not isinstance(contact, dict):
                raise schema_error("contact[0] is not of a type(s) object")
            for key in ("fullName", "phoneNumber"):
                if not isinstance(contact.get(key), str):
                    raise schema_error(f'contact[0] requires property "{key}"')
            if not contact["fullName"]:
                raise schema_error("fullName is required")
            if len(contact["phoneNumber"]) < 10:
                raise schema_error("contact[0].phoneNumber does not meet minimum length of 10")
            wuid = contact.get("wuid")
            if wuid is not None and (not isinstance(wuid, str) or len(wuid) < 10 or not wuid.isdigit()):
                raise schema_error('"wuid" must be a numeric string')
            waid = wuid or f"{contact['phoneNumber']}@s.whatsapp.net"
            card = "\n".join(["BEGIN:VCARD", "VERSION:3.0", f"N:{contact['fullName']}", f"FN:{contact['fullName']}",
                               *([f"ORG:{contact['organization']};"] if contact.get("organization") else []),
                               *([f"EMAIL:{contact['email']}"] if contact.get("email") else []),
                               *([f"URL:{contact['url']}"] if contact.get("url") else []),
                               f"item1.TEL;waid={waid}:{contact['phoneNumber']}", "item1.X-ABLabel:Celular", "END:VCARD"])
            cards.append({"displayName": contact["fullName"], "vcard": card})
        jid = self._recipient(number)
        if len(cards) == 1:
            return self._sent("send-contact", jid, "contactMessage", {"contactMessage": cards[0]},
                              cards[0]["displayName"])
        message = {"contactsArrayMessage": {"displayName": f"{len(cards)} contacts", "contacts": cards}}
        return self._sent("send-contact", jid, "contactsArrayMessage", message, f"{len(cards)} contacts")

    async def send_poll(self, request: web.Request) -> web.Response:
        body = await self._body(request)
        body.schema(("number", "name", "selectableCount", "values"), strings=("name",),
                    integers=("selectableCount",))
        number, question = body.number_field(), body.text("name")
        count = body.integer("selectableCount", required=True)
        values = body.items("values", minimum=2)
        if len(values) > 10:
            raise schema_error("values does not meet maximum length of 10")
        if not all(isinstance(value, str) for value in values) or len(set(values)) != len(values):
            raise schema_error("values contains duplicate item")
        if count is None or not 0 <= count <= 10:
            raise schema_error("selectableCount must be less than or equal to 10")
        jid = self._recipient(number)
        content = {"name": question, "options": [{"optionName": value} for value in values],
                   "selectableOptionsCount": count}
        return self._sent("send-poll", jid, "pollCreationMessageV3", {"pollCreationMessageV3": content}, question)

    async def send_buttons(self, request: web.Request) -> web.Response:
        body = await self._body(request)
        body.require("number")
        number = body.number_field()
        title = body.text("title", required=False)
        buttons = body.data.get("buttons")
        if not isinstance(buttons, list) or not buttons:
            raise EvolutionError(400, ["At least one button is required"])
        kinds = [button.get("type") if isinstance(button, dict) else None for button in buttons]
        if "reply" in kinds and any(kind != "reply" for kind in kinds):
            raise EvolutionError(400, ["Reply buttons cannot be mixed with other button types"])
        if kinds.count("reply") > 3:
            raise EvolutionError(400, ["Maximum of 3 reply buttons allowed"])
        jid = self._recipient(number)
        first = buttons[0] if kinds[0] == "reply" else None
        return self._sent("send-button-actions", jid, "interactiveMessage", {"interactiveMessage": {
            "body": {"text": title}}}, title, first_button_id=str(first.get("id")) if first else None,
            first_button_text=str(first.get("displayText")) if first else None)

    async def send_list(self, request: web.Request) -> web.Response:
        body = await self._body(request)
        body.require("number", "title", "footerText", "buttonText", "sections")
        number, title = body.number_field(), body.text("title")
        body.text("footerText")
        body.text("buttonText")
        sections = body.items("sections")
        for position, section in enumerate(sections):
            rows = section.get("rows") if isinstance(section, dict) else None
            if not isinstance(section, dict) or "title" not in section:
                raise schema_error(f'sections[{position}] requires property "title"')
            if not isinstance(rows, list) or not rows:
                raise schema_error(f"sections[{position}].rows does not meet minimum length of 1")
            for index, row in enumerate(rows):
                for key in ("title", "rowId"):
                    if not isinstance(row, dict) or key not in row:
                        raise schema_error(f'sections[{position}].rows[{index}] requires property "{key}"')
        jid = self._recipient(number)
        return self._sent("send-button-list", jid, "listMessage", {"listMessage": {"title": title}}, title)

    # -- groups (§2.6) ------------------------------------------------------------------------------------------

    def _group(self, jid: str) -> Any:
        group = self.state.group(jid)
        if group is None:
            raise EvolutionError(404, ["Error fetching group", f"Error: item-not-found ({jid})"])
        return group

    async def update_participant(self, request: web.Request) -> web.Response:
        body = await self._body(request)
        jid = group_jid(request, body)
        action = body.data.get("action")
        if action not in PARTICIPANT_ACTIONS:
            raise EvolutionError(400, [{"property": "action", "message": f"action is not one of enum values: "
                                                                         f"{','.join(PARTICIPANT_ACTIONS)}"}])
        participants = body.data.get("participants")
        if not isinstance(participants, list) or not participants:
            raise EvolutionError(400, [{"property": "participants", "message": "participants is required"}])
        community = self.state.communities.get(group_digits(jid))
        if community is not None and action == "promote":  # a community's own id is a group JID here (§2.6)
            phones = [create_jid(str(entry)).split("@")[0] for entry in participants]
            community.admins += [phone for phone in phones if phone not in community.admins]
            return web.json_response({"updateParticipants": [
                {"status": "200", "jid": f"{phone}@s.whatsapp.net", "content": {}} for phone in phones]}, status=201)
        group = self._group(jid)
        rows = []
        for entry in participants:
            phone = create_jid(str(entry)).split("@")[0]
            status = "200"
            if action == "add":
                if not is_registered(phone):
                    status = "403"
                elif phone in group.participants:
                    status = "409"
                else:
                    group.participants[phone] = Participant(phone)
            elif action == "promote":
                if phone in group.participants:
                    group.participants[phone].is_admin = True
                else:
                    status = "404"
            rows.append({"status": status, "jid": f"{phone}@s.whatsapp.net", "content": {}})
        return web.json_response({"updateParticipants": rows}, status=201)

    async def update_subject(self, request: web.Request) -> web.Response:
        body = await self._body(request)
        jid = group_jid(request, body)
        subject = body.data.get("subject")
        if not isinstance(subject, str) or not subject:
            raise EvolutionError(400, [{"property": "subject", "message": "subject is required"}])
        group = self._group(jid)
        group.name, group.name_set_at, group.name_set_by = subject, self.context.clock(), self.state.own_phone
        return web.json_response({"update": "success"}, status=201)

    def _group_row(self, group: Any, *, participants: bool) -> dict[str, Any]:
        row: dict[str, Any] = {
            "id": group.jid, "subject": group.name, "subjectOwner": f"{group.name_set_by}@s.whatsapp.net",
            "subjectTime": _seconds(group.name_set_at), "pictureUrl": None, "size": len(group.participants),
            "creation": _seconds(group.created_at), "owner": f"{group.owner}@s.whatsapp.net",
            "desc": group.description, "descId": None, "restrict": group.is_locked, "announce": group.is_announce,
            "isCommunity": False, "isCommunityAnnounce": False, "linkedParent": None}
        if participants:
            row["participants"] = [
                {"id": f"{member.phone}@s.whatsapp.net", "phoneNumber": f"{member.phone}@s.whatsapp.net",
                 "admin": "superadmin" if member.is_super_admin else "admin" if member.is_admin else None}
                for member in group.participants.values()]
        return row

    async def find_group(self, request: web.Request) -> web.Response:
        jid = group_jid(request, None)
        if not group_digits(jid).replace("-", "").isdigit():
            raise EvolutionError(400, [{"property": "groupJid", "message": 'does not match pattern "^[\\d-]+@g.us$"'}])
        return web.json_response(self._group_row(self._group(jid), participants=True))

    async def revoke_invite(self, request: web.Request) -> web.Response:
        body = await self._body(request)
        jid = group_jid(request, body)
        target = self.state.communities.get(group_digits(jid)) or self._group(jid)  # a community's id is a group's
        target.invite_generation += 1
        return web.json_response({"revoked": True, "inviteCode": target.invite_link.rsplit("/", 1)[-1]}, status=201)

    async def fetch_all_groups(self, request: web.Request) -> web.Response:
        wanted = request.query.get("getParticipants")
        if wanted is None:
            raise EvolutionError(400, ["The getParticipants needs to be informed in the query"])
        rows = [self._group_row(group, participants=wanted == "true") for group in self.state.groups.values()]
        return web.json_response(rows)

    async def create_group(self, request: web.Request) -> web.Response:
        """createGroupSchema (`subject`, `participants` required; dataValidate's nested-list 400); the numbers not on
        WhatsApp are left out, as createGroup's whatsappNumber filter does; 201 with the new group's metadata."""
        body = await self._body(request)
        body.require("subject", "participants")
        subject, numbers = body.text("subject"), body.data["participants"]
        if not isinstance(numbers, list) or not numbers or not all(isinstance(n, str) for n in numbers):
            raise schema_error('participants "participants" must be an array of numeric strings')
        if not self.link.connected:
            raise EvolutionError(500, ["Error creating group", "Error: Connection Closed"])
        own, now = self.state.own_phone, self.context.clock()
        members = [own] + [phone for phone in dict.fromkeys(numbers) if phone != own and is_registered(phone)]
        group = Group(digits=self.state.new_group_digits(), name=subject, description=body.text("description",
                      required=False), owner=own, created_at=now,
                      participants={phone: Participant(phone, is_admin=phone == own, is_super_admin=phone == own)
                                    for phone in members},
                      name_set_at=now, name_set_by=own, topic_set_at=now, topic_set_by=own)
        self.state.groups[group.digits] = group
        self.state.chat(group.jid)
        return web.json_response(self._group_row(group, participants=True), status=201)

    # -- proxy (proxy.router.ts; stored only: the sandbox makes no connection through it) ----------------------

    async def set_proxy(self, request: web.Request) -> web.Response:
        """proxySchema: `enabled`, `host`, `port`, `protocol` required; answered as proxy.service.ts create does."""
        body = await self._body(request)
        body.require("enabled", "host", "port", "protocol")
        enabled = body.data["enabled"] is True
        fields = {name: body.text(name, required=False) for name in ("host", "port", "protocol", "username", "password")}
        if enabled and not (fields["host"] and fields["port"] and fields["protocol"]):
            raise schema_error("host, port and protocol cannot be empty")
        self.state.proxy_enabled = enabled
        self.state.proxy_url = f"{fields['protocol']}://{fields['host']}:{fields['port']}" if enabled else ""
        return web.json_response({"proxy": {"instanceName": self.name, "proxy": {"enabled": enabled, **fields}}},
                                 status=201)

    async def find_proxy(self, request: web.Request) -> web.Response:
        if not self.state.proxy_url:
            return web.json_response(None)  # proxy.service.ts find: null when no row
        protocol, rest = self.state.proxy_url.split("://", 1)
        host, port = rest.rsplit(":", 1)
        return web.json_response({"enabled": self.state.proxy_enabled, "host": host, "port": port,
                                  "protocol": protocol, "instanceId": self._instance_uuid()})

    # -- chats and profile (§2.7, §2.8) -------------------------------------------------------------------------

    async def update_profile_status(self, request: web.Request) -> web.Response:
        body = await self._body(request)
        body.require("status")
        self.state.profile_description = body.text("status")
        return web.json_response({"update": "success"})

    def _privacy(self) -> dict[str, str]:
        privacy = self.state.privacy
        return {**self.state.evolution_privacy, "last": SCOPE_WORDS[privacy.last_seen],
                "groupadd": SCOPE_WORDS[privacy.group_add]}

    async def fetch_privacy(self, request: web.Request) -> web.Response:
        return web.json_response(self._privacy())

    async def update_privacy(self, request: web.Request) -> web.Response:
        """All six required (§2.7); each checked against its enum. The state keeps `last` and `groupadd` in the
        spec's words (the other dialects read them) and the other four as Evolution says them."""
        body = await self._body(request)
        body.schema(tuple(PRIVACY_VALUES), strings=tuple(PRIVACY_VALUES))
        wrong = [f"{key} is not one of enum values: {','.join(allowed)}" for key, allowed in PRIVACY_VALUES.items()
                 if body.data[key] not in allowed]
        if wrong:
            raise schema_error(*wrong)
        words = {word: scope for scope, word in SCOPE_WORDS.items()}
        self.state.privacy.last_seen = words[body.data["last"]]
        self.state.privacy.group_add = words[body.data["groupadd"]]
        self.state.evolution_privacy = {key: body.data[key] for key in ("readreceipts", "profile", "status", "online")}
        return web.json_response({"update": "success", "data": self._privacy()}, status=201)

    async def find_messages(self, request: web.Request) -> web.Response:
        """fetchMessages (2.3.6 channel.service.ts): `where.key.remoteJid` narrows to one chat; `offset` messages a
        page (50 unless given), `page` from 1; newest first; `{messages: {total, pages, currentPage, records}}`.
        From the seeded history and what contacts wrote (SandboxState.listed_history)."""
        body = await self._body(request)
        where = body.data.get("where")
        key = where.get("key") if isinstance(where, dict) else None
        chat = key.get("remoteJid") if isinstance(key, dict) else None
        size, page = body.integer("offset") or 50, body.integer("page") or 1
        rows = [message for message in reversed(self.state.listed_history()) if not chat or message.chat == chat]
        records: list[dict[str, Any]] = [{"id": uuid.uuid5(uuid.NAMESPACE_URL, message.message_id).hex[:25],
                    "key": {"id": message.message_id, "fromMe": message.from_me, "remoteJid": message.chat},
                    "pushName": message.push_name or None, "messageType": "conversation",
                    "message": {"conversation": message.text}, "messageTimestamp": int(message.at.timestamp()),
                    "instanceId": self._instance_uuid(), "source": "android", "contextInfo": None,
                    "MessageUpdate": []}
                   for message in rows[size * (page - 1):size * page]]
        return web.json_response({"messages": {"total": len(rows), "pages": -(-len(rows) // size),
                                               "currentPage": page, "records": records}})

    async def find_chats(self, request: web.Request) -> web.Response:
        body = await self._body(request)
        take, skip = body.integer("take"), body.integer("skip") or 0
        last = self.state.last_message_times()
        chats = sorted(self.state.chats.values(), key=lambda chat: last.get(chat.phone) or datetime.fromtimestamp(0).astimezone(),
                       reverse=True)
        rows = []
        for chat in chats:
            jid = chat.phone if chat.phone.endswith("@g.us") else f"{chat.phone}@s.whatsapp.net"
            group = self.state.group(chat.phone) if chat.phone.endswith("@g.us") else None
            when = last.get(chat.phone)
            rows.append({"id": uuid.uuid5(uuid.NAMESPACE_URL, jid).hex[:25], "remoteJid": jid,
                         "pushName": group.name if group else self.state.contact_name(chat.phone) or None,
                         "profilePicUrl": None, "updatedAt": when.isoformat() if when else None,
                         "unreadCount": chat.unread, "isSaved": False})
        rows = rows[skip:]
        return web.json_response(rows[:take] if take else rows)

    async def find_contacts(self, request: web.Request) -> web.Response:
        body = await self._body(request)
        size, page = body.integer("offset"), body.integer("page") or 1
        rows = [{"id": uuid.uuid5(uuid.NAMESPACE_URL, phone).hex[:25], "remoteJid": f"{phone}@s.whatsapp.net",
                 "pushName": self.state.push_name(phone) or contact.name, "profilePicUrl": None,
                 "instanceId": self._instance_uuid(), "isGroup": False, "isSaved": True, "type": "contact"}
                for phone, contact in self.state.contacts.items()]
        if size:
            rows = rows[(page - 1) * size: page * size]
        return web.json_response(rows)

    # -- the webhook (§4) ---------------------------------------------------------------------------------------

    async def set_webhook(self, request: web.Request) -> web.Response:
        body = await self._body(request)
        body.require("webhook")
        webhook = body.data["webhook"]
        if not isinstance(webhook, dict):
            raise schema_error("webhook is not of a type(s) object")
        missing = [f'webhook requires property "{name}"' for name in ("enabled", "url") if name not in webhook]
        if missing:
            raise schema_error(*missing)
        events = webhook.get("events")
        for position, event in enumerate(events or []):
            if event not in WEBHOOK_EVENTS:
                raise schema_error(f"webhook.events[{position}] is not one of enum values: {','.join(WEBHOOK_EVENTS)}")
        enabled = webhook.get("enabled") is True
        if enabled and events is None:  # a crash in Evolution's controller (§4.1), kept as it answers
            raise EvolutionError(500, "Cannot read properties of undefined (reading 'length')")
        stored = self.state.evolution_webhook or {}
        now = self.context.clock().isoformat()
        row = {
            "id": stored.get("id") or uuid.uuid5(uuid.NAMESPACE_URL, f"webhook:{self.name}").hex[:25],
            "url": webhook.get("url", stored.get("url", "")), "headers": webhook.get("headers", stored.get("headers")),
            "enabled": enabled,
            "events": (list(events) if events else list(WEBHOOK_EVENTS)) if enabled else [],
            "webhookByEvents": webhook.get("byEvents", stored.get("webhookByEvents", False)),
            "webhookBase64": webhook.get("base64", stored.get("webhookBase64", False)),
            "createdAt": stored.get("createdAt", now), "updatedAt": now, "instanceId": self._instance_uuid()}
        self.state.evolution_webhook = row
        return web.json_response(row, status=201)

    async def find_webhook(self, request: web.Request) -> web.Response:
        return web.json_response(self.state.evolution_webhook)  # `null` when never set (§4.2)

    # -- the connection and pairing (§3) ------------------------------------------------------------------------

    def _state(self) -> str:
        return instance_state(self.context)

    def _state_answer(self) -> web.Response:
        return web.json_response({"instance": {"instanceName": self.name, "state": self._state()}})

    async def connection_state(self, request: web.Request) -> web.Response:
        return self._state_answer()

    async def connect(self, request: web.Request) -> web.Response:
        number = request.query.get("number")
        state = self._state()
        if state == "open":
            return self._state_answer()
        now = self.context.clock()
        if state == "close":
            self.link.start_codes(now)  # a connection starts; its first answer has no code yet
            self._pairing_number = number  # `?number=` counts only while closed (§3.2)
            self.context.deliver(self._webhooks.connecting())
            return web.json_response({"count": 0})
        if self.link.paired:  # reconnecting: no new code
            return web.json_response({"count": 0})
        issued = self.context.codes
        payload = issued.qr_payload(Family.INSTANCE, self.link, now)
        window = int((now - (self.link.window_start or now)) / issued.lifetime)
        phone = self._pairing_number
        code = issued.phone_code(Family.INSTANCE, self.link, phone, now).replace("-", "") if phone else None
        image = png_data_url(payload)
        if self._code_announced != (payload, code):  # a new code: Evolution pushes each one as qrcode.updated
            self._code_announced = (payload, code)
            self.context.deliver(self._webhooks.qrcode_updated(payload, image, code))
        return web.json_response({"pairingCode": code, "code": payload, "base64": image, "count": window + 1})

    async def restart(self, request: web.Request) -> web.Response:
        state = self._state()
        if state == "close":
            return web.json_response({"error": True, "message": "[object Object]"})
        if self.link.paired and not self.link.connected:
            self.link.reconnect(self.context.clock())
            self.context.announce(Family.INSTANCE, LinkEvent.CONNECTED)
        return await self.connect(request)

    async def logout(self, request: web.Request) -> web.Response:
        if self._state() == "close":
            raise EvolutionError(400, [f'The "{self.name}" instance is not connected'])
        paired = self.link.paired
        self.link.unpair(self.context.clock(), keep_client=True)
        if paired:
            self.context.announce(Family.INSTANCE, LinkEvent.LOGGED_OUT)
        return web.json_response({"status": "SUCCESS", "error": False, "response": {"message": "Instance logged out"}})

    async def fetch_instances(self, request: web.Request) -> web.Response:
        """With the instance's key: a bare array of its one row (§3.4); the key itself is never echoed."""
        wanted = request.query.get("instanceName")
        if wanted is not None and wanted != self.name:
            raise EvolutionError(404, [f'Instance "{wanted}" not found'])
        return web.json_response([instance_row(self.context, token="(not shown)")])

    # -- a sandbox of many instances (`--accounts N`): one Evolution server ---------------------------------------

    @classmethod
    def new_instance_id(cls, serial: int) -> str:
        """Evolution names its instances (the name is the path's `{instance}`): `sandbox-01`, `sandbox-02`, …"""
        return f"sandbox-{serial:02d}"

    @classmethod
    def fleet_routes(cls, fleet: FleetAdmin) -> list[web.RouteDef]:
        """`GET /instance/fetchInstances` across the fleet (§3.4; instance.controller.ts fetchInstances): the
        fleet's admin token is Evolution's global key and lists every instance, each row with its key (`token`),
        in one call; an instance's key lists that instance only; any other key is 401."""

        async def fetch_instances(request: web.Request) -> web.Response:
            key = request.headers.get("apikey")
            contexts = list(fleet.contexts())
            if not fleet.is_admin_key(key):
                contexts = [context for context in contexts if _same_secret(key, context.instance_token)]
                if not contexts:
                    return evolution_error(EvolutionError(401, "Unauthorized"))
            wanted = request.query.get("instanceName")
            if wanted is not None:
                contexts = [context for context in contexts if context.instance_id == wanted]
                if not contexts:
                    return evolution_error(EvolutionError(404, [f'Instance "{wanted}" not found']))
            return web.json_response([instance_row(context, token=context.instance_token) for context in contexts])

        return [web.get("/instance/fetchInstances", fetch_instances)]


def instance_state(context: Context) -> str:
    """`open`, `connecting` or `close`, as connectionState says it (§3.1)."""
    link = context.state.instance_link
    if link.connected:
        return "open"
    if link.paired or link.window_start is not None:
        return "connecting"  # reconnecting, or waiting for a scan
    return "close"


def instance_row(context: Context, *, token: str) -> dict[str, Any]:
    """One row of fetchInstances (§3.4: the Instance database row with its relations); `token` is what the row
    shows as the instance's key."""
    state, link = context.state, context.state.instance_link
    owner = f"{link.number or state.own_phone}@s.whatsapp.net" if link.paired else None
    return {
        "id": instance_uuid(context.instance_id), "name": context.instance_id, "connectionStatus": instance_state(context),
        "ownerJid": owner, "profileName": state.own_name if link.paired else None, "profilePicUrl": None,
        "integration": "WHATSAPP-BAILEYS", "number": None, "businessId": None, "token": token,
        "clientName": "sandbox", "disconnectionReasonCode": None, "disconnectionObject": None,
        "disconnectionAt": None, "createdAt": "2025-01-01T00:00:00.000Z", "updatedAt": "2025-01-01T00:00:00.000Z",
        "Chatwoot": None, "Proxy": None, "Rabbitmq": None, "Nats": None, "Sqs": None, "Websocket": None,
        "Setting": None, "_count": {"Message": len(state.sent), "Contact": len(state.contacts),
                                    "Chat": len(state.chats)}}


async def _unknown_route(request: web.Request) -> web.Response:
    return evolution_error(EvolutionError(404, [f"Cannot {request.method} {request.path}"]))


def _seconds(moment: datetime) -> int:
    return int(moment.timestamp())


def _base64(text: str) -> bytes | None:
    """Raw base64 as class-validator's isBase64 takes it (a `data:` URL, line breaks or padding in the middle fail)."""
    import binascii

    if not text or text.startswith("data:") or "\n" in text:
        return None
    try:
        return binascii.a2b_base64(text, strict_mode=True)
    except (binascii.Error, ValueError):
        return None


def _mime_of(file_name: str) -> str:
    """The type Evolution looks up from the file name's extension (the text "false" without a known one, §2.4)."""
    import mimetypes

    return mimetypes.guess_type(file_name)[0] or "false"

