"""Every gateway operation as one row of one table: what it is, where it lives, and how each dialect writes it.

    wire = adapter_for(InstanceDialect.ZAPI).wire(SEND_POLL, SendPoll(...))   # tui.gateways: WireRequest(path=..., ...)
    answer = await instance_client.request(SEND_POLL, SendPoll(...))   # typed SendResult

Each row is a typed constant, `Operation[Req, Res]`; `OPERATIONS` finds a row by id with its types erased
(`erased`, the one place that forgets them), for the callers that only know the id at run time.

The client, the sandbox's routes, the command line (`gateway-tui call`), the palette, help and the sections'
dispatch all read this table; no other module keeps a list of operations.

Dialects (docs/gateways/zapi.md, docs/gateways/wuzapi.md): the spec is the contract and the default. A profile may speak
its real gateway's dialect instead: `zapi` for the instance family, `wuzapi` for the session family. A dialect
only changes how a request is written, and that is its gateway's adapter's (`tui.gateways.<name>`); the request
models always carry the spec's field names. A request that a dialect cannot express raises `DialectRefusal` naming
the field, before anything is sent.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar, cast

from pydantic import BaseModel

from tui.api import connection as c
from tui.api import models as m
from tui.api.dialects import Dialect, Family, InstanceDialect, SessionDialect
from tui.api.errors import GatewayError

__all__ = [
    "OPERATIONS",
    "Dialect",
    "DialectRefusal",
    "ErasedOperation",
    "Family",
    "InstanceDialect",
    "Operation",
    "OperationId",
    "OperationTable",
    "Section",
    "SendKind",
    "SessionDialect",
    "TABLE",
    "WireRequest",
    "all_operations",
    "operation",
]


class Section(enum.StrEnum):
    """Where an operation lives in the app (ids of `tui.ui.main_screen.SECTIONS`)."""

    CHATS = "chats"
    GROUPS = "groups"
    COMMUNITIES = "communities"
    PRIVACY = "privacy"
    CATALOG = "catalog"
    SETTINGS = "settings"
    ACCOUNT = "account"


class OperationId(enum.StrEnum):
    # instance family: the spec's path name
    SEND_TEXT = "send-text"
    SEND_BUTTON_ACTIONS = "send-button-actions"
    SEND_BUTTON_LIST = "send-button-list"
    SEND_LINK = "send-link"
    SEND_POLL = "send-poll"
    SEND_LOCATION = "send-location"
    SEND_STICKER = "send-sticker"
    FORWARD_MESSAGE = "forward-message"
    SEND_IMAGE = "send-image"
    SEND_VIDEO = "send-video"
    SEND_AUDIO = "send-audio"
    SEND_DOCUMENT = "send-document"
    PRIVACY_GROUP_ADD = "privacy/group-add"
    PRIVACY_LAST_SEEN = "privacy/last-seen"
    ADD_PARTICIPANT = "add-participant"
    UPDATE_GROUP_NAME = "update-group-name"
    GROUP_METADATA = "group-metadata"
    ADD_ADMIN = "add-admin"
    REDEFINE_INVITATION_LINK = "redefine-invitation-link"
    MODIFY_CHAT = "modify-chat"
    PROFILE_DESCRIPTION = "profile-description"
    PRODUCTS = "products"
    UPDATE_WEBHOOK_DELIVERY = "update-webhook-delivery"
    STATUS = "status"
    LIST_CHATS = "chats"
    LIST_CONTACTS = "contacts"
    LIST_GROUPS = "groups"
    FIND_MESSAGES = "chat-messages"
    QR_CODE = "qr-code"
    QR_CODE_IMAGE = "qr-code/image"
    PHONE_CODE = "phone-code"
    RESTART = "restart"
    DISCONNECT = "disconnect"
    INSTANCE_DATA = "me"
    DEVICE = "device"
    UPDATE_EVERY_WEBHOOKS = "update-every-webhooks"
    # session family
    HMAC_SET = "hmac-set"
    HMAC_STATUS = "hmac-status"
    HMAC_DELETE = "hmac-delete"
    PROXY = "proxy"
    GROUP_INFO = "group-info"
    GROUP_CREATE = "group-create"
    SEND_CONTACT = "send-contact"
    CHAT_SEND_IMAGE = "chat-send-image"
    CHAT_SEND_VIDEO = "chat-send-video"
    CHAT_SEND_AUDIO = "chat-send-audio"
    CHAT_SEND_DOCUMENT = "chat-send-document"
    WEBHOOK = "webhook"
    USER_CONTACTS = "user-contacts"
    USER_LID = "user-lid"
    MESSAGE_HISTORY = "message-history"
    GROUP_LIST = "group-list"
    SESSION_STATUS = "session-status"
    SESSION_CONNECT = "session-connect"
    SESSION_QR = "session-qr"
    SESSION_PAIRPHONE = "session-pairphone"
    SESSION_DISCONNECT = "session-disconnect"
    SESSION_LOGOUT = "session-logout"
    WEBHOOK_READ = "webhook-read"


class DialectRefusal(GatewayError):
    """The request is valid in the spec but this dialect cannot say it. Raised before anything is sent."""

    def __init__(self, field_name: str, problem: str) -> None:
        super().__init__(f"Not sent: {field_name} {problem}")
        self.field = field_name
        self.problem = problem


Body = dict[str, Any]  # a JSON object as the gateway reads it


@dataclass(frozen=True)
class WireRequest:
    """What goes on the wire: the path after the family prefix (segments unquoted; a `{name}` segment is filled
    from the gateway's endpoint, e.g. its instance name), body and query; `method` when the gateway's differs from
    the row's."""

    path: tuple[str, ...]
    body: Body | None
    query: dict[str, str] = field(default_factory=dict)
    method: str | None = None


Req = TypeVar("Req", bound=m.Request)
Res = TypeVar("Res", bound=BaseModel, covariant=True)  # an answer is read, never given



class SendKind(enum.StrEnum):
    """What an operation sends, as the inbox names the message (`conversations.NewMessage.kind`)."""

    TEXT = "text"
    BUTTONS = "buttons"
    LIST = "list"
    LINK = "link"
    POLL = "poll"
    LOCATION = "location"
    STICKER = "sticker"
    CONTACT = "contact"
    FORWARD = "forward"
    IMAGE = "image"
    VIDEO = "video"
    AUDIO = "audio"
    DOCUMENT = "document"


MEDIA_KINDS: tuple[SendKind, ...] = (SendKind.IMAGE, SendKind.VIDEO, SendKind.AUDIO, SendKind.DOCUMENT)


@dataclass(frozen=True, kw_only=True)
class Operation(Generic[Req, Res]):
    """One operation, typed by its request and its answer: `Operation[m.SendText, m.SendResult]`. `path` is a
    template over the request's field names, e.g. `group-metadata/{GROUP_PHONE_NUMBER}`; how each gateway writes it
    (or refuses it) is its adapter's (`tui.gateways`); `sends` is what kind of message the
    operation sends (None: it sends none); `writes` whether it changes anything on the gateway or sends (pairing
    actions, settings, group changes...) rather than only reading: a read-only profile refuses every row that
    writes."""

    id: OperationId
    number: int | None  # the spec's operation number (§4); None for those it names only
    family: Family
    method: str
    path: str
    request: type[Req]
    result: type[Res]
    title: str
    section: Section
    writes: bool  # changes the gateway or sends; no default: every row says (a read-only profile refuses it)
    destructive: bool = False
    sends: SendKind | None = None
    query: Callable[[Req], dict[str, str]] | None = None
    path_params: tuple[str, ...] = ()
    notes: Mapping[Dialect, str] = field(default_factory=dict)  # what a dialect writes differently, for people

    @property
    def is_send(self) -> bool:
        return self.sends is not None

    @property
    def is_read(self) -> bool:
        return self.method == "GET"

    @property
    def dialects(self) -> tuple[Dialect, ...]:
        return tuple(InstanceDialect) if self.family is Family.INSTANCE else tuple(SessionDialect)

    def wire_path(self, request: Req) -> tuple[str, ...]:
        values = request.model_dump(mode="json")
        return tuple(
            str(values[part[1:-1]]) if part.startswith("{") else part for part in self.path.split("/")
        )

    def check(self, request: Req) -> None:
        """TypeError, before anything is written, when `request` is not this row's model (a caller that found the
        row by id at run time holds it with its types forgotten)."""
        if not isinstance(request, self.request):
            raise TypeError(f"{self.id} takes {self.request.__name__}, not {type(request).__name__}")

    def wire_request(self, request: Req, body: Body | None) -> WireRequest:
        """The row's path and query for `request`, with the body its gateway wrote (`tui.api.adapter`)."""
        query = self.query(request) if self.query is not None else {}
        return WireRequest(self.wire_path(request), body, query)

    @property
    def path_template(self) -> str:
        return self.path


# ---------------------------------------------------------------------------------------------------------------
# Lists (docs/gateways/zapi.md §3.6, docs/gateways/wuzapi.md §2.8): the gateways offer them, the spec does not.

def _page_query(request: m.ListPage) -> dict[str, str]:
    return {"page": str(request.page), "pageSize": str(request.pageSize)}


# The lists that name chats, in the order the runtime reads them (contacts first: a group's name never
# depends on them). Each dialect reads those its gateway offers.
NAME_LISTS: tuple[OperationId, ...] = (
    OperationId.LIST_CONTACTS, OperationId.LIST_CHATS, OperationId.USER_CONTACTS, OperationId.GROUP_LIST,
)


# ---------------------------------------------------------------------------------------------------------------
# The table

INST, SESS = Family.INSTANCE, Family.SESSION
Z, W = InstanceDialect.ZAPI, SessionDialect.WUZAPI
E = InstanceDialect.EVOLUTION
EVOLUTION_LINK_NOTE = "the preview's image, title and linkDescription are not sent: Evolution makes it from the URL"
GROUP_AS_DIGITS = "a group is sent as <digits>-group"
MEDIA_DELAY_NOTE = "delayMessage in whole seconds 1-15 (give 1000-15000 ms)"
PAGED = "page and pageSize go in the query; the answer is a bare array"


def _group_info_query(request: m.GroupInfoRequest) -> dict[str, str]:
    # The spec puts GroupJID in a GET body; the real WuzAPI reads only the `groupJID` query parameter.
    return {"groupJID": request.GroupJID}


def _history_query(request: m.ChatHistoryQuery) -> dict[str, str]:
    return {"chat_jid": request.chat_jid, "limit": str(request.limit)}


def _chat_messages_query(request: m.ChatMessagesQuery) -> dict[str, str]:
    """Z-API's paging: how many, and after which message id (the oldest of the page before)."""
    query = {"amount": str(request.amount)}
    if request.lastMessageId:
        query["lastMessageId"] = request.lastMessageId
    return query


# -- instance family: sends

SEND_TEXT: Operation[m.SendText, m.SendResult] = Operation(
    id=OperationId.SEND_TEXT, number=None, family=INST, method="POST", path="send-text",
    request=m.SendText, result=m.SendResult, title="Send text", section=Section.CHATS, sends=SendKind.TEXT,
    notes={Z: GROUP_AS_DIGITS},
    writes=True,
)
SEND_BUTTON_ACTIONS: Operation[m.SendButtonActions, m.SendResult] = Operation(
    id=OperationId.SEND_BUTTON_ACTIONS, number=1, family=INST, method="POST", path="send-button-actions",
    request=m.SendButtonActions, result=m.SendResult, title="Send quick-reply buttons", section=Section.CHATS,
    sends=SendKind.BUTTONS, notes={Z: "buttons go out as buttonActions [{id, type: REPLY, label}]"},
    writes=True,
)
SEND_BUTTON_LIST: Operation[m.SendButtonList, m.SendResult] = Operation(
    id=OperationId.SEND_BUTTON_LIST, number=None, family=INST, method="POST", path="send-button-list",
    request=m.SendButtonList, result=m.SendResult, title="Send button list", section=Section.CHATS,
    sends=SendKind.LIST, notes={Z: GROUP_AS_DIGITS},
    writes=True,
)
SEND_LINK: Operation[m.SendLink, m.SendResult] = Operation(
    id=OperationId.SEND_LINK, number=2, family=INST, method="POST", path="send-link",
    request=m.SendLink, result=m.SendResult, title="Send link with preview", section=Section.CHATS,
    sends=SendKind.LINK, notes={Z: "image, title and linkDescription are required; a group is sent as <digits>-group",
                                E: EVOLUTION_LINK_NOTE},
    writes=True,
)
SEND_POLL: Operation[m.SendPoll, m.SendResult] = Operation(
    id=OperationId.SEND_POLL, number=3, family=INST, method="POST", path="send-poll",
    request=m.SendPoll, result=m.SendResult, title="Send poll", section=Section.CHATS,
    sends=SendKind.POLL, notes={Z: "selectableCount N goes out as pollMaxOptions N (the most options a voter may pick)"},
    writes=True,
)
SEND_LOCATION: Operation[m.SendLocation, m.SendResult] = Operation(
    id=OperationId.SEND_LOCATION, number=4, family=INST, method="POST", path="send-location",
    request=m.SendLocation, result=m.SendResult, title="Send location", section=Section.CHATS,
    sends=SendKind.LOCATION, notes={Z: "lat/lng go out as latitude/longitude strings; delayMessage in whole seconds 1-15 (give 1000-15000 ms)"},
    writes=True,
)
SEND_STICKER: Operation[m.SendSticker, m.SendResult] = Operation(
    id=OperationId.SEND_STICKER, number=5, family=INST, method="POST", path="send-sticker",
    request=m.SendSticker, result=m.SendResult, title="Send sticker", section=Section.CHATS,
    sends=SendKind.STICKER, notes={Z: "delayMessage in whole seconds 1-15 (give 1000-15000 ms); a group is sent as <digits>-group"},
    writes=True,
)
FORWARD_MESSAGE: Operation[m.ForwardMessage, m.SendResult] = Operation(
    id=OperationId.FORWARD_MESSAGE, number=None, family=INST, method="POST", path="forward-message",
    request=m.ForwardMessage, result=m.SendResult, title="Forward a message", section=Section.CHATS,
    sends=SendKind.FORWARD, notes={Z: "phone and messagePhone groups are sent as <digits>-group"},
    writes=True,
)

# -- instance family: media (Z-API's shapes in both dialects; see "Media" above)

SEND_IMAGE: Operation[m.SendImage, m.SendResult] = Operation(
    id=OperationId.SEND_IMAGE, number=None, family=INST, method="POST", path="send-image",
    request=m.SendImage, result=m.SendResult, title="Send image", section=Section.CHATS, sends=SendKind.IMAGE,
    notes={InstanceDialect.SPEC: f"Z-API's shape (the spec names no media call); {MEDIA_DELAY_NOTE}",
           Z: f"{MEDIA_DELAY_NOTE}; {GROUP_AS_DIGITS}"},
    writes=True,
)
SEND_VIDEO: Operation[m.SendVideo, m.SendResult] = Operation(
    id=OperationId.SEND_VIDEO, number=None, family=INST, method="POST", path="send-video",
    request=m.SendVideo, result=m.SendResult, title="Send video", section=Section.CHATS, sends=SendKind.VIDEO,
    notes={InstanceDialect.SPEC: f"Z-API's shape (the spec names no media call); {MEDIA_DELAY_NOTE}",
           Z: f"{MEDIA_DELAY_NOTE}; {GROUP_AS_DIGITS}"},
    writes=True,
)
SEND_AUDIO: Operation[m.SendAudio, m.SendResult] = Operation(
    id=OperationId.SEND_AUDIO, number=None, family=INST, method="POST", path="send-audio",
    request=m.SendAudio, result=m.SendResult, title="Send audio", section=Section.CHATS, sends=SendKind.AUDIO,
    notes={InstanceDialect.SPEC: f"Z-API's shape (the spec names no media call); {MEDIA_DELAY_NOTE}",
           Z: f"{MEDIA_DELAY_NOTE}; {GROUP_AS_DIGITS}"},
    writes=True,
)
SEND_DOCUMENT: Operation[m.SendDocument, m.SendResult] = Operation(
    id=OperationId.SEND_DOCUMENT, number=None, family=INST, method="POST", path="send-document/{extension}",
    request=m.SendDocument, result=m.SendResult, title="Send document", section=Section.CHATS,
    sends=SendKind.DOCUMENT, path_params=("extension",),
    notes={InstanceDialect.SPEC: f"Z-API's shape (the spec names no media call); the extension goes in the path; "
                                 f"{MEDIA_DELAY_NOTE}",
           Z: f"the extension goes in the path; {MEDIA_DELAY_NOTE}; {GROUP_AS_DIGITS}"},
    writes=True,
)

# -- instance family: privacy, groups, communities, chats, profile, catalog, webhook, status

PRIVACY_GROUP_ADD: Operation[m.PrivacyGroupAdd, m.OperationResult] = Operation(
    id=OperationId.PRIVACY_GROUP_ADD, number=6, family=INST, method="POST", path="privacy/group-add",
    request=m.PrivacyGroupAdd, result=m.OperationResult, title="Privacy: who may add me to groups",
    section=Section.PRIVACY, notes={Z: "CONTACT goes out as CONTACTS; NONE is refused"},
    writes=True,
)
PRIVACY_LAST_SEEN: Operation[m.PrivacyLastSeen, m.OperationResult] = Operation(
    id=OperationId.PRIVACY_LAST_SEEN, number=7, family=INST, method="POST", path="privacy/last-seen",
    request=m.PrivacyLastSeen, result=m.OperationResult, title="Privacy: who may see my last seen",
    section=Section.PRIVACY, notes={Z: "CONTACT goes out as CONTACTS"},
    writes=True,
)
ADD_PARTICIPANT: Operation[m.AddParticipant, m.AddParticipantResult] = Operation(
    id=OperationId.ADD_PARTICIPANT, number=8, family=INST, method="POST", path="add-participant",
    request=m.AddParticipant, result=m.AddParticipantResult, title="Add participants to a group",
    section=Section.GROUPS, notes={Z: "answers {value: true} without added/failed lists"},
    writes=True,
)
UPDATE_GROUP_NAME: Operation[m.UpdateGroupName, m.OperationResult] = Operation(
    id=OperationId.UPDATE_GROUP_NAME, number=9, family=INST, method="POST", path="update-group-name",
    request=m.UpdateGroupName, result=m.OperationResult, title="Rename a group", section=Section.GROUPS,
    writes=True,
)
GROUP_METADATA: Operation[m.GroupMetadataQuery, m.GroupMetadata] = Operation(
    id=OperationId.GROUP_METADATA, number=10, family=INST, method="GET", path="group-metadata/{GROUP_PHONE_NUMBER}",
    request=m.GroupMetadataQuery, result=m.GroupMetadata, title="Group metadata", section=Section.GROUPS,
    path_params=("GROUP_PHONE_NUMBER",),
    writes=False,
)
ADD_ADMIN: Operation[m.AddAdmin, m.OperationResult] = Operation(
    id=OperationId.ADD_ADMIN, number=11, family=INST, method="POST", path="add-admin",
    request=m.AddAdmin, result=m.OperationResult, title="Promote community administrators",
    section=Section.COMMUNITIES,
    writes=True,
)
REDEFINE_INVITATION_LINK: Operation[m.RedefineInvitationLink, m.InviteLink] = Operation(
    id=OperationId.REDEFINE_INVITATION_LINK, number=12, family=INST, method="POST",
    path="redefine-invitation-link/{communityId}", request=m.RedefineInvitationLink, result=m.InviteLink,
    title="Reset community invite link", section=Section.COMMUNITIES, destructive=True,
    path_params=("communityId",),
    notes={Z: "no body (the community is in the path); groupsPhones is refused"},
    writes=True,
)
MODIFY_CHAT: Operation[m.ModifyChat, m.OperationResult] = Operation(
    id=OperationId.MODIFY_CHAT, number=13, family=INST, method="POST", path="modify-chat",
    request=m.ModifyChat, result=m.OperationResult, title="Act on a chat", section=Section.CHATS,
    notes={Z: f"{GROUP_AS_DIGITS}; answers {{value}}"},
    writes=True,
)
PROFILE_DESCRIPTION: Operation[m.ProfileDescription, m.OperationResult] = Operation(
    id=OperationId.PROFILE_DESCRIPTION, number=14, family=INST, method="PUT", path="profile-description",
    request=m.ProfileDescription, result=m.OperationResult, title="Set profile description",
    section=Section.SETTINGS,
    writes=True,
)
PRODUCTS: Operation[m.ProductQuery, m.Product] = Operation(
    id=OperationId.PRODUCTS, number=15, family=INST, method="GET", path="products/{PRODUCT_ID}",
    request=m.ProductQuery, result=m.Product, title="Look up catalog product", section=Section.CATALOG,
    path_params=("PRODUCT_ID",),
    writes=False,
)
UPDATE_WEBHOOK_DELIVERY: Operation[m.DeliveryWebhook, m.OperationResult] = Operation(
    id=OperationId.UPDATE_WEBHOOK_DELIVERY, number=16, family=INST, method="PUT", path="update-webhook-delivery",
    request=m.DeliveryWebhook, result=m.OperationResult, title="Set delivery webhook", section=Section.SETTINGS,
    writes=True,
)
STATUS: Operation[m.NoBody, c.InstanceStatus] = Operation(
    id=OperationId.STATUS, number=None, family=INST, method="GET", path="status",
    request=m.NoBody, result=c.InstanceStatus, title="Connection status", section=Section.SETTINGS,
    notes={Z: "error is a status text (You are already connected / You need to restore the "
                                  "session / You are not connected), not a failure"},
    writes=False,
)

# -- instance family: Z-API's lists

LIST_CHATS: Operation[m.ListPage, m.ChatList] = Operation(
    id=OperationId.LIST_CHATS, number=None, family=INST, method="GET", path="chats",
    request=m.ListPage, result=m.ChatList, title="List chats (Z-API)", section=Section.CHATS,
    query=_page_query,
    notes={Z: PAGED},
    writes=False,
)
LIST_CONTACTS: Operation[m.ListPage, m.ContactList] = Operation(
    id=OperationId.LIST_CONTACTS, number=None, family=INST, method="GET", path="contacts",
    request=m.ListPage, result=m.ContactList, title="List contacts (Z-API)", section=Section.CHATS,
    query=_page_query,
    notes={Z: "page and pageSize go in the query; name is set only for saved contacts, notify is the push name"},
    writes=False,
)
LIST_GROUPS: Operation[m.ListPage, m.ChatList] = Operation(
    id=OperationId.LIST_GROUPS, number=None, family=INST, method="GET", path="groups",
    request=m.ListPage, result=m.ChatList, title="List groups (Z-API)", section=Section.GROUPS,
    query=_page_query,
    notes={Z: PAGED},
    writes=False,
)

# A chat's recent messages, read back (issue 35, catch-up: what the listener missed while it was down). Z-API pages
# one chat back by the last id it gave; Evolution reads its own message table (kept while DATABASE_SAVE_DATA_NEW_MESSAGE
# is on), every chat at once when no phone is given.

FIND_MESSAGES: Operation[m.ChatMessagesQuery, m.MessageHistory] = Operation(
    id=OperationId.FIND_MESSAGES, number=None, family=INST, method="GET", path="chat-messages/{phone}",
    request=m.ChatMessagesQuery, result=m.MessageHistory, title="Read a chat's messages back", section=Section.CHATS,
    path_params=("phone",), query=_chat_messages_query,
    notes={Z: "amount and lastMessageId go in the query; answers a bare array, newest first, momment in ms",
           E: "POST chat/findMessages/{instance} {where: {key: {remoteJid}}, page, offset}; answers "
              "{messages: {total, pages, currentPage, records}}, newest first; no phone: every chat"},
    writes=False,
)

# -- instance family: pairing and the connection (docs/gateways/zapi.md §3.1; Z-API/docs en/instance/*.mdx). The
# spec has only the status read above; the spec dialect refuses these before sending.

QR_CODE: Operation[m.NoBody, c.ZapiQr] = Operation(
    id=OperationId.QR_CODE, number=None, family=INST, method="GET", path="qr-code",
    request=m.NoBody, result=c.ZapiQr, title="QR code to pair (Z-API)", section=Section.ACCOUNT,
    notes={Z: "answers {value}: the QR text (or a PNG data URL); a new code every 20 s"},
    writes=False,
)
QR_CODE_IMAGE: Operation[m.NoBody, c.ZapiQr] = Operation(
    id=OperationId.QR_CODE_IMAGE, number=None, family=INST, method="GET", path="qr-code/image",
    request=m.NoBody, result=c.ZapiQr, title="QR code image to pair (Z-API)", section=Section.ACCOUNT,
    notes={Z: "answers {value: data:image/png;base64,...}"},
    writes=False,
)
PHONE_CODE: Operation[c.PhoneCodeQuery, c.ZapiPhoneCode] = Operation(
    id=OperationId.PHONE_CODE, number=None, family=INST, method="GET", path="phone-code/{phone}",
    request=c.PhoneCodeQuery, result=c.ZapiPhoneCode, title="Phone code to pair (Z-API)", section=Section.ACCOUNT,
    path_params=("phone",), notes={Z: "the number goes in the path; answers {value: <code to type on the phone>}"},
    writes=True,
)
RESTART: Operation[m.NoBody, m.OperationResult] = Operation(
    id=OperationId.RESTART, number=None, family=INST, method="GET", path="restart",
    request=m.NoBody, result=m.OperationResult, title="Restart the instance (Z-API)", section=Section.ACCOUNT,
    notes={Z: "GET, no body; reconnects the paired phone without a new QR code"},
    writes=True,
)
DISCONNECT: Operation[m.NoBody, m.OperationResult] = Operation(
    id=OperationId.DISCONNECT, number=None, family=INST, method="GET", path="disconnect",
    request=m.NoBody, result=m.OperationResult, title="Log out the phone (Z-API)", section=Section.ACCOUNT,
    destructive=True, notes={Z: "GET, no body; unpairs the phone: pairing again needs a new QR or phone code"},
    writes=True,
)

# Z-API's "Device info" (developer.z-api.io/en/instance/device): the paired phone's number, name and device. The
# status read never says the number; the connection watch reads this once per connection (tui.core.watch).

DEVICE: Operation[m.NoBody, c.ZapiDevice] = Operation(
    id=OperationId.DEVICE, number=None, family=INST, method="GET", path="device",
    request=m.NoBody, result=c.ZapiDevice, title="Paired phone's number and device (Z-API)", section=Section.ACCOUNT,
    notes={Z: "answers {phone, imgUrl, about, name, device: {sessionName, device_model}, originalDevice, sessionId, "
              "isBusiness} of the connected phone"},
    writes=False,
)

# -- instance family: the webhook settings the doctor reads and sets (issue 24; developer.z-api.io en/instance/me,
# en/webhooks/update-every-webhooks). The spec can set only the delivery URL (16) and read none.

INSTANCE_DATA: Operation[m.NoBody, c.ZapiInstanceData] = Operation(
    id=OperationId.INSTANCE_DATA, number=None, family=INST, method="GET", path="me",
    request=m.NoBody, result=c.ZapiInstanceData, title="Instance data and callback URLs (Z-API)",
    section=Section.SETTINGS, notes={Z: "answers the instance's settings, among them deliveryCallbackUrl, receivedCallbackUrl, "
              "messageStatusCallbackUrl, presenceChatCallbackUrl, connectedCallbackUrl, disconnectedCallbackUrl"},
    writes=False,
)
UPDATE_EVERY_WEBHOOKS: Operation[c.EveryCallback, m.OperationResult] = Operation(
    id=OperationId.UPDATE_EVERY_WEBHOOKS, number=None, family=INST, method="PUT", path="update-every-webhooks",
    request=c.EveryCallback, result=m.OperationResult, title="Point every callback at one URL (Z-API)",
    section=Section.SETTINGS,
    notes={Z: "{value, notifySentByMe?}: delivery, received, status, presence, connected and disconnected at once; "
              "Z-API takes only https URLs"},
    writes=True,
)

# -- session family

HMAC_SET: Operation[m.HmacKey, m.Details] = Operation(
    id=OperationId.HMAC_SET, number=17, family=SESS, method="POST", path="session/hmac/config",
    request=m.HmacKey, result=m.Details, title="Set HMAC signing key", section=Section.SETTINGS,
    writes=True,
)
HMAC_STATUS: Operation[m.NoBody, m.HmacStatus] = Operation(
    id=OperationId.HMAC_STATUS, number=18, family=SESS, method="GET", path="session/hmac/config",
    request=m.NoBody, result=m.HmacStatus, title="HMAC signing key status", section=Section.SETTINGS,
    writes=False,
)
HMAC_DELETE: Operation[m.NoBody, m.Details] = Operation(
    id=OperationId.HMAC_DELETE, number=19, family=SESS, method="DELETE", path="session/hmac/config",
    request=m.NoBody, result=m.Details, title="Remove HMAC signing key", section=Section.SETTINGS,
    destructive=True, writes=True,
)
PROXY: Operation[m.ProxyConfig, m.Details] = Operation(
    id=OperationId.PROXY, number=20, family=SESS, method="POST", path="session/proxy",
    request=m.ProxyConfig, result=m.Details, title="Set proxy", section=Section.SETTINGS,
    writes=True,
)
GROUP_INFO: Operation[m.GroupInfoRequest, m.GroupInfo] = Operation(
    id=OperationId.GROUP_INFO, number=21, family=SESS, method="GET", path="group/info",
    request=m.GroupInfoRequest, result=m.GroupInfo, title="Group information (session)", section=Section.GROUPS,
    query=_group_info_query,
    writes=False,
)
GROUP_CREATE: Operation[m.GroupCreate, m.GroupInfo] = Operation(
    id=OperationId.GROUP_CREATE, number=22, family=SESS, method="POST", path="group/create",
    request=m.GroupCreate, result=m.GroupInfo, title="Create a group", section=Section.GROUPS,
    writes=True,
)
SEND_CONTACT: Operation[m.ContactCard, m.ContactSent] = Operation(
    id=OperationId.SEND_CONTACT, number=23, family=SESS, method="POST", path="chat/send/contact",
    request=m.ContactCard, result=m.ContactSent, title="Send contact card", section=Section.CHATS,
    sends=SendKind.CONTACT,
    writes=True,
)
CHAT_SEND_IMAGE: Operation[m.ChatSendImage, m.ContactSent] = Operation(
    id=OperationId.CHAT_SEND_IMAGE, number=None, family=SESS, method="POST", path="chat/send/image",
    request=m.ChatSendImage, result=m.ContactSent, title="Send image (WuzAPI)", section=Section.CHATS,
    sends=SendKind.IMAGE, notes={W: "Image is a PNG or JPEG data URL; answers {Details, Id, Timestamp}"},
    writes=True,
)
CHAT_SEND_VIDEO: Operation[m.ChatSendVideo, m.ContactSent] = Operation(
    id=OperationId.CHAT_SEND_VIDEO, number=None, family=SESS, method="POST", path="chat/send/video",
    request=m.ChatSendVideo, result=m.ContactSent, title="Send video (WuzAPI)", section=Section.CHATS,
    sends=SendKind.VIDEO, notes={W: "Video is an MP4 or 3GPP data URL"},
    writes=True,
)
CHAT_SEND_AUDIO: Operation[m.ChatSendAudio, m.ContactSent] = Operation(
    id=OperationId.CHAT_SEND_AUDIO, number=None, family=SESS, method="POST", path="chat/send/audio",
    request=m.ChatSendAudio, result=m.ContactSent, title="Send voice note (WuzAPI)", section=Section.CHATS,
    sends=SendKind.AUDIO, notes={W: "Audio is Opus in Ogg, data:audio/ogg;base64,…; sent as a voice note"},
    writes=True,
)
CHAT_SEND_DOCUMENT: Operation[m.ChatSendDocument, m.ContactSent] = Operation(
    id=OperationId.CHAT_SEND_DOCUMENT, number=None, family=SESS, method="POST", path="chat/send/document",
    request=m.ChatSendDocument, result=m.ContactSent, title="Send document (WuzAPI)", section=Section.CHATS,
    sends=SendKind.DOCUMENT, notes={W: "Document goes out as data:application/octet-stream;base64,… whatever its type; FileName required; "
              "a caption goes with it"},
    writes=True,
)
WEBHOOK: Operation[m.WebhookUpdate, m.WebhookConfig] = Operation(
    id=OperationId.WEBHOOK, number=24, family=SESS, method="PUT", path="webhook",
    request=m.WebhookUpdate, result=m.WebhookConfig, title="Set session webhook", section=Section.SETTINGS,
    notes={W: "a partial update reads GET /webhook and sends the whole {webhook, events, active}, since WuzAPI "
              "blanks what it is not sent"},
    writes=True,
)
USER_CONTACTS: Operation[m.NoBody, m.ContactList] = Operation(
    id=OperationId.USER_CONTACTS, number=None, family=SESS, method="GET", path="user/contacts",
    request=m.NoBody, result=m.ContactList, title="List contacts (WuzAPI)", section=Section.CHATS,
    notes={W: "answers a map from JID to {FullName, FirstName, PushName, BusinessName}"},
    writes=False,
)
USER_LID: Operation[m.UserLidQuery, m.UserLid] = Operation(
    id=OperationId.USER_LID, number=None, family=SESS, method="GET", path="user/lid/{jid}",
    request=m.UserLidQuery, result=m.UserLid, title="Look up a number's LID (WuzAPI)", section=Section.CHATS,
    path_params=("jid",),
    notes={W: "answers {jid, lid}: the LID WhatsApp hides this number behind, as the inbox's identities learn it"},
    writes=False,
)
MESSAGE_HISTORY: Operation[m.ChatHistoryQuery, m.MessageHistory] = Operation(
    id=OperationId.MESSAGE_HISTORY, number=None, family=SESS, method="GET", path="chat/history",
    request=m.ChatHistoryQuery, result=m.MessageHistory, title="Read a chat's messages back (WuzAPI)",
    section=Section.CHATS, query=_history_query,
    notes={W: "kept only while the user's history setting is above 0 (else 501), the newest `history` per chat; "
              "chat_jid=index lists every chat with its newest message's time"},
    writes=False,
)
WEBHOOK_READ: Operation[m.NoBody, m.WebhookConfig] = Operation(
    id=OperationId.WEBHOOK_READ, number=None, family=SESS, method="GET", path="webhook",
    request=m.NoBody, result=m.WebhookConfig, title="Read session webhook", section=Section.SETTINGS,
    notes={W: "answers {webhook, subscribe}: no events reads [\"\"], and nothing says whether delivery is on"},
    writes=False,
)
GROUP_LIST: Operation[m.NoBody, m.GroupList] = Operation(
    id=OperationId.GROUP_LIST, number=None, family=SESS, method="GET", path="group/list",
    request=m.NoBody, result=m.GroupList, title="List groups (WuzAPI)", section=Section.GROUPS,
    notes={W: "answers {Groups: [GroupInfo…]}, Groups null when there are none"},
    writes=False,
)


# -- session family: pairing and the connection (docs/gateways/wuzapi.md §2.2-2.3; asternic/wuzapi handlers.go). The
# spec has none of these: its dialect refuses them before sending.

SESSION_STATUS: Operation[m.NoBody, c.SessionStatus] = Operation(
    id=OperationId.SESSION_STATUS, number=None, family=SESS, method="GET", path="session/status",
    request=m.NoBody, result=c.SessionStatus, title="Session status (WuzAPI)", section=Section.ACCOUNT,
    notes={W: "answers {Connected, LoggedIn} (older) or {connected, loggedIn, jid, ...} (newer)"},
    writes=False,
)
SESSION_CONNECT: Operation[c.SessionConnect, c.SessionConnected] = Operation(
    id=OperationId.SESSION_CONNECT, number=None, family=SESS, method="POST", path="session/connect",
    request=c.SessionConnect, result=c.SessionConnected, title="Connect the session (WuzAPI)",
    section=Section.ACCOUNT, notes={W: "always sends Subscribe (the profile's event kinds: WuzAPI stores what it is sent, and an empty list "
              "stores none) and Immediate: true"},
    writes=True,
)
SESSION_QR: Operation[m.NoBody, c.SessionQr] = Operation(
    id=OperationId.SESSION_QR, number=None, family=SESS, method="GET", path="session/qr",
    request=m.NoBody, result=c.SessionQr, title="QR code to pair (WuzAPI)", section=Section.ACCOUNT,
    notes={W: "after connect; answers {QRCode: data:image/png;base64,...}, a new code every 20 s"},
    writes=False,
)
SESSION_PAIRPHONE: Operation[c.PairPhone, c.SessionLinkingCode] = Operation(
    id=OperationId.SESSION_PAIRPHONE, number=None, family=SESS, method="POST", path="session/pairphone",
    request=c.PairPhone, result=c.SessionLinkingCode, title="Phone code to pair (WuzAPI)", section=Section.ACCOUNT,
    notes={W: "after connect; answers {LinkingCode: XXXX-XXXX}"},
    writes=True,
)
SESSION_DISCONNECT: Operation[m.NoBody, m.Details] = Operation(
    id=OperationId.SESSION_DISCONNECT, number=None, family=SESS, method="POST", path="session/disconnect",
    request=m.NoBody, result=m.Details, title="Disconnect the session (WuzAPI)", section=Section.ACCOUNT,
    notes={W: "keeps the pairing (connect again reconnects); WuzAPI also clears the stored event kinds"},
    writes=True,
)
SESSION_LOGOUT: Operation[m.NoBody, m.Details] = Operation(
    id=OperationId.SESSION_LOGOUT, number=None, family=SESS, method="POST", path="session/logout",
    request=m.NoBody, result=m.Details, title="Log out the session (WuzAPI)", section=Section.ACCOUNT,
    destructive=True, notes={W: "unpairs the phone: pairing again needs a new QR or phone code"},
    writes=True,
)


# ---------------------------------------------------------------------------------------------------------------
# The registry: every row by id, its types forgotten. Code that names an operation uses its constant above and
# keeps the types; only a lookup by an id known at run time (`gateway-tui call`, the palette, a section's
# `open_operation`, the sandbox's routes) goes through here.

ErasedOperation = Operation[m.Request, BaseModel]
"""A row whose request and answer types are forgotten: it takes any `m.Request` (`encode` refuses with
TypeError one that is not its own, before anything is sent) and answers some `BaseModel`."""


def erased(op: Operation[Req, Res]) -> Operation[m.Request, Res]:
    """The one place a row's request type is forgotten (its answer type is kept: `Res` is covariant, so the
    result is also an `ErasedOperation`). Sound because `Operation.encode` checks the request's type at run
    time and refuses another with TypeError, before anything is sent."""
    return cast("Operation[m.Request, Res]", op)


class OperationTable:
    """Rows by id, in the order they were written. The app reads the one module-level `TABLE` (through
    `all_operations`, `operation` and `in_section`, which look it up on every call); `with_row` makes a copy
    with one more row, which a test puts in its place to show that every reader picks a new row up."""

    def __init__(self, rows: tuple[ErasedOperation, ...]) -> None:
        self.rows = rows
        # OperationId is a StrEnum: a key is found by its member or by its plain string id alike.
        self.by_id: Mapping[str, ErasedOperation] = {op.id: op for op in rows}
        if len(self.by_id) != len(rows):
            raise ValueError("two rows share an id")

    def with_row(self, op: Operation[Req, Res]) -> OperationTable:
        return OperationTable((*self.rows, erased(op)))

    def __iter__(self) -> Iterator[ErasedOperation]:
        return iter(self.rows)


def _rows_of_this_module() -> tuple[ErasedOperation, ...]:
    """Every row constant written above, in the order written: a new row is in the table by being written."""
    return tuple(erased(value) for value in globals().values() if isinstance(value, Operation))


TABLE = OperationTable(_rows_of_this_module())
OPERATIONS: Mapping[OperationId, ErasedOperation] = {op.id: op for op in TABLE}
assert set(OPERATIONS) == set(OperationId), (
    f"every OperationId has exactly one row: no row for {set(OperationId) - set(OPERATIONS)}"
)
MEDIA_OPERATIONS = frozenset(op.id for op in TABLE if op.sends in MEDIA_KINDS)

# Issue 23's pairing and connection calls of both gateways (the status reads included).
PAIRING_CALLS: tuple[OperationId, ...] = (
    OperationId.QR_CODE, OperationId.QR_CODE_IMAGE, OperationId.PHONE_CODE, OperationId.RESTART,
    OperationId.DISCONNECT, OperationId.SESSION_STATUS, OperationId.SESSION_CONNECT, OperationId.SESSION_QR,
    OperationId.SESSION_PAIRPHONE, OperationId.SESSION_DISCONNECT, OperationId.SESSION_LOGOUT,
)

def operation(op_id: OperationId | str) -> ErasedOperation:
    """The row of `op_id`; KeyError naming the known ids when there is none."""
    try:
        return TABLE.by_id[op_id]
    except KeyError:
        known = ", ".join(sorted(TABLE.by_id))
        raise KeyError(f"no operation {op_id!r}; known: {known}") from None


def in_section(section: Section) -> tuple[ErasedOperation, ...]:
    return tuple(op for op in TABLE if op.section is section)


def all_operations() -> tuple[ErasedOperation, ...]:
    return TABLE.rows
