"""The session family in WuzAPI's dialect (docs/gateways/wuzapi.md §1-§2), for `--session-dialect wuzapi`.

What differs from the spec dialect, each from the gateway notes (docs/gateways/):
* `GET /group/info` reads only the `groupJID` query parameter; a body (`GroupJID`, the spec's shape) is ignored,
  so a call without the query is a 400 `missing groupJID parameter`;
* `PUT /webhook` zeroes what it is not sent: `active` defaults to false, which clears the URL and the events;
  `GET /webhook` answers `{webhook, subscribe}` (no events gives `[""]`); `POST`/`DELETE /webhook` exist too;
* the HMAC calls answer bare objects (`{"Details": …}`, `{"hmac_key": …}`), not the envelope;
* `chat/send/contact` answers `Timestamp` as Unix seconds;
* a WhatsApp-side failure of group calls (an unknown group, or one the account is not in) is WuzAPI's
  500 `{"code": 500, "success": true}` with no message;
* a missing session is 500 `no session` rather than the spec's 409;
* bodies are read as Go does: an empty body fails to decode, keys match case-insensitively, unknown keys are
  ignored; error texts are WuzAPI's (`missing Phone in Payload`), which name the field.

Not simulated: WuzAPI refuses `POST /session/proxy` while connected; the sandbox stays connected, so it stores
the proxy instead (the scheme checks are WuzAPI's).
"""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any
from urllib.parse import urlsplit

from aiohttp import web

from tui.api.operations import Family, OperationId
from tui.sandbox.checks import DIGITS_PHONE, GoBody, wuz_jid
from tui.sandbox.handlers import handles
from tui.sandbox.webhook_posts import SessionEncoder
from tui.gateways.wuzapi.webhook_posts import encode_wuzapi_event
from tui.sandbox.incoming import lid_of
from tui.sandbox.state import SENT_HISTORY_LIMIT as SANDBOX_HISTORY  # the user's `history`: what the sandbox keeps
from tui.sandbox.session_family import SessionFamilyApi
from tui.sandbox.dialect import WuzapiRelease
from tui.sandbox.pairing import DEVICE, FIRST_CODE_GAP, Link, LinkEvent, png_data_url
from tui.sandbox.media import wuzapi_media
from tui.sandbox.state import (
    Group,
    Participant,
    SentMessage,
    is_registered,
    send_failure,
    user_jid,
)
from tui.sandbox.wire import ApiError, Handler, envelope, guarded, iso, session_error


HMAC_MIN_BYTES = 32
# WuzAPI's supportedEventTypes (docs/gateways/wuzapi.md §4.1); other names are dropped silently.
SUPPORTED_EVENTS = frozenset(
    ["Message", "UndecryptableMessage", "Receipt", "MediaRetry", "ReadReceipt", "GroupInfo", "JoinedGroup", "Picture", "BlocklistChange", "Blocklist", "Connected", "Disconnected", "ConnectFailure", "KeepAliveRestored", "KeepAliveTimeout", "QRTimeout", "LoggedOut", "ClientOutdated", "TemporaryBan", "StreamError", "StreamReplaced", "PairSuccess", "PairError", "QR", "QRScannedWithoutMultidevice", "PrivacySettings", "PushNameSetting", "UserAbout", "AppState", "AppStateSyncComplete", "HistorySync", "OfflineSyncCompleted", "OfflineSyncPreview", "CallOffer", "CallAccept", "CallTerminate", "CallOfferNotice", "CallRelayLatency", "Presence", "ChatPresence", "IdentityChange", "CATRefreshError", "NewsletterJoin", "NewsletterLeave", "NewsletterMuteChange", "NewsletterLiveUpdate", "FBMessage", "All"]
)
ZERO_TIME = "0001-01-01T00:00:00Z"


class WhatsAppFailure(ApiError):
    """WuzAPI's plain-string bug: 500 with `success: true` and neither `data` nor `error` (§1.2)."""

    def __init__(self) -> None:
        super().__init__(500, "")


def wuzapi_error(error: ApiError) -> web.Response:
    if isinstance(error, WhatsAppFailure):
        return web.json_response({"code": 500, "success": True}, status=500)
    return session_error(error)


def _bare(body: dict[str, Any], status: int = 200) -> web.Response:
    return web.json_response(body, status=status)


async def read_go_body(request: web.Request, decode_error: str = "could not decode Payload") -> GoBody:
    """The body decoded as Go's json.Decoder would: an empty body or a non-object is a 400."""
    raw = await request.read()
    try:
        data = json.loads(raw) if raw.strip() else None
    except (ValueError, RecursionError):
        data = None
    if not isinstance(data, dict):
        raise ApiError(400, decode_error, field="body")
    return GoBody(data)


class WuzapiSessionApi(SessionFamilyApi):
    """WuzAPI's session family, each handler registered by its operation (tui.sandbox.handlers); the real gateway
    offers every operation of the family, so nothing is refused."""

    @classmethod
    def session_encoder(cls) -> SessionEncoder:
        return encode_wuzapi_event  # form by default, Go's key order (deliveries.py)

    def generated(self) -> dict[OperationId, Handler]:
        return {
            OperationId.CHAT_SEND_IMAGE: self.guarded(self._media_handler("image"), needs_session=True),
            OperationId.CHAT_SEND_VIDEO: self.guarded(self._media_handler("video"), needs_session=True),
            OperationId.CHAT_SEND_AUDIO: self.guarded(self._media_handler("audio"), needs_session=True),
            OperationId.CHAT_SEND_DOCUMENT: self.guarded(self._media_handler("document"), needs_session=True),
        }

    def extra_routes(self, prefix: str) -> list[web.RouteDef]:
        """WuzAPI's other webhook calls: the app reads with GET before a partial update."""
        return [
            web.post(f"{prefix}/webhook", self.guarded(self.set_webhook)),
            web.delete(f"{prefix}/webhook", self.guarded(self.delete_webhook)),
        ]

    def guard(self, handler: Handler, *, needs_connection: bool | None) -> Handler:
        return self.guarded(handler, needs_session=bool(needs_connection))

    def guarded(self, handler: Handler, *, needs_session: bool = False) -> Handler:
        def check(request: web.Request) -> None:
            self.context.check_session(request, needs_connection=False)
            if needs_session and not self.link.connected:
                raise ApiError(500, self._said("no session", "No session"))

        return guarded(handler, check, wuzapi_error)

    # -- HMAC and proxy --------------------------------------------------------------------------------------

    @handles(OperationId.HMAC_SET)
    async def set_hmac(self, request: web.Request) -> web.Response:
        body = await read_go_body(request, "could not decode payload")
        key = body.string("hmac_key")
        if len(key.encode("utf-8")) < HMAC_MIN_BYTES:
            raise ApiError(400, "HMAC key must be at least 32 characters long", field="hmac_key")
        self.state.hmac_key = key
        return _bare({"Details": "HMAC configuration saved successfully"})

    @handles(OperationId.HMAC_DELETE)
    async def delete_hmac(self, request: web.Request) -> web.Response:
        self.state.hmac_key = None
        return _bare({"Details": "HMAC configuration deleted successfully"})

    @handles(OperationId.PROXY)
    async def set_proxy(self, request: web.Request) -> web.Response:
        body = await read_go_body(request, "could not decode payload")
        enable = body.boolean("enable")  # defaults to false: a body without it disables the proxy
        url = body.string("proxy_url")
        if not enable:
            self.state.proxy_enabled = False
            self.state.proxy_url = ""
            return envelope({"Details": "Proxy disabled successfully"})
        if not url:
            raise ApiError(400, "missing proxy_url in payload", field="proxy_url")
        try:
            scheme = urlsplit(url).scheme
        except ValueError:
            raise ApiError(400, "invalid proxy URL format", field="proxy_url") from None
        if scheme not in ("http", "socks5"):
            raise ApiError(400, "only HTTP and SOCKS5 proxies are supported", field="proxy_url")
        self.state.proxy_enabled = True
        self.state.proxy_url = url
        return envelope({"Details": "Proxy configured successfully", "ProxyURL": url})

    # -- groups ----------------------------------------------------------------------------------------------

    @handles(OperationId.GROUP_INFO, needs_connection=True)
    async def group_info(self, request: web.Request) -> web.Response:
        value = request.query.get("groupJID")  # case-sensitive; any body is ignored (§2.8)
        if not value:
            raise ApiError(400, "missing groupJID parameter", field="groupJID")
        jid = wuz_jid(value)
        if jid is None:
            raise ApiError(400, "could not parse Group JID", field="groupJID")
        group = self.state.group(jid) if jid.endswith("@g.us") else None
        if group is None or self.state.own_phone not in group.participants:
            raise WhatsAppFailure()
        return envelope(self._group_info(group))

    @handles(OperationId.GROUP_CREATE, needs_connection=True)
    async def create_group(self, request: web.Request) -> web.Response:
        body = await read_go_body(request)
        name = body.string("name")
        if not name:
            raise ApiError(400, "missing Name in Payload", field="name")
        participants = body.strings("participants") or []
        if not participants:
            raise ApiError(400, "missing Participants in Payload", field="participants")
        phones = []
        for entry in participants:
            jid = wuz_jid(entry)
            if jid is None or not jid.endswith("@s.whatsapp.net"):
                raise ApiError(400, "could not parse Participant Phone", field="participants")
            phones.append(jid.removesuffix("@s.whatsapp.net"))
        own = self.state.own_phone
        now = self.context.clock()
        members = [own] + [phone for phone in dict.fromkeys(phones) if phone != own and is_registered(phone)]
        group = Group(
            digits=self.state.new_group_digits(),
            name=name,
            description="",
            owner=own,
            created_at=now,
            participants={phone: Participant(phone, is_admin=phone == own, is_super_admin=phone == own) for phone in members},
            name_set_at=now,
            name_set_by=own,
            topic_set_at=now,
            topic_set_by=own,
        )
        self.state.groups[group.digits] = group
        self.state.chat(group.jid)
        return envelope(self._group_info(group))

    def _group_info(self, group: Group) -> dict[str, Any]:
        """whatsmeow's types.GroupInfo, embedded structs flattened, in its field order (docs/gateways/wuzapi.md
        §2.8)."""
        return {
            "JID": group.jid,
            "OwnerJID": user_jid(group.owner),
            "OwnerPN": user_jid(group.owner),
            "Name": group.name,
            "NameSetAt": iso(group.name_set_at),
            "NameSetBy": user_jid(group.name_set_by),
            "NameSetByPN": user_jid(group.name_set_by),
            "Topic": group.description,
            "TopicID": "",
            "TopicSetAt": iso(group.topic_set_at) if group.description else ZERO_TIME,
            "TopicSetBy": user_jid(group.topic_set_by) if group.description else "",
            "TopicSetByPN": "",
            "TopicDeleted": False,
            "IsLocked": group.is_locked,
            "IsAnnounce": group.is_announce,
            "AnnounceVersionID": "",
            "IsEphemeral": group.disappearing_timer > 0,
            "DisappearingTimer": group.disappearing_timer,
            "IsIncognito": False,
            "IsParent": False,
            "DefaultMembershipApprovalMode": "",
            "LinkedParentJID": "",
            "IsDefaultSubGroup": False,
            "IsJoinApprovalRequired": False,
            "AddressingMode": "pn",
            "GroupCreated": iso(group.created_at),
            "CreatorCountryCode": "",
            "ParticipantVersionID": "",
            "Participants": [
                {
                    "JID": user_jid(member.phone),  # a "pn" group: the phone JID, its LID beside it
                    "PhoneNumber": user_jid(member.phone),
                    "LID": lid_of(member.phone),
                    "IsAdmin": member.is_admin or member.is_super_admin,
                    "IsSuperAdmin": member.is_super_admin,
                    "DisplayName": "",
                    "Error": 0,
                    "AddRequest": None,
                }
                for member in group.participants.values()
            ],
            "ParticipantCount": len(group.participants),
            "MemberAddMode": "admin_add" if group.is_locked else "all_member_add",
            "Suspended": False,
        }

    @handles(OperationId.GROUP_LIST, needs_connection=True)
    async def group_list(self, request: web.Request) -> web.Response:
        """`{"Groups": [GroupInfo…]}` of the groups the account is in; `null` when there are none (§2.8)."""
        joined = [self._group_info(group) for group in self.state.groups.values()
                  if self.state.own_phone in group.participants]
        return envelope({"Groups": joined or None})

    # -- contacts --------------------------------------------------------------------------------------------

    @handles(OperationId.USER_CONTACTS, needs_connection=True)
    async def user_contacts(self, request: web.Request) -> web.Response:
        """whatsmeow's contact store: JID -> ContactInfo (`{}` when empty), in the envelope (GetContacts)."""
        return envelope({
            user_jid(phone): {"BusinessName": "", "FirstName": contact.name.split(" ")[0], "Found": True,
                              "FullName": contact.name, "PushName": self.state.push_name(phone)}
            for phone, contact in self.state.contacts.items()
        })

    @handles(OperationId.USER_LID, needs_connection=True)
    async def user_lid(self, request: web.Request) -> web.Response:
        """`{"jid", "lid"}` in the envelope (GetUserLID: parseJID, then whatsmeow's GetLIDForPN); a number that is
        not on WhatsApp has no LID (`""`), and a JID that is not a phone number's cannot be asked."""
        jid = wuz_jid(request.match_info["jid"])
        if jid is None or not jid.endswith("@s.whatsapp.net"):
            raise ApiError(400, "invalid JID")
        phone = jid.partition("@")[0]
        return envelope({"jid": jid, "lid": lid_of(phone) if is_registered(phone) else ""})

    @handles(OperationId.MESSAGE_HISTORY, needs_connection=False)
    async def message_history(self, request: web.Request) -> web.Response:
        """GetHistory (handlers.go): `chat_jid=index` lists each chat with its newest message's time under the user's
        id, any other the chat's newest `limit` messages, newest first, as HistoryMessage rows (the account's own
        with sender `me`). The sandbox keeps its seeded history and what contacts wrote since (whether the webhook
        took it or not): SandboxState.listed_history."""
        chat = request.query.get("chat_jid", "")
        if not chat:
            raise ApiError(400, "chat_jid is required")
        try:
            limit = int(request.query.get("limit", "50"))
        except ValueError:
            raise ApiError(400, "invalid limit") from None
        received = self.state.listed_history()
        user = self.context.instance_id
        if chat == "index":
            newest: dict[str, str] = {}
            for message in received:
                newest[message.chat] = message.at.isoformat()  # Go's time.Time: to the nanosecond
            return envelope({user: [{"chat_jid": jid, "last_updated": at} for jid, at in newest.items()]})
        rows = [{"id": index, "user_id": user, "chat_jid": message.chat, "sender_jid": "me" if message.from_me else message.sender,
                 "message_id": message.message_id, "timestamp": message.at.isoformat(), "message_type": "text",
                 "text_content": message.text, "media_link": ""}
                for index, message in enumerate(received, 1) if message.chat == chat]
        return envelope(rows[::-1][:max(limit, 0)])

    # -- contact card ----------------------------------------------------------------------------------------

    @handles(OperationId.SEND_CONTACT, needs_connection=True)
    async def send_contact(self, request: web.Request) -> web.Response:
        body = await read_go_body(request)
        phone, name, vcard = body.string("Phone"), body.string("Name"), body.string("Vcard")
        for field, value in (("Phone", phone), ("Name", name), ("Vcard", vcard)):
            if not value:
                raise ApiError(400, f"missing {field} in Payload", field=field)
        recipient = self._recipient(phone)
        context = body.get("ContextInfo")
        if context is not None:
            info = GoBody(context if isinstance(context, dict) else {})
            if info.string("StanzaID") and not info.string("Participant"):
                raise ApiError(400, "missing Participant in ContextInfo", field="ContextInfo.Participant")
            if info.string("Participant") and not info.string("StanzaID"):
                raise ApiError(400, "missing StanzaID in ContextInfo", field="ContextInfo.StanzaID")
        message_id = body.string("Id") or self.context.new_id()
        sent = SentMessage(message_id, recipient, "chat/send/contact", f"[contact] {name}", failure=send_failure(recipient))
        self.state.record_send(sent)
        self.context.on_sent(sent)
        # Unix seconds, not the spec's ISO text (docs/gateways/wuzapi.md §2.7).
        return envelope({"Details": "Sent", "Id": message_id, "Timestamp": int(self.context.clock().timestamp())})

    def _recipient(self, phone: str) -> str:
        """The chat a send's `Phone` names (digits, or a group JID the sandbox knows), as WuzAPI parses it."""
        jid = wuz_jid(phone)
        if jid is None:
            raise ApiError(400, "could not parse Phone", field="Phone")
        if jid.endswith("@g.us") and self.state.group(jid) is None:
            raise ApiError(500, "error sending message: server returned error 404", field="Phone")
        return jid if jid.endswith("@g.us") else jid.removesuffix("@s.whatsapp.net")

    # -- media -----------------------------------------------------------------------------------------------

    def _media_handler(self, kind: str) -> Handler:
        async def send(request: web.Request) -> web.Response:
            body = await read_go_body(request)
            phone, media = wuzapi_media(body, kind)
            recipient = self._recipient(phone)
            message_id = body.string("Id") or self.context.new_id()
            sent = SentMessage(message_id, recipient, f"chat/send/{kind}", media.text, failure=send_failure(recipient),
                               media=media.data, media_type=media.media_type, file_name=media.file_name)
            self.state.record_send(sent)
            self.context.on_sent(sent)
            return envelope({"Details": "Sent", "Id": message_id, "Timestamp": int(self.context.clock().timestamp())})

        return send

    # -- webhook ---------------------------------------------------------------------------------------------

    @staticmethod
    def _events(body: GoBody) -> list[str]:
        return [name for name in dict.fromkeys(body.strings("events") or []) if name in SUPPORTED_EVENTS]

    @handles(OperationId.WEBHOOK)
    async def update_webhook(self, request: web.Request) -> web.Response:
        """Every field is written: `active` false (or omitted) clears the URL and the events (§2.5)."""
        body = await read_go_body(request, "could not decode payload")
        webhook = self.state.session_webhook
        if body.boolean("active"):
            webhook.url = body.string("webhook")
            webhook.events = self._events(body)
            webhook.active = True
        else:
            webhook.url, webhook.events, webhook.active = "", [], False
        return envelope({"webhook": webhook.url, "events": list(webhook.events) or None, "active": webhook.active})

    @handles(OperationId.WEBHOOK_READ)
    async def read_webhook(self, request: web.Request) -> web.Response:
        webhook = self.state.session_webhook
        # The stored comma string split on commas: no events reads back as one empty string.
        return envelope({"webhook": webhook.url, "subscribe": list(webhook.events) or [""]})

    async def set_webhook(self, request: web.Request) -> web.Response:
        body = await read_go_body(request, "could not decode payload")
        webhook = self.state.session_webhook
        webhook.url = body.string("webhookurl")  # `webhook` here silently sets an empty URL, as in WuzAPI
        webhook.events = self._events(body)
        webhook.active = True
        return envelope({"webhook": webhook.url})

    async def delete_webhook(self, request: web.Request) -> web.Response:
        webhook = self.state.session_webhook
        webhook.url, webhook.events, webhook.active = "", [], False
        return envelope({"Details": "Webhook and events deleted successfully"})

    # -- the connection and pairing (§2.2-2.3; handlers.go; tui.sandbox.pairing). The states, as WuzAPI answers:
    #   no client (never connected, after disconnect or logout, or unlinked from the phone): status
    #     {connected: false, loggedIn: false} (the older release: 500 "No session"); qr, pairphone, disconnect,
    #     logout: 500 "no session"; connect makes the client: a paired account reconnects (Connected), an
    #     unpaired one starts issuing codes;
    #   starting (an immediate connect returned, the websocket not up yet: `connect_delay` on the sandbox's clock;
    #     API.md: "it will return immediately, but you will have to check shortly after"): status {false, false};
    #     qr 500 "not connected"; pairphone 400 "websocket not connected" (whatsmeow's ErrNotConnected); the
    #     websocket is up `FIRST_CODE_GAP` before WhatsApp's first code: status {true, false}, qr `{"QRCode": ""}`
    #     (GetQR reads the code startClient stores in the users table, wmiau.go);
    #   pairing (client up, no phone yet): status {true, false}; qr gives the current code's PNG, pairphone a
    #     code XXXX-XXXX; connect: 500 "already connected". When the QR codes run out (whatsmeow's 160 s:
    #     `CodeIssuer.pairing_lifetime`) the websocket closes and the client goes: back to no client;
    #   connected: status {true, true, jid}; qr 500 "already logged in"; pairphone 400 "Already paired";
    #     connect 500 "already connected"; disconnect drops the client and keeps the pairing; logout unpairs;
    #   network lost (wuzapi#90): status {false, true}; connect still says "already connected" and qr "not
    #     connected": disconnect, then connect, recovers;
    #   wedged (wuzapi#133): status says {true, true} while qr says "not connected" and connect "already
    #     connected"; logout fails ("could not disconnect as it was not connected"): disconnect, then connect,
    #     recovers.
    # As of 71df569 (docs/gateways/wuzapi.md §2.2, §2.3) every connect stores its Subscribe list as the
    # subscriptions (an empty one stores none) and disconnect clears them: the subscriptions survive a reconnect
    # only because the client sends them again. The sandbox answers connect at once whatever `Immediate` says.

    @property
    def link(self) -> Link:
        self._settle()
        return self.state.session_link

    @property
    def older(self) -> bool:
        return self.context.wuzapi_release is WuzapiRelease.OLDER

    def _said(self, newer: str, older: str) -> str:
        """The error text of the release played (the older one capitalises: handlers.go at 79ee4cd)."""
        return older if self.older else newer

    def _settle(self) -> None:
        """What time did to the link since the last request: the websocket came up after an immediate connect,
        or the pairing websocket closed because its QR codes ran out."""
        link, now = self.state.session_link, self.context.clock()
        if link.client and not link.online and link.online_at is not None and now >= link.online_at:
            link.online = True
            link.start_codes(link.first_code_at or link.online_at)
            link.online_at = link.first_code_at = None
        started = link.window_start
        if (link.client and link.online and not link.paired and started is not None
                and now >= started + self.context.codes.pairing_lifetime):
            link.client = link.online = False
            link.window_start = None
            link.phone_codes.clear()
            for code in link.issued:  # the codes of a closed websocket can no longer pair
                link.issued[code] = min(link.issued[code], now)

    def _jid(self) -> str:
        link = self.link
        return f"{link.number}.0:{DEVICE}@s.whatsapp.net" if link.paired and link.number else ""

    @handles(OperationId.SESSION_STATUS)
    async def session_status(self, request: web.Request) -> web.Response:
        link = self.link
        webhook = self.state.session_webhook
        connected = link.client and (link.online or link.stuck)
        logged_in = link.client and link.paired
        if self.older:  # GetStatus at 79ee4cd: no client is an error, else only the two flags
            if not link.client:
                raise ApiError(500, "No session")
            return envelope({"Connected": connected, "LoggedIn": logged_in})
        qrcode = ""
        if link.client and link.online and not link.paired and self._has_code(link):
            qrcode = png_data_url(self.context.codes.qr_payload(Family.SESSION, link, self.context.clock()))
        # The newer handler's map (docs/gateways/wuzapi.md §2.3), without `token`: the sandbox never echoes a secret.
        return envelope({
            "id": self.context.instance_id, "name": self.context.instance_id, "connected": connected,
            "loggedIn": logged_in, "jid": self._jid(), "webhook": webhook.url, "events": ",".join(webhook.events),
            "proxy_url": self.state.proxy_url, "qrcode": qrcode, "history": str(SANDBOX_HISTORY),
            "proxy_config": {"enabled": self.state.proxy_enabled, "proxy_url": self.state.proxy_url},
            "hmac_configured": self.state.hmac_key is not None,
        })

    @handles(OperationId.SESSION_CONNECT)
    async def connect(self, request: web.Request) -> web.Response:
        body = await read_go_body(request, self._said("could not decode Payload", "Could not decode Payload"))
        link = self.link
        if link.client:
            raise ApiError(500, self._said("already connected", "Already Connected"))
        events = [name for name in dict.fromkeys(body.strings("Subscribe") or []) if name in SUPPORTED_EVENTS]
        webhook = self.state.session_webhook
        webhook.events = events  # stored as sent: none when none (71df569)
        now = self.context.clock()
        if link.paired:
            link.reconnect(now)
            self.context.announce(Family.SESSION, LinkEvent.CONNECTED)
        elif self.context.connect_delay > timedelta(0):
            # the websocket is up a moment before WhatsApp's first code (GetQR answers "" in between)
            link.first_code_at = now + self.context.connect_delay
            link.client, link.online = True, False
            link.online_at = link.first_code_at - min(FIRST_CODE_GAP, self.context.connect_delay / 2)
        else:
            link.client = link.online = True
            link.start_codes(now)
        return envelope({"details": "Connected!", "events": ",".join(events), "jid": self._jid(),
                         "webhook": webhook.url})

    def _has_code(self, link: Link) -> bool:
        """WhatsApp has sent the run's first code (stored from `window_start`, once the websocket is up)."""
        return link.window_start is not None and self.context.clock() >= link.window_start

    def _pairing_client(self) -> Link:
        link = self.link
        if not link.client:
            raise ApiError(500, self._said("no session", "No session"))
        return link

    @handles(OperationId.SESSION_QR)
    async def session_qr(self, request: web.Request) -> web.Response:
        link = self._pairing_client()
        if not link.online or link.stuck:
            raise ApiError(500, self._said("not connected", "Not connected"))
        if link.paired:
            raise ApiError(500, self._said("already logged in", "Already Loggedin"))
        if not self._has_code(link):  # up, but WhatsApp has sent no code yet: the users table's qrcode is ""
            return envelope({"QRCode": ""})
        return envelope({"QRCode": png_data_url(self.context.codes.qr_payload(Family.SESSION, link, self.context.clock()))})

    @handles(OperationId.SESSION_PAIRPHONE)
    async def pair_phone(self, request: web.Request) -> web.Response:
        link = self._pairing_client()
        body = await read_go_body(request, self._said("could not decode Payload", "Could not decode Payload"))
        phone = body.string("Phone").removeprefix("+")
        if not phone:
            raise ApiError(400, self._said("missing Phone in Payload", "Missing Phone in Payload"), field="Phone")
        if link.paired:
            raise ApiError(400, "Already paired")
        if not link.online:  # whatsmeow's PairPhone sends on the websocket: ErrNotConnected, answered as a 400
            raise ApiError(400, "websocket not connected")
        if not DIGITS_PHONE.fullmatch(phone):
            raise ApiError(400, "invalid phone number: digits with the country code", field="Phone")
        now = self.context.clock()
        closes = (link.window_start or now) + self.context.codes.pairing_lifetime  # the code lasts as long
        return envelope({"LinkingCode": self.context.codes.phone_code(Family.SESSION, link, phone, now, expires=closes)})

    @handles(OperationId.SESSION_DISCONNECT)
    async def disconnect(self, request: web.Request) -> web.Response:
        link = self._pairing_client()
        if not link.paired:
            raise ApiError(500, self._said("cannot disconnect because it is not logged in",
                                           "Cannot disconnect because it is not logged in"))
        link.client = link.online = link.stuck = False
        link.since = self.context.clock()
        self.state.session_webhook.events = []  # 71df569 clears the stored subscriptions
        return envelope({"Details": "Disconnected"})

    @handles(OperationId.SESSION_LOGOUT)
    async def logout(self, request: web.Request) -> web.Response:
        link = self._pairing_client()
        if not link.connected:
            if link.online and not link.paired:
                raise ApiError(500, self._said("could not logout as it was not logged in",
                                               "Could not logout as it was not logged in"))
            raise ApiError(500, self._said("could not disconnect as it was not connected",
                                           "Could not disconnect as it was not connected"))
        link.unpair(self.context.clock(), keep_client=False)
        return envelope({"Details": "Logged out"})
