"""Session-family endpoints (spec §4.2), authenticated by the `token` header, answering in WuzAPI's envelope.

Sandbox rules beyond the spec:
* `GET /session/hmac/config` answers a bare `{"hmac_key": "***"}` or `{"hmac_key": ""}` (spec §4.2 op 18);
  set and delete answer the envelope with `data.Details`;
* `GET /group/info` reads `GroupJID` from the JSON body (spec) or `groupJID` from the query (WuzAPI); when
  both are given they must agree;
* group creation checks number formats with the client's model (400), then silently skips numbers ending in
  0000 (not registered) and the account's own number;
* operations that need the network (group info, group creation, contact send) answer 409 while the instance
  is disconnected; configuration calls keep working;
* `GET /webhook` (WuzAPI has it; the spec lists only PUT) reads the configuration in the PUT's answer shape.
"""

from __future__ import annotations

from typing import ClassVar


from aiohttp import web

from tui.api import models as m
from tui.api.operations import MEDIA_OPERATIONS, OPERATIONS, PAIRING_CALLS, Family, OperationId
from tui.sandbox.context import Context
from tui.sandbox.media import no_media_in_spec
from tui.sandbox.state import Group, Participant, SentMessage, is_group_jid, is_registered, send_failure, user_jid
from tui.sandbox.wire import (
    Handler,
    bad_field,
    envelope,
    guarded,
    iso,
    not_found,
    not_in_spec,
    parse,
    read_json_object,
    session_error,
)



class SessionApi:
    # WuzAPI's lists and pairing calls are not in the spec (see tui.api.operations): the spec's sandbox refuses
    # them, with a 404
    REFUSED_LISTS: ClassVar[frozenset[OperationId]] = frozenset({OperationId.USER_CONTACTS, OperationId.GROUP_LIST})
    REFUSED_CALLS: ClassVar[frozenset[OperationId]] = frozenset(
        op for op in PAIRING_CALLS if OPERATIONS[op].family is Family.SESSION
    )
    # and WuzAPI's media sends: the spec's session family has none (404; the app refuses before sending anyway)
    NO_MEDIA: ClassVar[frozenset[OperationId]] = frozenset(
        op for op in MEDIA_OPERATIONS if OPERATIONS[op].family is Family.SESSION
    )
    REFUSED: ClassVar[frozenset[OperationId]] = REFUSED_LISTS | REFUSED_CALLS | NO_MEDIA

    def __init__(self, context: Context) -> None:
        self.context = context
        self.state = context.state

    def handlers(self) -> dict[OperationId, Handler]:
        """One handler per session-family operation id; the routes come from the operations table."""
        return {
            OperationId.HMAC_SET: self._guarded(self.set_hmac),
            OperationId.HMAC_STATUS: self._guarded(self.hmac_status),
            OperationId.HMAC_DELETE: self._guarded(self.delete_hmac),
            OperationId.PROXY: self._guarded(self.set_proxy),
            OperationId.GROUP_INFO: self._guarded(self.group_info, needs_connection=True),
            OperationId.GROUP_CREATE: self._guarded(self.create_group, needs_connection=True),
            OperationId.SEND_CONTACT: self._guarded(self.send_contact, needs_connection=True),
            OperationId.WEBHOOK: self._guarded(self.update_webhook),
            OperationId.WEBHOOK_READ: self._guarded(self.read_webhook),
            **{op: self._guarded(not_in_spec(OPERATIONS[op].path)) for op in self.REFUSED_LISTS},
            **{op: self._guarded(not_in_spec(OPERATIONS[op].path, "call")) for op in self.REFUSED_CALLS},
            **{op: self._guarded(no_media_in_spec(OPERATIONS[op].path)) for op in self.NO_MEDIA},
        }

    def extra_routes(self) -> list[web.RouteDef]:
        """None now: GET /webhook became an operation (webhook-read, issue 24)."""
        return []

    def _guarded(self, handler: Handler, *, needs_connection: bool = False) -> Handler:
        return guarded(handler, lambda request: self.context.check_session(request, needs_connection=needs_connection),
                       session_error)

    # -- HMAC and proxy -------------------------------------------------------------------------

    async def set_hmac(self, request: web.Request) -> web.Response:
        body = parse(m.HmacKey, await read_json_object(request))
        self.state.hmac_key = body.hmac_key
        return envelope({"Details": "HMAC configuration saved successfully"})

    async def hmac_status(self, request: web.Request) -> web.Response:
        return web.json_response({"hmac_key": "***" if self.state.hmac_key else ""})

    async def delete_hmac(self, request: web.Request) -> web.Response:
        self.state.hmac_key = None
        return envelope({"Details": "HMAC configuration deleted successfully"})

    async def set_proxy(self, request: web.Request) -> web.Response:
        body = parse(m.ProxyConfig, await read_json_object(request))
        self.state.proxy_enabled = body.enable
        self.state.proxy_url = body.proxy_url
        return envelope({"Details": "Proxy configured successfully" if body.enable else "Proxy disabled successfully"})

    # -- groups ---------------------------------------------------------------------------------

    async def group_info(self, request: web.Request) -> web.Response:
        from_body = (await read_json_object(request)).get("GroupJID")
        from_query = request.query.get("groupJID")
        if from_body is not None and from_query is not None and from_body != from_query:
            raise bad_field("GroupJID", "the body and the groupJID query parameter name different groups")
        jid = from_body if from_body is not None else from_query
        query = parse(m.GroupInfoRequest, {} if jid is None else {"GroupJID": jid})
        group = self.state.group(query.GroupJID)
        if group is None or self.state.own_phone not in group.participants:
            raise not_found(f"group {query.GroupJID}", field="GroupJID")
        return envelope(_group_info(group))

    async def create_group(self, request: web.Request) -> web.Response:
        body = parse(m.GroupCreate, await read_json_object(request))
        own = self.state.own_phone
        now = self.context.clock()
        members = [own] + [phone for phone in dict.fromkeys(body.participants) if phone != own and is_registered(phone)]
        group = Group(
            digits=self.state.new_group_digits(),
            name=body.name,
            description="",
            owner=own,
            created_at=now,
            participants={
                phone: Participant(phone, is_admin=phone == own, is_super_admin=phone == own) for phone in members
            },
            name_set_at=now,
            name_set_by=own,
            topic_set_at=now,
            topic_set_by=own,
        )
        self.state.groups[group.digits] = group
        self.state.chat(group.jid)
        return envelope(
            {
                "JID": group.jid,
                "Name": group.name,
                "OwnerJID": user_jid(own),
                "GroupCreated": iso(group.created_at),
                "Participants": _participants(group),
            }
        )

    # -- contact card ---------------------------------------------------------------------------

    async def send_contact(self, request: web.Request) -> web.Response:
        body = parse(m.ContactCard, await read_json_object(request))
        if is_group_jid(body.Phone) and self.state.group(body.Phone) is None:
            raise not_found(f"group {body.Phone}", field="Phone")
        message_id = body.Id or self.context.new_id()
        sent = SentMessage(
            message_id, body.Phone, "chat/send/contact", f"[contact] {body.Name}", failure=send_failure(body.Phone)
        )
        self.state.record_send(sent)
        self.context.on_sent(sent)
        return envelope({"Details": "Sent", "Id": message_id, "Timestamp": iso(self.context.clock())})

    # -- webhook --------------------------------------------------------------------------------

    async def update_webhook(self, request: web.Request) -> web.Response:
        body = parse(m.WebhookUpdate, await read_json_object(request))
        webhook = self.state.session_webhook
        if body.webhook is not None:
            webhook.url = body.webhook
        if body.events is not None:
            webhook.events = list(body.events)
        if body.active is not None:
            webhook.active = body.active
        return await self.read_webhook(request)

    async def read_webhook(self, request: web.Request) -> web.Response:
        webhook = self.state.session_webhook
        return envelope({"webhook": webhook.url, "events": list(webhook.events), "active": webhook.active})


def _participants(group: Group) -> list[dict[str, object]]:
    return [
        {"JID": user_jid(member.phone), "IsAdmin": member.is_admin or member.is_super_admin, "IsSuperAdmin": member.is_super_admin}
        for member in group.participants.values()
    ]


def _group_info(group: Group) -> dict[str, object]:
    return {
        "JID": group.jid,
        "Name": group.name,
        "OwnerJID": user_jid(group.owner),
        "GroupCreated": iso(group.created_at),
        "NameSetAt": iso(group.name_set_at),
        "NameSetBy": user_jid(group.name_set_by),
        "Topic": group.description,
        "TopicSetAt": iso(group.topic_set_at),
        "TopicSetBy": user_jid(group.topic_set_by),
        "IsAnnounce": group.is_announce,
        "IsLocked": group.is_locked,
        "IsEphemeral": group.disappearing_timer > 0,
        "DisappearingTimer": group.disappearing_timer,
        "Participants": _participants(group),
    }
