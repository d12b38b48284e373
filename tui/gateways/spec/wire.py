"""How the spec (gateway-service.md §4) writes the operations: the request models' own bodies, a group as
`<digits>@g.us` in a send, and a refusal for each call it does not have (the gateways' lists, pairing calls and
session media), before anything is sent."""

from __future__ import annotations

from collections.abc import Callable

from tui.api import models as m
from tui.api import operations as ops
from tui.api.adapter import Refusal, WireForms, no_body
from tui.api.dialects import Family
from tui.api.operations import Body
from tui.gateways.addressing import spec_phone, with_phones
from tui.gateways.zapi.wire import media_body


def spec_send(*keys: str) -> Callable[[m.Request], Body]:
    def encode(request: m.Request) -> Body:
        return with_phones(request.wire(), spec_phone, *keys)

    return encode


def not_in_spec(what: str, where: str) -> Refusal:
    return Refusal(what, f"cannot be listed in the spec dialect: the service has no such list ({where})")


def no_such_call(what: str, where: str) -> Refusal:
    return Refusal(what, f"cannot be called in the spec dialect: the service has no such call ({where})")


def no_media_in_spec(path: str) -> Refusal:
    return Refusal(
        path,
        "cannot be sent in the spec dialect: the service's session family has no media call (WuzAPI's "
        f"POST /{path} has one: set the profile's session_dialect to wuzapi, or send on the instance family)",
    )


INSTANCE_OPS = frozenset(op.id for op in ops.all_operations() if op.family is Family.INSTANCE)


def spec_forms() -> WireForms:
    forms = WireForms("the spec")
    forms.form_each((ops.SEND_TEXT.id, ops.SEND_BUTTON_ACTIONS.id, ops.SEND_BUTTON_LIST.id, ops.SEND_LINK.id,
                     ops.SEND_POLL.id, ops.SEND_LOCATION.id, ops.SEND_STICKER.id, ops.MODIFY_CHAT.id), spec_send("phone"))
    forms.form(ops.FORWARD_MESSAGE, spec_send("phone", "messagePhone"))
    # Z-API's shapes: the spec names no media call
    forms.form_each(ops.MEDIA_OPERATIONS & INSTANCE_OPS, media_body(spec_phone))
    forms.form_each((ops.GROUP_METADATA.id, ops.PRODUCTS.id, ops.STATUS.id, ops.HMAC_STATUS.id, ops.HMAC_DELETE.id,
                     ops.WEBHOOK_READ.id), no_body)
    for listing, where in ((ops.LIST_CHATS, "Z-API's GET /chats"), (ops.LIST_CONTACTS, "Z-API's GET /contacts"),
                           (ops.LIST_GROUPS, "Z-API's GET /groups"), (ops.USER_CONTACTS, "WuzAPI's GET /user/contacts"),
                           (ops.USER_LID, "WuzAPI's GET /user/lid/{jid}"),
                           (ops.FIND_MESSAGES, "Z-API's GET /chat-messages/{phone}"),
                           (ops.MESSAGE_HISTORY, "WuzAPI's GET /chat/history"),
                           (ops.GROUP_LIST, "WuzAPI's GET /group/list")):
        forms.refuse(listing.id, not_in_spec(listing.path, where))
    for call, where in (
        (ops.QR_CODE, "Z-API's GET /qr-code"), (ops.QR_CODE_IMAGE, "Z-API's GET /qr-code/image"),
        (ops.PHONE_CODE, "Z-API's GET /phone-code/{phone}"), (ops.RESTART, "Z-API's GET /restart"),
        (ops.DISCONNECT, "Z-API's GET /disconnect"), (ops.DEVICE, "Z-API's GET /device"),
        (ops.INSTANCE_DATA, "Z-API's GET /me"), (ops.UPDATE_EVERY_WEBHOOKS, "Z-API's PUT /update-every-webhooks"),
        (ops.SESSION_STATUS, "WuzAPI's GET /session/status"), (ops.SESSION_CONNECT, "WuzAPI's POST /session/connect"),
        (ops.SESSION_QR, "WuzAPI's GET /session/qr"), (ops.SESSION_PAIRPHONE, "WuzAPI's POST /session/pairphone"),
        (ops.SESSION_DISCONNECT, "WuzAPI's POST /session/disconnect"),
        (ops.SESSION_LOGOUT, "WuzAPI's POST /session/logout"),
    ):
        forms.refuse(call.id, no_such_call(call.path.split("/{")[0], where))
    for media_id in sorted(ops.MEDIA_OPERATIONS - INSTANCE_OPS):
        forms.refuse(media_id, no_media_in_spec(ops.OPERATIONS[media_id].path))
    return forms
