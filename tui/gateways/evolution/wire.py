"""How Evolution API (v2.3.6) writes each operation of our table (docs/gateways/evolution.md §2, §3, §4): its own
route per call, the instance's name in the path (`{instance}`, filled from the endpoint), `number` for the chat,
its own field names; what it cannot say is refused before sending, naming why."""

from __future__ import annotations

import mimetypes
from collections.abc import Callable, Mapping
from urllib.parse import unquote, urlsplit

from tui.api import connection as c
from tui.api import models as m
from tui.api import operations as ops
from tui.api.adapter import Refusal, WireForms
from tui.api.models import data_url_type
from tui.api.operations import Body, DialectRefusal, OperationId
from tui.gateways.addressing import spec_phone
from tui.gateways.evolution.privacy import placeholder_body

GATEWAY = "Evolution API"

# The group routes take `groupJid` in the query or the body (§1.4); `getParticipants` is required (§2.6).
QueryOf = Callable[[m.Request], dict[str, str]]


def _group_jid(group_id: str) -> str:
    """Our `<digits>-group` (or a community's digits) as Evolution's `<digits>@g.us`."""
    jid = spec_phone(group_id)
    return jid if jid.endswith("@g.us") else f"{jid}@g.us"


def _text(request: m.SendText) -> Body:
    return {"number": spec_phone(request.phone), "text": request.message}


def _delay(body: Body, delay_ms: int | None) -> Body:
    """Evolution's `delay` is milliseconds, as the spec's `delayMessage` (§2.2): it types that long first."""
    if delay_ms is not None:
        body["delay"] = delay_ms
    return body


def _link(request: m.SendLink) -> Body:
    """sendText with the URL in the text (§2.3): Evolution makes the preview itself and has no fields for its
    image, title or description, so those are left out, as the row's note says (EVOLUTION_LINK_NOTE)."""
    text = request.message if request.linkUrl in request.message else f"{request.message} {request.linkUrl}"
    return {"number": spec_phone(request.phone), "text": text, "linkPreview": True}


def _buttons(request: m.SendButtonActions) -> Body:
    body: Body = {"number": spec_phone(request.phone), "title": request.title or request.message}
    if request.title:
        body["description"] = request.message
    if request.footer:
        body["footer"] = request.footer
    body["buttons"] = [{"type": "reply", "displayText": button.text, "id": button.id} for button in request.buttons]
    return body


LIST_BUTTON_TEXT = "Options"  # sendList requires the text of the button that opens the list; our row has none


def _list(request: m.SendButtonList) -> Body:
    rows = [{"title": button.label, "rowId": button.id or button.label} for button in request.buttonList.buttons]
    return {"number": spec_phone(request.phone), "title": request.message, "footerText": "",
            "buttonText": LIST_BUTTON_TEXT, "sections": [{"title": request.message, "rows": rows}]}


def _poll(request: m.SendPoll) -> Body:
    return {"number": spec_phone(request.phone), "name": request.message,
            "selectableCount": request.selectableCount, "values": [option.name for option in request.poll]}


def _location(request: m.SendLocation) -> Body:
    body: Body = {"number": spec_phone(request.phone), "latitude": request.lat, "longitude": request.lng,
                  "name": request.title, "address": request.address}
    return _delay(body, request.delayMessage)


# What Evolution's sendContact writes into the card it builds (whatsapp.baileys.service.ts contactMessage): a card
# that says more than these would lose it on the way, so it is refused, naming what would be lost.
_CARD_FIELDS = frozenset({"version", "n", "fn", "tel", "org", "email", "url", "x-ablabel"})


def _contact(request: m.ContactCard) -> Body:
    """contactMessageSchema (src/validate/message.schema.ts): `number` and `contact`, a list of `{fullName,
    phoneNumber, wuid?, organization?, email?, url?}`; Evolution writes the vCard itself from them, so the card is
    read back into those fields (its WAID becomes `wuid`, which says the WhatsApp number the "Message" button opens)."""
    import vobject

    try:
        card = vobject.readOne(request.Vcard)
    except Exception:  # vobject raises its own ParseError and plain ValueErrors alike
        raise DialectRefusal("Vcard", "is not a vCard Evolution API's sendContact can be written from") from None
    lost = sorted(name.upper() for name in card.contents if name not in _CARD_FIELDS)
    phones = card.contents.get("tel", [])
    if lost or len(phones) > 1:
        what = ", ".join([*lost, *(["a second TEL"] if len(phones) > 1 else [])])
        raise DialectRefusal("Vcard", f"has {what}: Evolution API's sendContact writes the card from one name, one "
                                      "phone, organization, email and url, and would drop the rest")
    if not phones:
        raise DialectRefusal("Vcard", "names no phone (TEL): Evolution API's sendContact needs one")
    tel = phones[0]
    phone = str(tel.value).strip()  # as the card writes it: Evolution puts it back in its card as given
    if len(phone) < 10:
        raise DialectRefusal("Vcard", "has a phone shorter than Evolution API takes (10 characters at least)")
    name = str(card.fn.value).strip() if "fn" in card.contents else ""
    contact: Body = {"fullName": name or request.Name, "phoneNumber": phone}
    waid = "".join(tel.params.get("WAID", [""])[:1])
    if waid.isdigit() and len(waid) >= 10:
        contact["wuid"] = waid
    for field, key in (("org", "organization"), ("email", "email"), ("url", "url")):
        if field in card.contents:
            value = card.contents[field][0].value
            text = ";".join(value).strip(";") if isinstance(value, list) else str(value)
            if text:
                contact[key] = text
    return {"number": spec_phone(request.Phone), "contact": [contact]}


def _sticker(request: m.SendSticker) -> Body:
    return _delay({"number": spec_phone(request.phone), "sticker": request.sticker}, request.delayMessage)


# Media (§2.4): `media` is an http(s) URL or RAW base64 (a `data:` URL fails Evolution's isURL and isBase64 alike);
# the type sent to WhatsApp is looked up from `fileName`'s extension, so every send names a file with one.


def evolution_media(source: str) -> tuple[str, str | None]:
    """The file as Evolution takes it (a URL, or the data URL's base64 without its prefix) and its media type."""
    media_type = data_url_type(source)
    if media_type is not None:
        return source.split(",", 1)[1], media_type
    return source, mimetypes.guess_type(urlsplit(source).path)[0]


def _file_name(source: str, media_type: str | None, stem: str) -> str:
    if media_type is None:
        name = urlsplit(source).path.rsplit("/", 1)[-1]
        return name or stem
    if data_url_type(source) is None:
        name = urlsplit(source).path.rsplit("/", 1)[-1]
        if "." in name:
            return name
    extension = mimetypes.guess_extension(media_type) or ""
    return f"{stem}{'.jpg' if extension == '.jpe' else extension}"


def _media(kind: str, phone: str, source: str, caption: str | None, delay_ms: int | None,
           file_name: str | None = None) -> Body:
    media, media_type = evolution_media(source)
    body: Body = {"number": spec_phone(phone), "mediatype": kind}
    if media_type is not None:
        body["mimetype"] = media_type
    body["media"] = media
    body["fileName"] = file_name or _file_name(source, media_type, kind)
    if caption:
        body["caption"] = caption
    return _delay(body, delay_ms)


def _image(request: m.SendImage) -> Body:
    return _media("image", request.phone, request.image, request.caption, request.delayMessage)


def _video(request: m.SendVideo) -> Body:
    return _media("video", request.phone, request.video, request.caption, request.delayMessage)


def _document(request: m.SendDocument) -> Body:
    """A base64 document needs `fileName` with its extension (§2.4: 400 without one); the row's extension is it."""
    name = request.fileName or "document"
    if not name.lower().endswith(f".{request.extension.lower()}"):
        name = f"{name}.{request.extension}"
    return _media("document", request.phone, request.document, request.caption, request.delayMessage, name)


def _voice_note(request: m.SendAudio) -> Body:
    """sendWhatsAppAudio: a voice note, converted to Opus in Ogg by Evolution (`encoding`, §2.4)."""
    audio, _media_type = evolution_media(request.audio)
    return _delay({"number": spec_phone(request.phone), "audio": audio, "encoding": True}, request.delayMessage)


_SCOPES = {m.PrivacyScope.ALL: "all", m.PrivacyScope.CONTACT: "contacts",
           m.PrivacyScope.CONTACT_BLACKLIST: "contact_blacklist", m.PrivacyScope.NONE: "none"}


def _participants(action: str) -> Callable[[m.Request], Body]:
    def encode(request: m.Request) -> Body:
        if isinstance(request, m.AddParticipant):
            group, phones = request.groupId, request.phones
        elif isinstance(request, m.AddAdmin):
            group, phones = request.communityId, request.phones
        else:
            raise TypeError(f"{type(request).__name__} names no group and participants")
        return {"groupJid": _group_jid(group), "action": action, "participants": list(phones)}

    return encode


def _group_name(request: m.UpdateGroupName) -> Body:
    return {"groupJid": _group_jid(request.groupId), "subject": request.groupName}


def _revoke_link(request: m.RedefineInvitationLink) -> Body:
    if request.groupsPhones:
        raise DialectRefusal("groupsPhones", "must be empty: Evolution resets one group's link at a time")
    return {"groupJid": _group_jid(request.communityId)}


def _about(request: m.ProfileDescription) -> Body:
    return {"status": request.value}


def _webhook_delivery(request: m.DeliveryWebhook) -> Body:
    """Our delivery webhook is Evolution's one webhook: a URL turns it on for the delivery events, empty turns it
    off (§4.1: `enabled: true` needs `events`, else Evolution answers 500)."""
    if not request.value:
        return {"webhook": {"enabled": False, "url": ""}}
    return {"webhook": {"enabled": True, "url": request.value, "events": ["MESSAGES_UPDATE"]}}


EVERY_EVENT: tuple[str, ...] = ("MESSAGES_UPSERT", "MESSAGES_UPDATE", "SEND_MESSAGE", "CONNECTION_UPDATE",
                                "QRCODE_UPDATED", "PRESENCE_UPDATE", "GROUPS_UPSERT", "GROUP_PARTICIPANTS_UPDATE")


def _every_webhook(request: c.EveryCallback) -> Body:
    return {"webhook": {"enabled": True, "url": request.value, "byEvents": False, "base64": True,
                        "events": list(EVERY_EVENT)}}


def _chats(request: m.ListPage) -> Body:
    """findChats pages by `take`/`skip` in the body (§2.8)."""
    return {"where": {}, "take": request.pageSize, "skip": (request.page - 1) * request.pageSize}


def _contacts(request: m.ListPage) -> Body:
    """findContacts: `offset` is the page size, `page` counts from 1 (§2.8)."""
    return {"where": {}, "offset": request.pageSize, "page": request.page}


def _find_messages(request: m.ChatMessagesQuery) -> Body:
    """findMessages (v2.3.6 chat.router.ts, channel.service.ts fetchMessages): `where.key.remoteJid` one chat, none
    every chat; `offset` is the page's size and `page` counts from 1; newest first."""
    where: Body = {"key": {"remoteJid": _chat_jid(request.phone)}} if request.phone.strip() else {}
    return {"where": where, "page": request.page, "offset": request.amount}


def _create_group(request: m.GroupCreate) -> Body:
    """createGroupSchema (src/validate/group.schema.ts): `subject` and `participants` (numbers) required."""
    return {"subject": request.name, "participants": [spec_phone(phone) for phone in request.participants]}


def _group_info_query(request: m.Request) -> dict[str, str]:
    assert isinstance(request, m.GroupInfoRequest)
    return {"groupJid": _group_jid(request.GroupJID)}


def _proxy(request: m.ProxyConfig) -> Body:
    """proxySchema (src/validate/proxy.schema.ts): `enabled`, `host`, `port` (text), `protocol` required; off is
    every field empty, as createProxy blanks them (proxy.controller.ts)."""
    if not request.enable:
        return {"enabled": False, "host": "", "port": "", "protocol": "", "username": "", "password": ""}
    url = urlsplit(request.proxy_url)
    body: Body = {"enabled": True, "host": url.hostname or "", "port": str(url.port or ""),
                  "protocol": url.scheme}
    if url.username:
        body["username"] = unquote(url.username)
    if url.password:
        body["password"] = unquote(url.password)
    return body


def _every_contact(_request: m.Request) -> Body:
    """fetchContacts (src/api/services/channel.service.ts): no `offset` nor `page` is every contact kept."""
    return {"where": {}}


def _chat_jid(phone: str) -> str:
    jid = spec_phone(phone)
    return jid if "@" in jid else f"{jid}@s.whatsapp.net"


# -- queries (GET routes read their parameters from the query string, §1.1)


def _group_metadata_query(request: m.Request) -> dict[str, str]:
    assert isinstance(request, m.GroupMetadataQuery)
    return {"groupJid": _group_jid(request.GROUP_PHONE_NUMBER)}


def _phone_code_query(request: m.Request) -> dict[str, str]:
    assert isinstance(request, c.PhoneCodeQuery)
    return {"number": request.phone}


def _no_participants(_request: m.Request) -> dict[str, str]:
    return {"getParticipants": "false"}


def _with_participants(_request: m.Request) -> dict[str, str]:
    """The session family's group list names each group's members (WuzAPI's /group/list does): fetchAllGroups adds
    Baileys' participants rows when asked (whatsapp.baileys.service.ts fetchAllGroups)."""
    return {"getParticipants": "true"}


NO_ROUTE = "Evolution API has no such call"

REFUSALS: Mapping[OperationId, Refusal] = {
    OperationId.FORWARD_MESSAGE: Refusal("messageId", f"cannot be forwarded: {NO_ROUTE} (a forward needs the "
                                                      "whole original message, not its id)"),
    OperationId.PRODUCTS: Refusal("PRODUCT_ID", f"cannot be looked up: {NO_ROUTE} (only whole catalogs are read)"),
    OperationId.MODIFY_CHAT: Refusal("action", "cannot be written yet: Evolution reads and archives by a message's "
                                                "key (id, fromMe), which modify-chat does not carry, and has no "
                                                "route to pin, mute, clear or delete a chat"),
    OperationId.HMAC_SET: Refusal("key", f"cannot be set: {NO_ROUTE}; Evolution signs no delivery"),
    OperationId.HMAC_STATUS: Refusal("key", f"cannot be read: {NO_ROUTE}; Evolution signs no delivery"),
    OperationId.HMAC_DELETE: Refusal("key", f"cannot be removed: {NO_ROUTE}; Evolution signs no delivery"),
    OperationId.SESSION_DISCONNECT: Refusal("session", f"cannot be closed while kept paired: {NO_ROUTE}; "
                                                       "logout unpairs"),
    # The session family's pairing and state: Evolution's connection is its instance's (the instance operations).
    OperationId.SESSION_STATUS: Refusal("session", "is the instance's on Evolution API: use status"),
    OperationId.SESSION_CONNECT: Refusal("session", "is paired through the instance on Evolution API: use qr-code "
                                                    "or phone-code"),
    OperationId.SESSION_QR: Refusal("session", "is paired through the instance on Evolution API: use qr-code"),
    OperationId.SESSION_PAIRPHONE: Refusal("Phone", "is paired through the instance on Evolution API: use phone-code"),
    OperationId.SESSION_LOGOUT: Refusal("session", "is the instance's on Evolution API: use disconnect (logout)"),
    OperationId.MESSAGE_HISTORY: Refusal("chat_jid", "is read by findMessages on Evolution API: use chat-messages"),
    OperationId.USER_LID: Refusal("jid", f"cannot be looked up: {NO_ROUTE} (a sender's phone comes beside its LID "
                                         "in Evolution's deliveries)"),
    OperationId.CHAT_SEND_IMAGE: Refusal("Image", "is sent by sendMedia on Evolution API: use send-image"),
    OperationId.CHAT_SEND_VIDEO: Refusal("Video", "is sent by sendMedia on Evolution API: use send-video"),
    OperationId.CHAT_SEND_AUDIO: Refusal("Audio", "is sent by sendWhatsAppAudio on Evolution API: use send-audio"),
    OperationId.CHAT_SEND_DOCUMENT: Refusal("Document", "is sent by sendMedia on Evolution API: use send-document"),
    OperationId.WEBHOOK: Refusal("webhook", "is set whole on Evolution API, with its own event names: use "
                                            "update-every-webhooks (or update-webhook-delivery)"),
}

QUERIES: Mapping[OperationId, QueryOf] = {
    OperationId.GROUP_METADATA: _group_metadata_query,
    OperationId.PHONE_CODE: _phone_code_query,
    OperationId.LIST_GROUPS: _no_participants,
    OperationId.GROUP_LIST: _with_participants,
    OperationId.GROUP_INFO: _group_info_query,
}


def evolution_forms() -> WireForms:
    forms = WireForms(GATEWAY)
    forms.route(ops.SEND_TEXT, "POST", "message/sendText/{instance}", _text)
    forms.route(ops.SEND_LINK, "POST", "message/sendText/{instance}", _link)
    forms.route(ops.SEND_BUTTON_ACTIONS, "POST", "message/sendButtons/{instance}", _buttons)
    forms.route(ops.SEND_BUTTON_LIST, "POST", "message/sendList/{instance}", _list)
    forms.route(ops.SEND_POLL, "POST", "message/sendPoll/{instance}", _poll)
    forms.route(ops.SEND_LOCATION, "POST", "message/sendLocation/{instance}", _location)
    forms.route(ops.SEND_STICKER, "POST", "message/sendSticker/{instance}", _sticker)
    forms.route(ops.SEND_IMAGE, "POST", "message/sendMedia/{instance}", _image)
    forms.route(ops.SEND_VIDEO, "POST", "message/sendMedia/{instance}", _video)
    forms.route(ops.SEND_DOCUMENT, "POST", "message/sendMedia/{instance}", _document)
    forms.route(ops.SEND_AUDIO, "POST", "message/sendWhatsAppAudio/{instance}", _voice_note)
    forms.route(ops.ADD_PARTICIPANT, "POST", "group/updateParticipant/{instance}", _participants("add"))
    forms.route(ops.ADD_ADMIN, "POST", "group/updateParticipant/{instance}", _participants("promote"))
    forms.route(ops.UPDATE_GROUP_NAME, "POST", "group/updateGroupSubject/{instance}", _group_name)
    forms.route(ops.GROUP_METADATA, "GET", "group/findGroupInfos/{instance}")
    forms.route(ops.REDEFINE_INVITATION_LINK, "POST", "group/revokeInviteCode/{instance}", _revoke_link)
    forms.route(ops.LIST_GROUPS, "GET", "group/fetchAllGroups/{instance}")
    # The operations the spec puts in the session family, on Evolution's own routes (its instance's endpoint).
    forms.route(ops.GROUP_CREATE, "POST", "group/create/{instance}", _create_group)
    forms.route(ops.SEND_CONTACT, "POST", "message/sendContact/{instance}", _contact)
    forms.route(ops.GROUP_INFO, "GET", "group/findGroupInfos/{instance}")
    forms.route(ops.GROUP_LIST, "GET", "group/fetchAllGroups/{instance}")
    forms.route(ops.PROXY, "POST", "proxy/set/{instance}", _proxy)
    forms.route(ops.WEBHOOK_READ, "GET", "webhook/find/{instance}")
    forms.route(ops.USER_CONTACTS, "POST", "chat/findContacts/{instance}", _every_contact)
    forms.route(ops.PRIVACY_GROUP_ADD, "POST", "chat/updatePrivacySettings/{instance}", placeholder_body)
    forms.route(ops.PRIVACY_LAST_SEEN, "POST", "chat/updatePrivacySettings/{instance}", placeholder_body)
    forms.route(ops.PROFILE_DESCRIPTION, "POST", "chat/updateProfileStatus/{instance}", _about)
    forms.route(ops.LIST_CHATS, "POST", "chat/findChats/{instance}", _chats)
    forms.route(ops.LIST_CONTACTS, "POST", "chat/findContacts/{instance}", _contacts)
    forms.route(ops.FIND_MESSAGES, "POST", "chat/findMessages/{instance}", _find_messages)
    forms.route(ops.UPDATE_WEBHOOK_DELIVERY, "POST", "webhook/set/{instance}", _webhook_delivery)
    forms.route(ops.UPDATE_EVERY_WEBHOOKS, "POST", "webhook/set/{instance}", _every_webhook)
    forms.route(ops.INSTANCE_DATA, "GET", "webhook/find/{instance}")
    forms.route(ops.STATUS, "GET", "instance/connectionState/{instance}")
    forms.route(ops.QR_CODE, "GET", "instance/connect/{instance}")
    forms.route(ops.QR_CODE_IMAGE, "GET", "instance/connect/{instance}")
    forms.route(ops.PHONE_CODE, "GET", "instance/connect/{instance}")
    forms.route(ops.RESTART, "POST", "instance/restart/{instance}", _no_body)
    forms.route(ops.DISCONNECT, "DELETE", "instance/logout/{instance}", _no_body)
    forms.route(ops.DEVICE, "GET", "instance/fetchInstances")
    for op_id, refusal in REFUSALS.items():
        forms.refuse(op_id, refusal)
    return forms


def _no_body(_request: m.Request) -> None:
    return None
