"""Every gateway operation as one row of one table: what it is, where it lives, and how each dialect writes it.

    op = OPERATIONS[OperationId.SEND_POLL]
    wire = op.encode(SendPoll(...), InstanceDialect.ZAPI)   # WireRequest(path=..., body=..., query=...)

The client, the sandbox's routes, the command line (`gateway-tui call`), the palette, help and the sections'
dispatch all read this table; no other module keeps a list of operations.

Dialects (research/zapi.md, research/wuzapi.md): the spec is the contract and the default. A profile may speak
its real gateway's dialect instead: `zapi` for the instance family, `wuzapi` for the session family. A dialect
only changes how a request is written; the request models always carry the spec's field names. A request that
a dialect cannot express raises `DialectRefusal` naming the field, before anything is sent.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from pydantic import BaseModel

from tui.api import models as m
from tui.api.dialects import Dialect, InstanceDialect, SessionDialect
from tui.api.errors import GatewayError

__all__ = [
    "OPERATIONS",
    "Dialect",
    "DialectRefusal",
    "Family",
    "InstanceDialect",
    "Operation",
    "OperationId",
    "Section",
    "SessionDialect",
    "WireRequest",
    "all_operations",
    "operation",
]


class Family(enum.StrEnum):
    INSTANCE = "instance"
    SESSION = "session"


class Section(enum.StrEnum):
    """Where an operation lives in the app (ids of `tui.screens.main.SECTIONS`)."""

    CHATS = "chats"
    GROUPS = "groups"
    COMMUNITIES = "communities"
    PRIVACY = "privacy"
    CATALOG = "catalog"
    SETTINGS = "settings"


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
    # session family
    HMAC_SET = "hmac-set"
    HMAC_STATUS = "hmac-status"
    HMAC_DELETE = "hmac-delete"
    PROXY = "proxy"
    GROUP_INFO = "group-info"
    GROUP_CREATE = "group-create"
    SEND_CONTACT = "send-contact"
    WEBHOOK = "webhook"
    USER_CONTACTS = "user-contacts"
    GROUP_LIST = "group-list"


class DialectRefusal(GatewayError):
    """The request is valid in the spec but this dialect cannot say it. Raised before anything is sent."""

    def __init__(self, field_name: str, problem: str) -> None:
        super().__init__(f"Not sent: {field_name} {problem}")
        self.field = field_name
        self.problem = problem


@dataclass(frozen=True)
class WireRequest:
    """What goes on the wire: the path after the family prefix (segments unquoted), body and query."""

    path: tuple[str, ...]
    body: dict[str, Any] | None
    query: dict[str, str] = field(default_factory=dict)


Req = TypeVar("Req", bound=m.Request)
Res = TypeVar("Res", bound=BaseModel)

Encoder = Callable[[Any], dict[str, Any] | None]
BodyEncoder = Callable[[Any], dict[str, Any]]


def _spec_body(request: m.Request) -> dict[str, Any]:
    return request.wire()


def _no_body(_request: m.Request) -> None:
    return None


@dataclass(frozen=True)
class Operation(Generic[Req, Res]):
    """One operation. `path` is a template over the request's field names, e.g. `group-metadata/{GROUP_PHONE_NUMBER}`;
    `bodies` maps a dialect to how it writes the body (absent: the spec's body, unchanged)."""

    id: OperationId
    number: int | None  # the spec's operation number (§4); None for those it names only
    family: Family
    method: str
    path: str
    request: type[Req]
    result: type[Res]
    title: str
    section: Section
    destructive: bool = False
    is_send: bool = False
    spec_body: Encoder = _spec_body
    bodies: Mapping[Dialect, Encoder] = field(default_factory=dict)
    query: Callable[[Any], dict[str, str]] | None = None
    path_params: tuple[str, ...] = ()
    notes: Mapping[Dialect, str] = field(default_factory=dict)  # what a dialect writes differently, for people

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

    def encode(self, request: Req, dialect: Dialect) -> WireRequest:
        """The request as `dialect` writes it; raises DialectRefusal when the dialect cannot express it."""
        if not isinstance(request, self.request):
            raise TypeError(f"{self.id} takes {self.request.__name__}, not {type(request).__name__}")
        encoder = self.bodies.get(dialect, self.spec_body)
        body = encoder(request)
        query = self.query(request) if self.query is not None else {}
        return WireRequest(self.wire_path(request), body, query)

    @property
    def path_template(self) -> str:
        return self.path


# ---------------------------------------------------------------------------------------------------------------
# Z-API wire forms (research/zapi.md §1.5, §2, §3)

ZAPI_DELAY_RULE = "Z-API waits whole seconds from 1 to 15 (1000 to 15000 milliseconds in steps of 1000)"
_GROUP_JID = re.compile(r"(\d+(?:-\d+)?)@g\.us")
_GROUP_ID = re.compile(r"(\d+(?:-\d+)?)-group")


def zapi_phone(value: str) -> str:
    """Z-API addresses a group as `<digits>-group` in `phone`; numbers pass unchanged."""
    match = _GROUP_JID.fullmatch(value)
    return f"{match.group(1)}-group" if match else value


def spec_phone(value: str) -> str:
    """The spec addresses a group as `<digits>@g.us` in sends; `-group` input is rewritten."""
    match = _GROUP_ID.fullmatch(value)
    return f"{match.group(1)}@g.us" if match else value


def zapi_delay_seconds(milliseconds: int) -> int:
    """The spec's `delayMessage` (ms) as Z-API's whole seconds, or DialectRefusal."""
    seconds, rest = divmod(milliseconds, 1000)
    if rest or not 1 <= seconds <= 15:
        raise DialectRefusal("delayMessage", f"of {milliseconds} ms cannot be written: {ZAPI_DELAY_RULE}")
    return seconds


def _with_phones(body: dict[str, Any], convert: Callable[[str], str], *keys: str) -> dict[str, Any]:
    for key in keys:
        if key in body:
            body[key] = convert(body[key])
    return body


def _spec_send(*keys: str) -> BodyEncoder:
    def encode(request: m.Request) -> dict[str, Any]:
        return _with_phones(request.wire(), spec_phone, *keys)

    return encode


def _zapi_send(*keys: str) -> BodyEncoder:
    def encode(request: m.Request) -> dict[str, Any]:
        body = _with_phones(request.wire(), zapi_phone, *keys)
        if "delayMessage" in body:
            body["delayMessage"] = zapi_delay_seconds(body["delayMessage"])
        return body

    return encode


def _zapi_button_actions(request: m.SendButtonActions) -> dict[str, Any]:
    body = _zapi_send("phone")(request)
    body["buttonActions"] = [
        {"id": button["id"], "type": "REPLY", "label": button["text"]} for button in body.pop("buttons")
    ]
    return body


ZAPI_LINK_PREVIEW_RULE = "Z-API requires image, title and linkDescription on every link message"


def _zapi_link(request: m.SendLink) -> dict[str, Any]:
    for name in ("image", "title", "linkDescription"):
        if not (getattr(request, name) or "").strip():
            raise DialectRefusal(name, f"is required: {ZAPI_LINK_PREVIEW_RULE}")
    return _zapi_send("phone")(request)


def _zapi_poll(request: m.SendPoll) -> dict[str, Any]:
    """Z-API's `pollMaxOptions` is "the maximum number of votes per person" (send-poll.mdx): the spec's
    `selectableCount` N (1 to the number of options, checked by the model) goes out as itself."""
    body = _zapi_send("phone")(request)
    body["pollMaxOptions"] = body.pop("selectableCount", 1)
    return body


def _zapi_location(request: m.SendLocation) -> dict[str, Any]:
    body = _zapi_send("phone")(request)
    body["latitude"] = repr(float(body.pop("lat")))
    body["longitude"] = repr(float(body.pop("lng")))
    return body


def _zapi_scope(scope: str, field_name: str, *, allow_none: bool) -> str:
    if scope == m.PrivacyScope.NONE and not allow_none:
        raise DialectRefusal(field_name, "cannot be NONE: Z-API offers ALL, CONTACT or CONTACT_BLACKLIST here")
    return "CONTACTS" if scope == m.PrivacyScope.CONTACT else scope


def _zapi_group_add(request: m.PrivacyGroupAdd) -> dict[str, Any]:
    body = request.wire()
    body["type"] = _zapi_scope(body["type"], "type", allow_none=False)
    return body


def _zapi_last_seen(request: m.PrivacyLastSeen) -> dict[str, Any]:
    body = request.wire()
    body["visualizationType"] = _zapi_scope(body["visualizationType"], "visualizationType", allow_none=True)
    return body


def _zapi_redefine_link(request: m.RedefineInvitationLink) -> None:
    if request.groupsPhones:
        raise DialectRefusal("groupsPhones", "must be empty: Z-API resets the community's own link only")
    return None  # Z-API takes the community from the path; the docs ask for no body


# ---------------------------------------------------------------------------------------------------------------
# Lists (research/zapi.md §3.6, research/wuzapi.md §2.8): the gateways offer them, the spec does not.


def _not_in_spec(what: str, where: str) -> Encoder:
    def refuse(_request: m.Request) -> None:
        raise DialectRefusal(what, f"cannot be listed in the spec dialect: the service has no such list ({where})")

    return refuse


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
Z = InstanceDialect.ZAPI


def _op(*args: Any, **kwargs: Any) -> Operation[Any, Any]:
    return Operation(*args, **kwargs)


def _group_info_query(request: m.GroupInfoRequest) -> dict[str, str]:
    # The spec puts GroupJID in a GET body; the real WuzAPI reads only the `groupJID` query parameter.
    return {"groupJID": request.GroupJID}


_TABLE: tuple[Operation[Any, Any], ...] = (
    _op(OperationId.SEND_TEXT, None, INST, "POST", "send-text", m.SendText, m.SendResult, "Send text",
        Section.CHATS, is_send=True, spec_body=_spec_send("phone"), bodies={Z: _zapi_send("phone")},
        notes={Z: "a group is sent as <digits>-group"}),
    _op(OperationId.SEND_BUTTON_ACTIONS, 1, INST, "POST", "send-button-actions", m.SendButtonActions, m.SendResult,
        "Send quick-reply buttons", Section.CHATS, is_send=True, spec_body=_spec_send("phone"),
        bodies={Z: _zapi_button_actions},
        notes={Z: "buttons go out as buttonActions [{id, type: REPLY, label}]"}),
    _op(OperationId.SEND_BUTTON_LIST, None, INST, "POST", "send-button-list", m.SendButtonList, m.SendResult,
        "Send button list", Section.CHATS, is_send=True, spec_body=_spec_send("phone"),
        bodies={Z: _zapi_send("phone")},
        notes={Z: "a group is sent as <digits>-group"}),
    _op(OperationId.SEND_LINK, 2, INST, "POST", "send-link", m.SendLink, m.SendResult, "Send link with preview",
        Section.CHATS, is_send=True, spec_body=_spec_send("phone"), bodies={Z: _zapi_link},
        notes={Z: "image, title and linkDescription are required; a group is sent as <digits>-group"}),
    _op(OperationId.SEND_POLL, 3, INST, "POST", "send-poll", m.SendPoll, m.SendResult, "Send poll", Section.CHATS,
        is_send=True, spec_body=_spec_send("phone"), bodies={Z: _zapi_poll},
        notes={Z: "selectableCount N goes out as pollMaxOptions N (the most options a voter may pick)"}),
    _op(OperationId.SEND_LOCATION, 4, INST, "POST", "send-location", m.SendLocation, m.SendResult, "Send location",
        Section.CHATS, is_send=True, spec_body=_spec_send("phone"), bodies={Z: _zapi_location},
        notes={Z: "lat/lng go out as latitude/longitude strings; delayMessage in whole seconds 1-15 (give 1000-15000 ms)"}),
    _op(OperationId.SEND_STICKER, 5, INST, "POST", "send-sticker", m.SendSticker, m.SendResult, "Send sticker",
        Section.CHATS, is_send=True, spec_body=_spec_send("phone"), bodies={Z: _zapi_send("phone")},
        notes={Z: "delayMessage in whole seconds 1-15 (give 1000-15000 ms); a group is sent as <digits>-group"}),
    _op(OperationId.FORWARD_MESSAGE, None, INST, "POST", "forward-message", m.ForwardMessage, m.SendResult,
        "Forward a message", Section.CHATS, is_send=True, spec_body=_spec_send("phone", "messagePhone"),
        bodies={Z: _zapi_send("phone", "messagePhone")},
        notes={Z: "phone and messagePhone groups are sent as <digits>-group"}),
    _op(OperationId.PRIVACY_GROUP_ADD, 6, INST, "POST", "privacy/group-add", m.PrivacyGroupAdd, m.OperationResult,
        "Privacy: who may add me to groups", Section.PRIVACY, bodies={Z: _zapi_group_add},
        notes={Z: "CONTACT goes out as CONTACTS; NONE is refused"}),
    _op(OperationId.PRIVACY_LAST_SEEN, 7, INST, "POST", "privacy/last-seen", m.PrivacyLastSeen, m.OperationResult,
        "Privacy: who may see my last seen", Section.PRIVACY, bodies={Z: _zapi_last_seen},
        notes={Z: "CONTACT goes out as CONTACTS"}),
    _op(OperationId.ADD_PARTICIPANT, 8, INST, "POST", "add-participant", m.AddParticipant, m.AddParticipantResult,
        "Add participants to a group", Section.GROUPS,
        notes={Z: "answers {value: true} without added/failed lists"}),
    _op(OperationId.UPDATE_GROUP_NAME, 9, INST, "POST", "update-group-name", m.UpdateGroupName, m.OperationResult,
        "Rename a group", Section.GROUPS),
    _op(OperationId.GROUP_METADATA, 10, INST, "GET", "group-metadata/{GROUP_PHONE_NUMBER}", m.GroupMetadataQuery,
        m.GroupMetadata, "Group metadata", Section.GROUPS, spec_body=_no_body, path_params=("GROUP_PHONE_NUMBER",)),
    _op(OperationId.ADD_ADMIN, 11, INST, "POST", "add-admin", m.AddAdmin, m.OperationResult,
        "Promote community administrators", Section.COMMUNITIES),
    _op(OperationId.REDEFINE_INVITATION_LINK, 12, INST, "POST", "redefine-invitation-link/{communityId}",
        m.RedefineInvitationLink, m.InviteLink, "Reset community invite link", Section.COMMUNITIES,
        destructive=True, bodies={Z: _zapi_redefine_link}, path_params=("communityId",),
        notes={Z: "no body (the community is in the path); groupsPhones is refused"}),
    _op(OperationId.MODIFY_CHAT, 13, INST, "POST", "modify-chat", m.ModifyChat, m.OperationResult, "Act on a chat",
        Section.CHATS, spec_body=_spec_send("phone"), bodies={Z: _zapi_send("phone")},
        notes={Z: "a group is sent as <digits>-group; answers {value}"}),
    _op(OperationId.PROFILE_DESCRIPTION, 14, INST, "PUT", "profile-description", m.ProfileDescription,
        m.OperationResult, "Set profile description", Section.SETTINGS),
    _op(OperationId.PRODUCTS, 15, INST, "GET", "products/{PRODUCT_ID}", m.ProductQuery, m.Product,
        "Look up catalog product", Section.CATALOG, spec_body=_no_body, path_params=("PRODUCT_ID",)),
    _op(OperationId.UPDATE_WEBHOOK_DELIVERY, 16, INST, "PUT", "update-webhook-delivery", m.DeliveryWebhook,
        m.OperationResult, "Set delivery webhook", Section.SETTINGS),
    _op(OperationId.STATUS, None, INST, "GET", "status", m.NoBody, m.ConnectionStatus, "Connection status",
        Section.SETTINGS, spec_body=_no_body),
    _op(OperationId.LIST_CHATS, None, INST, "GET", "chats", m.ListPage, m.ChatList, "List chats (Z-API)",
        Section.CHATS, spec_body=_not_in_spec("chats", "Z-API's GET /chats"), bodies={Z: _no_body},
        query=_page_query, notes={Z: "page and pageSize go in the query; the answer is a bare array"}),
    _op(OperationId.LIST_CONTACTS, None, INST, "GET", "contacts", m.ListPage, m.ContactList,
        "List contacts (Z-API)", Section.CHATS, spec_body=_not_in_spec("contacts", "Z-API's GET /contacts"),
        bodies={Z: _no_body}, query=_page_query,
        notes={Z: "page and pageSize go in the query; name is set only for saved contacts, notify is the push name"}),
    _op(OperationId.LIST_GROUPS, None, INST, "GET", "groups", m.ListPage, m.ChatList, "List groups (Z-API)",
        Section.GROUPS, spec_body=_not_in_spec("groups", "Z-API's GET /groups"), bodies={Z: _no_body},
        query=_page_query, notes={Z: "page and pageSize go in the query; the answer is a bare array"}),
    _op(OperationId.HMAC_SET, 17, SESS, "POST", "session/hmac/config", m.HmacKey, m.Details, "Set HMAC signing key",
        Section.SETTINGS),
    _op(OperationId.HMAC_STATUS, 18, SESS, "GET", "session/hmac/config", m.NoBody, m.HmacStatus,
        "HMAC signing key status", Section.SETTINGS, spec_body=_no_body),
    _op(OperationId.HMAC_DELETE, 19, SESS, "DELETE", "session/hmac/config", m.NoBody, m.Details,
        "Remove HMAC signing key", Section.SETTINGS, destructive=True, spec_body=_no_body),
    _op(OperationId.PROXY, 20, SESS, "POST", "session/proxy", m.ProxyConfig, m.Details, "Set proxy",
        Section.SETTINGS),
    _op(OperationId.GROUP_INFO, 21, SESS, "GET", "group/info", m.GroupInfoRequest, m.GroupInfo,
        "Group information (session)", Section.GROUPS, query=_group_info_query),
    _op(OperationId.GROUP_CREATE, 22, SESS, "POST", "group/create", m.GroupCreate, m.GroupInfo, "Create a group",
        Section.GROUPS),
    _op(OperationId.SEND_CONTACT, 23, SESS, "POST", "chat/send/contact", m.ContactCard, m.ContactSent,
        "Send contact card", Section.CHATS, is_send=True),
    _op(OperationId.WEBHOOK, 24, SESS, "PUT", "webhook", m.WebhookUpdate, m.WebhookConfig, "Set session webhook",
        Section.SETTINGS, notes={SessionDialect.WUZAPI: "a partial update reads GET /webhook and sends the whole "
                                 "{webhook, events, active}, since WuzAPI blanks what it is not sent"}),
    _op(OperationId.USER_CONTACTS, None, SESS, "GET", "user/contacts", m.NoBody, m.ContactList,
        "List contacts (WuzAPI)", Section.CHATS,
        spec_body=_not_in_spec("user/contacts", "WuzAPI's GET /user/contacts"),
        bodies={SessionDialect.WUZAPI: _no_body},
        notes={SessionDialect.WUZAPI: "answers a map from JID to {FullName, FirstName, PushName, BusinessName}"}),
    _op(OperationId.GROUP_LIST, None, SESS, "GET", "group/list", m.NoBody, m.GroupList, "List groups (WuzAPI)",
        Section.GROUPS, spec_body=_not_in_spec("group/list", "WuzAPI's GET /group/list"),
        bodies={SessionDialect.WUZAPI: _no_body},
        notes={SessionDialect.WUZAPI: "answers {Groups: [GroupInfo…]}, Groups null when there are none"}),
)

OPERATIONS: Mapping[OperationId, Operation[Any, Any]] = {op.id: op for op in _TABLE}
assert len(OPERATIONS) == len(_TABLE) == len(OperationId), "every OperationId has exactly one row"

# WuzAPI's PUT /webhook zeroes what it is not sent (URL blank, no events, delivery off); a partial update reads
# the current configuration with this GET first and sends the merged whole (research/wuzapi.md §2.5).
WUZAPI_WEBHOOK_READ_PATH = ("webhook",)


def needs_current_webhook(request: m.WebhookUpdate) -> bool:
    return request.webhook is None or request.events is None or request.active is None


def merged_wuzapi_webhook(request: m.WebhookUpdate, current: m.WebhookConfig) -> dict[str, Any]:
    """The whole configuration WuzAPI must be sent: the request's fields over what GET /webhook answered
    (`{webhook, subscribe}`; no events reads `[""]`). GET says nothing of `active`: a configured URL is on."""
    events = request.events if request.events is not None else [e for e in current.events or [] if e]
    url = request.webhook if request.webhook is not None else current.webhook
    active = request.active if request.active is not None else bool(url)
    if not url and request.active is not False:
        # Sent without a URL, WuzAPI would switch delivery off and drop the events: the update would be lost.
        raise DialectRefusal("webhook", "is required: WuzAPI has no webhook URL yet, and without one it drops the rest")
    return {"webhook": url, "events": events, "active": active}


def operation(op_id: OperationId | str) -> Operation[Any, Any]:
    """The row of `op_id`; KeyError naming the known ids when there is none."""
    try:
        return OPERATIONS[OperationId(op_id)]
    except ValueError:
        known = ", ".join(sorted(OPERATIONS))
        raise KeyError(f"no operation {op_id!r}; known: {known}") from None


def in_section(section: Section) -> tuple[Operation[Any, Any], ...]:
    return tuple(op for op in _TABLE if op.section is section)


def all_operations() -> tuple[Operation[Any, Any], ...]:
    return _TABLE
