"""Request and response shapes of the gateway service (spec §2, §4).

Requests are strict: every rule of the spec is checked before anything is sent, and a violation
raises pydantic's ValidationError naming the field and the rule (see `field_errors`).
Responses are lenient: real gateways differ from the spec (docs/gateways/zapi.md, docs/gateways/wuzapi.md),
so they accept every shape seen there and ignore unknown keys.
"""

from __future__ import annotations

import enum
import re
from datetime import UTC, datetime
from typing import Annotated, Any, Protocol, runtime_checkable
from urllib.parse import urlsplit

from pydantic import (
    AfterValidator,
    AliasChoices,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from tui.api.wording import labelled, problem_sentence

# ---------------------------------------------------------------------------------------------
# Identifier rules (spec §1 "Phone number and group identifier formats")

_PHONE = re.compile(r"\d{10,15}")
_GROUP_SEND_JID = re.compile(r"\d+(?:-\d+)?@g\.us")
# Sends and modify-chat take either group form; the dialect writes the one its gateway expects.
_GROUP_RECIPIENT = re.compile(r"\d+(?:-\d+)?(?:@g\.us|-group)")
_GROUP_ID = re.compile(r"\d+(?:-\d+)?-group")
_COMMUNITY_ID = re.compile(r"\d+")

PHONE_RULE = "digits only with country code, 10 to 15 digits, e.g. 5511999999999 (no +, spaces or punctuation)"
RECIPIENT_RULE = (
    "a phone number with country code (digits only, e.g. 5511999999999) or a group JID like "
    "120363019502650977@g.us (or 120363019502650977-group)"
)
GROUP_ID_RULE = "a group id like 120363019502650977-group"
GROUP_JID_RULE = "a group JID like 120363019502650977@g.us"
COMMUNITY_ID_RULE = "a community id: digits only, e.g. 120363186053925765"


def _matching(pattern: re.Pattern[str], rule: str):
    def check(value: str) -> str:
        if not pattern.fullmatch(value):
            raise ValueError(f"must be {rule}")
        return value

    return AfterValidator(check)


def _not_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("must not be empty")
    return value


def _http_url(value: str) -> str:
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError("must be an http:// or https:// URL")
    return value


def _unique(items: list[Any], key: str, what: str) -> None:
    seen: set[str] = set()
    for item in items:
        value = getattr(item, key)
        if value in seen:
            raise ValueError(f"{what} must be unique; {value!r} appears twice")
        seen.add(value)


Phone = Annotated[str, _matching(_PHONE, PHONE_RULE)]
Recipient = Annotated[str, AfterValidator(lambda v: _recipient(v))]
GroupId = Annotated[str, _matching(_GROUP_ID, GROUP_ID_RULE)]
GroupJid = Annotated[str, _matching(_GROUP_SEND_JID, GROUP_JID_RULE)]
CommunityId = Annotated[str, _matching(_COMMUNITY_ID, COMMUNITY_ID_RULE)]
Text = Annotated[str, AfterValidator(_not_blank)]
# The most text WhatsApp takes in one message (docs/gateways/whatsapp-limits.md); neither gateway documents a
# limit of its own. Longer text is refused before anything is sent, whichever path sends it.
MESSAGE_TEXT_LIMIT = 65_536


def _within_message_limit(value: str) -> str:
    if len(value) > MESSAGE_TEXT_LIMIT:
        raise ValueError(f"is {len(value):,} characters long; WhatsApp takes at most {MESSAGE_TEXT_LIMIT:,} in one "
                         "message")
    return value


MessageText = Annotated[str, AfterValidator(_not_blank), AfterValidator(_within_message_limit)]
CaptionText = Annotated[str, AfterValidator(_within_message_limit)]
HttpUrl = Annotated[str, AfterValidator(_http_url)]


def _recipient(value: str) -> str:
    if _PHONE.fullmatch(value) or _GROUP_RECIPIENT.fullmatch(value):
        return value
    raise ValueError(f"must be {RECIPIENT_RULE}")


def is_phone(value: str) -> bool:
    return bool(_PHONE.fullmatch(value))


_FORMATTED_PHONE = re.compile(r"\+?[\d\s().\-]+")


def normalized_phone(value: str) -> str | None:
    """A phone number written the way people write it ("+55 (11) 98765-4321") as the digits the gateways take
    ("5511987654321"); None when it is not one (letters, a group JID, too few or too many digits) or is already
    digits only. The one place every phone field's pasted or typed formatting is read."""
    text = value.strip()
    if not _FORMATTED_PHONE.fullmatch(text) or text.isdigit():
        return None
    digits = "".join(character for character in text if character.isdigit())
    return digits if _PHONE.fullmatch(digits) else None


def is_recipient(value: str) -> bool:
    return bool(_PHONE.fullmatch(value) or _GROUP_RECIPIENT.fullmatch(value))


def field_errors(error: ValidationError) -> dict[str, str]:
    """Map each failing field (dotted path, e.g. `buttons.1.text`) to the rule it broke, in the product's own
    words (`tui.api.wording`), never pydantic's."""
    problems: dict[str, str] = {}
    for item in error.errors():
        field = ".".join(str(part) for part in item["loc"]) or "request"
        problems.setdefault(field, problem_sentence(item))
    return problems


def describe_validation_error(error: ValidationError) -> str:
    """One line naming each field by its label: `Buttons: takes at most 3 items (4 given)`."""
    return labelled(field_errors(error))


# ---------------------------------------------------------------------------------------------
# Enumerations


class PrivacyScope(enum.StrEnum):
    """Who a privacy setting applies to (operations 6 and 7)."""

    ALL = "ALL"
    CONTACT = "CONTACT"
    NONE = "NONE"
    CONTACT_BLACKLIST = "CONTACT_BLACKLIST"


class BlacklistAction(enum.StrEnum):
    ADD = "add"
    REMOVE = "remove"


class ChatAction(enum.StrEnum):
    """Actions of operation 13, modify-chat."""

    READ = "read"
    ARCHIVE = "archive"
    UNARCHIVE = "unarchive"
    PIN = "pin"
    UNPIN = "unpin"
    MUTE = "mute"
    UNMUTE = "unmute"
    CLEAR = "clear"
    DELETE = "delete"


DESTRUCTIVE_CHAT_ACTIONS = frozenset({ChatAction.CLEAR, ChatAction.DELETE})

# Event kinds a session webhook can subscribe to (WuzAPI's supportedEventTypes, docs/gateways/wuzapi.md §4.1).
SESSION_EVENT_KINDS: tuple[str, ...] = (
    "All",
    "Message", "UndecryptableMessage", "Receipt", "MediaRetry", "ReadReceipt",
    "GroupInfo", "JoinedGroup", "Picture", "BlocklistChange", "Blocklist",
    "Connected", "Disconnected", "ConnectFailure", "KeepAliveRestored", "KeepAliveTimeout",
    "QRTimeout", "LoggedOut", "ClientOutdated", "TemporaryBan", "StreamError", "StreamReplaced",
    "PairSuccess", "PairError", "QR", "QRScannedWithoutMultidevice",
    "PrivacySettings", "PushNameSetting", "UserAbout",
    "AppState", "AppStateSyncComplete", "HistorySync", "OfflineSyncCompleted", "OfflineSyncPreview",
    "CallOffer", "CallAccept", "CallTerminate", "CallOfferNotice", "CallRelayLatency",
    "Presence", "ChatPresence",
    "IdentityChange", "CATRefreshError", "NewsletterJoin", "NewsletterLeave", "NewsletterMuteChange",
    "NewsletterLiveUpdate", "FBMessage",
)  # fmt: skip


# ---------------------------------------------------------------------------------------------
# Requests


class Request(BaseModel):
    """A request body. `wire()` is exactly what goes on the wire: spec field names, unset optionals left out."""

    model_config = ConfigDict(extra="forbid", frozen=True, str_strip_whitespace=False, defer_build=True)

    def wire(self) -> dict[str, Any]:
        return self.model_dump(mode="json", exclude_none=True, by_alias=True)


DelayMs = Annotated[int, Field(ge=0, description="milliseconds to wait before sending")]


@runtime_checkable
class Sendable(Protocol):
    """The request of an operation that sends a message (its row's `sends`): to whom it goes, and how it reads in
    the inbox once the gateway took it (`tui.webhooks.sent`). Written with the model, so a new kind of message
    needs no list elsewhere; tests/test_operations_complete.py checks each send's model is one."""

    @property
    def recipient(self) -> str: ...

    def reads_as(self) -> str: ...


def _lines(*parts: str | None) -> str:
    return "\n".join(part for part in parts if part)


class ToPhone(Request):
    """A send addressed by `phone` (a number or a group JID); the subclass says how it reads (`Sendable`)."""

    phone: Recipient

    @property
    def recipient(self) -> str:
        return self.phone


class NoBody(Request):
    """Operations that take nothing (status reads, HMAC status and removal)."""


class SendText(ToPhone):
    message: MessageText

    def reads_as(self) -> str:
        return self.message


class Button(Request):
    id: Text
    text: Text


class SendButtonActions(ToPhone):
    """Operation 1: at most 3 quick-reply buttons; a pressed button's text comes back as the reply."""

    message: MessageText
    title: str | None = None
    footer: str | None = None
    buttons: list[Button] = Field(min_length=1, max_length=3)

    def reads_as(self) -> str:
        labels = "  ".join(f"[ {button.text} ]" for button in self.buttons)
        return _lines(self.title, self.message, self.footer, labels)

    @field_validator("buttons")
    @classmethod
    def _distinct_ids(cls, buttons: list[Button]) -> list[Button]:
        _unique(buttons, "id", "button ids")
        return buttons


class ListButton(Request):
    id: str | None = None
    label: Text


class ButtonList(Request):
    buttons: list[ListButton] = Field(min_length=1)


class SendButtonList(ToPhone):
    """`/send-button-list`: the spec names it only; this is the shape the real gateway documents."""

    message: MessageText
    buttonList: ButtonList

    def reads_as(self) -> str:
        return _lines(self.message, *(f"  • {button.label}" for button in self.buttonList.buttons))


class SendLink(ToPhone):
    message: MessageText
    linkUrl: HttpUrl
    image: HttpUrl | None = None
    title: str | None = None
    linkDescription: str | None = None

    def reads_as(self) -> str:
        preview = " — ".join(part for part in (self.title, self.linkDescription) if part)
        return _lines(self.message, f"  ⧉ {self.linkUrl}", preview and f"  {preview}")


class PollOption(Request):
    name: Text


class SendPoll(ToPhone):
    message: MessageText
    poll: list[PollOption] = Field(min_length=2)
    selectableCount: int = Field(default=1, ge=1)

    def reads_as(self) -> str:
        return _lines(f"[poll] {self.message}", *(f"  ○ {option.name}" for option in self.poll))

    @field_validator("poll")
    @classmethod
    def _distinct_options(cls, options: list[PollOption]) -> list[PollOption]:
        _unique(options, "name", "poll options")
        return options

    @field_validator("selectableCount")
    @classmethod
    def _selectable_within_options(cls, count: int, info: ValidationInfo) -> int:
        options = info.data.get("poll")
        if options is not None and count > len(options):
            raise ValueError(f"must be between 1 and the number of options ({len(options)})")
        return count


class SendLocation(ToPhone):
    title: Text
    address: Text
    lat: float = Field(ge=-90, le=90)
    lng: float = Field(ge=-180, le=180)
    delayMessage: DelayMs | None = None

    def reads_as(self) -> str:
        return _lines(f"[location] {self.title}", f"  {self.address} ({self.lat}, {self.lng})")


class SendSticker(ToPhone):
    sticker: HttpUrl
    delayMessage: DelayMs | None = None

    def reads_as(self) -> str:
        return f"[sticker] {self.sticker.rsplit('/', 1)[-1]}"


class ForwardMessage(ToPhone):
    """`/forward-message`: shape from the real gateway (the spec names it only)."""

    messageId: Text
    messagePhone: Recipient
    delayMessage: DelayMs | None = None

    def reads_as(self) -> str:
        return f"[forwarded] message {self.messageId}"


class BlacklistEntry(Request):
    action: BlacklistAction
    phone: Phone


def _blacklist_only_with_scope(blacklist: list[BlacklistEntry] | None, info: ValidationInfo):
    scope = info.data.get("type", info.data.get("visualizationType"))
    if blacklist and scope is not None and scope is not PrivacyScope.CONTACT_BLACKLIST:
        raise ValueError("applies only when the setting is CONTACT_BLACKLIST")
    return blacklist


class PrivacyGroupAdd(Request):
    type: PrivacyScope
    contactsBlacklist: list[BlacklistEntry] | None = None

    _scope = field_validator("contactsBlacklist")(_blacklist_only_with_scope)


class PrivacyLastSeen(Request):
    visualizationType: PrivacyScope
    contactsBlacklist: list[BlacklistEntry] | None = None

    _scope = field_validator("contactsBlacklist")(_blacklist_only_with_scope)


class AddParticipant(Request):
    groupId: GroupId
    phones: list[Phone] = Field(min_length=1)
    autoInvite: bool = False


class UpdateGroupName(Request):
    groupId: GroupId
    groupName: Text


class AddAdmin(Request):
    communityId: CommunityId
    phones: list[Phone] = Field(min_length=1)


class RedefineInvitationLink(Request):
    communityId: CommunityId
    groupsPhones: list[GroupId] | None = None


class ModifyChat(Request):
    phone: Recipient
    action: ChatAction


class ProfileDescription(Request):
    value: str


def _url_or_empty(value: str) -> str:
    return value if value == "" else _http_url(value)


class DeliveryWebhook(Request):
    """Operation 16: an empty value removes the webhook."""

    value: Annotated[str, AfterValidator(_url_or_empty)]


HMAC_KEY_MIN_LENGTH = 32


class HmacKey(Request):
    hmac_key: str = Field(min_length=HMAC_KEY_MIN_LENGTH)

    def __repr__(self) -> str:  # the key is a secret
        return "HmacKey(hmac_key='***')"

    __str__ = __repr__


PROXY_FORMS = (
    "socks5://user:password@host:port",
    "socks5://host:port",
    "http://user:password@host:port",
    "http://host:port",
)


def check_proxy_url(value: str) -> str:
    rule = "must be one of " + ", ".join(PROXY_FORMS)
    try:
        parts = urlsplit(value)
        port = parts.port
    except ValueError:
        raise ValueError(f"has an invalid port; {rule}") from None
    if parts.scheme not in ("socks5", "http"):
        raise ValueError(f"scheme must be socks5:// or http://; {rule}")
    if not parts.hostname:
        raise ValueError(f"needs a host; {rule}")
    if port is None:
        raise ValueError(f"needs a port; {rule}")
    if parts.path not in ("", "/") or parts.query or parts.fragment:
        raise ValueError(f"must not have a path, query or fragment; {rule}")
    if (parts.username is None) != (parts.password is None) or parts.username == "" or parts.password == "":
        raise ValueError(f"credentials need both user and password; {rule}")
    return value


class ProxyConfig(Request):
    """Operation 20: a URL is required when enabling; disabling always sends an empty URL."""

    enable: bool
    proxy_url: str = Field(default="", validate_default=True)

    @field_validator("proxy_url")
    @classmethod
    def _url_when_enabled(cls, url: str, info: ValidationInfo) -> str:
        if not info.data.get("enable"):
            return ""
        if not url:
            raise ValueError("is required when enable is true")
        return check_proxy_url(url)

    def __repr__(self) -> str:  # proxy credentials are secrets
        return f"ProxyConfig(enable={self.enable}, proxy_url={redact_url_credentials(self.proxy_url)!r})"

    __str__ = __repr__


def redact_url_credentials(url: str) -> str:
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.netloc.rsplit("@", 1)[1]
    return parts._replace(netloc=f"{parts.username}:***@{host}").geturl()


class GroupMetadataQuery(Request):
    """Operation 10's path parameter, checked like a body field so the error names it."""

    GROUP_PHONE_NUMBER: GroupId


class ProductQuery(Request):
    """Operation 15's path parameter."""

    PRODUCT_ID: Text


class GroupInfoRequest(Request):
    GroupJID: GroupJid


class GroupCreate(Request):
    name: Text
    participants: list[Phone] = Field(min_length=1)


def _vcard_text(value: str) -> str:
    lines = value.strip().splitlines()
    if not lines or lines[0].strip().upper() != "BEGIN:VCARD" or lines[-1].strip().upper() != "END:VCARD":
        raise ValueError("must be vCard text from BEGIN:VCARD to END:VCARD")
    return value


class ContactCard(Request):
    """Operation 23. Build `Vcard` with `tui.api.vcard.build_vcard` rather than by hand."""

    Phone: Recipient
    Name: Text
    Vcard: Annotated[str, AfterValidator(_vcard_text)]
    Id: str | None = None
    ContextInfo: dict[str, Any] | None = None

    @property
    def recipient(self) -> str:
        return self.Phone

    def reads_as(self) -> str:
        return f"[contact] {self.Name}"


def _known_event_kinds(kinds: list[str]) -> list[str]:
    unknown = [kind for kind in kinds if kind not in SESSION_EVENT_KINDS]
    if unknown:
        raise ValueError(f"unknown event kind(s): {', '.join(unknown)}")
    return kinds


class WebhookUpdate(Request):
    """Operation 24: partial update, omitted fields stay unchanged."""

    webhook: HttpUrl | None = None
    events: Annotated[list[str], AfterValidator(_known_event_kinds)] | None = None
    active: bool | None = None


# ---------------------------------------------------------------------------------------------
# Responses


class Response(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True, populate_by_name=True, defer_build=True)


def _boolish(value: Any) -> Any:
    # Z-API lists carry booleans as strings ("false", "0").
    if isinstance(value, str) and value.lower() in ("true", "false", "1", "0"):
        return value.lower() in ("true", "1")
    return value


LenientBool = Annotated[bool, BeforeValidator(_boolish)]


def _epoch_or_iso(value: Any) -> Any:
    # Instance-family timestamps come as epoch milliseconds, session-family ones as ISO text or Unix seconds;
    # Go's zero time means "never".
    if value in ("", None) or (isinstance(value, str) and value.startswith("0001-01-01")):
        return None
    if isinstance(value, str) and value.isdigit():
        value = int(value)
    if isinstance(value, int | float) and not isinstance(value, bool):
        seconds = value / 1000 if value > 10**11 else value
        return datetime.fromtimestamp(seconds, tz=UTC)
    return value


FlexibleTime = Annotated[datetime | None, BeforeValidator(_epoch_or_iso)]


class SendResult(Response):
    """Sends answer `messageId` and `id` (same value); Z-API adds `zaapId`, forward-message may carry only that."""

    messageId: str | None = None
    id: str | None = None
    zaapId: str | None = None

    @model_validator(mode="after")
    def _some_identifier(self) -> SendResult:
        if not (self.messageId or self.id or self.zaapId):
            raise ValueError("a send answer needs messageId, id or zaapId")
        return self

    @property
    def message_id(self) -> str:
        return self.messageId or self.id or self.zaapId or ""


class OperationResult(Response):
    """`{success: bool}` in the spec; Z-API answers `{value: bool}`. The HTTP status already said 200."""

    success: bool | None = None
    value: bool | None = None

    @property
    def ok(self) -> bool:
        flag = self.success if self.success is not None else self.value
        return flag is not False

    @property
    def refusal(self) -> str:
        """How the gateway said no, in its own terms: `success: false` or Z-API's `value: false`."""
        return "success: false" if self.success is False else "value: false"


class AddParticipantResult(OperationResult):
    """The spec's `{success, added, failed}`; Z-API answers only `{value: true}` (`lists_reported` is False)."""

    added: list[str] = Field(default_factory=list)
    failed: list[str] = Field(default_factory=list)

    @property
    def lists_reported(self) -> bool:
        return bool({"added", "failed"} & self.model_fields_set)

    @field_validator("added", "failed", mode="before")
    @classmethod
    def _phones(cls, items: Any) -> list[str]:
        if items is None:
            return []
        return [item.get("phone", str(item)) if isinstance(item, dict) else str(item) for item in items]


class MetadataParticipant(Response):
    phone: str
    isAdmin: LenientBool = False
    isSuperAdmin: LenientBool = False


class GroupMetadata(Response):
    """Operation 10. Accepts the spec's names and Z-API's (`phone`, `subject`, `creation` in ms)."""

    groupId: str = Field(validation_alias=AliasChoices("groupId", "phone"))
    groupName: str = Field(default="", validation_alias=AliasChoices("groupName", "subject"))
    description: str | None = None
    owner: str | None = None
    participants: list[MetadataParticipant] = Field(default_factory=list)
    createdAt: FlexibleTime | None = Field(default=None, validation_alias=AliasChoices("createdAt", "creation"))
    invitationLink: str | None = None


class InviteLink(Response):
    inviteLink: str = Field(validation_alias=AliasChoices("inviteLink", "invitationLink"))


class Product(Response):
    productId: str = Field(validation_alias=AliasChoices("productId", "id"))
    name: str = ""
    price: int = Field(description="in the currency's smallest unit")
    currency: str = ""
    description: str | None = None
    images: list[str] = Field(default_factory=list)
    url: str | None = None
    isHidden: LenientBool = False

    @field_validator("price", mode="before")
    @classmethod
    def _integer_price(cls, value: Any) -> Any:
        # Z-API sends prices as strings of minor units ("100000").
        if isinstance(value, str) and value.strip().lstrip("-").isdigit():
            return int(value)
        return value


# ISO 4217 minor units that are not 2 (the common case).
_MINOR_UNITS = {
    **dict.fromkeys(
        ("BIF", "CLP", "DJF", "GNF", "ISK", "JPY", "KMF", "KRW", "PYG", "RWF", "UGX", "UYI",
         "VND", "VUV", "XAF", "XOF", "XPF"),
        0,
    ),
    **dict.fromkeys(("BHD", "IQD", "JOD", "KWD", "LYD", "OMR", "TND"), 3),
}  # fmt: skip


def format_price(amount_minor: int, currency: str) -> str:
    """`format_price(12990, "BRL")` → `BRL 129.90`; the exponent comes from the currency."""
    exponent = _MINOR_UNITS.get(currency.upper(), 2)
    sign = "-" if amount_minor < 0 else ""
    whole, fraction = divmod(abs(amount_minor), 10**exponent)
    amount = f"{whole:,}" + (f".{fraction:0{exponent}d}" if exponent else "")
    return f"{currency.upper()} {sign}{amount}".strip()


class GroupParticipant(Response):
    JID: str
    IsAdmin: bool = False
    IsSuperAdmin: bool = False

    @property
    def role(self) -> str:
        return "super admin" if self.IsSuperAdmin else "admin" if self.IsAdmin else "member"


class GroupInfo(Response):
    """Operations 21 and 22 (`data`). Go zero times (`0001-01-01T00:00:00Z`) mean "never"."""

    JID: str
    Name: str = ""
    OwnerJID: str = ""
    GroupCreated: FlexibleTime | None = None
    NameSetAt: FlexibleTime | None = None
    NameSetBy: str = ""
    Topic: str = ""
    TopicSetAt: FlexibleTime | None = None
    TopicSetBy: str = ""
    IsAnnounce: bool = False
    IsLocked: bool = False
    IsEphemeral: bool = False
    DisappearingTimer: int = 0
    Participants: list[GroupParticipant] = Field(default_factory=list)

    @field_validator("Participants", mode="before")
    @classmethod
    def _none_is_empty(cls, value: Any) -> Any:
        return [] if value is None else value


class Details(Response):
    """Session-family confirmations: `data.Details` (envelope) or a bare `{Details}` (WuzAPI's HMAC calls)."""

    Details: str = ""
    # WuzAPI echoes the proxy URL as sent, password included; keep it out of every view.
    ProxyURL: Annotated[str, AfterValidator(lambda url: redact_url_credentials(url))] | None = None


class ContactSent(Response):
    Details: str = ""
    Id: str
    Timestamp: FlexibleTime | None = None


class HmacStatus(Response):
    """`{hmac_key: "***"}` when a key is configured; WuzAPI answers `""` when there is none."""

    hmac_key: str | None = ""

    @property
    def configured(self) -> bool:
        return bool(self.hmac_key)


class WebhookConfig(Response):
    webhook: str = Field(default="", validation_alias=AliasChoices("webhook", "WebhookURL"))
    events: list[str] | None = Field(default=None, validation_alias=AliasChoices("events", "Events", "subscribe"))
    active: bool | None = None


class ConnectionStatus(Response):
    """The instance `status` read. `error` is a status text, not an error flag (docs/gateways/zapi.md §3.1)."""

    connected: LenientBool = False
    error: str | None = None
    smartphoneConnected: LenientBool | None = None



# ---------------------------------------------------------------------------------------------
# Lists of chats, contacts and groups (docs/gateways/zapi.md §3.6, docs/gateways/wuzapi.md §2.8 and GET
# /user/contacts).
# The spec has none: only the gateways' own dialects can ask (the table refuses the spec dialect).

LIST_PAGE_SIZE = 100
LIST_PAGE_LIMIT = 1000


class ListPage(Request):
    """Z-API's required paging of `/chats`, `/contacts` and `/groups` (sent as the query, not a body)."""

    page: int = Field(default=1, ge=1)
    pageSize: int = Field(default=LIST_PAGE_SIZE, ge=1, le=LIST_PAGE_LIMIT)


def _count(value: Any) -> Any:
    # Z-API writes counters as numbers or strings ("0"); anything unreadable counts as nothing.
    if isinstance(value, str):
        return int(value) if value.strip().isdigit() else 0
    return 0 if value is None else value


LenientCount = Annotated[int, BeforeValidator(_count)]


def _text(value: Any) -> Any:
    return "" if value is None else value


LenientText = Annotated[str, BeforeValidator(_text)]


class ListAnswer(Response):
    """A list answer; `items` is the list whichever way the gateway wrapped it (a bare array, `null`, or the
    dialect's own object, see each subclass's `_unwrap`)."""

    @classmethod
    def _unwrap(cls, value: Any) -> Any:
        return value

    @model_validator(mode="before")
    @classmethod
    def _as_items(cls, value: Any) -> Any:
        value = cls._unwrap(value)
        if value is None:
            return {"items": []}
        if isinstance(value, list):
            return {"items": value}
        return value


class ChatEntry(Response):
    """One chat of Z-API's `/chats` or `/groups`: booleans and counters as strings or numbers, `lastMessageTime`
    in seconds or milliseconds (docs/gateways/zapi.md §3.6)."""

    phone: str
    name: LenientText = ""
    isGroup: LenientBool = False
    unread: LenientCount = 0
    messagesUnread: LenientCount = 0
    lastMessageTime: FlexibleTime = None
    archived: LenientBool = False
    pinned: LenientBool = False
    isMuted: LenientBool = False

    @field_validator("isGroup", "archived", "pinned", "isMuted", mode="before")
    @classmethod
    def _none_is_false(cls, value: Any) -> Any:
        return False if value is None else value

    @property
    def unread_count(self) -> int:
        return max(self.unread, self.messagesUnread)


class ChatList(ListAnswer):
    items: list[ChatEntry] = Field(default_factory=list)


class ContactEntry(Response):
    """One contact: Z-API's `{phone, name, short, notify, vname}` (name only when saved, notify the push name), or
    WuzAPI's whatsmeow ContactInfo `{FullName, FirstName, PushName, BusinessName, Found}` keyed by JID."""

    phone: str
    name: LenientText = Field(default="", validation_alias=AliasChoices("name", "FullName"))
    short: LenientText = Field(default="", validation_alias=AliasChoices("short", "FirstName"))
    notify: LenientText = Field(default="", validation_alias=AliasChoices("notify", "PushName"))
    vname: LenientText = Field(default="", validation_alias=AliasChoices("vname", "BusinessName"))

    @property
    def saved_name(self) -> str:
        """The name the account saved for the contact ("" when it saved none)."""
        return self.name.strip() or self.short.strip()

    @property
    def push_name(self) -> str:
        """What the contact calls themselves (or their business name)."""
        return self.notify.strip() or self.vname.strip()


class ContactList(ListAnswer):
    items: list[ContactEntry] = Field(default_factory=list)

    @classmethod
    def _unwrap(cls, value: Any) -> Any:
        # WuzAPI: `data` is a map from JID to ContactInfo (`{}` when there are none).
        if isinstance(value, dict) and "items" not in value:
            return [{**entry, "phone": jid} for jid, entry in value.items() if isinstance(entry, dict)]
        return value


class GroupList(ListAnswer):
    """WuzAPI's `GET /group/list`: `{"Groups": [GroupInfo…]}`, `{"Groups": null}` when there are none."""

    items: list[GroupInfo] = Field(default_factory=list)

    @classmethod
    def _unwrap(cls, value: Any) -> Any:
        if isinstance(value, dict) and "Groups" in value:
            return value["Groups"]
        return value


# ---------------------------------------------------------------------------------------------
# Media sends (issue 25). The spec names no media call: the instance family takes Z-API's shapes (developer.z-api.io
# send-image, send-video, send-audio, send-document/{extension}); the session family WuzAPI's (spec.yml
# MessageImage, MessageVideo, MessageAudio, MessageDocument). Build them from a file with `tui.api.media`, which
# checks the file's real type and the gateway's limits first.

_DATA_URL_HEAD = re.compile(r"data:([\w.+-]+/[\w.+-]+)((?:;[\w.+-]+=[^;,]*)*);base64,")
DATA_URL_RULE = "a base64 data URL, data:<type>;base64,<data>"
_DOCUMENT_EXTENSION = re.compile(r"[A-Za-z0-9]{1,10}")


def data_url_type(value: str) -> str | None:
    """The media type a base64 data URL names (`data:image/png;base64,…` → `image/png`); None when it is not one."""
    match = _DATA_URL_HEAD.match(value)
    return match.group(1).lower() if match else None


def data_url_payload(value: str) -> str:
    """The base64 text after a data URL's comma ("" when it is not a data URL)."""
    match = _DATA_URL_HEAD.match(value)
    return value[match.end():] if match else ""


def _media_source(value: str) -> str:
    if data_url_type(value) is not None:
        return value
    if value.startswith("data:"):
        raise ValueError(f"must be {DATA_URL_RULE}")
    try:
        return _http_url(value)
    except ValueError:
        raise ValueError(f"must be an http:// or https:// URL, or {DATA_URL_RULE}") from None


def _data_url(value: str) -> str:
    if data_url_type(value) is None:
        raise ValueError(f"must be {DATA_URL_RULE}: WuzAPI takes the file's bytes, not a link")
    return value


def _document_extension(value: str) -> str:
    if not _DOCUMENT_EXTENSION.fullmatch(value):
        raise ValueError("must be the file's extension without the dot, letters and digits only, e.g. pdf")
    return value.lower()


MediaSource = Annotated[str, AfterValidator(_media_source)]
DataUrl = Annotated[str, AfterValidator(_data_url)]


def size_text(size: int) -> str:
    """`1.2 MB`, `340 KB`, `12 bytes`: decimal units, as the gateways' limits are written."""
    if size >= 1000 * 1000:
        return f"{size / (1000 * 1000):.1f} MB"
    if size >= 1000:
        return f"{size / 1000:.0f} KB"
    return f"{size} bytes"


def binary_size_text(size: int) -> str:
    """`256 MiB`, `64 KiB`, `100 bytes`: a limit of ours, in the binary units the command line's sizes take."""
    for unit, factor in (("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if size >= factor and size % factor == 0:
            return f"{size // factor} {unit}"
    return f"{size} bytes"


def _media_reading(kind: str, source: str, name: str | None, caption: str | None) -> str:
    """`[image] 12 KB  caption`, `[document] invoice.pdf, 80 KB  caption`: a link, or the size of the file carried
    inline, never its bytes."""
    payload = data_url_payload(source)
    shown = size_text(len(payload) * 3 // 4 - payload[-2:].count("=")) if payload else source
    what = ", ".join(part for part in (name, shown) if part)
    return f"[{kind}] {what}" + (f"  {caption}" if caption else "")


class SendImage(ToPhone):
    """`/send-image`: PNG or JPEG, by URL or as `data:image/png;base64,…`."""

    image: MediaSource
    caption: CaptionText | None = None
    delayMessage: DelayMs | None = None

    def reads_as(self) -> str:
        return _media_reading("image", self.image, None, self.caption)


class SendVideo(ToPhone):
    """`/send-video`: MP4 (H.264), by URL or as `data:video/mp4;base64,…`."""

    video: MediaSource
    caption: CaptionText | None = None
    delayMessage: DelayMs | None = None

    def reads_as(self) -> str:
        return _media_reading("video", self.video, None, self.caption)


class SendAudio(ToPhone):
    """`/send-audio`: no caption (Z-API documents none)."""

    audio: MediaSource
    delayMessage: DelayMs | None = None

    def reads_as(self) -> str:
        return _media_reading("audio", self.audio, None, None)


class SendDocument(ToPhone):
    """`/send-document/{extension}`: the extension goes in the path, the rest in the body."""

    extension: Annotated[str, AfterValidator(_document_extension)]
    document: MediaSource
    fileName: str | None = None
    caption: CaptionText | None = None
    delayMessage: DelayMs | None = None

    def reads_as(self) -> str:
        return _media_reading("document", self.document, self.fileName, self.caption)


class _ToSessionPhone(Request):
    """A WuzAPI media send, addressed by `Phone`."""

    Phone: Recipient

    @property
    def recipient(self) -> str:
        return self.Phone


class ChatSendImage(_ToSessionPhone):
    """WuzAPI's `/chat/send/image` (spec.yml MessageImage): PNG or JPEG as a data URL."""

    Image: DataUrl
    Caption: CaptionText | None = None
    Id: str | None = None

    def reads_as(self) -> str:
        return _media_reading("image", self.Image, None, self.Caption)


class ChatSendVideo(_ToSessionPhone):
    """WuzAPI's `/chat/send/video` (spec.yml MessageVideo): MP4 or 3GPP as a data URL."""

    Video: DataUrl
    Caption: CaptionText | None = None
    Id: str | None = None

    def reads_as(self) -> str:
        return _media_reading("video", self.Video, None, self.Caption)


class ChatSendAudio(_ToSessionPhone):
    """WuzAPI's `/chat/send/audio` (spec.yml MessageAudio): Opus in Ogg, `data:audio/ogg;base64,…`; no caption."""

    Audio: DataUrl
    Id: str | None = None

    def reads_as(self) -> str:
        return _media_reading("audio", self.Audio, None, None)


class ChatSendDocument(_ToSessionPhone):
    """WuzAPI's `/chat/send/document`: FileName required; `Caption` is read by its handler (handlers.go
    SendDocument, since 2024-04) though spec.yml's MessageDocument omits it."""

    Document: DataUrl
    FileName: Text
    Caption: CaptionText | None = None
    Id: str | None = None

    def reads_as(self) -> str:
        return _media_reading("document", self.Document, self.FileName, self.Caption)


MediaRequest = SendImage | SendVideo | SendAudio | SendDocument | ChatSendImage | ChatSendVideo | ChatSendAudio | ChatSendDocument
