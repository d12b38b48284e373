"""The instance family in Z-API's dialect (docs/gateways/zapi.md §1-§4), for `gateway-tui sandbox
--instance-dialect zapi`.

Only Z-API's request shapes are accepted; a spec-dialect key (`buttons`, `selectableCount`, `lat`/`lng`, a group
as `@g.us`, privacy `CONTACT`, a delay in milliseconds, a body on redefine-invitation-link) is a 400 naming it,
so a client that forgets to translate is caught. Errors are Z-API's `{"error": "<field>: <rule>"}`.

Answers are Z-API's: sends 200 `{zaapId, messageId, id}` (forward-message only `{zaapId}`), boolean results
`{value: bool}` (privacy `{success: true}`), add-participant `{value}` without lists, group metadata and product
in Z-API's field names, `{invitationLink}`.

Sandbox rules beyond the docs, chosen to be simple and predictable:
* `value: false` (200) when the call names a group or community the sandbox does not know, when renaming a group
  where the account is not an admin, and for add-participant when any number is not registered (ending in
  0000): then nobody is added, so `false` always means "nothing changed";
* a send to an unknown group or an unregistered number is accepted and fails in its `DeliveryCallback`, as
  Z-API reports send failures asynchronously (§1.4);
* webhook URLs are not required to be HTTPS (the local listener is plain HTTP), unlike the real service;
* the callback URLs of `update-webhook-received`, `-message-status` and `-chat-presence` fall back to the
  delivery URL while unset, so the app's single delivery URL sees every kind (see `delivery.py`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from aiohttp import web

from tui.api.operations import Family, OperationId
from tui.sandbox.checks import DIGITS, DIGITS_PHONE, ZAPI_GROUP, ZapiBody, item
from tui.sandbox.handlers import DialectApi, handles
from tui.sandbox.events import zaap_id
from tui.gateways.zapi.webhook_posts import ZapiWebhooks
from tui.sandbox.context import Context
from tui.sandbox.pairing import Link, LinkEvent, png_data_url
from tui.sandbox.media import ZAPI_MEDIA_FIELDS, instance_media
from tui.sandbox.state import (
    Participant,
    SentMessage,
    group_digits,
    is_registered,
    send_failure,
)
from tui.sandbox.wire import ApiError, Handler, bad_field, guarded, read_json_object


NOT_FORWARDABLE = "Message does not forward because it was not found"
BUTTON_TYPES = ("CALL", "URL", "REPLY")
LINK_TYPES = ("SMALL", "MEDIUM", "LARGE")
CHAT_ACTIONS = ("read", "unread", "archive", "unarchive", "pin", "unpin", "mute", "unmute", "clear", "delete")
GROUP_ADD_SCOPES = ("ALL", "CONTACTS", "CONTACT_BLACKLIST")
LAST_SEEN_SCOPES = ("ALL", "NONE", "CONTACTS", "CONTACT_BLACKLIST")
# Callback kinds with their own URL in Z-API (§4); the delivery URL is operation 16's.
CALLBACK_ROUTES = {
    "update-webhook-received": ("received",),
    "update-webhook-received-delivery": ("received",),
    "update-webhook-message-status": ("message-status",),
    "update-webhook-chat-presence": ("chat-presence",),
    "update-webhook-connected": ("connected",),
    "update-webhook-disconnected": ("disconnected",),
}
# (chat address, text the sandbox remembers, the first REPLY button as (id, label) when there is one)
Checked = tuple[str, str, tuple[str, str] | None]


def zapi_error(error: ApiError) -> web.Response:
    return web.json_response({"error": error.message}, status=error.status, headers=error.headers)


def _value(ok: bool) -> web.Response:
    return web.json_response({"value": ok})


def _internal_recipient(phone: str) -> str:
    """The state keys groups by their send JID; Z-API's `-group` maps onto it."""
    return f"{group_digits(phone)}@g.us" if ZAPI_GROUP.fullmatch(phone) else phone


class ZapiInstanceApi(DialectApi):
    REFUSED: ClassVar[frozenset[OperationId]] = frozenset()  # the real gateway offers every operation

    @classmethod
    def webhooks(cls, context: Context) -> ZapiWebhooks:
        return ZapiWebhooks(context)  # its callbacks (deliveries.py)

    def generated(self) -> dict[OperationId, Handler]:
        """The sends, one checker each, and the media sends, one per kind (the other calls are `@handles`)."""
        sends: dict[OperationId, Callable[[ZapiBody], Checked]] = {
            OperationId.SEND_TEXT: self._text,
            OperationId.SEND_BUTTON_ACTIONS: self._button_actions,
            OperationId.SEND_BUTTON_LIST: self._button_list,
            OperationId.SEND_LINK: self._link,
            OperationId.SEND_POLL: self._poll,
            OperationId.SEND_LOCATION: self._location,
            OperationId.SEND_STICKER: self._sticker,
        }
        table: dict[OperationId, Handler] = {op: self.guarded(self._send_handler(op, check)) for op, check in sends.items()}
        table.update({OperationId(path): self.guarded(self._media_handler(kind)) for kind, path in ZAPI_MEDIA_FIELDS.items()})
        return table

    def extra_routes(self, prefix: str) -> list[web.RouteDef]:
        """Z-API's other webhook settings (not operations of the app, but real routes the sandbox honours)."""
        routes = [
            web.put(f"{prefix}/{path}", self.guarded(self._callback_url_setter(kinds), needs_connection=False))
            for path, kinds in CALLBACK_ROUTES.items()
        ]
        return routes

    def guard(self, handler: Handler, *, needs_connection: bool | None) -> Handler:
        """A registered handler guarded as this dialect's own are (a paired phone needed unless said otherwise)."""
        return self.guarded(handler, needs_connection=True if needs_connection is None else needs_connection)

    def guarded(self, handler: Handler, *, needs_connection: bool = True) -> Handler:
        return guarded(handler, lambda request: self.context.check_instance(request, needs_connection=needs_connection),
                       zapi_error)

    async def _body(self, request: web.Request) -> ZapiBody:
        return ZapiBody(await read_json_object(request))

    # -- sends -----------------------------------------------------------------------------------------------

    def _send_handler(self, operation: str, check: Callable[[ZapiBody], Checked]) -> Handler:
        async def send(request: web.Request) -> web.Response:
            body = await self._body(request)
            phone, text, button = check(body)
            button_id, button_text = button if button else (None, None)
            sent = self._record(operation, phone, text, first_button_id=button_id, first_button_text=button_text)
            return web.json_response({"zaapId": zaap_id(sent.message_id), "messageId": sent.message_id, "id": sent.message_id})

        return send

    def _record(self, operation: str, phone: str, text: str, *, failure: str | None = None, **extra: Any) -> SentMessage:
        recipient = _internal_recipient(phone)
        failure = send_failure(recipient) or failure
        if failure is None and recipient.endswith("@g.us") and self.state.group(recipient) is None:
            failure = "Phone number does not exist"
        sent = SentMessage(self.context.new_id(), recipient, operation, text, failure=failure, **extra)
        self.state.record_send(sent)
        self.context.on_sent(sent)
        return sent

    def _media_handler(self, kind: str) -> Handler:
        async def send(request: web.Request) -> web.Response:
            body = await self._body(request)
            phone = body.phone_or_group()
            media = instance_media(body, kind, request.match_info.get("extension"))
            sent = self._record(ZAPI_MEDIA_FIELDS[kind], phone, media.text, media=media.data, media_type=media.media_type,
                                media_url=media.url, file_name=media.file_name)
            return web.json_response({"zaapId": zaap_id(sent.message_id), "messageId": sent.message_id, "id": sent.message_id})

        return send

    @staticmethod
    def _common(body: ZapiBody) -> str:
        phone = body.phone_or_group()
        body.delay_seconds("delayMessage")
        return phone

    def _text(self, body: ZapiBody) -> Checked:
        phone = self._common(body)
        body.delay_seconds("delayTyping")
        for key in ("messageId", "editMessageId"):
            body.text(key, required=False)
        body.boolean("privateAnswer", required=False)
        return phone, body.required_text("message"), None

    def _button_actions(self, body: ZapiBody) -> Checked:
        body.refuse_foreign({"buttons": 'send buttonActions: [{"id", "type": "REPLY", "label"}]'})
        phone = self._common(body)
        message = body.required_text("message")
        for key in ("title", "footer", "image"):
            body.text(key, required=False)
        first_reply: tuple[str, str] | None = None
        for position, button in enumerate(body.objects("buttonActions")):
            where = f"buttonActions.{position}"
            if "text" in button:
                raise bad_field(f"{where}.text", "is not a Z-API field; the button's text is `label`")
            kind = button.get("type")
            if kind not in BUTTON_TYPES:
                raise bad_field(f"{where}.type", f"must be one of {', '.join(BUTTON_TYPES)}")
            label = item(button, "label", where)
            if kind == "REPLY" and first_reply is None:
                first_reply = (str(button.get("id") or "1"), label)
            if kind == "CALL":
                item(button, "phone", where)
            if kind == "URL":
                item(button, "url", where)
        return phone, message, first_reply

    def _button_list(self, body: ZapiBody) -> Checked:
        phone = self._common(body)
        message = body.required_text("message")
        button_list = body.data.get("buttonList")
        if not isinstance(button_list, dict):
            raise bad_field("buttonList", 'is required: {"buttons": [{"id", "label"}]}')
        buttons = ZapiBody(button_list).objects("buttons") if "buttons" in button_list else None
        if not buttons:
            raise bad_field("buttonList.buttons", "must be a non-empty list")
        for position, button in enumerate(buttons):
            item(button, "label", f"buttonList.buttons.{position}")
        return phone, message, None

    def _link(self, body: ZapiBody) -> Checked:
        phone = self._common(body)
        body.delay_seconds("delayTyping")
        message = body.required_text("message")
        link = body.required_text("linkUrl")
        if not link.startswith(("http://", "https://")):
            raise bad_field("linkUrl", "must be an http:// or https:// URL")
        for key in ("image", "title", "linkDescription"):  # all required by Z-API (§2)
            body.required_text(key)
        if "linkType" in body.data:
            body.choice("linkType", LINK_TYPES)
        return phone, f"{message} {link}", None

    def _poll(self, body: ZapiBody) -> Checked:
        body.refuse_foreign({"selectableCount": "send pollMaxOptions (the most options a voter may pick; 1 = single choice)"})
        phone = self._common(body)
        question = body.required_text("message")
        options = body.objects("poll")
        for position, option in enumerate(options):
            item(option, "name", f"poll.{position}")
        maximum = body.data.get("pollMaxOptions")
        if maximum is not None and (
            isinstance(maximum, bool) or not isinstance(maximum, int) or not 1 <= maximum <= len(options)
        ):
            raise bad_field("pollMaxOptions", f"must be a whole number from 1 to {len(options)} (1 = single choice)")
        return phone, question, None

    def _location(self, body: ZapiBody) -> Checked:
        body.refuse_foreign({"lat": "send latitude as a string", "lng": "send longitude as a string"})
        phone = self._common(body)
        title = body.required_text("title")
        body.required_text("address")
        body.decimal_string("latitude", 90)
        body.decimal_string("longitude", 180)
        body.text("messageId", required=False)
        return phone, title, None

    def _sticker(self, body: ZapiBody) -> Checked:
        phone = self._common(body)
        sticker = body.required_text("sticker")
        if not sticker.startswith(("http://", "https://", "data:image/")):
            raise bad_field("sticker", "must be an image URL or data:image/...;base64,...")
        body.text("stickerAuthor", required=False)
        return phone, "", None

    @handles(OperationId.FORWARD_MESSAGE)
    async def forward(self, request: web.Request) -> web.Response:
        body = await self._body(request)
        phone = self._common(body)
        message_id = body.required_text("messageId")
        body.phone_or_group("messagePhone")
        original = self.state.find_sent(message_id)
        failure = None if original else NOT_FORWARDABLE  # reported in the DeliveryCallback, as Z-API does
        sent = self._record("forward-message", phone, original.text if original else "", failure=failure)
        return web.json_response({"zaapId": zaap_id(sent.message_id)})  # only zaapId (§1.4)

    # -- privacy ---------------------------------------------------------------------------------------------

    @handles(OperationId.PRIVACY_GROUP_ADD)
    async def privacy_group_add(self, request: web.Request) -> web.Response:
        body = await self._body(request)
        scope = self._scope(body, "type", GROUP_ADD_SCOPES)
        changes = _blacklist_changes(body)
        self.state.privacy.group_add = scope
        _apply_blacklist(self.state.privacy.group_add_blacklist, changes)
        return web.json_response({"success": True})  # privacy answers `success`, not `value` (§3.2)

    @handles(OperationId.PRIVACY_LAST_SEEN)
    async def privacy_last_seen(self, request: web.Request) -> web.Response:
        body = await self._body(request)
        scope = self._scope(body, "visualizationType", LAST_SEEN_SCOPES)
        changes = _blacklist_changes(body)
        self.state.privacy.last_seen = scope
        _apply_blacklist(self.state.privacy.last_seen_blacklist, changes)
        return web.json_response({"success": True})

    @staticmethod
    def _scope(body: ZapiBody, key: str, allowed: tuple[str, ...]) -> str:
        if body.data.get(key) == "CONTACT":
            raise bad_field(key, "Z-API writes CONTACTS (the spec's CONTACT is not accepted)")
        scope = body.choice(key, allowed)
        return "CONTACT" if scope == "CONTACTS" else scope  # the state keeps the spec's vocabulary

    # -- groups and communities -----------------------------------------------------------------------------

    @handles(OperationId.ADD_PARTICIPANT)
    async def add_participant(self, request: web.Request) -> web.Response:
        body = await self._body(request)
        auto_invite = body.boolean("autoInvite", required=True)
        target = self._group_or_community(body)
        phones = body.phones("phones")
        if target is None or not all(is_registered(phone) for phone in phones):
            return _value(False)
        for phone in dict.fromkeys(phones):
            if phone in target.participants:
                continue
            if auto_invite:
                if phone not in target.pending_invites:
                    target.pending_invites.append(phone)
            else:
                target.participants[phone] = Participant(phone)
        return _value(True)

    def _group_or_community(self, body: ZapiBody) -> Any:
        """Same route for groups and communities: the body key decides (§3.4); a community adds to its first group."""
        if "communityId" in body.data and "groupId" not in body.data:
            community_id = body.required_text("communityId")
            if not DIGITS.fullmatch(community_id):
                raise bad_field("communityId", "must be digits only, e.g. 120363186053925765")
            community = self.state.communities.get(community_id)
            return self.state.group(community.group_digits[0]) if community and community.group_digits else None
        return self.state.group(body.group_id("groupId"))

    @handles(OperationId.UPDATE_GROUP_NAME)
    async def update_group_name(self, request: web.Request) -> web.Response:
        body = await self._body(request)
        group = self.state.group(body.group_id("groupId"))
        name = body.required_text("groupName")
        if group is None or not group.is_admin(self.state.own_phone):
            return _value(False)
        group.name = name
        group.name_set_at = self.context.clock()
        group.name_set_by = self.state.own_phone
        return _value(True)

    @handles(OperationId.GROUP_METADATA)
    async def group_metadata(self, request: web.Request) -> web.Response:
        group_id = request.match_info["GROUP_PHONE_NUMBER"]
        if not ZAPI_GROUP.fullmatch(group_id):
            raise bad_field("GROUP_PHONE_NUMBER", "must be a group id like 120363019502650977-group")
        group = self.state.group(group_id)
        if group is None:
            raise bad_field("GROUP_PHONE_NUMBER", f"no group {group_id} on this account")
        contacts = self.state.contacts
        return web.json_response(
            {
                "phone": group.group_id,
                "description": group.description,
                "owner": group.owner,
                "subject": group.name,
                "creation": _millis(group.created_at),
                "invitationLink": group.invite_link if group.is_admin(self.state.own_phone) else None,
                "communityId": group.community_id,
                "adminOnlyMessage": group.is_announce,
                "adminOnlySettings": group.is_locked,
                "requireAdminApproval": False,
                "isGroupAnnouncement": group.is_announce,
                "participants": [
                    {
                        "phone": member.phone,
                        "isAdmin": member.is_admin or member.is_super_admin,
                        "isSuperAdmin": member.is_super_admin,
                        "short": contacts[member.phone].name.split()[0] if member.phone in contacts else "",
                        "name": contacts[member.phone].name if member.phone in contacts else "",
                    }
                    for member in group.participants.values()
                ],
                "subjectTime": _millis(group.name_set_at),
                "subjectOwner": group.name_set_by,
            }
        )

    @handles(OperationId.ADD_ADMIN)
    async def add_admin(self, request: web.Request) -> web.Response:
        body = await self._body(request)
        if "groupId" in body.data:
            group = self.state.group(body.group_id("groupId"))
            phones = body.phones("phones")
            if group is None or not all(phone in group.participants for phone in phones):
                return _value(False)
            for phone in phones:
                group.participants[phone].is_admin = True
            return _value(True)
        community_id = body.required_text("communityId")
        if not DIGITS.fullmatch(community_id):
            raise bad_field("communityId", "must be digits only, e.g. 120363186053925765")
        phones = body.phones("phones")
        community = self.state.communities.get(community_id)
        if community is None:
            return _value(False)
        for phone in phones:
            if phone not in community.admins:
                community.admins.append(phone)
        return _value(True)

    @handles(OperationId.REDEFINE_INVITATION_LINK)
    async def redefine_invitation_link(self, request: web.Request) -> web.Response:
        body = await self._body(request)
        body.no_keys_but(())  # the id is in the path; the docs ask for no body (§3.3, §3.4)
        target_id = request.match_info["communityId"]
        community = self.state.communities.get(target_id)
        if community is not None:
            community.invite_generation += 1
            return web.json_response({"invitationLink": community.invite_link})
        group = self.state.group(target_id) if ZAPI_GROUP.fullmatch(target_id) else None
        if group is None:
            raise bad_field("communityId", f"no community or group {target_id} on this account")
        group.invite_generation += 1
        return web.json_response({"invitationLink": group.invite_link})

    # -- chats, profile, catalog, webhooks, status -----------------------------------------------------------

    @handles(OperationId.MODIFY_CHAT)
    async def modify_chat(self, request: web.Request) -> web.Response:
        body = await self._body(request)
        recipient = _internal_recipient(body.phone_or_group())
        action = body.choice("action", CHAT_ACTIONS)
        if action == "delete":
            self.state.chats.pop(recipient, None)
            return _value(True)
        chat = self.state.chat(recipient)
        if action in ("read", "unread"):
            chat.unread = 0 if action == "read" else max(chat.unread, 1)
        elif action in ("archive", "unarchive"):
            chat.archived = action == "archive"
        elif action in ("pin", "unpin"):
            chat.pinned = action == "pin"
        elif action in ("mute", "unmute"):
            chat.muted = action == "mute"
        elif action == "clear":
            chat.message_count = 0
            chat.unread = 0
        return _value(True)

    @handles(OperationId.PROFILE_DESCRIPTION)
    async def profile_description(self, request: web.Request) -> web.Response:
        body = await self._body(request)
        value = body.data.get("value")
        if not isinstance(value, str):
            raise bad_field("value", "is required (the description text)")
        self.state.profile_description = value
        return _value(True)

    @handles(OperationId.PRODUCTS)
    async def product(self, request: web.Request) -> web.Response:
        product_id = request.match_info["PRODUCT_ID"]
        product = self.state.products.get(product_id)
        if product is None:
            raise bad_field("PRODUCT_ID", f"no product {product_id} in this catalog")
        return web.json_response(
            {
                "cartEnabled": True,
                "catalogId": f"{self.state.own_phone}-catalog",
                "availability": "out of stock" if product.is_hidden else "in stock",
                "id": product.product_id,
                "retailerId": None,
                "description": product.description,
                "price": str(product.price),  # strings of minor units (§3.5)
                "salePrice": str(product.price),
                "currency": product.currency,
                "name": product.name,
                "images": list(product.images),
            }
        )

    async def _webhook_value(self, request: web.Request) -> str:
        body = await self._body(request)
        value = body.data.get("value")
        if not isinstance(value, str):
            raise bad_field("value", "is required (the webhook URL)")
        if value and not value.startswith(("http://", "https://")):
            raise bad_field("value", "must be an http:// or https:// URL")
        return value

    # webhook URLs are the gateway's settings: they can be set before a phone is paired
    @handles(OperationId.UPDATE_WEBHOOK_DELIVERY, needs_connection=False)
    async def update_webhook_delivery(self, request: web.Request) -> web.Response:
        self.state.delivery_url = await self._webhook_value(request)
        return _value(True)

    def _callback_url_setter(self, kinds: tuple[str, ...]) -> Handler:
        async def set_url(request: web.Request) -> web.Response:
            url = await self._webhook_value(request)
            for kind in kinds:
                self.state.zapi_callback_urls[kind] = url
            return _value(True)

        return set_url

    @handles(OperationId.UPDATE_EVERY_WEBHOOKS, needs_connection=False)
    async def update_every_webhooks(self, request: web.Request) -> web.Response:
        url = await self._webhook_value(request)
        self.state.delivery_url = url
        for kinds in CALLBACK_ROUTES.values():
            for kind in kinds:
                self.state.zapi_callback_urls[kind] = url
        return _value(True)

    # -- the connection and pairing (§3.1; tui.sandbox.pairing). Each state answers as follows:
    #   connected: status {true, "You are already connected.", true}; qr-code and phone-code give no code
    #     (the docs: "it will not allow you to connect again"): {connected: true, error: <that text>};
    #   network lost: status {false, "You need to restore the session.", false}; no code (still paired);
    #     restart reconnects, with a ConnectedCallback;
    #   wedged (stuck): status still says {true, "You are already connected."} (smartphoneConnected false) while
    #     qr-code says {connected: false, error: "You are not connected."} and sends answer 409: only restart
    #     recovers it;
    #   unpaired: status {false, "You are not connected.", false}; qr-code gives the current code's text,
    #     qr-code/image its PNG, phone-code/{phone} a code XXXX-XXXX, each new every 20 s.
    # disconnect unpairs a paired instance (DisconnectedCallback); both answer {value: true} in every state.

    @property
    def link(self) -> Link:
        return self.state.instance_link

    @handles(OperationId.INSTANCE_DATA, needs_connection=False)
    async def instance_data(self, request: web.Request) -> web.Response:
        """`GET /me` (developer.z-api.io/en/instance/me), in its field order; the token is not echoed (the
        sandbox never returns a secret) and the dates are the sandbox's own."""
        urls = self.state.zapi_callback_urls
        return web.json_response({
            "id": self.context.instance_id, "name": self.context.instance_id, "due": 4102444800000,
            "connected": self.link.connected, "paymentStatus": "PAID", "created": "2025-01-01T00:00:00.000Z",
            "connectedCallbackUrl": urls.get("connected", ""), "deliveryCallbackUrl": self.state.delivery_url,
            "disconnectedCallbackUrl": urls.get("disconnected", ""),
            "messageStatusCallbackUrl": urls.get("message-status", ""),
            "presenceChatCallbackUrl": urls.get("chat-presence", ""), "receivedCallbackUrl": urls.get("received", ""),
            "receiveCallbackSentByMe": False, "callRejectAuto": False, "callRejectMessage": "",
            "autoReadMessage": False, "initialDataCallbackUrl": "",
        })

    @handles(OperationId.DEVICE)
    async def device(self, request: web.Request) -> web.Response:
        """`GET /device` (developer.z-api.io/en/instance/device), in its field order: the paired phone's number,
        the account's name and profile text; a business account (the sandbox has a catalog) on a WhatsApp
        Business Android (`smba`). The sandbox has no profile picture (`imgUrl` ""). Not connected: 409, as
        every call that needs the phone (the docs say nothing of that case)."""
        return web.json_response({
            "phone": self.link.number or self.state.own_phone, "imgUrl": "", "about": self.state.profile_description,
            "name": self.state.own_name, "device": {"sessionName": "Z-API", "device_model": "Z-API"},
            "originalDevice": "smba", "sessionId": 1, "isBusiness": True,
        })

    @handles(OperationId.STATUS, needs_connection=False)
    async def status(self, request: web.Request) -> web.Response:
        link = self.link
        if link.paired and (link.online or link.stuck):
            return web.json_response({"connected": True, "error": "You are already connected.",
                                      "smartphoneConnected": not link.stuck})
        text = "You need to restore the session." if link.paired else "You are not connected."
        return web.json_response({"connected": False, "error": text, "smartphoneConnected": False})

    def _no_code(self) -> web.Response | None:
        """The answer instead of a code when the instance is paired (None when a code can be given)."""
        link = self.link
        if not link.paired:
            return None
        if link.stuck:
            return web.json_response({"connected": False, "error": "You are not connected."})
        if not link.online:
            return web.json_response({"connected": False, "error": "You need to restore the session."})
        return web.json_response({"connected": True, "error": "You are already connected."})

    @handles(OperationId.QR_CODE, needs_connection=False)
    async def qr_code(self, request: web.Request) -> web.Response:
        refused = self._no_code()
        if refused is not None:
            return refused
        return web.json_response({"value": self.context.codes.qr_payload(Family.INSTANCE, self.link, self.context.clock())})

    @handles(OperationId.QR_CODE_IMAGE, needs_connection=False)
    async def qr_code_image(self, request: web.Request) -> web.Response:
        refused = self._no_code()
        if refused is not None:
            return refused
        payload = self.context.codes.qr_payload(Family.INSTANCE, self.link, self.context.clock())
        return web.json_response({"value": png_data_url(payload)})

    @handles(OperationId.PHONE_CODE, needs_connection=False)
    async def phone_code(self, request: web.Request) -> web.Response:
        phone = request.match_info.get("phone", "")
        if not DIGITS_PHONE.fullmatch(phone):
            raise bad_field("phone", "must be the number with country code, digits only (e.g. 5511999999999)")
        refused = self._no_code()
        if refused is not None:
            return refused
        code = self.context.codes.phone_code(Family.INSTANCE, self.link, phone, self.context.clock())
        return web.json_response({"value": code})

    @handles(OperationId.RESTART, needs_connection=False)
    async def restart(self, request: web.Request) -> web.Response:
        link = self.link
        if link.paired and not link.connected:
            link.reconnect(self.context.clock())
            self.context.announce(Family.INSTANCE, LinkEvent.CONNECTED)
        return _value(True)

    @handles(OperationId.DISCONNECT, needs_connection=False)
    async def disconnect(self, request: web.Request) -> web.Response:
        link = self.link
        if link.paired:
            link.unpair(self.context.clock(), keep_client=True)
            self.context.announce(Family.INSTANCE, LinkEvent.LOGGED_OUT)
        return _value(True)


    # -- lists (§3.6): required page and pageSize, bare arrays, booleans and counters as strings ----------------

    @handles(OperationId.LIST_CHATS)
    async def list_chats(self, request: web.Request) -> web.Response:
        chats = sorted(self.state.chats.values(), key=lambda chat: not chat.pinned)  # pinned first, as the phone shows
        return _page(request, [self._chat_entry(chat.phone) for chat in chats])

    @handles(OperationId.FIND_MESSAGES)
    async def chat_messages(self, request: web.Request) -> web.Response:
        """GET /chat-messages/{phone} (developer.z-api.io en/chats/get-message-chats): the chat's messages newest
        first, `amount` of them after `lastMessageId`, each as the docs' example writes a text; from what contacts
        wrote (SandboxState.listed_history)."""
        phone = request.match_info["phone"]
        try:
            amount = int(request.query.get("amount", "10"))
        except ValueError:
            raise bad_field("amount", "must be a number") from None
        chat = phone.removesuffix("-group")
        rows = [message for message in reversed(self.state.listed_history()) if message.chat.split("@")[0] == chat]
        after = request.query.get("lastMessageId")
        if after:
            ids = [message.message_id for message in rows]
            rows = rows[ids.index(after) + 1:] if after in ids else []
        return web.json_response([
            {"instanceId": self.context.instance_id, "messageId": message.message_id, "phone": phone, "fromMe": message.from_me,
             "momment": int(message.at.timestamp() * 1000), "status": "RECEIVED", "chatName": message.push_name,
             "senderPhoto": None, "senderName": message.push_name, "participantPhone": None, "participantLid": None,
             "photo": None, "broadcast": False, "text": {"message": message.text}}
            for message in rows[:max(amount, 0)]])

    @handles(OperationId.LIST_GROUPS)
    async def list_groups(self, request: web.Request) -> web.Response:
        return _page(request, [self._chat_entry(group.jid) for group in self.state.groups.values()])

    @handles(OperationId.LIST_CONTACTS)
    async def list_contacts(self, request: web.Request) -> web.Response:
        contacts = [
            {"name": contact.name, "short": contact.name.split(" ")[0], "notify": self.state.push_name(phone),
             "vname": "", "phone": phone}
            for phone, contact in self.state.contacts.items()
        ]
        return _page(request, contacts)

    def _chat_entry(self, chat_id: str) -> dict[str, Any]:
        """One chat in the docs' example shape: groups as Z-API writes them (times in ms, `messagesUnread` a
        string), people as in the chats example (times in seconds, `messagesUnread` a number)."""
        chat = self.state.chat(chat_id)
        group = self.state.group(chat_id) if chat_id.endswith("@g.us") else None
        last = self.state.last_message_times().get(chat_id)
        entry: dict[str, Any] = {
            "archived": _flag(chat.archived),
            "pinned": _flag(chat.pinned),
            "phone": group.group_id if group else chat_id,
            "unread": str(chat.unread),
            "name": group.name if group else self.state.contact_name(chat_id) or chat_id,
            "isMuted": "1" if chat.muted else "0",
            "isMarkedSpam": "false",
            "isGroup": group is not None,
            "muteEndTime": None,
        }
        if group is not None:
            entry.update(messagesUnread=str(chat.unread), lastMessageTime=str(_millis(last)) if last else None)
        else:
            entry.update(messagesUnread=chat.unread, isGroupAnnouncement=False,
                         lastMessageTime=str(int(last.timestamp())) if last else None)
        return entry


def _flag(value: bool) -> str:
    return "true" if value else "false"


def _page(request: web.Request, items: list[dict[str, Any]]) -> web.Response:
    """`items[page]` of `pageSize` as a bare array; past the end an empty one."""
    numbers = {}
    for key in ("page", "pageSize"):
        value = request.query.get(key, "")
        if not value.isdigit() or int(value) < 1:
            raise bad_field(key, "is required in the query: a whole number from 1")
        numbers[key] = int(value)
    start = (numbers["page"] - 1) * numbers["pageSize"]
    return web.json_response(items[start : start + numbers["pageSize"]])


def _millis(moment: Any) -> int:
    return int(moment.timestamp() * 1000)


def _blacklist_changes(body: ZapiBody) -> list[tuple[str, str]]:
    """(action, phone) pairs of `contactsBlacklist`, all checked before any is applied."""
    if body.data.get("contactsBlacklist") is None:
        return []
    changes = []
    for position, entry in enumerate(body.objects("contactsBlacklist")):
        where = f"contactsBlacklist.{position}"
        action = entry.get("action")
        if action not in ("add", "remove"):
            raise bad_field(f"{where}.action", "must be add or remove")
        phone = item(entry, "phone", where)
        if not DIGITS_PHONE.fullmatch(phone):
            raise bad_field(f"{where}.phone", "must be digits with country code")
        changes.append((action, phone))
    return changes


def _apply_blacklist(blacklist: list[str], changes: list[tuple[str, str]]) -> None:
    for action, phone in changes:
        if action == "add" and phone not in blacklist:
            blacklist.append(phone)
        elif action == "remove" and phone in blacklist:
            blacklist.remove(phone)
