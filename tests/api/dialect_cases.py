"""One literal wire case per operation x dialect: the request as the app builds it (spec field names), and the
JSON the dialect must put on the wire, written by hand from the spec (§4) and the gateway notes
(docs/gateways/zapi.md §2-§3, docs/gateways/wuzapi.md §2), never produced by the models or the encoders.

`reply` is an answer shape that gateway's code or docs show it sending; `check` what the typed result must say.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import base64
import io

import segno

from tests.api.conftest import HMAC_SECRET
from tests.api.spec_cases import MP4_URL, OGG_URL, PDF_URL, PNG_URL, WUZAPI_SENT
from tui.api import connection as c
from tui.api import models as m
from tui.api.operations import Dialect, InstanceDialect, OperationId, SessionDialect

SPEC, ZAPI = InstanceDialect.SPEC, InstanceDialect.ZAPI
SSPEC, WUZAPI = SessionDialect.SPEC, SessionDialect.WUZAPI

SENT_SPEC = (202, {"messageId": "3EB0MSG", "id": "3EB0MSG"})
SENT_ZAPI = (200, {"zaapId": "ZAAP1", "messageId": "3EB0MSG", "id": "3EB0MSG"})
SUCCESS = (200, {"success": True})
VALUE_TRUE = (200, {"value": True})
VCARD = "BEGIN:VCARD\nVERSION:3.0\nN:Silva;Ana;;;\nFN:Ana Silva\nTEL;TYPE=CELL:+5511988887777\nEND:VCARD\n"
GROUP_INFO = {"JID": "120363019502650977@g.us", "Name": "Team", "OwnerJID": "5511999999999@s.whatsapp.net",
              "GroupCreated": "2024-03-01T10:00:00-03:00",
              "Participants": [{"JID": "5511999999999@s.whatsapp.net", "IsAdmin": True, "IsSuperAdmin": True}]}

# A pairing payload as whatsmeow's makeQRData writes it (ref, noise key, identity key, adv secret: the ref from
# WhatsApp's servers, three base64 keys of 32 bytes), and the PNG WuzAPI's GetQR serves of it (skip2/go-qrcode,
# medium error correction); made here with segno, independently of the app's code.
QR_PAYLOAD = ("2@qK1lLlUc3iGcbbvPz0B1Zg0pj7xS8mWwQ4hRk2cN9dYyV3fTtJ6aHs5uE8oB7rDn1MzXpC4vWq0Lk2JgH6yU3sFr9eTa5iO8bN7mQ==,"
              "VNnLgLiJbaWLBoOyqtdpMnEUBYByttC0Z0kupzEVdgs=,NPbVagcpSTt6+Big5Dmhns/th/jqN/o3nQJ2nKlgAAc=,"
              "UtlK5qF5pFhDd+EXM36MbTLg6pUyeAJm/+XZQ/KOIXI=")


def _png_data_url(payload: str) -> str:
    buffer = io.BytesIO()
    segno.make(payload, error="m", micro=False).save(buffer, kind="png", scale=4, border=4)
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


QR_PNG = _png_data_url(QR_PAYLOAD)


# Z-API's GET /device answer as its docs show it (developer.z-api.io/en/instance/device, the 200 example).
ZAPI_DEVICE_DOC = {
    "phone": "5511999999999",
    "imgUrl": "https://...",
    "about": "Profile status message",
    "name": "User name",
    "device": {
        "sessionName": "Z-API",
        "device_model": "Z-API",
    },
    "originalDevice": "iphone",
    "sessionId": 175,
    "isBusiness": False,
}


@dataclass(frozen=True)
class WireCase:
    op: OperationId
    dialect: Dialect
    request: Callable[[], m.Request]
    method: str
    path: str  # after the family prefix, as sent (percent-encoded)
    body: Any  # literal JSON; None when no body is sent
    reply: tuple[int, Any]
    check: Callable[[Any], bool]
    query: dict[str, str] | None = None
    name: str = ""
    refused: str | None = None  # the field a DialectRefusal names: nothing goes on the wire


    @property
    def id(self) -> str:
        return f"{self.op.value}[{self.dialect.value}]{('-' + self.name) if self.name else ''}"


def _refused(op: OperationId, dialect: Dialect, request: Callable[[], m.Request], method: str, path: str,
             field: str) -> WireCase:
    """A dialect that cannot say the operation at all: refused before sending (method and path for reference)."""
    return WireCase(op, dialect, request, method, path, None, (200, None), lambda _r: False, refused=field)


def _sent(result: Any) -> bool:
    return result.message_id == "3EB0MSG"


def _buttons() -> m.SendButtonActions:
    return m.SendButtonActions(phone="5511999999999", message="Pick one", title="Menu", footer="Thanks",
                               buttons=[m.Button(id="1", text="Yes"), m.Button(id="2", text="No")])


def _link() -> m.SendLink:
    return m.SendLink(phone="120363019502650977@g.us", message="See https://example.com/a",
                      linkUrl="https://example.com/a", image="https://example.com/a.png", title="A",
                      linkDescription="About A")


def _poll() -> m.SendPoll:
    return m.SendPoll(phone="120363019502650977-group", message="Lunch?",
                      poll=[m.PollOption(name="Pizza"), m.PollOption(name="Sushi")])


def _location() -> m.SendLocation:
    return m.SendLocation(phone="5511999999999", title="Office", address="Av. Paulista, 1000",
                          lat=-23.5614, lng=-46.6559, delayMessage=3000)


def _sticker() -> m.SendSticker:
    return m.SendSticker(phone="120363019502650977@g.us", sticker="https://example.com/s.webp", delayMessage=15000)


def _forward() -> m.ForwardMessage:
    return m.ForwardMessage(phone="5511999999999", messageId="3EB0ORIG", messagePhone="120363019502650977@g.us")


def _wuzapi_sent(result: Any) -> bool:
    return result.Id == "90B2F8B13FAC8A9CF6B06E99C7834DC5" and result.Timestamp is not None


CASES: list[WireCase] = [
    # -- send-text ----------------------------------------------------------------------------------------------
    WireCase(OperationId.SEND_TEXT, SPEC, lambda: m.SendText(phone="120363019502650977-group", message="Olá"),
             "POST", "/send-text", {"phone": "120363019502650977@g.us", "message": "Olá"}, SENT_SPEC, _sent),
    WireCase(OperationId.SEND_TEXT, ZAPI, lambda: m.SendText(phone="120363019502650977@g.us", message="Olá"),
             "POST", "/send-text", {"phone": "120363019502650977-group", "message": "Olá"}, SENT_ZAPI, _sent),
    # -- send-button-actions ------------------------------------------------------------------------------------
    WireCase(OperationId.SEND_BUTTON_ACTIONS, SPEC, _buttons, "POST", "/send-button-actions",
             {"phone": "5511999999999", "message": "Pick one", "title": "Menu", "footer": "Thanks",
              "buttons": [{"id": "1", "text": "Yes"}, {"id": "2", "text": "No"}]}, SENT_SPEC, _sent),
    WireCase(OperationId.SEND_BUTTON_ACTIONS, ZAPI, _buttons, "POST", "/send-button-actions",
             {"phone": "5511999999999", "message": "Pick one", "title": "Menu", "footer": "Thanks",
              "buttonActions": [{"id": "1", "type": "REPLY", "label": "Yes"},
                                {"id": "2", "type": "REPLY", "label": "No"}]}, SENT_ZAPI, _sent),
    # -- send-button-list ---------------------------------------------------------------------------------------
    WireCase(OperationId.SEND_BUTTON_LIST, SPEC,
             lambda: m.SendButtonList(phone="5511999999999", message="Choose",
                                      buttonList=m.ButtonList(buttons=[m.ListButton(id="a", label="A")])),
             "POST", "/send-button-list",
             {"phone": "5511999999999", "message": "Choose", "buttonList": {"buttons": [{"id": "a", "label": "A"}]}},
             SENT_SPEC, _sent),
    WireCase(OperationId.SEND_BUTTON_LIST, ZAPI,
             lambda: m.SendButtonList(phone="120363019502650977@g.us", message="Choose",
                                      buttonList=m.ButtonList(buttons=[m.ListButton(id="a", label="A")])),
             "POST", "/send-button-list",
             {"phone": "120363019502650977-group", "message": "Choose",
              "buttonList": {"buttons": [{"id": "a", "label": "A"}]}}, SENT_ZAPI, _sent),
    # -- send-link ----------------------------------------------------------------------------------------------
    WireCase(OperationId.SEND_LINK, SPEC,
             lambda: m.SendLink(phone="5511999999999", message="See https://example.com/a",
                                linkUrl="https://example.com/a"),
             "POST", "/send-link",
             {"phone": "5511999999999", "message": "See https://example.com/a", "linkUrl": "https://example.com/a"},
             SENT_SPEC, _sent),
    WireCase(OperationId.SEND_LINK, ZAPI, _link, "POST", "/send-link",
             {"phone": "120363019502650977-group", "message": "See https://example.com/a",
              "linkUrl": "https://example.com/a", "image": "https://example.com/a.png", "title": "A",
              "linkDescription": "About A"}, SENT_ZAPI, _sent),
    # -- send-poll ----------------------------------------------------------------------------------------------
    WireCase(OperationId.SEND_POLL, SPEC, _poll, "POST", "/send-poll",
             {"phone": "120363019502650977@g.us", "message": "Lunch?",
              "poll": [{"name": "Pizza"}, {"name": "Sushi"}], "selectableCount": 1}, SENT_SPEC, _sent),
    WireCase(OperationId.SEND_POLL, ZAPI, _poll, "POST", "/send-poll",
             {"phone": "120363019502650977-group", "message": "Lunch?",
              "poll": [{"name": "Pizza"}, {"name": "Sushi"}], "pollMaxOptions": 1}, SENT_ZAPI, _sent),
    WireCase(OperationId.SEND_POLL, ZAPI,
             lambda: m.SendPoll(phone="5511999999999", message="Toppings?", selectableCount=3,
                                poll=[m.PollOption(name="a"), m.PollOption(name="b"), m.PollOption(name="c")]),
             "POST", "/send-poll",
             {"phone": "5511999999999", "message": "Toppings?", "poll": [{"name": "a"}, {"name": "b"}, {"name": "c"}],
              "pollMaxOptions": 3},
             SENT_ZAPI, _sent, name="multiple-choice"),
    # Z-API's send-poll page (Z-API/docs en/message/send-poll.mdx): pollMaxOptions is "Maximum number of votes per
    # person in the poll", so a count between 1 and the number of options goes out as itself.
    WireCase(OperationId.SEND_POLL, ZAPI,
             lambda: m.SendPoll(phone="5511999999999", message="Pick two", selectableCount=2,
                                poll=[m.PollOption(name="a"), m.PollOption(name="b"), m.PollOption(name="c")]),
             "POST", "/send-poll",
             {"phone": "5511999999999", "message": "Pick two", "poll": [{"name": "a"}, {"name": "b"}, {"name": "c"}],
              "pollMaxOptions": 2},
             SENT_ZAPI, _sent, name="up-to-two"),
    # -- send-location ------------------------------------------------------------------------------------------
    WireCase(OperationId.SEND_LOCATION, SPEC, _location, "POST", "/send-location",
             {"phone": "5511999999999", "title": "Office", "address": "Av. Paulista, 1000", "lat": -23.5614,
              "lng": -46.6559, "delayMessage": 3000}, SENT_SPEC, _sent),
    WireCase(OperationId.SEND_LOCATION, ZAPI, _location, "POST", "/send-location",
             {"phone": "5511999999999", "title": "Office", "address": "Av. Paulista, 1000", "latitude": "-23.5614",
              "longitude": "-46.6559", "delayMessage": 3}, SENT_ZAPI, _sent),
    # -- send-sticker -------------------------------------------------------------------------------------------
    WireCase(OperationId.SEND_STICKER, SPEC, _sticker, "POST", "/send-sticker",
             {"phone": "120363019502650977@g.us", "sticker": "https://example.com/s.webp", "delayMessage": 15000},
             SENT_SPEC, _sent),
    WireCase(OperationId.SEND_STICKER, ZAPI, _sticker, "POST", "/send-sticker",
             {"phone": "120363019502650977-group", "sticker": "https://example.com/s.webp", "delayMessage": 15},
             SENT_ZAPI, _sent),
    # -- forward-message ----------------------------------------------------------------------------------------
    WireCase(OperationId.FORWARD_MESSAGE, SPEC, _forward, "POST", "/forward-message",
             {"phone": "5511999999999", "messageId": "3EB0ORIG", "messagePhone": "120363019502650977@g.us"},
             SENT_SPEC, _sent),
    WireCase(OperationId.FORWARD_MESSAGE, ZAPI, _forward, "POST", "/forward-message",
             {"phone": "5511999999999", "messageId": "3EB0ORIG", "messagePhone": "120363019502650977-group"},
             (200, {"zaapId": "ZAAP9"}), lambda r: r.message_id == "ZAAP9"),
    # -- privacy ------------------------------------------------------------------------------------------------
    WireCase(OperationId.PRIVACY_GROUP_ADD, SPEC, lambda: m.PrivacyGroupAdd(type="CONTACT"), "POST",
             "/privacy/group-add", {"type": "CONTACT"}, SUCCESS, lambda r: r.ok),
    WireCase(OperationId.PRIVACY_GROUP_ADD, ZAPI,
             lambda: m.PrivacyGroupAdd(type="CONTACT_BLACKLIST",
                                       contactsBlacklist=[m.BlacklistEntry(action="add", phone="5511988887777")]),
             "POST", "/privacy/group-add",
             {"type": "CONTACT_BLACKLIST", "contactsBlacklist": [{"action": "add", "phone": "5511988887777"}]},
             SUCCESS, lambda r: r.ok),
    WireCase(OperationId.PRIVACY_GROUP_ADD, ZAPI, lambda: m.PrivacyGroupAdd(type="CONTACT"), "POST",
             "/privacy/group-add", {"type": "CONTACTS"}, SUCCESS, lambda r: r.ok, name="contacts"),
    WireCase(OperationId.PRIVACY_LAST_SEEN, SPEC, lambda: m.PrivacyLastSeen(visualizationType="NONE"), "POST",
             "/privacy/last-seen", {"visualizationType": "NONE"}, SUCCESS, lambda r: r.ok),
    WireCase(OperationId.PRIVACY_LAST_SEEN, ZAPI, lambda: m.PrivacyLastSeen(visualizationType="CONTACT"), "POST",
             "/privacy/last-seen", {"visualizationType": "CONTACTS"}, SUCCESS, lambda r: r.ok),
    # -- groups -------------------------------------------------------------------------------------------------
    WireCase(OperationId.ADD_PARTICIPANT, SPEC,
             lambda: m.AddParticipant(groupId="120363019502650977-group", phones=["5511988887777", "5511966660000"]),
             "POST", "/add-participant",
             {"groupId": "120363019502650977-group", "phones": ["5511988887777", "5511966660000"], "autoInvite": False},
             (200, {"success": True, "added": ["5511988887777"], "failed": ["5511966660000"]}),
             lambda r: r.ok and r.lists_reported and r.failed == ["5511966660000"]),
    WireCase(OperationId.ADD_PARTICIPANT, ZAPI,
             lambda: m.AddParticipant(groupId="120363019502650977-group", phones=["5511988887777"], autoInvite=True),
             "POST", "/add-participant",
             {"groupId": "120363019502650977-group", "phones": ["5511988887777"], "autoInvite": True},
             VALUE_TRUE, lambda r: r.ok and not r.lists_reported),
    WireCase(OperationId.ADD_PARTICIPANT, ZAPI,
             lambda: m.AddParticipant(groupId="120363019502650977-group", phones=["5511988887777"]),
             "POST", "/add-participant",
             {"groupId": "120363019502650977-group", "phones": ["5511988887777"], "autoInvite": False},
             (200, {"value": False}), lambda r: not r.ok and r.refusal == "value: false", name="value-false"),
    WireCase(OperationId.UPDATE_GROUP_NAME, SPEC,
             lambda: m.UpdateGroupName(groupId="120363019502650977-group", groupName="Team"), "POST",
             "/update-group-name", {"groupId": "120363019502650977-group", "groupName": "Team"}, SUCCESS,
             lambda r: r.ok),
    WireCase(OperationId.UPDATE_GROUP_NAME, ZAPI,
             lambda: m.UpdateGroupName(groupId="120363019502650977-group", groupName="Team"), "POST",
             "/update-group-name", {"groupId": "120363019502650977-group", "groupName": "Team"}, VALUE_TRUE,
             lambda r: r.ok),
    WireCase(OperationId.GROUP_METADATA, SPEC,
             lambda: m.GroupMetadataQuery(GROUP_PHONE_NUMBER="120363019502650977-group"), "GET",
             "/group-metadata/120363019502650977-group", None,
             (200, {"groupId": "120363019502650977-group", "groupName": "Team", "participants": [],
                    "createdAt": "2024-03-01T10:00:00-03:00"}), lambda r: r.groupName == "Team"),
    WireCase(OperationId.GROUP_METADATA, ZAPI,
             lambda: m.GroupMetadataQuery(GROUP_PHONE_NUMBER="120363019502650977-group"), "GET",
             "/group-metadata/120363019502650977-group", None,
             (200, {"phone": "120363019502650977-group", "subject": "Team", "owner": "5511999999999",
                    "creation": 1588721491000, "participants": [{"phone": "5511999999999", "isAdmin": True,
                                                                 "isSuperAdmin": True}]}),
             lambda r: r.groupName == "Team" and r.participants[0].isSuperAdmin),
    # -- communities --------------------------------------------------------------------------------------------
    WireCase(OperationId.ADD_ADMIN, SPEC, lambda: m.AddAdmin(communityId="120363186053925765", phones=["5511988887777"]),
             "POST", "/add-admin", {"communityId": "120363186053925765", "phones": ["5511988887777"]}, SUCCESS,
             lambda r: r.ok),
    WireCase(OperationId.ADD_ADMIN, ZAPI, lambda: m.AddAdmin(communityId="120363186053925765", phones=["5511988887777"]),
             "POST", "/add-admin", {"communityId": "120363186053925765", "phones": ["5511988887777"]}, VALUE_TRUE,
             lambda r: r.ok),
    WireCase(OperationId.REDEFINE_INVITATION_LINK, SPEC,
             lambda: m.RedefineInvitationLink(communityId="120363186053925765"), "POST",
             "/redefine-invitation-link/120363186053925765", {"communityId": "120363186053925765"},
             (200, {"inviteLink": "https://chat.whatsapp.com/NEW"}),
             lambda r: r.inviteLink == "https://chat.whatsapp.com/NEW"),
    WireCase(OperationId.REDEFINE_INVITATION_LINK, ZAPI,
             lambda: m.RedefineInvitationLink(communityId="120363186053925765"), "POST",
             "/redefine-invitation-link/120363186053925765", None,
             (200, {"invitationLink": "https://chat.whatsapp.com/NEW"}),
             lambda r: r.inviteLink == "https://chat.whatsapp.com/NEW"),
    # -- chats, profile, catalog, delivery webhook, status ------------------------------------------------------
    WireCase(OperationId.MODIFY_CHAT, SPEC, lambda: m.ModifyChat(phone="120363019502650977-group", action="pin"),
             "POST", "/modify-chat", {"phone": "120363019502650977@g.us", "action": "pin"}, SUCCESS, lambda r: r.ok),
    WireCase(OperationId.MODIFY_CHAT, ZAPI, lambda: m.ModifyChat(phone="120363019502650977@g.us", action="pin"),
             "POST", "/modify-chat", {"phone": "120363019502650977-group", "action": "pin"}, VALUE_TRUE,
             lambda r: r.ok),
    WireCase(OperationId.PROFILE_DESCRIPTION, SPEC, lambda: m.ProfileDescription(value="Available 9-18"), "PUT",
             "/profile-description", {"value": "Available 9-18"}, SUCCESS, lambda r: r.ok),
    WireCase(OperationId.PROFILE_DESCRIPTION, ZAPI, lambda: m.ProfileDescription(value="Available 9-18"), "PUT",
             "/profile-description", {"value": "Available 9-18"}, (200, {"value": False}),
             lambda r: not r.ok and r.refusal == "value: false"),
    WireCase(OperationId.PRODUCTS, SPEC, lambda: m.ProductQuery(PRODUCT_ID="sku/42"), "GET", "/products/sku%2F42",
             None, (200, {"productId": "sku/42", "name": "Mouse", "price": 12990, "currency": "BRL"}),
             lambda r: r.price == 12990),
    WireCase(OperationId.PRODUCTS, ZAPI, lambda: m.ProductQuery(PRODUCT_ID="8102305"), "GET", "/products/8102305",
             None, (200, {"id": "8102305", "name": "Mouse", "price": "100000", "currency": "BRL",
                          "images": ["https://example.com/m.png"], "availability": "in stock"}),
             lambda r: r.price == 100000 and r.productId == "8102305"),
    WireCase(OperationId.UPDATE_WEBHOOK_DELIVERY, SPEC, lambda: m.DeliveryWebhook(value="https://hooks.example.com/d"),
             "PUT", "/update-webhook-delivery", {"value": "https://hooks.example.com/d"}, SUCCESS, lambda r: r.ok),
    WireCase(OperationId.UPDATE_WEBHOOK_DELIVERY, ZAPI, lambda: m.DeliveryWebhook(value="https://hooks.example.com/d"),
             "PUT", "/update-webhook-delivery", {"value": "https://hooks.example.com/d"}, VALUE_TRUE, lambda r: r.ok),
    WireCase(OperationId.STATUS, SPEC, m.NoBody, "GET", "/status", None,
             (200, {"connected": True}), lambda r: r.connected is True),
    WireCase(OperationId.STATUS, ZAPI, m.NoBody, "GET", "/status", None,
             (200, {"connected": False, "error": "You are not connected", "smartphoneConnected": False}),
             lambda r: r.connected is False and r.error == "You are not connected"),
    # -- session family -----------------------------------------------------------------------------------------
    *[
        case
        for dialect in (SSPEC, WUZAPI)
        for case in (
            WireCase(OperationId.HMAC_SET, dialect, lambda: m.HmacKey(hmac_key=HMAC_SECRET), "POST",
                     "/session/hmac/config", {"hmac_key": HMAC_SECRET},
                     (200, {"code": 200, "data": {"Details": "HMAC configuration saved"}, "success": True})
                     if dialect is SSPEC else (200, {"Details": "HMAC configuration saved successfully"}),
                     lambda r: r.Details.startswith("HMAC configuration saved")),
            WireCase(OperationId.HMAC_STATUS, dialect, m.NoBody, "GET", "/session/hmac/config", None,
                     (200, {"hmac_key": "***"}) if dialect is SSPEC else (200, {"hmac_key": ""}),
                     (lambda r: r.configured) if dialect is SSPEC else (lambda r: not r.configured)),
            WireCase(OperationId.HMAC_DELETE, dialect, m.NoBody, "DELETE", "/session/hmac/config", None,
                     (200, {"code": 200, "data": {"Details": "HMAC configuration deleted"}, "success": True})
                     if dialect is SSPEC else (200, {"Details": "HMAC configuration deleted successfully"}),
                     lambda r: r.Details.startswith("HMAC configuration deleted")),
            WireCase(OperationId.PROXY, dialect, lambda: m.ProxyConfig(enable=True, proxy_url="http://proxy.example.com:3128"),
                     "POST", "/session/proxy", {"enable": True, "proxy_url": "http://proxy.example.com:3128"},
                     (200, {"code": 200, "data": {"Details": "Proxy configured successfully",
                                                  "ProxyURL": "http://proxy.example.com:3128"}, "success": True}),
                     lambda r: r.Details == "Proxy configured successfully"),
            WireCase(OperationId.GROUP_INFO, dialect, lambda: m.GroupInfoRequest(GroupJID="120363019502650977@g.us"),
                     "GET", "/group/info", {"GroupJID": "120363019502650977@g.us"},
                     (200, {"code": 200, "data": GROUP_INFO, "success": True}),
                     lambda r: r.Name == "Team" and r.Participants[0].role == "super admin",
                     query={"groupJID": "120363019502650977@g.us"}),
            WireCase(OperationId.GROUP_CREATE, dialect,
                     lambda: m.GroupCreate(name="Team", participants=["5511988887777"]), "POST", "/group/create",
                     {"name": "Team", "participants": ["5511988887777"]},
                     (200, {"code": 200, "data": GROUP_INFO, "success": True}), lambda r: r.JID.endswith("@g.us")),
            WireCase(OperationId.SEND_CONTACT, dialect,
                     lambda: m.ContactCard(Phone="5511999999999", Name="Ana Silva", Vcard=VCARD), "POST",
                     "/chat/send/contact", {"Phone": "5511999999999", "Name": "Ana Silva", "Vcard": VCARD},
                     (200, {"code": 200, "data": {"Details": "Sent", "Id": "3EB0C0", "Timestamp": 1747650013},
                            "success": True}) if dialect is WUZAPI else
                     (200, {"code": 200, "data": {"Details": "Sent", "Id": "3EB0C0",
                                                  "Timestamp": "2025-05-19T10:40:13-03:00"}, "success": True}),
                     lambda r: r.Id == "3EB0C0" and r.Timestamp is not None),
        )
    ],
    WireCase(OperationId.WEBHOOK, SSPEC, lambda: m.WebhookUpdate(active=False), "PUT", "/webhook",
             {"active": False}, (200, {"code": 200, "data": {"webhook": "https://hooks.example.com/s"}, "success": True}),
             lambda r: r.webhook == "https://hooks.example.com/s"),
    WireCase(OperationId.WEBHOOK, WUZAPI,
             lambda: m.WebhookUpdate(webhook="https://hooks.example.com/s", events=["Message"], active=True),
             "PUT", "/webhook", {"webhook": "https://hooks.example.com/s", "events": ["Message"], "active": True},
             (200, {"code": 200, "data": {"webhook": "https://hooks.example.com/s", "events": ["Message"],
                                          "active": True}, "success": True}),
             lambda r: r.events == ["Message"] and r.active is True),
    # -- lists: Z-API and WuzAPI offer them, the spec does not ----------------------------------------------------
    # (docs/gateways/zapi.md §3.6, docs/gateways/wuzapi.md §2.8)
    _refused(OperationId.LIST_CHATS, SPEC, m.ListPage, "GET", "/chats", "chats"),
    WireCase(OperationId.LIST_CHATS, ZAPI, lambda: m.ListPage(page=2, pageSize=20), "GET", "/chats", None,
             (200, [{"archived": "false", "pinned": "true", "messagesUnread": 0, "phone": "5511987654321",
                     "unread": "3", "name": "Ana", "lastMessageTime": "1622991687", "muteEndTime": 1655953774000,
                     "isMuted": "0", "isMarkedSpam": "false", "isGroupAnnouncement": False, "isGroup": False,
                     "notes": {"id": "n1", "content": "VIP", "createdAt": 0, "lastUpdateAt": 0}},
                    {"phone": "120363019502650977-group", "name": "Team", "isGroup": True, "unread": "0",
                     "lastMessageTime": "1730918668000", "archived": "true", "pinned": "false", "isMuted": "1",
                     "messagesUnread": "0", "muteEndTime": None}]),
             lambda r: [(c.phone, c.name, c.unread_count, c.pinned, c.isGroup, c.archived, c.isMuted) for c in r.items]
             == [("5511987654321", "Ana", 3, True, False, False, False),
                 ("120363019502650977-group", "Team", 0, False, True, True, True)]
             and r.items[0].lastMessageTime.year == 2021 and r.items[1].lastMessageTime.year == 2024,
             query={"page": "2", "pageSize": "20"}),
    WireCase(OperationId.LIST_CHATS, ZAPI, m.ListPage, "GET", "/chats", None, (200, []), lambda r: r.items == [],
             query={"page": "1", "pageSize": "100"}, name="end-of-list"),
    # Z-API's GET /chat-messages/{phone} (developer.z-api.io/en/chats/get-message-chats, its 200 example)
    _refused(OperationId.FIND_MESSAGES, SPEC, lambda: m.ChatMessagesQuery(phone="5511999999999"), "GET",
             "/chat-messages/5511999999999", "chat-messages/{phone}"),
    WireCase(OperationId.FIND_MESSAGES, ZAPI,
             lambda: m.ChatMessagesQuery(phone="5511999999999", amount=10, lastMessageId="3EB0OLDER"), "GET",
             "/chat-messages/5511999999999", None,
             (200, [{"instanceId": "399793F5C962B0F227576EA28507E212", "messageId": "3EB02A5A36C0103F231A",
                     "phone": "5511999999999", "fromMe": False, "momment": 1623008318000, "status": "RECEIVED",
                     "chatName": "Z-API Suporte", "senderPhoto": None, "senderName": "5511999999999",
                     "participantPhone": None, "participantLid": None, "photo": None, "broadcast": False,
                     "text": {"message": "A simple plain text message"}}]),
             lambda r: r.items[0]["messageId"] == "3EB02A5A36C0103F231A",
             query={"amount": "10", "lastMessageId": "3EB0OLDER"}),
    _refused(OperationId.LIST_CONTACTS, SPEC, m.ListPage, "GET", "/contacts", "contacts"),
    WireCase(OperationId.LIST_CONTACTS, ZAPI, m.ListPage, "GET", "/contacts", None,
             (200, [{"name": "Ana Souza", "short": "Ana", "notify": "Aninha", "vname": "", "phone": "5511987654321"},
                    {"notify": "Bruno L.", "phone": "5511976543219"}]),
             lambda r: [(c.phone, c.saved_name, c.push_name) for c in r.items]
             == [("5511987654321", "Ana Souza", "Aninha"), ("5511976543219", "", "Bruno L.")],
             query={"page": "1", "pageSize": "100"}),
    _refused(OperationId.LIST_GROUPS, SPEC, m.ListPage, "GET", "/groups", "groups"),
    WireCase(OperationId.LIST_GROUPS, ZAPI, lambda: m.ListPage(pageSize=10), "GET", "/groups", None,
             (200, [{"isGroup": True, "name": "Team", "phone": "120363019502650977-group", "unread": "0",
                     "lastMessageTime": "1730918668000", "isMuted": "0", "isMarkedSpam": "false",
                     "archived": "false", "pinned": "false", "muteEndTime": None, "messagesUnread": "0"}]),
             lambda r: r.items[0].name == "Team" and r.items[0].isGroup, query={"page": "1", "pageSize": "10"}),
    # -- media (issue 25) -----------------------------------------------------------------------------------------
    # Z-API: Z-API/docs en/message/send-message-image.mdx, -video.mdx, -audio.mdx, -document.mdx (fields `image`,
    # `video`, `audio`, `document`, `caption`, `fileName`, `delayMessage` "range of 1 to 15 sec", the extension in
    # the path `send-document/{extension}`, "data:image/png;base64," before the base64). The spec names no media
    # call, so its instance family writes the same bodies; only a group stays `@g.us`, as in every spec send.
    WireCase(OperationId.SEND_IMAGE, SPEC, lambda: m.SendImage(phone="120363019502650977-group", image=PNG_URL,
                                                               caption="Logo", delayMessage=2000),
             "POST", "/send-image",
             {"phone": "120363019502650977@g.us", "image": PNG_URL, "caption": "Logo", "delayMessage": 2}, SENT_ZAPI,
             _sent),
    WireCase(OperationId.SEND_IMAGE, ZAPI, lambda: m.SendImage(phone="120363019502650977@g.us", image=PNG_URL,
                                                               caption="Logo", delayMessage=2000),
             "POST", "/send-image",
             {"phone": "120363019502650977-group", "image": PNG_URL, "caption": "Logo", "delayMessage": 2}, SENT_ZAPI,
             _sent),
    WireCase(OperationId.SEND_IMAGE, ZAPI,
             lambda: m.SendImage(phone="5511999999999", image="https://www.z-api.io/logo.svg"),
             "POST", "/send-image", {"phone": "5511999999999", "image": "https://www.z-api.io/logo.svg"}, SENT_ZAPI,
             _sent, name="by-link"),
    WireCase(OperationId.SEND_VIDEO, SPEC, lambda: m.SendVideo(phone="5511999999999", video=MP4_URL, caption="Demo"),
             "POST", "/send-video", {"phone": "5511999999999", "video": MP4_URL, "caption": "Demo"}, SENT_ZAPI, _sent),
    WireCase(OperationId.SEND_VIDEO, ZAPI,
             lambda: m.SendVideo(phone="5511999999999", video=MP4_URL, caption="Demo", delayMessage=15000),
             "POST", "/send-video", {"phone": "5511999999999", "video": MP4_URL, "caption": "Demo", "delayMessage": 15},
             SENT_ZAPI, _sent),
    WireCase(OperationId.SEND_AUDIO, SPEC, lambda: m.SendAudio(phone="5511999999999", audio=OGG_URL),
             "POST", "/send-audio", {"phone": "5511999999999", "audio": OGG_URL}, SENT_ZAPI, _sent),
    WireCase(OperationId.SEND_AUDIO, ZAPI, lambda: m.SendAudio(phone="5511999999999", audio=OGG_URL, delayMessage=1000),
             "POST", "/send-audio", {"phone": "5511999999999", "audio": OGG_URL, "delayMessage": 1}, SENT_ZAPI, _sent),
    WireCase(OperationId.SEND_DOCUMENT, SPEC,
             lambda: m.SendDocument(phone="5511999999999", extension="pdf", document=PDF_URL, fileName="invoice.pdf"),
             "POST", "/send-document/pdf", {"phone": "5511999999999", "document": PDF_URL, "fileName": "invoice.pdf"},
             SENT_ZAPI, _sent),
    WireCase(OperationId.SEND_DOCUMENT, ZAPI,
             lambda: m.SendDocument(phone="120363019502650977@g.us", extension="PDF", document=PDF_URL,
                                    fileName="My PDF", caption="As promised", delayMessage=5000),
             "POST", "/send-document/pdf",
             {"phone": "120363019502650977-group", "document": PDF_URL, "fileName": "My PDF", "caption": "As promised",
              "delayMessage": 5}, SENT_ZAPI, _sent),
    # WuzAPI: spec.yml MessageImage/MessageVideo/MessageAudio/MessageDocument and handlers.go SendImage ("data:image"),
    # SendVideo ("data"), SendAudio ("data:audio/ogg"), SendDocument ("data:application/octet-stream", FileName
    # required); each answers {"Details": "Sent", "Timestamp", "Id"} in the envelope. The spec dialect has no media.
    _refused(OperationId.CHAT_SEND_IMAGE, SSPEC, lambda: m.ChatSendImage(Phone="5511999999999", Image=PNG_URL),
             "POST", "/chat/send/image", "chat/send/image"),
    _refused(OperationId.CHAT_SEND_VIDEO, SSPEC, lambda: m.ChatSendVideo(Phone="5511999999999", Video=MP4_URL),
             "POST", "/chat/send/video", "chat/send/video"),
    _refused(OperationId.CHAT_SEND_AUDIO, SSPEC, lambda: m.ChatSendAudio(Phone="5511999999999", Audio=OGG_URL),
             "POST", "/chat/send/audio", "chat/send/audio"),
    _refused(OperationId.CHAT_SEND_DOCUMENT, SSPEC,
             lambda: m.ChatSendDocument(Phone="5511999999999", Document=PDF_URL, FileName="invoice.pdf"),
             "POST", "/chat/send/document", "chat/send/document"),
    WireCase(OperationId.CHAT_SEND_IMAGE, WUZAPI,
             lambda: m.ChatSendImage(Phone="5511999999999", Image=PNG_URL, Caption="Image Description"),
             "POST", "/chat/send/image", {"Phone": "5511999999999", "Image": PNG_URL, "Caption": "Image Description"},
             WUZAPI_SENT, _wuzapi_sent),
    WireCase(OperationId.CHAT_SEND_VIDEO, WUZAPI,
             lambda: m.ChatSendVideo(Phone="120363019502650977-group", Video=MP4_URL, Caption="my video"),
             "POST", "/chat/send/video",
             {"Phone": "120363019502650977@g.us", "Video": MP4_URL, "Caption": "my video"}, WUZAPI_SENT, _wuzapi_sent),
    WireCase(OperationId.CHAT_SEND_AUDIO, WUZAPI, lambda: m.ChatSendAudio(Phone="5511999999999", Audio=OGG_URL),
             "POST", "/chat/send/audio", {"Phone": "5511999999999", "Audio": OGG_URL}, WUZAPI_SENT, _wuzapi_sent),
    WireCase(OperationId.CHAT_SEND_DOCUMENT, WUZAPI,
             lambda: m.ChatSendDocument(Phone="5511999999999", Document=PDF_URL, FileName="invoice.pdf"),
             "POST", "/chat/send/document",
             {"Phone": "5511999999999", "Document": "data:application/octet-stream;base64,JVBERi0xLjQK",
              "FileName": "invoice.pdf"}, WUZAPI_SENT, _wuzapi_sent),
    # handlers.go SendDocument has decoded `Caption` and set it on the DocumentMessage since 2024-04 ("Add Caption
    # to SendDocument"), though spec.yml's MessageDocument never listed it: the handler is what runs
    WireCase(OperationId.CHAT_SEND_DOCUMENT, WUZAPI,
             lambda: m.ChatSendDocument(Phone="5511999999999", Document=PDF_URL, FileName="invoice.pdf",
                                        Caption="As promised"),
             "POST", "/chat/send/document",
             {"Phone": "5511999999999", "Document": "data:application/octet-stream;base64,JVBERi0xLjQK",
              "FileName": "invoice.pdf", "Caption": "As promised"}, WUZAPI_SENT, _wuzapi_sent, name="caption"),
    _refused(OperationId.USER_CONTACTS, SSPEC, m.NoBody, "GET", "/user/contacts", "user/contacts"),
    WireCase(OperationId.USER_CONTACTS, WUZAPI, m.NoBody, "GET", "/user/contacts", None,
             (200, {"code": 200, "data": {
                 "5491122223333@s.whatsapp.net": {"BusinessName": "", "FirstName": "", "Found": True, "FullName": "",
                                                  "PushName": "FOP2"},
                 "549113334444@s.whatsapp.net": {"BusinessName": "", "FirstName": "Ana", "Found": True,
                                                 "FullName": "Ana Souza", "PushName": "Asternic"}}, "success": True}),
             lambda r: [(c.phone, c.saved_name, c.push_name) for c in r.items]
             == [("5491122223333@s.whatsapp.net", "", "FOP2"), ("549113334444@s.whatsapp.net", "Ana Souza", "Asternic")]),
    WireCase(OperationId.USER_CONTACTS, WUZAPI, m.NoBody, "GET", "/user/contacts", None,
             (200, {"code": 200, "data": {}, "success": True}), lambda r: r.items == [], name="none"),
    # asternic/wuzapi routes.go `/user/lid/{jid}` GET (parseJID makes bare digits a user JID); static/api/spec.yml's
    # answer {jid, lid} in Respond's envelope
    _refused(OperationId.USER_LID, SSPEC, lambda: m.UserLidQuery(jid="5544999999999"), "GET",
             "/user/lid/5544999999999", "user/lid/{jid}"),
    WireCase(OperationId.USER_LID, WUZAPI, lambda: m.UserLidQuery(jid="5544999999999"), "GET",
             "/user/lid/5544999999999", None,
             (200, {"code": 200, "data": {"jid": "5544999999999@s.whatsapp.net", "lid": "81896604192873@lid"},
                    "success": True}),
             lambda r: (r.jid, r.lid) == ("5544999999999@s.whatsapp.net", "81896604192873@lid")),
    # WuzAPI's history (static/api/spec.yml GET /chat/history, its 200 example; handlers.go GetHistory)
    _refused(OperationId.MESSAGE_HISTORY, SSPEC, lambda: m.ChatHistoryQuery(chat_jid="index"), "GET", "/chat/history",
             "chat/history"),
    WireCase(OperationId.MESSAGE_HISTORY, WUZAPI,
             lambda: m.ChatHistoryQuery(chat_jid="5491155553333@s.whatsapp.net", limit=100), "GET", "/chat/history",
             None,
             (200, {"code": 200, "success": True, "data": [
                 {"id": 1, "user_id": "abc123def456", "chat_jid": "5491155553333@s.whatsapp.net",
                  "sender_jid": "5491155554444@s.whatsapp.net", "message_id": "3EB0C767D26A1B5F7C83",
                  "timestamp": "2023-12-01T15:30:00Z", "message_type": "text", "text_content": "Hello, how are you?",
                  "media_link": ""}]}),
             lambda r: [row["message_id"] for row in r.items] == ["3EB0C767D26A1B5F7C83"],
             query={"chat_jid": "5491155553333@s.whatsapp.net", "limit": "100"}),
    WireCase(OperationId.MESSAGE_HISTORY, WUZAPI, lambda: m.ChatHistoryQuery(chat_jid="index"), "GET",
             "/chat/history", None,
             (200, {"code": 200, "success": True, "data": {"abc123def456": [
                 {"chat_jid": "5491155553333@s.whatsapp.net", "last_updated": "2023-12-01T15:30:00Z"}]}}),
             lambda r: r.items == [{"chat_jid": "5491155553333@s.whatsapp.net", "last_updated": "2023-12-01T15:30:00Z"}],
             query={"chat_jid": "index", "limit": "50"}, name="index"),
    _refused(OperationId.GROUP_LIST, SSPEC, m.NoBody, "GET", "/group/list", "group/list"),
    WireCase(OperationId.GROUP_LIST, WUZAPI, m.NoBody, "GET", "/group/list", None,
             (200, {"code": 200, "data": {"Groups": [GROUP_INFO]}, "success": True}),
             lambda r: [(g.JID, g.Name) for g in r.items] == [("120363019502650977@g.us", "Team")]),
    WireCase(OperationId.GROUP_LIST, WUZAPI, m.NoBody, "GET", "/group/list", None,
             (200, {"code": 200, "data": {"Groups": None}, "success": True}), lambda r: r.items == [], name="none"),
    # -- pairing and the connection (issue 23) ---------------------------------------------------------------------
    # Z-API: Z-API/docs en/instance/{status,qr-code,qr-code-image,phone-code,restart,disconnect}.mdx and
    # docs/gateways/zapi.md §3.1. Every call is a GET without a body; answers are bare `{value}` objects.
    WireCase(OperationId.STATUS, ZAPI, m.NoBody, "GET", "/status", None,
             (200, {"connected": True, "error": "You are already connected", "smartphoneConnected": True}),
             lambda r: r.state == c.ConnectionState(connected=True, logged_in=True), name="connected"),
    # status.mdx's third text: paired, but the link is down (a restart restores it). D2 ends it with a full stop.
    WireCase(OperationId.STATUS, ZAPI, m.NoBody, "GET", "/status", None,
             (200, {"connected": False, "error": "You need to restore the session.", "smartphoneConnected": False}),
             lambda r: r.state == c.ConnectionState(connected=False, logged_in=True,
                                                    reason="You need to restore the session"), name="needs-restore"),
    _refused(OperationId.QR_CODE, SPEC, m.NoBody, "GET", "/qr-code", "qr-code"),
    # qr-code.mdx: "Returns the QRCode bytes so you can render it": the payload text (D2), or the image (D1's example).
    WireCase(OperationId.QR_CODE, ZAPI, m.NoBody, "GET", "/qr-code", None, (200, {"value": QR_PAYLOAD}),
             lambda r: r.payload() == QR_PAYLOAD and not r.is_image),
    WireCase(OperationId.QR_CODE, ZAPI, m.NoBody, "GET", "/qr-code", None, (200, {"value": QR_PNG}),
             lambda r: r.is_image and r.payload() == QR_PAYLOAD, name="as-image"),
    _refused(OperationId.QR_CODE_IMAGE, SPEC, m.NoBody, "GET", "/qr-code/image", "qr-code/image"),
    WireCase(OperationId.QR_CODE_IMAGE, ZAPI, m.NoBody, "GET", "/qr-code/image", None, (200, {"value": QR_PNG}),
             lambda r: r.payload() == QR_PAYLOAD),
    _refused(OperationId.PHONE_CODE, SPEC, lambda: c.PhoneCodeQuery(phone="5511999999999"), "GET",
             "/phone-code/5511999999999", "phone-code"),
    # phone-code.mdx's example answer, literally.
    WireCase(OperationId.PHONE_CODE, ZAPI, lambda: c.PhoneCodeQuery(phone="5511999999999"), "GET",
             "/phone-code/5511999999999", None, (200, {"value": "A1B2C3D4E5"}), lambda r: r.code == "A1B2C3D4E5"),
    _refused(OperationId.RESTART, SPEC, m.NoBody, "GET", "/restart", "restart"),
    WireCase(OperationId.RESTART, ZAPI, m.NoBody, "GET", "/restart", None, VALUE_TRUE, lambda r: r.ok),
    _refused(OperationId.DISCONNECT, SPEC, m.NoBody, "GET", "/disconnect", "disconnect"),
    WireCase(OperationId.DISCONNECT, ZAPI, m.NoBody, "GET", "/disconnect", None, VALUE_TRUE, lambda r: r.ok),
    # WuzAPI: asternic/wuzapi handlers.go (Connect, GetStatus, GetQR, PairPhone, Disconnect, Logout), its
    # static/api/spec.yml examples and docs/gateways/wuzapi.md §2.2-2.3. Answers in the {code, data, success} envelope.
    _refused(OperationId.SESSION_STATUS, SSPEC, m.NoBody, "GET", "/session/status", "session/status"),
    # spec.yml's example and the handler's older map: {"Connected": …, "LoggedIn": …}.
    WireCase(OperationId.SESSION_STATUS, WUZAPI, m.NoBody, "GET", "/session/status", None,
             (200, {"code": 200, "data": {"Connected": True, "LoggedIn": True}, "success": True}),
             lambda r: r.state == c.ConnectionState(connected=True, logged_in=True)),
    # The newer handler's lower-case map (wuzapi#90: disconnected while still logged in).
    WireCase(OperationId.SESSION_STATUS, WUZAPI, m.NoBody, "GET", "/session/status", None,
             (200, {"code": 200, "data": {
                 "id": "bec45bb93cbd24cbec32941ec3c93a12", "name": "Shop", "connected": False, "loggedIn": True,
                 "token": "***", "jid": "5491155555555.0:53@s.whatsapp.net", "webhook": "https://hooks.example.com/s",
                 "events": "Message,ReadReceipt", "proxy_url": "", "qrcode": "", "history": "0",
                 "proxy_config": {"enabled": False, "proxy_url": ""}, "hmac_configured": False}, "success": True}),
             lambda r: (r.state.connected, r.state.logged_in, r.state.number) == (False, True, "5491155555555"),
             name="newer-shape"),
    _refused(OperationId.SESSION_CONNECT, SSPEC, lambda: c.SessionConnect(Subscribe=["Message"]), "POST",
             "/session/connect", "session/connect"),
    WireCase(OperationId.SESSION_CONNECT, WUZAPI, lambda: c.SessionConnect(Subscribe=["Message", "ReadReceipt"]),
             "POST", "/session/connect", {"Subscribe": ["Message", "ReadReceipt"], "Immediate": True},
             (200, {"code": 200, "data": {"details": "Connected!", "events": "Message,ReadReceipt", "jid": "",
                                          "webhook": "https://hooks.example.com/s"}, "success": True}),
             lambda r: r.subscribed == ["Message", "ReadReceipt"] and r.details == "Connected!"),
    _refused(OperationId.SESSION_QR, SSPEC, m.NoBody, "GET", "/session/qr", "session/qr"),
    WireCase(OperationId.SESSION_QR, WUZAPI, m.NoBody, "GET", "/session/qr", None,
             (200, {"code": 200, "data": {"QRCode": QR_PNG}, "success": True}), lambda r: r.payload() == QR_PAYLOAD),
    _refused(OperationId.SESSION_PAIRPHONE, SSPEC, lambda: c.PairPhone(Phone="5491155553934"), "POST",
             "/session/pairphone", "session/pairphone"),
    WireCase(OperationId.SESSION_PAIRPHONE, WUZAPI, lambda: c.PairPhone(Phone="5491155553934"), "POST",
             "/session/pairphone", {"Phone": "5491155553934"},
             (200, {"code": 200, "data": {"LinkingCode": "9H3J-H3J8"}, "success": True}),
             lambda r: r.code == "9H3J-H3J8"),
    _refused(OperationId.SESSION_DISCONNECT, SSPEC, m.NoBody, "POST", "/session/disconnect", "session/disconnect"),
    WireCase(OperationId.SESSION_DISCONNECT, WUZAPI, m.NoBody, "POST", "/session/disconnect", None,
             (200, {"code": 200, "data": {"Details": "Disconnected"}, "success": True}),
             lambda r: r.Details == "Disconnected"),
    _refused(OperationId.SESSION_LOGOUT, SSPEC, m.NoBody, "POST", "/session/logout", "session/logout"),
    WireCase(OperationId.SESSION_LOGOUT, WUZAPI, m.NoBody, "POST", "/session/logout", None,
             (200, {"code": 200, "data": {"Details": "Logged out"}, "success": True}),
             lambda r: r.Details == "Logged out"),
    # -- the webhook settings the doctor reads and sets (issue 24) -------------------------------------------------
    # Z-API GET /me: developer.z-api.io/en/instance/me, its fields in its order (the token shown as the docs do).
    _refused(OperationId.INSTANCE_DATA, SPEC, m.NoBody, "GET", "/me", "me"),
    WireCase(OperationId.INSTANCE_DATA, ZAPI, m.NoBody, "GET", "/me", None,
             (200, {"id": "3C01A2B3", "token": "F1E2D3C4", "name": "Shop", "due": 1735689599000, "connected": True,
                    "paymentStatus": "PAID", "created": "2024-01-10T12:00:00.000Z",
                    "connectedCallbackUrl": "https://hooks.example.com/c",
                    "deliveryCallbackUrl": "https://hooks.example.com/d",
                    "disconnectedCallbackUrl": "", "messageStatusCallbackUrl": "https://hooks.example.com/s",
                    "presenceChatCallbackUrl": "", "receivedCallbackUrl": "https://other.example.com/in",
                    "receiveCallbackSentByMe": False, "callRejectAuto": False, "callRejectMessage": "",
                    "autoReadMessage": False, "initialDataCallbackUrl": ""}),
             lambda r: r.connected is True and r.callback_urls() == {
                 "delivery": "https://hooks.example.com/d", "received": "https://other.example.com/in",
                 "message status": "https://hooks.example.com/s", "chat presence": "",
                 "connected": "https://hooks.example.com/c", "disconnected": ""}),
    # Z-API GET /device ("Device info"): developer.z-api.io/en/instance/device (Z-API/docs en/instance/device.mdx),
    # its 200 example literally.
    _refused(OperationId.DEVICE, SPEC, m.NoBody, "GET", "/device", "device"),
    WireCase(OperationId.DEVICE, ZAPI, m.NoBody, "GET", "/device", None, (200, ZAPI_DEVICE_DOC),
             lambda r: (r.number, r.name, r.about, r.originalDevice, r.sessionId, r.isBusiness, r.device.device_model)
             == ("5511999999999", "User name", "Profile status message", "iphone", 175, False, "Z-API")),
    # Z-API PUT /update-every-webhooks: docs/gateways/zapi.md §4 (body {value, notifySentByMe?}); answers
    # {value: true}.
    _refused(OperationId.UPDATE_EVERY_WEBHOOKS, SPEC, lambda: c.EveryCallback(value="https://hooks.example.com/z"),
             "PUT", "/update-every-webhooks", "update-every-webhooks"),
    WireCase(OperationId.UPDATE_EVERY_WEBHOOKS, ZAPI, lambda: c.EveryCallback(value="https://hooks.example.com/z"),
             "PUT", "/update-every-webhooks", {"value": "https://hooks.example.com/z"}, VALUE_TRUE, lambda r: r.ok),
    # GET /webhook: WuzAPI's GetWebhook (docs/gateways/wuzapi.md §2.5) answers {webhook, subscribe}; no events is [""].
    WireCase(OperationId.WEBHOOK_READ, WUZAPI, m.NoBody, "GET", "/webhook", None,
             (200, {"code": 200, "data": {"webhook": "https://hooks.example.com/s", "subscribe": ["Message", "ReadReceipt"]},
                    "success": True}),
             lambda r: r.webhook == "https://hooks.example.com/s" and r.events == ["Message", "ReadReceipt"]),
    WireCase(OperationId.WEBHOOK_READ, WUZAPI, m.NoBody, "GET", "/webhook", None,
             (200, {"code": 200, "data": {"webhook": "", "subscribe": [""]}, "success": True}),
             lambda r: r.webhook == "" and r.events == [""], name="none"),
    # The spec lists only PUT /webhook; its sandbox answers GET in the PUT's shape, `active` included.
    WireCase(OperationId.WEBHOOK_READ, SSPEC, m.NoBody, "GET", "/webhook", None,
             (200, {"code": 200, "data": {"webhook": "https://hooks.example.com/s", "events": ["Message"],
                                          "active": False}, "success": True}),
             lambda r: r.active is False and r.events == ["Message"]),
]

# -- Evolution API (docs/gateways/evolution.md; the literal requests and answers of tests/gateways/evolution/*.json,
# written from Evolution 2.3.6's routers and schemas): its own routes off the server's root, the instance's name
# (here `inst-1`) in the path, no family prefix.
EVOLUTION = InstanceDialect.EVOLUTION
EVO_SENT = (201, {"key": {"remoteJid": "5511999999999@s.whatsapp.net", "fromMe": True, "id": "3EB0MSG"},
                  "pushName": "Você", "status": "PENDING", "message": {"conversation": "Olá"},
                  "messageType": "conversation", "messageTimestamp": 1765098900, "source": "web"})
EVO_UPDATED = (201, {"update": "success"})
EVO_PNG_B64 = ("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==")
EVO_WEBHOOK_ROW = {"id": "cmh4q1v2w0001qz8l3k2j9x7a", "url": "https://hooks.example.com/evo", "headers": None,
                   "enabled": True, "events": ["MESSAGES_UPSERT", "MESSAGES_UPDATE", "CONNECTION_UPDATE"],
                   "webhookByEvents": False, "webhookBase64": True}
EVO_EVENTS = ["MESSAGES_UPSERT", "MESSAGES_UPDATE", "SEND_MESSAGE", "CONNECTION_UPDATE", "QRCODE_UPDATED",
              "PRESENCE_UPDATE", "GROUPS_UPSERT", "GROUP_PARTICIPANTS_UPDATE"]


def _evo_refused(op: OperationId, request: Callable[[], m.Request], field: str) -> WireCase:
    return _refused(op, EVOLUTION, request, "POST", "", field)


CASES += [
    WireCase(OperationId.SEND_TEXT, EVOLUTION, lambda: m.SendText(phone="120363019502650977-group", message="Olá"),
             "POST", "/message/sendText/inst-1", {"number": "120363019502650977@g.us", "text": "Olá"}, EVO_SENT,
             _sent),
    WireCase(OperationId.SEND_BUTTON_ACTIONS, EVOLUTION, _buttons, "POST", "/message/sendButtons/inst-1",
             {"number": "5511999999999", "title": "Menu", "description": "Pick one", "footer": "Thanks",
              "buttons": [{"type": "reply", "displayText": "Yes", "id": "1"},
                          {"type": "reply", "displayText": "No", "id": "2"}]}, EVO_SENT, _sent),
    WireCase(OperationId.SEND_BUTTON_LIST, EVOLUTION,
             lambda: m.SendButtonList(phone="5511999999999", message="Sizes",
                                      buttonList=m.ButtonList(buttons=[m.ListButton(id="s", label="Small"),
                                                                       m.ListButton(label="Large")])),
             "POST", "/message/sendList/inst-1",
             {"number": "5511999999999", "title": "Sizes", "footerText": "", "buttonText": "Options",
              "sections": [{"title": "Sizes", "rows": [{"title": "Small", "rowId": "s"},
                                                       {"title": "Large", "rowId": "Large"}]}]}, EVO_SENT, _sent),
    WireCase(OperationId.SEND_LINK, EVOLUTION,
             lambda: m.SendLink(phone="5511999999999", message="See", linkUrl="https://example.com/a"),
             "POST", "/message/sendText/inst-1",
             {"number": "5511999999999", "text": "See https://example.com/a", "linkPreview": True}, EVO_SENT, _sent),
    # The preview's fields have no place in Evolution's sendText (it makes the preview itself): left out.
    WireCase(OperationId.SEND_LINK, EVOLUTION, _link, "POST", "/message/sendText/inst-1",
             {"number": "120363019502650977@g.us", "text": "See https://example.com/a", "linkPreview": True},
             EVO_SENT, _sent, name="preview"),
    WireCase(OperationId.SEND_POLL, EVOLUTION, _poll, "POST", "/message/sendPoll/inst-1",
             {"number": "120363019502650977@g.us", "name": "Lunch?", "selectableCount": 1,
              "values": ["Pizza", "Sushi"]}, EVO_SENT, _sent),
    WireCase(OperationId.SEND_LOCATION, EVOLUTION, _location, "POST", "/message/sendLocation/inst-1",
             {"number": "5511999999999", "latitude": -23.5614, "longitude": -46.6559, "name": "Office",
              "address": "Av. Paulista, 1000", "delay": 3000}, EVO_SENT, _sent),
    WireCase(OperationId.SEND_STICKER, EVOLUTION, _sticker, "POST", "/message/sendSticker/inst-1",
             {"number": "120363019502650977@g.us", "sticker": "https://example.com/s.webp", "delay": 15000},
             EVO_SENT, _sent),
    _evo_refused(OperationId.FORWARD_MESSAGE, _forward, "messageId"),
    WireCase(OperationId.SEND_IMAGE, EVOLUTION,
             lambda: m.SendImage(phone="5511999999999", image="data:image/png;base64," + EVO_PNG_B64, caption="A dot"),
             "POST", "/message/sendMedia/inst-1",
             {"number": "5511999999999", "mediatype": "image", "mimetype": "image/png", "media": EVO_PNG_B64,
              "fileName": "image.png", "caption": "A dot"}, EVO_SENT, _sent),
    WireCase(OperationId.SEND_VIDEO, EVOLUTION,
             lambda: m.SendVideo(phone="5511999999999", video="https://example.com/clip.mp4"),
             "POST", "/message/sendMedia/inst-1",
             {"number": "5511999999999", "mediatype": "video", "mimetype": "video/mp4",
              "media": "https://example.com/clip.mp4", "fileName": "clip.mp4"}, EVO_SENT, _sent),
    WireCase(OperationId.SEND_AUDIO, EVOLUTION,
             lambda: m.SendAudio(phone="5511999999999", audio="https://example.com/note.ogg"),
             "POST", "/message/sendWhatsAppAudio/inst-1",
             {"number": "5511999999999", "audio": "https://example.com/note.ogg", "encoding": True}, EVO_SENT, _sent),
    WireCase(OperationId.SEND_DOCUMENT, EVOLUTION,
             lambda: m.SendDocument(phone="5511999999999", extension="pdf", fileName="invoice",
                                    document="data:application/pdf;base64,JVBERi0xLjQKJcOkw7zDtsOfCg=="),
             "POST", "/message/sendMedia/inst-1",
             {"number": "5511999999999", "mediatype": "document", "mimetype": "application/pdf",
              "media": "JVBERi0xLjQKJcOkw7zDtsOfCg==", "fileName": "invoice.pdf"}, EVO_SENT, _sent),
    # A scope alone is read-then-written (the six settings at once: tests/gateways/evolution/test_sandbox.py checks
    # both bodies against the fixtures); excepted contacts have no word in Evolution.
    _evo_refused(OperationId.PRIVACY_GROUP_ADD, lambda: m.PrivacyGroupAdd(
        type=m.PrivacyScope.CONTACT_BLACKLIST, contactsBlacklist=[m.BlacklistEntry(action="add", phone="5511999999999")]),
        "contactsBlacklist"),
    _evo_refused(OperationId.PRIVACY_LAST_SEEN, lambda: m.PrivacyLastSeen(
        visualizationType=m.PrivacyScope.CONTACT_BLACKLIST,
        contactsBlacklist=[m.BlacklistEntry(action="remove", phone="5511999999999")]), "contactsBlacklist"),
    WireCase(OperationId.ADD_PARTICIPANT, EVOLUTION,
             lambda: m.AddParticipant(groupId="120363019502650977-group", phones=["5511966665555", "5511955554444"]),
             "POST", "/group/updateParticipant/inst-1",
             {"groupJid": "120363019502650977@g.us", "action": "add", "participants": ["5511966665555", "5511955554444"]},
             (201, {"updateParticipants": [{"status": "200", "jid": "5511966665555@s.whatsapp.net"},
                                           {"status": "403", "jid": "5511955554444@s.whatsapp.net"}]}),
             lambda r: r.added == ["5511966665555"] and r.failed == ["5511955554444"]),
    WireCase(OperationId.UPDATE_GROUP_NAME, EVOLUTION,
             lambda: m.UpdateGroupName(groupId="120363019502650977-group", groupName="Team 2027"),
             "POST", "/group/updateGroupSubject/inst-1",
             {"groupJid": "120363019502650977@g.us", "subject": "Team 2027"}, EVO_UPDATED, lambda r: r.ok),
    WireCase(OperationId.GROUP_METADATA, EVOLUTION,
             lambda: m.GroupMetadataQuery(GROUP_PHONE_NUMBER="120363019502650977-group"),
             "GET", "/group/findGroupInfos/inst-1", None,
             (200, {"id": "120363019502650977@g.us", "subject": "Team", "owner": "5511999999999@s.whatsapp.net",
                    "creation": 1765098800, "desc": None,
                    "participants": [{"id": "5511999999999@s.whatsapp.net", "admin": "superadmin"}]}),
             lambda r: r.groupName == "Team" and r.participants[0].isSuperAdmin,
             query={"groupJid": "120363019502650977@g.us"}),
    WireCase(OperationId.ADD_ADMIN, EVOLUTION,
             lambda: m.AddAdmin(communityId="120363186053925765", phones=["5511988887777"]),
             "POST", "/group/updateParticipant/inst-1",
             {"groupJid": "120363186053925765@g.us", "action": "promote", "participants": ["5511988887777"]},
             (201, {"updateParticipants": [{"status": "200", "jid": "5511988887777@s.whatsapp.net"}]}),
             lambda r: r.ok),
    WireCase(OperationId.REDEFINE_INVITATION_LINK, EVOLUTION,
             lambda: m.RedefineInvitationLink(communityId="120363186053925765"),
             "POST", "/group/revokeInviteCode/inst-1", {"groupJid": "120363186053925765@g.us"},
             (201, {"revoked": True, "inviteCode": "Hq2XbN7vRk4mT9sLd0PwYc"}),
             lambda r: r.inviteLink == "https://chat.whatsapp.com/Hq2XbN7vRk4mT9sLd0PwYc"),
    _evo_refused(OperationId.MODIFY_CHAT, lambda: m.ModifyChat(phone="5511999999999", action=m.ChatAction.ARCHIVE),
                 "action"),
    WireCase(OperationId.PROFILE_DESCRIPTION, EVOLUTION, lambda: m.ProfileDescription(value="Open 9-18"),
             "POST", "/chat/updateProfileStatus/inst-1", {"status": "Open 9-18"}, (200, {"update": "success"}),
             lambda r: r.ok),
    _evo_refused(OperationId.PRODUCTS, lambda: m.ProductQuery(PRODUCT_ID="p1"), "PRODUCT_ID"),
    WireCase(OperationId.UPDATE_WEBHOOK_DELIVERY, EVOLUTION, lambda: m.DeliveryWebhook(value=""),
             "POST", "/webhook/set/inst-1", {"webhook": {"enabled": False, "url": ""}},
             (201, {**EVO_WEBHOOK_ROW, "enabled": False, "events": []}), lambda r: r.ok),
    WireCase(OperationId.STATUS, EVOLUTION, m.NoBody, "GET", "/instance/connectionState/inst-1", None,
             (200, {"instance": {"instanceName": "inst-1", "state": "open"}}), lambda r: r.state.connected),
    WireCase(OperationId.LIST_CHATS, EVOLUTION, lambda: m.ListPage(page=2, pageSize=50), "POST",
             "/chat/findChats/inst-1", {"where": {}, "take": 50, "skip": 50},
             (200, [{"id": "cmh4r5a1b0001qz8lzxcvbnm1", "remoteJid": "5511999999999@s.whatsapp.net",
                     "pushName": "Maria", "unreadCount": 2}]),
             lambda r: r.items[0].phone == "5511999999999" and r.items[0].unread == 2),
    # findMessages (2.3.6 chat.router.ts, messageValidateSchema; channel.service.ts fetchMessages' answer)
    WireCase(OperationId.FIND_MESSAGES, EVOLUTION, lambda: m.ChatMessagesQuery(amount=50, page=2), "POST",
             "/chat/findMessages/inst-1", {"where": {}, "page": 2, "offset": 50},
             (200, {"messages": {"total": 51, "pages": 2, "currentPage": 2, "records": [
                 {"id": "cmh4r9k2c0003qz8l5d6f7g8h", "key": {"id": "3EB0A1B2C3D4E5F6A7B8", "fromMe": False,
                                                             "remoteJid": "5511999999999@s.whatsapp.net"},
                  "pushName": "Maria", "messageType": "conversation", "message": {"conversation": "Oi"},
                  "messageTimestamp": 1765098900, "instanceId": "b1f2c3d4-0000-4000-8000-000000000001",
                  "source": "android", "contextInfo": None, "MessageUpdate": [{"status": "DELIVERY_ACK"}]}]}}),
             lambda r: r.pages == 2 and r.items[0]["key"]["id"] == "3EB0A1B2C3D4E5F6A7B8"),
    WireCase(OperationId.FIND_MESSAGES, EVOLUTION, lambda: m.ChatMessagesQuery(phone="5511999999999", amount=10),
             "POST", "/chat/findMessages/inst-1",
             {"where": {"key": {"remoteJid": "5511999999999@s.whatsapp.net"}}, "page": 1, "offset": 10},
             (200, {"messages": {"total": 0, "pages": 0, "currentPage": 1, "records": []}}),
             lambda r: r.items == [], name="one-chat"),
    WireCase(OperationId.LIST_CONTACTS, EVOLUTION, lambda: m.ListPage(page=1, pageSize=100), "POST",
             "/chat/findContacts/inst-1", {"where": {}, "offset": 100, "page": 1},
             (200, [{"id": "c1", "remoteJid": "5511999999999@s.whatsapp.net", "pushName": "Maria"}]),
             lambda r: r.items[0].phone == "5511999999999" and r.items[0].notify == "Maria"),
    WireCase(OperationId.LIST_GROUPS, EVOLUTION, m.ListPage, "GET", "/group/fetchAllGroups/inst-1", None,
             (200, [{"id": "120363019502650977@g.us", "subject": "Team"}]),
             lambda r: r.items[0].name == "Team", query={"getParticipants": "false"}),
    WireCase(OperationId.QR_CODE, EVOLUTION, m.NoBody, "GET", "/instance/connect/inst-1", None,
             (200, {"pairingCode": None, "code": QR_PAYLOAD, "base64": QR_PNG, "count": 1}),
             lambda r: r.value == QR_PAYLOAD),
    WireCase(OperationId.QR_CODE_IMAGE, EVOLUTION, m.NoBody, "GET", "/instance/connect/inst-1", None,
             (200, {"pairingCode": None, "code": QR_PAYLOAD, "base64": QR_PNG, "count": 1}),
             lambda r: r.is_image and r.payload() == QR_PAYLOAD),
    WireCase(OperationId.PHONE_CODE, EVOLUTION, lambda: c.PhoneCodeQuery(phone="5511999999999"), "GET",
             "/instance/connect/inst-1", None,
             (200, {"pairingCode": "K7QW2M9D", "code": QR_PAYLOAD, "base64": QR_PNG, "count": 1}),
             lambda r: r.code == "K7QW-2M9D", query={"number": "5511999999999"}),
    WireCase(OperationId.RESTART, EVOLUTION, m.NoBody, "POST", "/instance/restart/inst-1", None,
             (200, {"instance": {"instanceName": "inst-1", "state": "connecting"}}), lambda r: r.ok),
    WireCase(OperationId.DISCONNECT, EVOLUTION, m.NoBody, "DELETE", "/instance/logout/inst-1", None,
             (200, {"status": "SUCCESS", "error": False, "response": {"message": "Instance logged out"}}),
             lambda r: r.ok),
    WireCase(OperationId.DEVICE, EVOLUTION, m.NoBody, "GET", "/instance/fetchInstances", None,
             (200, [{"id": "6f0d9c2e", "name": "inst-1", "connectionStatus": "open",
                     "ownerJid": "5511999999999@s.whatsapp.net", "profileName": "Shop", "profilePicUrl": None}]),
             lambda r: r.phone == "5511999999999" and r.name == "Shop"),
    WireCase(OperationId.INSTANCE_DATA, EVOLUTION, m.NoBody, "GET", "/webhook/find/inst-1", None,
             (200, EVO_WEBHOOK_ROW),
             lambda r: r.receivedCallbackUrl == "https://hooks.example.com/evo" and r.deliveryCallbackUrl is None),
    WireCase(OperationId.UPDATE_EVERY_WEBHOOKS, EVOLUTION,
             lambda: c.EveryCallback(value="https://hooks.example.com/evo"), "POST", "/webhook/set/inst-1",
             {"webhook": {"enabled": True, "url": "https://hooks.example.com/evo", "byEvents": False, "base64": True,
                          "events": EVO_EVENTS}},
             (201, {**EVO_WEBHOOK_ROW, "events": EVO_EVENTS}), lambda r: r.ok),
]
