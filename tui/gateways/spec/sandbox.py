"""Instance-family endpoints (spec §4.1) under `/instances/{instanceId}/token/{instanceToken}/`.

Sandbox rules beyond the spec, chosen to be simple and predictable:
* a send to a group JID needs the group to exist (404 otherwise); a send to a number ending in 0000 is
  accepted (202) but its delivery notification reports "Phone number does not exist";
* forward-message of an id the sandbox never sent is accepted (202), and its delivery notification reports
  "Message does not forward because it was not found", as the real gateway does;
* update-group-name answers 400 (field `groupId`) in the one seeded group where the account is not an admin
  (Vila Madalena Neighbours); the spec has no 403;
* add-participant: numbers ending in 0000 are "not registered" and go to `failed`; current members count as
  `added`; with `autoInvite` the numbers are invited instead of added; `success` is true when nothing failed;
* redefine-invitation-link: the body's `communityId` must match the path, `groupsPhones` must be groups of that
  community; the community's (and those groups') previous links stop being valid.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from aiohttp import web

from tui.api import models as m
from tui.api.operations import OPERATIONS, ErasedOperation, Family, OperationId, all_operations
from tui.gateways.spec import SPEC
from tui.gateways.spec.webhook_posts import SpecWebhooks
from tui.sandbox.context import Context
from tui.sandbox.handlers import DialectApi, handles
from tui.sandbox.checks import ZapiBody
from tui.sandbox.media import ZAPI_MEDIA_FIELDS, instance_media
from tui.sandbox.state import Participant, SentMessage, is_group_jid, is_registered, send_failure
from tui.sandbox.wire import (
    Handler,
    bad_field,
    guarded,
    instance_error,
    iso,
    not_found,
    not_in_spec,
    parse,
    read_json_object,
)

NOT_FORWARDABLE = "Message does not forward because it was not found"



def _ok(**extra: Any) -> web.Response:
    return web.json_response({"success": True, **extra})


class InstanceApi(DialectApi):
    # What the spec's adapter refuses (Z-API's lists, pairing calls and webhook settings: the spec has only the
    # status read) the spec's sandbox answers with a 404
    REFUSED: ClassVar[frozenset[OperationId]] = frozenset(
        op.id for op in all_operations() if op.family is Family.INSTANCE and SPEC.refusal(op.id))
    REFUSED_LISTS: ClassVar[frozenset[OperationId]] = frozenset(
        op_id for op_id in REFUSED if OPERATIONS[op_id].request is m.ListPage)
    REFUSED_CALLS: ClassVar[frozenset[OperationId]] = REFUSED - REFUSED_LISTS

    @classmethod
    def webhooks(cls, context: Context) -> SpecWebhooks:
        return SpecWebhooks(context)  # its delivery notification (deliveries.py)

    def generated(self) -> dict[OperationId, Handler]:
        """The sends, one table (any send of the table is taken as its row's model says, and remembered as it
        reads), and the media sends, one per kind; the other calls are `@handles`. The routes come from the
        operations table (`server._operation_routes`), path parameters under the table's names."""
        sends: list[tuple[OperationId, type[m.Request], Callable[[Any], SentMessage]]] = [
            (OperationId.SEND_TEXT, m.SendText, lambda r: self._message(r, "send-text", r.message)),
            (OperationId.SEND_BUTTON_ACTIONS, m.SendButtonActions, self._button_actions),
            (OperationId.SEND_BUTTON_LIST, m.SendButtonList, lambda r: self._message(r, "send-button-list", r.message)),
            (OperationId.SEND_LINK, m.SendLink, lambda r: self._message(r, "send-link", f"{r.message} {r.linkUrl}")),
            (OperationId.SEND_POLL, m.SendPoll, lambda r: self._message(r, "send-poll", r.message)),
            (OperationId.SEND_LOCATION, m.SendLocation, lambda r: self._message(r, "send-location", r.title)),
            (OperationId.SEND_STICKER, m.SendSticker, lambda r: self._message(r, "send-sticker", "")),
            (OperationId.FORWARD_MESSAGE, m.ForwardMessage, self._forward),
        ]
        table: dict[OperationId, Handler] = {
            op: self._guarded(self._send_handler(model, build)) for op, model, build in sends
        }
        table.update({OperationId(path): self._guarded(self._media_handler(kind)) for kind, path in ZAPI_MEDIA_FIELDS.items()})
        table.update({op.id: self._guarded(self._send_handler(op.request, self._plain_send(op)))
                      for op in all_operations()
                      if op.family is Family.INSTANCE and op.sends is not None and op.id not in table})
        return table

    def refusal(self, op_id: OperationId) -> Handler:
        """A Z-API list the spec does not have (a paired phone needed, as for the lists), or a call it does not have."""
        if op_id in self.REFUSED_LISTS:
            return self._guarded(not_in_spec(OPERATIONS[op_id].path))
        return self._guarded(not_in_spec(OPERATIONS[op_id].path, "call"), needs_connection=False)

    def guard(self, handler: Handler, *, needs_connection: bool | None) -> Handler:
        """A handler guarded as this dialect's own are (a connection needed unless said otherwise)."""
        return self._guarded(handler, needs_connection=True if needs_connection is None else needs_connection)

    def _guarded(self, handler: Handler, *, needs_connection: bool = True) -> Handler:
        return guarded(handler, lambda request: self.context.check_instance(request, needs_connection=needs_connection),
                       instance_error)

    # -- sends -----------------------------------------------------------------------------------

    def _send_handler(self, model: type[m.Request], build: Callable[[Any], SentMessage]) -> Handler:
        async def send(request: web.Request) -> web.Response:
            body = parse(model, await read_json_object(request))
            if isinstance(body, m.Sendable):
                self._require_known_recipient(body.recipient)
            sent = build(body)
            self.state.record_send(sent)
            self.context.on_sent(sent)
            return web.json_response({"messageId": sent.message_id, "id": sent.message_id}, status=202)

        return send

    def _plain_send(self, op: ErasedOperation) -> Callable[[Any], SentMessage]:
        def build(request: m.Sendable) -> SentMessage:
            return SentMessage(self.context.new_id(), request.recipient, op.id.value, request.reads_as(),
                               failure=send_failure(request.recipient))

        return build

    def _media_handler(self, kind: str) -> Handler:
        """The spec names no media call; its instance family takes Z-API's bodies, groups as `@g.us` (or `-group`)."""

        async def send(request: web.Request) -> web.Response:
            body = ZapiBody(await read_json_object(request))
            phone = body.required_text("phone")
            if not m.is_recipient(phone):
                raise bad_field("phone", f"must be {m.RECIPIENT_RULE}")
            self._require_known_recipient(phone)
            media = instance_media(body, kind, request.match_info.get("extension"))
            sent = SentMessage(self.context.new_id(), phone, ZAPI_MEDIA_FIELDS[kind], media.text, failure=send_failure(phone),
                               media=media.data, media_type=media.media_type, media_url=media.url,
                               file_name=media.file_name)
            self.state.record_send(sent)
            self.context.on_sent(sent)
            return web.json_response({"messageId": sent.message_id, "id": sent.message_id}, status=202)

        return send

    def _require_known_recipient(self, recipient: str) -> None:
        if is_group_jid(recipient) and self.state.group(recipient) is None:
            raise not_found(f"group {recipient}", field="phone")

    def _message(self, request: Any, operation: str, text: str, **extra: Any) -> SentMessage:
        failure = send_failure(request.phone)
        return SentMessage(self.context.new_id(), request.phone, operation, text, failure=failure, **extra)

    def _button_actions(self, request: m.SendButtonActions) -> SentMessage:
        return self._message(request, "send-button-actions", request.message, first_button_text=request.buttons[0].text)

    def _forward(self, request: m.ForwardMessage) -> SentMessage:
        original = self.state.find_sent(request.messageId)
        sent = self._message(request, "forward-message", original.text if original else "")
        if original is None and sent.failure is None:
            sent = SentMessage(sent.message_id, sent.recipient, sent.operation, failure=NOT_FORWARDABLE)
        return sent

    # -- privacy ---------------------------------------------------------------------------------

    @handles(OperationId.PRIVACY_GROUP_ADD)
    async def privacy_group_add(self, request: web.Request) -> web.Response:
        body = parse(m.PrivacyGroupAdd, await read_json_object(request))
        self.state.privacy.group_add = body.type.value
        _apply_blacklist(self.state.privacy.group_add_blacklist, body.contactsBlacklist)
        return _ok()

    @handles(OperationId.PRIVACY_LAST_SEEN)
    async def privacy_last_seen(self, request: web.Request) -> web.Response:
        body = parse(m.PrivacyLastSeen, await read_json_object(request))
        self.state.privacy.last_seen = body.visualizationType.value
        _apply_blacklist(self.state.privacy.last_seen_blacklist, body.contactsBlacklist)
        return _ok()

    # -- groups and communities -----------------------------------------------------------------

    @handles(OperationId.ADD_PARTICIPANT)
    async def add_participant(self, request: web.Request) -> web.Response:
        body = parse(m.AddParticipant, await read_json_object(request))
        group = self.state.group(body.groupId)
        if group is None:
            raise not_found(f"group {body.groupId}", field="groupId")
        added: list[str] = []
        failed: list[str] = []
        for phone in dict.fromkeys(body.phones):
            if not is_registered(phone):
                failed.append(phone)
                continue
            added.append(phone)
            if phone in group.participants:
                continue
            if body.autoInvite:
                if phone not in group.pending_invites:
                    group.pending_invites.append(phone)
            else:
                group.participants[phone] = Participant(phone)
        return web.json_response({"success": not failed, "added": added, "failed": failed})

    @handles(OperationId.UPDATE_GROUP_NAME)
    async def update_group_name(self, request: web.Request) -> web.Response:
        body = parse(m.UpdateGroupName, await read_json_object(request))
        group = self.state.group(body.groupId)
        if group is None:
            raise not_found(f"group {body.groupId}", field="groupId")
        if not group.is_admin(self.state.own_phone):
            raise bad_field("groupId", "only group administrators may rename this group; this account is not one")
        group.name = body.groupName
        group.name_set_at = self.context.clock()
        group.name_set_by = self.state.own_phone
        return _ok()

    @handles(OperationId.GROUP_METADATA)
    async def group_metadata(self, request: web.Request) -> web.Response:
        query = parse(m.GroupMetadataQuery, {"GROUP_PHONE_NUMBER": request.match_info["GROUP_PHONE_NUMBER"]})
        group = self.state.group(query.GROUP_PHONE_NUMBER)
        if group is None:
            raise not_found(f"group {query.GROUP_PHONE_NUMBER}", field="GROUP_PHONE_NUMBER")
        return web.json_response(
            {
                "groupId": group.group_id,
                "groupName": group.name,
                "description": group.description,
                "participants": [
                    {"phone": member.phone, "isAdmin": member.is_admin or member.is_super_admin}
                    for member in group.participants.values()
                ],
                "createdAt": iso(group.created_at),
            }
        )

    @handles(OperationId.ADD_ADMIN)
    async def add_admin(self, request: web.Request) -> web.Response:
        body = parse(m.AddAdmin, await read_json_object(request))
        community = self.state.communities.get(body.communityId)
        if community is None:
            raise not_found(f"community {body.communityId}", field="communityId")
        for phone in body.phones:
            if phone not in community.admins:
                community.admins.append(phone)
        return _ok()

    @handles(OperationId.REDEFINE_INVITATION_LINK)
    async def redefine_invitation_link(self, request: web.Request) -> web.Response:
        community_id = request.match_info["communityId"]
        community = self.state.communities.get(community_id)
        if community is None:
            raise not_found(f"community {community_id}", field="COMMUNITY_ID")
        body = parse(m.RedefineInvitationLink, await read_json_object(request))
        if body.communityId != community_id:
            raise bad_field("communityId", "must match the community id in the path")
        groups = []
        for position, group_id in enumerate(body.groupsPhones or []):
            group = self.state.group(group_id)
            if group is None:
                raise not_found(f"group {group_id}", field=f"groupsPhones.{position}")
            if group.community_id != community_id:
                raise bad_field(f"groupsPhones.{position}", f"{group_id} is not a group of community {community_id}")
            groups.append(group)
        community.invite_generation += 1
        for group in groups:
            group.invite_generation += 1
        return web.json_response({"inviteLink": community.invite_link})

    # -- chats, profile, catalog, webhook, status -----------------------------------------------

    @handles(OperationId.MODIFY_CHAT)
    async def modify_chat(self, request: web.Request) -> web.Response:
        body = parse(m.ModifyChat, await read_json_object(request))
        self._require_known_recipient(body.phone)
        action = body.action
        if action is m.ChatAction.DELETE:
            self.state.chats.pop(body.phone, None)
            return _ok()
        chat = self.state.chat(body.phone)
        if action is m.ChatAction.READ:
            chat.unread = 0
        elif action in (m.ChatAction.ARCHIVE, m.ChatAction.UNARCHIVE):
            chat.archived = action is m.ChatAction.ARCHIVE
        elif action in (m.ChatAction.PIN, m.ChatAction.UNPIN):
            chat.pinned = action is m.ChatAction.PIN
        elif action in (m.ChatAction.MUTE, m.ChatAction.UNMUTE):
            chat.muted = action is m.ChatAction.MUTE
        elif action is m.ChatAction.CLEAR:
            chat.message_count = 0
            chat.unread = 0
        return _ok()

    @handles(OperationId.PROFILE_DESCRIPTION)
    async def profile_description(self, request: web.Request) -> web.Response:
        body = parse(m.ProfileDescription, await read_json_object(request))
        self.state.profile_description = body.value
        return _ok()

    @handles(OperationId.PRODUCTS)
    async def product(self, request: web.Request) -> web.Response:
        query = parse(m.ProductQuery, {"PRODUCT_ID": request.match_info["PRODUCT_ID"]})
        product = self.state.products.get(query.PRODUCT_ID)
        if product is None:
            raise not_found(f"product {query.PRODUCT_ID}", field="PRODUCT_ID")
        return web.json_response(
            {
                "productId": product.product_id,
                "name": product.name,
                "price": product.price,
                "currency": product.currency,
                "description": product.description,
                "images": list(product.images),
                "url": product.url,
                "isHidden": product.is_hidden,
            }
        )

    # Webhook URLs are the gateway's settings, set before a phone is paired (as Z-API's are, and WuzAPI's): an
    # account waiting for its first scan (`--sandbox --logged-out`) must be pointed at the listener too.
    @handles(OperationId.UPDATE_WEBHOOK_DELIVERY, needs_connection=False)
    async def update_webhook_delivery(self, request: web.Request) -> web.Response:
        body = parse(m.DeliveryWebhook, await read_json_object(request))
        self.state.delivery_url = body.value
        return _ok()

    @handles(OperationId.STATUS, needs_connection=False)
    async def status(self, request: web.Request) -> web.Response:
        connected = self.state.instance_link.connected
        return web.json_response(
            {
                "connected": connected,
                # Z-API's status text, not an error flag (docs/gateways/zapi.md §3.1).
                "error": "You are already connected." if connected else "You are not connected.",
                "smartphoneConnected": connected,
            }
        )


def _apply_blacklist(blacklist: list[str], entries: list[m.BlacklistEntry] | None) -> None:
    for entry in entries or []:
        if entry.action is m.BlacklistAction.ADD and entry.phone not in blacklist:
            blacklist.append(entry.phone)
        elif entry.action is m.BlacklistAction.REMOVE and entry.phone in blacklist:
            blacklist.remove(entry.phone)

