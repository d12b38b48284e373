"""What the gateways answer: a send's result, an operation's, group metadata and info, products, the webhook
and connection status."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    AliasChoices,
    Field,
    field_validator,
    model_validator,
)

from tui.api.models.base import FlexibleTime, LenientBool, Response
from tui.api.models.settings import redact_url_credentials


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
    JID: str  # whatsmeow: "always equals either the LID or phone number"
    IsAdmin: bool = False
    IsSuperAdmin: bool = False
    PhoneNumber: str = ""  # the phone JID beside a LID, when WhatsApp gives it
    LID: str = ""
    DisplayName: str = ""

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
