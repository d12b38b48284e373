"""Pairing and connection calls of both gateways (issue 23): their requests, their answers, and one typed
`ConnectionState` read from either gateway's status answer.

    state = (await instance.status()).state          # Z-API's GET /status (or the spec's)
    state = (await session.session_status()).state   # WuzAPI's GET /session/status, old or new shape

What each gateway answers, from its docs and code:

* Z-API (docs/gateways/zapi.md §3.1; Z-API/docs en/instance/*.mdx): `GET /status` answers `{connected, error,
  smartphoneConnected}`, where `error` is a status text ("You are already connected", "You need to restore the
  session", "You are not connected"; older pages end them with a full stop), never a failure. `GET /qr-code`
  and `GET /qr-code/image` answer `{value}`: the payload text or a `data:image/png;base64,` URL (the docs show
  both for `/qr-code`). `GET /phone-code/{phone}` answers `{value: <code>}`; `GET /restart` and
  `GET /disconnect` answer `{value: true}`.
* WuzAPI (docs/gateways/wuzapi.md §2.2-2.3; asternic/wuzapi handlers.go Connect, GetStatus, GetQR, PairPhone,
  Disconnect, Logout): everything in the `{code, data, success}` envelope. `GET /session/status` answers
  `{Connected, LoggedIn}` in older releases and `{connected, loggedIn, jid, name, events, ...}` in newer ones
  (wuzapi#90); `POST /session/connect` takes `{Subscribe, Immediate}` and answers `{details, events, jid,
  webhook}`; `GET /session/qr` answers `{QRCode: "data:image/png;base64,..."}` (`""` before the first code);
  `POST /session/pairphone` takes `{Phone}` and answers `{LinkingCode: "XXXX-XXXX"}`; disconnect and logout
  answer `{Details}`.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Annotated, Any

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, field_validator

from tui.api import models as m
from tui.api.models import ConnectionStatus, LenientBool, Request, Response

__all__ = [
    "ZAPI_ALREADY_CONNECTED",
    "ZAPI_NEEDS_RESTORE",
    "ZAPI_NOT_CONNECTED",
    "NO_SESSION_STATE",
    "ConnectionState",
    "InstanceStatus",
    "PairPhone",
    "PhoneCodeQuery",
    "SessionConnect",
    "SessionConnected",
    "SessionLinkingCode",
    "SessionQr",
    "SessionStatus",
    "ZapiDevice",
    "ZapiPhoneCode",
    "ZapiQr",
    "number_of_jid",
    "says_no_session",
    "says_not_up",
]

# Z-API's status texts (status.mdx), compared without the full stop the older pages add.
ZAPI_ALREADY_CONNECTED = "You are already connected"
ZAPI_NEEDS_RESTORE = "You need to restore the session"
ZAPI_NOT_CONNECTED = "You are not connected"


def _status_text(text: str | None) -> str:
    return (text or "").strip().rstrip(".")


_JID_USER = re.compile(r"(\d+)(?:[.:][\d.:]*)?@")


def number_of_jid(jid: str | None) -> str | None:
    """The phone number of a WhatsApp JID as WuzAPI stores it (`5491155555555.0:53@s.whatsapp.net` →
    `5491155555555`); None for an empty or unreadable one."""
    match = _JID_USER.match(jid or "")
    return match.group(1) if match else None


class ConnectionState(BaseModel):
    """Where one family's account stands, read from its gateway's status answer.

    `connected`: the gateway's link to WhatsApp is up; `logged_in`: a phone is paired (a disconnected but
    logged-in account reconnects without a new code); `number`: the paired phone, when the answer says it;
    `since`: when this state began, when known (a status answer never says; a watcher that sees the change
    fills it in); `reason`: the gateway's own words for a state other than connected; `waiting_for_scan`: not
    paired, but the gateway's link to WhatsApp is up and waits for a phone to scan a code (WuzAPI's `Connected:
    true, LoggedIn: false`): connected, waiting for a scan, which no send can use yet."""

    model_config = ConfigDict(frozen=True)

    connected: bool
    logged_in: bool
    number: str | None = None
    since: datetime | None = None
    reason: str | None = None
    waiting_for_scan: bool = False


# ---------------------------------------------------------------------------------------------------------------
# Z-API


class InstanceStatus(ConnectionStatus):
    """The instance family's `GET /status` (spec and Z-API): `{connected, error, smartphoneConnected}`."""

    @property
    def state(self) -> ConnectionState:
        text = _status_text(self.error)
        if self.connected:
            # "already connected" is the normal text of a connected instance, not a reason.
            return ConnectionState(connected=True, logged_in=True,
                                   reason=None if text in ("", ZAPI_ALREADY_CONNECTED) else text)
        # "You need to restore the session": still paired, the link is down (restart restores it).
        return ConnectionState(connected=False, logged_in=text == ZAPI_NEEDS_RESTORE, reason=text or None)


class PhoneCodeQuery(Request):
    """Z-API's `GET /phone-code/{phone}`: the number to pair, in the path."""

    phone: m.Phone


class ZapiQr(Response):
    """`GET /qr-code` or `/qr-code/image`: `{value}`, the payload text or a PNG data URL. Asked while connected,
    the sandbox (as Z-API, by its docs, "will not connect again") answers `connected`/`error` and no value."""

    value: str = ""
    connected: LenientBool | None = None
    error: str | None = None

    @field_validator("value", mode="before")
    @classmethod
    def _null_is_empty(cls, value: Any) -> Any:
        return "" if value is None else value

    @property
    def is_image(self) -> bool:
        return self.value[:11].lower() == "data:image/"

    def payload(self) -> str:
        """The QR code's text, read from the image when the value is one (`tui.api.qr`); raises `qr.QRError`
        (NoImageYet when there is no code) in the product's words."""
        from tui.api import qr  # segno, Pillow and zxing-cpp load only when a code is read

        if not self.value.strip():
            raise qr.NoImageYet(_status_text(self.error) or "the gateway has no QR code yet (it sent an empty value)")
        return qr.read_png_data_url(self.value) if self.is_image else self.value

    def __repr__(self) -> str:  # the payload holds the pairing's secret key
        return f"ZapiQr(value=<{len(self.value)} characters>, connected={self.connected!r}, error={self.error!r})"


class ZapiPhoneCode(Response):
    """`GET /phone-code/{phone}`: `{value: <code to type in WhatsApp>}`."""

    value: str

    @property
    def code(self) -> str:
        return self.value


# ---------------------------------------------------------------------------------------------------------------
# WuzAPI


def _flag(*names: str) -> Any:
    return Field(default=False, validation_alias=AliasChoices(*names))


class SessionStatus(Response):
    """WuzAPI's `GET /session/status`, either shape: `{Connected, LoggedIn}` (older releases, spec.yml) or
    `{connected, loggedIn, jid, name, ...}` (newer; docs/gateways/wuzapi.md §2.3)."""

    connected: LenientBool = _flag("connected", "Connected")
    loggedIn: LenientBool = _flag("loggedIn", "LoggedIn", "loggedin")
    jid: str | None = Field(default=None, validation_alias=AliasChoices("jid", "Jid", "JID"))
    name: str | None = None

    @property
    def state(self) -> ConnectionState:
        number = number_of_jid(self.jid) if self.loggedIn else None
        if self.connected and self.loggedIn:
            reason = None
        elif self.loggedIn:
            reason = "paired, but not connected to WhatsApp"
        elif self.connected:
            reason = "connected, waiting for a scan"
        else:
            reason = "not connected"
        return ConnectionState(connected=self.connected and self.loggedIn, logged_in=self.loggedIn,
                               number=number, reason=reason, waiting_for_scan=self.connected and not self.loggedIn)


NO_SESSION_REASON = "no session yet: WuzAPI has no client for the account until it is connected"
NO_SESSION_STATE = ConnectionState(connected=False, logged_in=False, reason=NO_SESSION_REASON)
"""A user never paired (or after logout, disconnect or a QR timeout): the older WuzAPI answers its status 500
"No session" (handlers.go GetStatus at 79ee4cd), which is this state, not a failed read."""
STARTING_WORDS = ("no session", "not connected")
"""What WuzAPI answers for a code while its client is missing or its websocket not up yet: "No session" / "no
session", "Not connected" (GetQR), "websocket not connected" (PairPhone: whatsmeow's ErrNotConnected)."""


def says_no_session(message: str) -> bool:
    """WuzAPI's error text for an account without a client (either release's case)."""
    return "no session" in message.lower()


def says_not_up(message: str) -> bool:
    """WuzAPI's error text while its session is missing or starting: asking again shortly may succeed."""
    lowered = message.lower()
    return any(words in lowered for words in STARTING_WORDS)


SubscribedKinds = Annotated[list[Annotated[str, Field(min_length=1)]], Field(min_length=1)]


class SessionConnect(Request):
    """`POST /session/connect`. `Subscribe` is required and never empty: WuzAPI stores what it is sent as the
    account's subscriptions, and an empty list stores none (no webhook events at all; docs/gateways/wuzapi.md
    §2.2). `Immediate: true` answers at once instead of waiting 10 s; the status read tells the outcome."""

    Subscribe: SubscribedKinds
    Immediate: bool = True


class SessionConnected(Response):
    """`POST /session/connect`'s `{details, events, jid, webhook}`; `events` is the comma string stored."""

    details: str = Field(default="", validation_alias=AliasChoices("details", "Details"))
    events: str = ""
    jid: str = ""
    webhook: str = ""

    @property
    def subscribed(self) -> list[str]:
        return [kind for kind in self.events.split(",") if kind]


class SessionQr(Response):
    """`GET /session/qr`: `{QRCode: "data:image/png;base64,..."}`, `""` until WhatsApp sent the first code."""

    QRCode: str = ""

    @field_validator("QRCode", mode="before")
    @classmethod
    def _null_is_empty(cls, value: Any) -> Any:
        return "" if value is None else value

    def payload(self) -> str:
        """The QR code's text, read from the PNG (`tui.api.qr.read_png_data_url`); raises `qr.QRError`."""
        from tui.api import qr

        return qr.read_png_data_url(self.QRCode)

    def __repr__(self) -> str:
        return f"SessionQr(QRCode=<{len(self.QRCode)} characters>)"


class PairPhone(Request):
    """`POST /session/pairphone`: `{Phone}`, the number to pair (WuzAPI answers a code to type on it)."""

    Phone: m.Phone


class SessionLinkingCode(Response):
    """`POST /session/pairphone`'s `{LinkingCode: "XXXX-XXXX"}`."""

    LinkingCode: str

    @property
    def code(self) -> str:
        return self.LinkingCode


# -- the webhook settings the doctor reads and sets (issue 24) ----------------------------------------------------


class GatewayWebhook(Response):
    """A gateway's one webhook with its list of events (Evolution's `/webhook/find` row, docs/gateways/evolution.md
    §4.2): where it sends, whether it sends, which events, one path per event (`byEvents`), media bytes inline
    (`base64`). `wanted`: the events the app reads, as the gateway's adapter names them."""

    url: str = ""
    enabled: bool = False
    events: list[str] = Field(default_factory=list)
    byEvents: bool = False
    base64: bool = False
    wanted: list[str] = Field(default_factory=list)

    def missing_events(self) -> list[str]:
        """The wanted events it does not send while enabled (an enabled webhook with no events sends them all)."""
        if not self.enabled or not self.events:
            return []
        return [event for event in self.wanted if event not in self.events]


class ZapiInstanceData(Response):
    """Z-API's `GET /me` (developer.z-api.io/en/instance/me): the instance's data and settings, among them the
    URL of each callback. The tokens it also answers are never kept (not fields here). `webhook`: a gateway's
    whole webhook setting where it has one webhook with events instead of Z-API's callbacks (Evolution); None at
    Z-API."""

    webhook: GatewayWebhook | None = None
    connected: LenientBool | None = None
    deliveryCallbackUrl: str | None = None
    receivedCallbackUrl: str | None = None
    messageStatusCallbackUrl: str | None = None
    presenceChatCallbackUrl: str | None = None
    connectedCallbackUrl: str | None = None
    disconnectedCallbackUrl: str | None = None

    def callback_urls(self) -> dict[str, str]:
        """Each callback the app needs by the words it is named with, its URL ("" when none is set)."""
        return {
            "delivery": self.deliveryCallbackUrl or "", "received": self.receivedCallbackUrl or "",
            "message status": self.messageStatusCallbackUrl or "", "chat presence": self.presenceChatCallbackUrl or "",
            "connected": self.connectedCallbackUrl or "", "disconnected": self.disconnectedCallbackUrl or "",
        }


class ZapiDeviceModel(Response):
    """`device` of Z-API's `GET /device`: `{sessionName, device_model}` (both "Z-API" in the docs' example)."""

    sessionName: str | None = None
    device_model: str | None = None


class ZapiDevice(Response):
    """Z-API's `GET /device` ("Device info", developer.z-api.io/en/instance/device; Z-API/docs
    en/instance/device.mdx): the phone paired with the instance, `{phone, imgUrl, about, name, device:
    {sessionName, device_model}, originalDevice ("iphone", "android", "smbi", "smba"), sessionId, isBusiness}`.
    Z-API's status read never says the number; this is where the watch learns it (tui.core.watch)."""

    phone: str | None = None
    imgUrl: str | None = None
    about: str | None = None
    name: str | None = None
    device: ZapiDeviceModel | None = None
    originalDevice: str | None = None
    sessionId: int | None = None
    isBusiness: LenientBool | None = None

    @property
    def number(self) -> str | None:
        """The paired number, digits only; None when the answer has none."""
        digits = "".join(ch for ch in self.phone or "" if ch.isdigit())
        return digits or None


class EveryCallback(Request):
    """Z-API's `PUT /update-every-webhooks`: every callback (delivery, received, status, presence, connected,
    disconnected) to one URL; `notifySentByMe` also sends what the account itself sends."""

    value: m.HttpUrl
    notifySentByMe: bool | None = None
