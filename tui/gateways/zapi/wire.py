"""How Z-API writes the instance family (docs/gateways/zapi.md §1.5, §2, §3): a group as `<digits>-group`, the
delay in whole seconds, buttons as buttonActions, a link's preview required, the poll's pollMaxOptions, the
location as strings, privacy scopes as CONTACTS; what it cannot say is refused before anything is sent."""

from __future__ import annotations

from collections.abc import Callable

from tui.api import models as m
from tui.api import operations as ops
from tui.api.adapter import WireForms, no_body
from tui.api.operations import Body, DialectRefusal
from tui.gateways.addressing import with_phones, zapi_phone

ZAPI_DELAY_RULE = "Z-API waits whole seconds from 1 to 15 (1000 to 15000 milliseconds in steps of 1000)"
ZAPI_LINK_PREVIEW_RULE = "Z-API requires image, title and linkDescription on every link message"


def zapi_delay_seconds(milliseconds: int) -> int:
    """The spec's `delayMessage` (ms) as Z-API's whole seconds, or DialectRefusal."""
    seconds, rest = divmod(milliseconds, 1000)
    if rest or not 1 <= seconds <= 15:
        raise DialectRefusal("delayMessage", f"of {milliseconds} ms cannot be written: {ZAPI_DELAY_RULE}")
    return seconds


def _zapi_send(*keys: str) -> Callable[[m.Request], Body]:
    def encode(request: m.Request) -> Body:
        body = with_phones(request.wire(), zapi_phone, *keys)
        if "delayMessage" in body:
            body["delayMessage"] = zapi_delay_seconds(body["delayMessage"])
        return body

    return encode


def _zapi_button_actions(request: m.SendButtonActions) -> Body:
    body = _zapi_send("phone")(request)
    body["buttonActions"] = [
        {"id": button["id"], "type": "REPLY", "label": button["text"]} for button in body.pop("buttons")
    ]
    return body


def _zapi_link(request: m.SendLink) -> Body:
    for name, value in (("image", request.image), ("title", request.title), ("linkDescription", request.linkDescription)):
        if not (value or "").strip():
            raise DialectRefusal(name, f"is required: {ZAPI_LINK_PREVIEW_RULE}")
    return _zapi_send("phone")(request)


def _zapi_poll(request: m.SendPoll) -> Body:
    """Z-API's `pollMaxOptions` is "the maximum number of votes per person" (send-poll.mdx): the spec's
    `selectableCount` N (1 to the number of options, checked by the model) goes out as itself."""
    body = _zapi_send("phone")(request)
    body["pollMaxOptions"] = body.pop("selectableCount", 1)
    return body


def _zapi_location(request: m.SendLocation) -> Body:
    body = _zapi_send("phone")(request)
    body["latitude"] = repr(float(body.pop("lat")))
    body["longitude"] = repr(float(body.pop("lng")))
    return body


def _zapi_scope(scope: str, field_name: str, *, allow_none: bool) -> str:
    if scope == m.PrivacyScope.NONE and not allow_none:
        raise DialectRefusal(field_name, "cannot be NONE: Z-API offers ALL, CONTACT or CONTACT_BLACKLIST here")
    return "CONTACTS" if scope == m.PrivacyScope.CONTACT else scope


def _zapi_group_add(request: m.PrivacyGroupAdd) -> Body:
    body = request.wire()
    body["type"] = _zapi_scope(body["type"], "type", allow_none=False)
    return body


def _zapi_last_seen(request: m.PrivacyLastSeen) -> Body:
    body = request.wire()
    body["visualizationType"] = _zapi_scope(body["visualizationType"], "visualizationType", allow_none=True)
    return body


def _zapi_redefine_link(request: m.RedefineInvitationLink) -> None:
    if request.groupsPhones:
        raise DialectRefusal("groupsPhones", "must be empty: Z-API resets the community's own link only")
    return None  # Z-API takes the community from the path; the docs ask for no body


# Media (issue 25): Z-API's send-image, send-video, send-audio, send-document/{extension} (developer.z-api.io,
# Z-API/docs en/message/send-message-*.mdx): the file as a URL or a base64 data URL, `caption`, `fileName`,
# `delayMessage` in whole seconds. The spec names no media call, so its instance family writes these same shapes
# (delay in seconds too); only a group keeps the spec's `@g.us` form there, as in every spec send.


def media_body(convert: Callable[[str], str]) -> Callable[[m.Request], Body]:
    def encode(request: m.Request) -> Body:
        body = with_phones(request.wire(), convert, "phone")
        body.pop("extension", None)  # send-document's extension is in the path
        if "delayMessage" in body:
            body["delayMessage"] = zapi_delay_seconds(body["delayMessage"])
        return body

    return encode


def zapi_forms() -> WireForms:
    forms = WireForms("Z-API")
    forms.form_each((ops.SEND_TEXT.id, ops.SEND_BUTTON_LIST.id, ops.SEND_STICKER.id, ops.MODIFY_CHAT.id),
                    _zapi_send("phone"))
    forms.form(ops.FORWARD_MESSAGE, _zapi_send("phone", "messagePhone"))
    forms.form(ops.SEND_BUTTON_ACTIONS, _zapi_button_actions)
    forms.form(ops.SEND_LINK, _zapi_link)
    forms.form(ops.SEND_POLL, _zapi_poll)
    forms.form(ops.SEND_LOCATION, _zapi_location)
    forms.form_each((ops.SEND_IMAGE.id, ops.SEND_VIDEO.id, ops.SEND_AUDIO.id, ops.SEND_DOCUMENT.id),
                    media_body(zapi_phone))
    forms.form(ops.PRIVACY_GROUP_ADD, _zapi_group_add)
    forms.form(ops.PRIVACY_LAST_SEEN, _zapi_last_seen)
    forms.form(ops.REDEFINE_INVITATION_LINK, _zapi_redefine_link)
    forms.form_each((ops.GROUP_METADATA.id, ops.PRODUCTS.id, ops.STATUS.id, ops.LIST_CHATS.id, ops.LIST_CONTACTS.id,
                     ops.LIST_GROUPS.id, ops.QR_CODE.id, ops.QR_CODE_IMAGE.id, ops.PHONE_CODE.id, ops.RESTART.id,
                     ops.DISCONNECT.id, ops.DEVICE.id, ops.INSTANCE_DATA.id), no_body)
    forms.form(ops.FIND_MESSAGES, _zapi_chat_messages)
    return forms


def _zapi_chat_messages(request: m.ChatMessagesQuery) -> None:
    """No body: the chat is in the path, the paging in the query. Z-API reads one chat at a time."""
    if not request.phone.strip():
        raise DialectRefusal("phone", "is required: Z-API lists one chat's messages at a time")
