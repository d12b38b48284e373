"""Every operation of the spec as a case: how to call it, and the literal request the spec says goes on the wire.

Expected bodies are literal JSON written from the spec (§4), never produced by the models, so a model bug
cannot hide on both sides of a comparison. Replies use the shapes real gateways send (docs/gateways/).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from tests.api.conftest import HMAC_SECRET, INSTANCE_TOKEN
from tui.api.dialects import InstanceDialect, SessionDialect
from tui.api.operations import OperationId
from tui.api.models import (
    AddAdmin,
    ChatSendAudio,
    ChatSendDocument,
    ChatSendImage,
    ChatSendVideo,
    AddParticipant,
    BlacklistEntry,
    Button,
    ButtonList,
    ContactCard,
    DeliveryWebhook,
    ForwardMessage,
    GroupCreate,
    GroupInfoRequest,
    HmacKey,
    ListButton,
    ListPage,
    ModifyChat,
    PollOption,
    PrivacyGroupAdd,
    PrivacyLastSeen,
    ProfileDescription,
    ProxyConfig,
    RedefineInvitationLink,
    Request,
    SendAudio,
    SendButtonActions,
    SendButtonList,
    SendDocument,
    SendImage,
    SendLink,
    SendLocation,
    SendPoll,
    SendSticker,
    SendText,
    SendVideo,
    UpdateGroupName,
    WebhookUpdate,
)

P = f"/instances/inst-1/token/{INSTANCE_TOKEN}"
SENT_202 = (202, {"messageId": "3EB0MSG", "id": "3EB0MSG"})
SENT_200_ZAPI = (200, {"zaapId": "ZAAP1", "messageId": "3EB0MSG", "id": "3EB0MSG"})
SUCCESS = (200, {"success": True})
VALUE_TRUE = (200, {"value": True})
# Tiny data URLs written by hand: a PNG signature, "OggS", an MP4 `ftyp` head, "%PDF-1.4\n".
PNG_URL = "data:image/png;base64,iVBORw0KGgo="
OGG_URL = "data:audio/ogg;base64,T2dnUw=="
MP4_URL = "data:video/mp4;base64,AAAAGGZ0eXBpc29t"
PDF_URL = "data:application/pdf;base64,JVBERi0xLjQK"
# spec.yml's example answer to /chat/send/image, /audio, /document and /video.
WUZAPI_SENT = (200, {"code": 200, "data": {"Details": "Sent", "Id": "90B2F8B13FAC8A9CF6B06E99C7834DC5",
                                           "Timestamp": "2022-04-20T12:49:08-03:00"}, "success": True})


def media_requests(phone: str) -> dict[OperationId, Callable[[], Request]]:
    """One request per media operation (issue 25), to `phone`, for the tables of one request per operation."""
    return {
        OperationId.SEND_IMAGE: lambda: SendImage(phone=phone, image=PNG_URL, caption="Logo"),
        OperationId.SEND_VIDEO: lambda: SendVideo(phone=phone, video=MP4_URL, caption="Demo", delayMessage=2000),
        OperationId.SEND_AUDIO: lambda: SendAudio(phone=phone, audio=OGG_URL),
        OperationId.SEND_DOCUMENT: lambda: SendDocument(phone=phone, extension="pdf", document=PDF_URL, fileName="a.pdf"),
        OperationId.CHAT_SEND_IMAGE: lambda: ChatSendImage(Phone=phone, Image=PNG_URL, Caption="Logo"),
        OperationId.CHAT_SEND_VIDEO: lambda: ChatSendVideo(Phone=phone, Video=MP4_URL),
        OperationId.CHAT_SEND_AUDIO: lambda: ChatSendAudio(Phone=phone, Audio=OGG_URL),
        OperationId.CHAT_SEND_DOCUMENT: lambda: ChatSendDocument(Phone=phone, Document=PDF_URL, FileName="a.pdf"),
    }


@dataclass(frozen=True)
class Case:
    name: str
    call: Callable[[Any], Awaitable[Any]]
    method: str
    path: str
    body: Any  # literal JSON from the spec; None when no body is sent
    reply: tuple[int, Any]
    check: Callable[[Any], bool]
    query: dict[str, str] | None = None


def zapi(client: Any) -> Any:
    """The same client speaking Z-API: the lists are Z-API's (the spec has none and refuses them)."""
    return type(client)(client.http, client.credentials, InstanceDialect.ZAPI)


def wuzapi(client: Any) -> Any:
    """The same client speaking WuzAPI, whose lists the spec does not have."""
    return type(client)(client.http, client.credentials, SessionDialect.WUZAPI)


INSTANCE_CASES = [
    # -- lists, in Z-API's dialect (docs/gateways/zapi.md §3.6) -------------------------------------------------------
    Case(
        "list_chats",
        lambda c: zapi(c).list_chats(ListPage(page=3, pageSize=50)),
        "GET", f"{P}/chats", None,
        (200, [{"phone": "5511999999999", "name": "Ana", "unread": "2", "isGroup": False,
                "lastMessageTime": "1622991687", "pinned": "true"}]),
        lambda r: r.items[0].unread_count == 2 and r.items[0].pinned,
        query={"page": "3", "pageSize": "50"},
    ),
    Case(
        "list_contacts",
        lambda c: zapi(c).list_contacts(ListPage()),
        "GET", f"{P}/contacts", None,
        (200, [{"name": "Ana Silva", "short": "Ana", "notify": "Aninha", "vname": "", "phone": "5511999999999"}]),
        lambda r: r.items[0].saved_name == "Ana Silva" and r.items[0].push_name == "Aninha",
        query={"page": "1", "pageSize": "100"},
    ),
    Case(
        "list_groups",
        lambda c: zapi(c).list_groups(ListPage(pageSize=10)),
        "GET", f"{P}/groups", None,
        (200, [{"isGroup": True, "name": "Team", "phone": "120363019502650977-group", "unread": "0",
                "lastMessageTime": "1730918668000", "messagesUnread": "0"}]),
        lambda r: r.items[0].name == "Team" and r.items[0].lastMessageTime.year == 2024,
        query={"page": "1", "pageSize": "10"},
    ),
    Case(
        "send_text",
        lambda c: c.send_text(SendText(phone="5511999999999", message="Olá, tudo bem?")),
        "POST", f"{P}/send-text",
        {"phone": "5511999999999", "message": "Olá, tudo bem?"},
        SENT_200_ZAPI,
        lambda r: r.message_id == "3EB0MSG" and r.zaapId == "ZAAP1",
    ),
    Case(
        "send_button_actions",
        lambda c: c.send_button_actions(
            SendButtonActions(
                phone="5511999999999", message="Pick one", title="Menu", footer="Thanks",
                buttons=[Button(id="1", text="Yes"), Button(id="2", text="No")],
            )
        ),
        "POST", f"{P}/send-button-actions",
        {"phone": "5511999999999", "message": "Pick one", "title": "Menu", "footer": "Thanks",
         "buttons": [{"id": "1", "text": "Yes"}, {"id": "2", "text": "No"}]},
        SENT_202,
        lambda r: r.message_id == "3EB0MSG" and r.zaapId is None,
    ),
    Case(
        "send_button_list",
        lambda c: c.send_button_list(
            SendButtonList(phone="5511999999999", message="Choose",
                           buttonList=ButtonList(buttons=[ListButton(id="a", label="Option A")]))
        ),
        "POST", f"{P}/send-button-list",
        {"phone": "5511999999999", "message": "Choose", "buttonList": {"buttons": [{"id": "a", "label": "Option A"}]}},
        SENT_202,
        lambda r: r.message_id == "3EB0MSG",
    ),
    Case(
        "send_link",
        lambda c: c.send_link(
            SendLink(phone="5511999999999", message="See https://example.com/page", linkUrl="https://example.com/page",
                     image="https://example.com/thumb.png", title="Example", linkDescription="A page")
        ),
        "POST", f"{P}/send-link",
        {"phone": "5511999999999", "message": "See https://example.com/page", "linkUrl": "https://example.com/page",
         "image": "https://example.com/thumb.png", "title": "Example", "linkDescription": "A page"},
        SENT_202,
        lambda r: r.id == "3EB0MSG",
    ),
    Case(
        "send_poll",
        lambda c: c.send_poll(
            SendPoll(phone="120363019502650977@g.us", message="Lunch?",
                     poll=[PollOption(name="Pizza"), PollOption(name="Sushi")], selectableCount=2)
        ),
        "POST", f"{P}/send-poll",
        {"phone": "120363019502650977@g.us", "message": "Lunch?", "poll": [{"name": "Pizza"}, {"name": "Sushi"}],
         "selectableCount": 2},
        SENT_202,
        lambda r: r.message_id == "3EB0MSG",
    ),
    Case(
        "send_location",
        lambda c: c.send_location(
            SendLocation(phone="5511999999999", title="Office", address="Av. Paulista, 1000",
                         lat=-23.5614, lng=-46.6559, delayMessage=1500)
        ),
        "POST", f"{P}/send-location",
        {"phone": "5511999999999", "title": "Office", "address": "Av. Paulista, 1000", "lat": -23.5614,
         "lng": -46.6559, "delayMessage": 1500},
        SENT_202,
        lambda r: r.message_id == "3EB0MSG",
    ),
    Case(
        "send_sticker",
        lambda c: c.send_sticker(SendSticker(phone="5511999999999", sticker="https://example.com/s.webp")),
        "POST", f"{P}/send-sticker",
        {"phone": "5511999999999", "sticker": "https://example.com/s.webp"},
        SENT_200_ZAPI,
        lambda r: r.message_id == "3EB0MSG",
    ),
    Case(
        "forward_message",
        lambda c: c.forward_message(
            ForwardMessage(phone="5511999999999", messageId="3EB0ORIG", messagePhone="5511977776666")
        ),
        "POST", f"{P}/forward-message",
        {"phone": "5511999999999", "messageId": "3EB0ORIG", "messagePhone": "5511977776666"},
        (200, {"zaapId": "ZAAP9"}),  # Z-API's forward answers only zaapId
        lambda r: r.message_id == "ZAAP9",
    ),
    Case(
        "set_privacy_group_add",
        lambda c: c.set_privacy_group_add(
            PrivacyGroupAdd(type="CONTACT_BLACKLIST",
                            contactsBlacklist=[BlacklistEntry(action="add", phone="5511988887777")])
        ),
        "POST", f"{P}/privacy/group-add",
        {"type": "CONTACT_BLACKLIST", "contactsBlacklist": [{"action": "add", "phone": "5511988887777"}]},
        SUCCESS,
        lambda r: r.ok is True,
    ),
    Case(
        "set_privacy_last_seen",
        lambda c: c.set_privacy_last_seen(PrivacyLastSeen(visualizationType="NONE")),
        "POST", f"{P}/privacy/last-seen",
        {"visualizationType": "NONE"},
        (200, {"success": False}),
        lambda r: r.ok is False,
    ),
    Case(
        "add_participant",
        lambda c: c.add_participant(
            AddParticipant(groupId="120363019502650977-group", phones=["5511988887777", "5511966665555"],
                           autoInvite=True)
        ),
        "POST", f"{P}/add-participant",
        {"groupId": "120363019502650977-group", "phones": ["5511988887777", "5511966665555"], "autoInvite": True},
        (200, {"success": True, "added": ["5511988887777"], "failed": ["5511966665555"]}),
        lambda r: r.ok and r.added == ["5511988887777"] and r.failed == ["5511966665555"],
    ),
    Case(
        "update_group_name",
        lambda c: c.update_group_name(UpdateGroupName(groupId="120363019502650977-group", groupName="Team")),
        "POST", f"{P}/update-group-name",
        {"groupId": "120363019502650977-group", "groupName": "Team"},
        VALUE_TRUE,
        lambda r: r.ok is True,
    ),
    Case(
        "group_metadata",
        lambda c: c.group_metadata("120363019502650977-group"),
        "GET", f"{P}/group-metadata/120363019502650977-group",
        None,
        (200, {"groupId": "120363019502650977-group", "groupName": "Team", "description": "d",
               "participants": [{"phone": "5511988887777", "isAdmin": True}],
               "createdAt": "2024-03-01T10:00:00-03:00"}),
        lambda r: r.groupName == "Team" and r.participants[0].isAdmin
        and r.createdAt == datetime(2024, 3, 1, 13, 0, tzinfo=UTC),
    ),
    Case(
        "add_admin",
        lambda c: c.add_admin(AddAdmin(communityId="120363186053925765", phones=["5511988887777"])),
        "POST", f"{P}/add-admin",
        {"communityId": "120363186053925765", "phones": ["5511988887777"]},
        SUCCESS,
        lambda r: r.ok,
    ),
    Case(
        "redefine_invitation_link",
        lambda c: c.redefine_invitation_link(
            RedefineInvitationLink(communityId="120363186053925765", groupsPhones=["120363019502650977-group"])
        ),
        "POST", f"{P}/redefine-invitation-link/120363186053925765",
        {"communityId": "120363186053925765", "groupsPhones": ["120363019502650977-group"]},
        (200, {"invitationLink": "https://chat.whatsapp.com/NEW"}),  # Z-API's name for inviteLink
        lambda r: r.inviteLink == "https://chat.whatsapp.com/NEW",
    ),
    Case(
        "modify_chat",
        lambda c: c.modify_chat(ModifyChat(phone="5511999999999", action="archive")),
        "POST", f"{P}/modify-chat",
        {"phone": "5511999999999", "action": "archive"},
        VALUE_TRUE,
        lambda r: r.ok,
    ),
    Case(
        "set_profile_description",
        lambda c: c.set_profile_description(ProfileDescription(value="Available 9-18")),
        "PUT", f"{P}/profile-description",
        {"value": "Available 9-18"},
        SUCCESS,
        lambda r: r.ok,
    ),
    Case(
        "product",
        lambda c: c.product("sku/42 b"),
        "GET", f"{P}/products/sku%2F42%20b",  # path segments are URL-quoted
        None,
        (200, {"productId": "sku/42 b", "name": "Mouse", "price": 12990, "currency": "BRL",
               "images": ["https://example.com/m.png"], "isHidden": False}),
        lambda r: r.price == 12990 and r.currency == "BRL" and r.images == ["https://example.com/m.png"],
    ),
    Case(
        "set_delivery_webhook",
        lambda c: c.set_delivery_webhook(DeliveryWebhook(value="")),
        "PUT", f"{P}/update-webhook-delivery",
        {"value": ""},
        VALUE_TRUE,
        lambda r: r.ok,
    ),
    Case(
        "status",
        lambda c: c.status(),
        "GET", f"{P}/status",
        None,
        (200, {"connected": True, "error": "You are already connected", "smartphoneConnected": True}),
        lambda r: r.connected is True and r.error == "You are already connected",
    ),
    # issue 23: Z-API's pairing calls (Z-API/docs en/instance/*.mdx; the spec has none and refuses them)
    Case("qr_code", lambda c: zapi(c).qr_code(), "GET", f"{P}/qr-code", None,
         (200, {"value": "2@ref,noise,identity,adv"}), lambda r: r.payload() == "2@ref,noise,identity,adv"),
    Case("qr_code_image", lambda c: zapi(c).qr_code_image(), "GET", f"{P}/qr-code/image", None,
         (200, {"value": ""}), lambda r: r.value == "" and not r.is_image),
    Case("phone_code", lambda c: zapi(c).phone_code("5511999999999"), "GET", f"{P}/phone-code/5511999999999", None,
         (200, {"value": "A1B2C3D4E5"}), lambda r: r.code == "A1B2C3D4E5"),
    Case("restart", lambda c: zapi(c).restart(), "GET", f"{P}/restart", None, VALUE_TRUE, lambda r: r.ok),
    Case("disconnect", lambda c: zapi(c).disconnect(), "GET", f"{P}/disconnect", None, VALUE_TRUE, lambda r: r.ok),
    # issue 24: Z-API's callback URLs read (developer.z-api.io/en/instance/me) and set at once (update-every-webhooks)
    Case("instance_data", lambda c: zapi(c).instance_data(), "GET", f"{P}/me", None,
         (200, {"id": "3C01A2B3", "name": "Shop", "connected": True, "deliveryCallbackUrl": "https://h.example.com/d",
                "receivedCallbackUrl": "", "messageStatusCallbackUrl": "https://h.example.com/s"}),
         lambda r: r.callback_urls()["delivery"] == "https://h.example.com/d" and r.callback_urls()["received"] == ""),
    Case("point_every_callback", lambda c: zapi(c).point_every_callback("https://h.example.com/z"), "PUT",
         f"{P}/update-every-webhooks", {"value": "https://h.example.com/z"}, VALUE_TRUE, lambda r: r.ok),
    # -- media (issue 25): Z-API's shapes, which the spec's instance family takes (Z-API/docs send-message-*.mdx) ----
    Case("send_image", lambda c: c.send_image(SendImage(phone="5511999999999", image=PNG_URL, caption="Logo")),
         "POST", f"{P}/send-image", {"phone": "5511999999999", "image": PNG_URL, "caption": "Logo"}, SENT_202,
         lambda r: r.message_id == "3EB0MSG"),
    Case("send_video", lambda c: c.send_video(SendVideo(phone="5511999999999", video="https://example.com/v.mp4")),
         "POST", f"{P}/send-video", {"phone": "5511999999999", "video": "https://example.com/v.mp4"}, SENT_202,
         lambda r: r.message_id == "3EB0MSG"),
    Case("send_audio", lambda c: c.send_audio(SendAudio(phone="5511999999999", audio=OGG_URL, delayMessage=3000)),
         "POST", f"{P}/send-audio", {"phone": "5511999999999", "audio": OGG_URL, "delayMessage": 3}, SENT_202,
         lambda r: r.message_id == "3EB0MSG"),
    Case("send_document",
         lambda c: c.send_document(SendDocument(phone="5511999999999", extension="pdf", document=PDF_URL,
                                                fileName="invoice.pdf")),
         "POST", f"{P}/send-document/pdf", {"phone": "5511999999999", "document": PDF_URL, "fileName": "invoice.pdf"},
         SENT_202, lambda r: r.message_id == "3EB0MSG"),
]

VCARD = "BEGIN:VCARD\nVERSION:3.0\nN:Silva;Ana;;;\nFN:Ana Silva\nTEL;TYPE=CELL;WAID=5511988887777:+5511988887777\nEND:VCARD\n"

SESSION_CASES = [
    Case(
        "set_hmac_key",
        lambda c: c.set_hmac_key(HmacKey(hmac_key=HMAC_SECRET)),
        "POST", "/session/hmac/config",
        {"hmac_key": HMAC_SECRET},
        (200, {"Details": "HMAC configuration saved successfully"}),  # WuzAPI: bare, no envelope
        lambda r: r.Details == "HMAC configuration saved successfully",
    ),
    Case(
        "hmac_status",
        lambda c: c.hmac_status(),
        "GET", "/session/hmac/config",
        None,
        (200, {"hmac_key": "***"}),
        lambda r: r.configured is True,
    ),
    Case(
        "delete_hmac_key",
        lambda c: c.delete_hmac_key(),
        "DELETE", "/session/hmac/config",
        None,
        (200, {"code": 200, "data": {"Details": "HMAC configuration deleted successfully"}, "success": True}),
        lambda r: r.Details == "HMAC configuration deleted successfully",
    ),
    Case(
        "set_proxy",
        lambda c: c.set_proxy(ProxyConfig(enable=True, proxy_url="socks5://user:pw@proxy.example.com:1080")),
        "POST", "/session/proxy",
        {"enable": True, "proxy_url": "socks5://user:pw@proxy.example.com:1080"},
        (200, {"code": 200, "data": {"Details": "Proxy configured successfully",
                                     "ProxyURL": "socks5://user:pw@proxy.example.com:1080"}, "success": True}),
        lambda r: r.Details == "Proxy configured successfully" and r.ProxyURL == "socks5://user:***@proxy.example.com:1080",
    ),
    Case(
        "set_proxy_disable",
        lambda c: c.set_proxy(ProxyConfig(enable=False)),
        "POST", "/session/proxy",
        {"enable": False, "proxy_url": ""},
        (200, {"code": 200, "data": {"Details": "Proxy disabled successfully"}, "success": True}),
        lambda r: r.Details == "Proxy disabled successfully",
    ),
    Case(
        "group_info",
        lambda c: c.group_info(GroupInfoRequest(GroupJID="120363019502650977@g.us")),
        "GET", "/group/info",
        {"GroupJID": "120363019502650977@g.us"},
        (200, {"code": 200, "success": True, "data": {
            "JID": "120363019502650977@g.us", "Name": "Team", "OwnerJID": "5511999999999@s.whatsapp.net",
            "GroupCreated": "2024-03-01T10:00:00-03:00", "TopicSetAt": "0001-01-01T00:00:00Z",
            "IsAnnounce": True, "DisappearingTimer": 86400,
            "Participants": [{"JID": "5511999999999@s.whatsapp.net", "IsAdmin": True, "IsSuperAdmin": True}]}}),
        lambda r: r.Name == "Team" and r.IsAnnounce and r.TopicSetAt is None
        and r.Participants[0].role == "super admin" and r.DisappearingTimer == 86400,
        query={"groupJID": "120363019502650977@g.us"},  # what the real WuzAPI reads
    ),
    Case(
        "create_group",
        lambda c: c.create_group(GroupCreate(name="Team", participants=["5511988887777"])),
        "POST", "/group/create",
        {"name": "Team", "participants": ["5511988887777"]},
        (200, {"JID": "120363000000000001@g.us", "Name": "Team", "Participants": None}),  # bare, no envelope
        lambda r: r.JID == "120363000000000001@g.us" and r.Participants == [],
    ),
    Case(
        "send_contact",
        lambda c: c.send_contact(ContactCard(Phone="5511999999999", Name="Ana Silva", Vcard=VCARD, Id="MYID1")),
        "POST", "/chat/send/contact",
        {"Phone": "5511999999999", "Name": "Ana Silva", "Vcard": VCARD, "Id": "MYID1"},
        (200, {"code": 200, "data": {"Details": "Sent", "Id": "MYID1", "Timestamp": 1747681234}, "success": True}),
        lambda r: r.Id == "MYID1" and r.Timestamp == datetime.fromtimestamp(1747681234, tz=UTC),
    ),
    Case(
        "update_webhook",
        lambda c: c.update_webhook(
            WebhookUpdate(webhook="https://hooks.example.com/wa", events=["Message", "ReadReceipt"], active=True)
        ),
        "PUT", "/webhook",
        {"webhook": "https://hooks.example.com/wa", "events": ["Message", "ReadReceipt"], "active": True},
        (200, {"code": 200, "data": {"webhook": "https://hooks.example.com/wa", "events": ["Message", "ReadReceipt"],
                                     "active": True}, "success": True}),
        lambda r: r.webhook == "https://hooks.example.com/wa" and r.events == ["Message", "ReadReceipt"] and r.active,
    ),
    Case(
        "user_contacts",
        lambda c: wuzapi(c).user_contacts(),
        "GET", "/user/contacts", None,
        (200, {"code": 200, "data": {"5491122223333@s.whatsapp.net": {
            "BusinessName": "", "FirstName": "", "Found": True, "FullName": "", "PushName": "FOP2"}}, "success": True}),
        lambda r: r.items[0].phone == "5491122223333@s.whatsapp.net" and r.items[0].push_name == "FOP2",
    ),
    Case(
        "group_list",
        lambda c: wuzapi(c).group_list(),
        "GET", "/group/list", None,
        (200, {"code": 200, "data": {"Groups": None}, "success": True}),
        lambda r: r.items == [],
    ),
    Case(
        "update_webhook_partial",
        lambda c: c.update_webhook(WebhookUpdate(active=False)),
        "PUT", "/webhook",
        {"active": False},  # partial update: omitted fields are not sent
        (200, {"code": 200, "data": {"webhook": "", "events": None, "active": False}, "success": True}),
        lambda r: r.active is False and r.events is None,
    ),
    # issue 23: WuzAPI's pairing calls (handlers.go, spec.yml; the spec has none and refuses them)
    Case("session_status", lambda c: wuzapi(c).session_status(), "GET", "/session/status", None,
         (200, {"code": 200, "data": {"Connected": True, "LoggedIn": False}, "success": True}),
         lambda r: (r.state.connected, r.state.logged_in) == (False, False)),
    Case("connect", lambda c: wuzapi(c).connect(subscribe=("Message", "ChatPresence")), "POST", "/session/connect",
         {"Subscribe": ["Message", "ChatPresence"], "Immediate": True},
         (200, {"code": 200, "data": {"details": "Connected!", "events": "Message,ChatPresence", "jid": "",
                                      "webhook": ""}, "success": True}),
         lambda r: r.subscribed == ["Message", "ChatPresence"]),
    Case("session_qr", lambda c: wuzapi(c).session_qr(), "GET", "/session/qr", None,
         (200, {"code": 200, "data": {"QRCode": ""}, "success": True}), lambda r: r.QRCode == ""),
    Case("pair_phone", lambda c: wuzapi(c).pair_phone("5491155553934"), "POST", "/session/pairphone",
         {"Phone": "5491155553934"}, (200, {"code": 200, "data": {"LinkingCode": "9H3J-H3J8"}, "success": True}),
         lambda r: r.code == "9H3J-H3J8"),
    Case("disconnect", lambda c: wuzapi(c).disconnect(), "POST", "/session/disconnect", None,
         (200, {"code": 200, "data": {"Details": "Disconnected"}, "success": True}), lambda r: r.Details == "Disconnected"),
    Case("logout", lambda c: wuzapi(c).logout(), "POST", "/session/logout", None,
         (200, {"code": 200, "data": {"Details": "Logged out"}, "success": True}), lambda r: r.Details == "Logged out"),
    # issue 24: GET /webhook (docs/gateways/wuzapi.md §2.5): no events reads [""]
    Case("read_webhook", lambda c: wuzapi(c).read_webhook(), "GET", "/webhook", None,
         (200, {"code": 200, "data": {"webhook": "https://h.example.com/s", "subscribe": [""]}, "success": True}),
         lambda r: r.webhook == "https://h.example.com/s" and r.events == [""]),
    # -- media (issue 25), in WuzAPI's dialect: the spec's session family has none (spec.yml Message* schemas) -----
    Case("send_image", lambda c: wuzapi(c).send_image(ChatSendImage(Phone="5491155553935", Image=PNG_URL,
                                                                  Caption="Image Description")),
         "POST", "/chat/send/image", {"Phone": "5491155553935", "Image": PNG_URL, "Caption": "Image Description"},
         WUZAPI_SENT, lambda r: r.Id == "90B2F8B13FAC8A9CF6B06E99C7834DC5"),
    Case("send_video", lambda c: wuzapi(c).send_video(ChatSendVideo(Phone="5491155553935", Video=MP4_URL)),
         "POST", "/chat/send/video", {"Phone": "5491155553935", "Video": MP4_URL},
         WUZAPI_SENT, lambda r: r.Id == "90B2F8B13FAC8A9CF6B06E99C7834DC5"),
    Case("send_audio", lambda c: wuzapi(c).send_audio(ChatSendAudio(Phone="5491155553935", Audio=OGG_URL)),
         "POST", "/chat/send/audio", {"Phone": "5491155553935", "Audio": OGG_URL},
         WUZAPI_SENT, lambda r: r.Id == "90B2F8B13FAC8A9CF6B06E99C7834DC5"),
    Case("send_document",
         lambda c: wuzapi(c).send_document(ChatSendDocument(Phone="5491155553935", Document=PDF_URL, FileName="file.pdf")),
         "POST", "/chat/send/document",
         {"Phone": "5491155553935", "Document": "data:application/octet-stream;base64,JVBERi0xLjQK",
          "FileName": "file.pdf"},
         WUZAPI_SENT, lambda r: r.Id == "90B2F8B13FAC8A9CF6B06E99C7834DC5"),
]
