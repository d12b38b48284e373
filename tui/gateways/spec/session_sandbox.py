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

from aiohttp import web

from tui.api import models as m
from tui.api.operations import MEDIA_OPERATIONS, NAME_LISTS, OPERATIONS, Family, OperationId, all_operations
from tui.gateways.spec import SPEC
from tui.sandbox.handlers import handles
from tui.sandbox.session_family import SessionFamilyApi
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



class SessionApi(SessionFamilyApi):
    """The spec's session family, each handler registered by its operation (tui.sandbox.handlers). What the spec
    has no call for (WuzAPI's lists, pairing calls and media sends) is what the spec's adapter refuses: the sandbox
    answers those with a 404 (the app refuses them before sending anyway)."""

    REFUSED = frozenset(op.id for op in all_operations() if op.family is Family.SESSION and SPEC.refusal(op.id))

    def guard(self, handler: Handler, *, needs_connection: bool | None) -> Handler:
        return guarded(handler, lambda request: self.context.check_session(request, needs_connection=bool(needs_connection)),
                       session_error)

    def refusal(self, op_id: OperationId) -> Handler:
        op = OPERATIONS[op_id]
        if op_id in MEDIA_OPERATIONS:
            refuse = no_media_in_spec(op.path)
        else:
            refuse = not_in_spec(op.path, "list" if op_id in NAME_LISTS else "call")
        return self.guard(refuse, needs_connection=False)

    # -- HMAC and proxy -------------------------------------------------------------------------

    @handles(OperationId.HMAC_SET)
    async def set_hmac(self, request: web.Request) -> web.Response:
        body = parse(m.HmacKey, await read_json_object(request))
        self.state.hmac_key = body.hmac_key
        return envelope({"Details": "HMAC configuration saved successfully"})

    @handles(OperationId.HMAC_DELETE)
    async def delete_hmac(self, request: web.Request) -> web.Response:
        self.state.hmac_key = None
        return envelope({"Details": "HMAC configuration deleted successfully"})

    @handles(OperationId.PROXY)
    async def set_proxy(self, request: web.Request) -> web.Response:
        body = parse(m.ProxyConfig, await read_json_object(request))
        self.state.proxy_enabled = body.enable
        self.state.proxy_url = body.proxy_url
        return envelope({"Details": "Proxy configured successfully" if body.enable else "Proxy disabled successfully"})

    # -- groups ---------------------------------------------------------------------------------

    @handles(OperationId.GROUP_INFO, needs_connection=True)
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

    @handles(OperationId.GROUP_CREATE, needs_connection=True)
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

    @handles(OperationId.SEND_CONTACT, needs_connection=True)
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

    @handles(OperationId.WEBHOOK)
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

    @handles(OperationId.WEBHOOK_READ)
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
