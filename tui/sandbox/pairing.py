"""Each family's link to WhatsApp in the sandbox, the pairing codes it issues, and the phone's side of pairing.

A `Link` is one family's account: paired (a device stored) or not, online (the websocket up) or not, and
`stuck` (a wedged session whose answers contradict each other). `gateway-tui sandbox --logged-out` starts both
families unpaired. Codes are of the real format and length: a QR payload as whatsmeow's `makeQRData` writes it
(`2@<ref>,<noise key>,<identity key>,<adv secret>`, about 240 characters) and an 8-character linking code
`XXXX-XXXX` from WhatsApp's alphabet. QR codes come in windows of 20 s (`CODE_LIFETIME`), as WhatsApp rotates
them: asked again within a window, the same code; after it, a new one, and the old one has expired. A phone code
lasts its whole lifetime from when it is asked for (asked again meanwhile, the same code); WuzAPI's lasts as long
as its pairing websocket (whatsmeow's PairPhone doc). WuzAPI's pairing websocket closes when WhatsApp's QR codes run out (`PAIRING_WINDOWS` windows after it came up: whatsmeow's
160 s) and takes its codes with it. `code_lifetime` (`gateway-tui sandbox --code-lifetime SECONDS`) stretches or
shortens all of it, so a test decides how long a code lasts rather than the speed of the machine.

The phone's side, on the sandbox's own routes (never the gateways'):
* `POST /sandbox/scan {"code": "<QR text or phone code>"}` pairs the family that issued the code (200
  `{family, number}`), and that gateway tells its webhook (WuzAPI `PairSuccess` then `Connected`, Z-API
  `ConnectedCallback`); 410 for an expired or unknown code, 400 for a body without one.
* `POST /sandbox/disconnect {"family": "instance"|"session", "reason": "logged_out"|"network"|"stuck"}` drops
  a connected family the way the phone (unlinked: pair again), the network (disconnected but still paired) or a
  wedged session (status and QR answers contradict until the right recovery) would; 409 when it is not
  connected. What each gateway answers in each state is written beside its handlers (zapi_api, wuzapi_api).
"""

from __future__ import annotations

import base64
import enum
import hashlib
import io
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from aiohttp import web

from tui.api.operations import Family

CODE_LIFETIME = timedelta(seconds=20)
PAIRING_WINDOWS = 8
"""whatsmeow: "the login websocket is closed after the QR codes run out, which means there's a 160-second time
limit" (PairPhone's doc): eight windows of 20 s."""
ISSUED_LIMIT = 256  # codes remembered per family (expired ones answer 410 "expired", older ones "unknown")
LINKING_ALPHABET = "123456789ABCDEFGHJKLMNPQRSTVWXYZ"  # whatsmeow's linkingBase32: no 0, I, O or U
QR_REF_BYTES = 76  # a ref of 104 base64 characters, as WhatsApp's servers send today
KEY_BYTES = 32
FIRST_CODE_GAP = timedelta(milliseconds=250)
"""WuzAPI: from its websocket being up (connected) to WhatsApp's first code stored (GET /session/qr answers
`{"QRCode": ""}` meanwhile); within the connect delay when that is longer."""
DEVICE = 12  # the device number the paired JIDs carry (`<number>:12@s.whatsapp.net`)
PNG_DATA_URL = "data:image/png;base64,"


class DropReason(enum.StrEnum):
    LOGGED_OUT = "logged_out"
    NETWORK = "network"
    STUCK = "stuck"


class LinkEvent(enum.Enum):
    """What a family's gateway tells its webhook about its link (a wedged session tells nothing)."""

    PAIRED = "paired"  # WuzAPI PairSuccess + Connected; Z-API ConnectedCallback
    CONNECTED = "connected"  # reconnected without a new code: WuzAPI Connected; Z-API ConnectedCallback
    LOGGED_OUT = "logged_out"  # WuzAPI LoggedOut; Z-API DisconnectedCallback
    NETWORK_LOST = "network_lost"  # WuzAPI Disconnected; Z-API DisconnectedCallback


DROP_EVENTS = {DropReason.LOGGED_OUT: LinkEvent.LOGGED_OUT, DropReason.NETWORK: LinkEvent.NETWORK_LOST}


@dataclass
class Link:
    """One family's link. `client`: WuzAPI has a whatsmeow client for the account (connect makes one; disconnect,
    logout and a logout from the phone drop it); Z-API has no such notion and keeps it True."""

    paired: bool = True
    online: bool = True
    client: bool = True
    stuck: bool = False
    number: str | None = None
    since: datetime | None = None
    window_start: datetime | None = None  # when the current run of codes began; None: no codes being issued
    issued: dict[str, datetime] = field(default_factory=dict)  # code (phone codes without the dash) -> expiry
    phone_codes: dict[str, tuple[str, datetime]] = field(default_factory=dict)  # phone -> (code, expiry)
    online_at: datetime | None = None  # WuzAPI after an immediate connect: when its websocket comes up
    first_code_at: datetime | None = None  # and when WhatsApp's first code is stored (none to give before)

    @property
    def connected(self) -> bool:
        """Really connected: paired, online and not wedged (what sends and deliveries need)."""
        return self.paired and self.online and not self.stuck

    def start_codes(self, now: datetime) -> None:
        self.window_start = now

    def pair(self, number: str, now: datetime) -> None:
        self.paired = self.online = self.client = True
        self.stuck = False
        self.number, self.since = number, now
        self.window_start = self.online_at = self.first_code_at = None
        self.issued.clear()
        self.phone_codes.clear()

    def reconnect(self, now: datetime) -> None:
        self.online = self.client = True
        self.stuck = False
        self.since = now

    def unpair(self, now: datetime, *, keep_client: bool) -> None:
        self.paired = self.online = self.stuck = False
        self.client = keep_client
        self.number, self.since = None, now
        self.window_start = self.online_at = self.first_code_at = None
        self.phone_codes.clear()

    def drop(self, reason: DropReason, now: datetime, *, keep_client: bool) -> None:
        if reason is DropReason.LOGGED_OUT:
            self.unpair(now, keep_client=keep_client)
        elif reason is DropReason.NETWORK:
            self.online = False
            self.since = now
        else:
            self.stuck = True  # `since` unchanged: nothing tells a wedged session from a working one

    @classmethod
    def unpaired(cls, *, client: bool) -> Link:
        return cls(paired=False, online=False, client=client)


def _window(link: Link, now: datetime, lifetime: timedelta) -> tuple[int, datetime]:
    """(window number, when it ends), starting the run of codes when none is under way."""
    if link.window_start is None or now < link.window_start:
        link.window_start = now
    number = int((now - link.window_start) / lifetime)
    return number, link.window_start + lifetime * (number + 1)


def _bytes(seed: str, count: int) -> bytes:
    out = b""
    counter = 0
    while len(out) < count:
        out += hashlib.sha256(f"{seed}:{counter}".encode()).digest()
        counter += 1
    return out[:count]


def _remember(link: Link, code: str, expires: datetime) -> None:
    link.issued[code] = expires
    while len(link.issued) > ISSUED_LIMIT:
        del link.issued[next(iter(link.issued))]


class CodeIssuer:
    """Codes derived from a per-sandbox salt, the family, the run and the window: the same within a window.
    `lifetime`: how long a code lasts (WhatsApp's 20 s unless a test or `--code-lifetime` says otherwise)."""

    def __init__(self, salt: str, lifetime: timedelta = CODE_LIFETIME) -> None:
        if lifetime <= timedelta(0):
            raise ValueError("a code's lifetime must be positive")
        self.salt = salt
        self.lifetime = lifetime

    @property
    def pairing_lifetime(self) -> timedelta:
        """How long WuzAPI's pairing websocket stays up without a scan (whatsmeow's 160 s at 20-s codes)."""
        return self.lifetime * PAIRING_WINDOWS

    def _seed(self, family: Family, link: Link, window: int, kind: str) -> str:
        start = link.window_start.isoformat() if link.window_start else ""
        return f"{self.salt}:{family}:{start}:{window}:{kind}"

    def qr_payload(self, family: Family, link: Link, now: datetime) -> str:
        window, expires = _window(link, now, self.lifetime)
        seed = self._seed(family, link, window, "qr")

        def b64(part: str, count: int) -> str:
            return base64.b64encode(_bytes(f"{seed}:{part}", count)).decode("ascii")

        payload = ",".join(
            [f"2@{b64('ref', QR_REF_BYTES)}", b64("noise", KEY_BYTES), b64("identity", KEY_BYTES), b64("adv", KEY_BYTES)]
        )
        _remember(link, payload, expires)
        return payload

    def phone_code(self, family: Family, link: Link, phone: str, now: datetime, *,
                   expires: datetime | None = None) -> str:
        """The phone's code: the one asked before while it lasts, else a new one lasting `lifetime` from now (or
        until `expires`: WuzAPI's lasts as long as its pairing websocket)."""
        known = link.phone_codes.get(phone)
        if known is not None and now < known[1]:
            code = known[0]
        else:
            raw = _bytes(f"{self.salt}:{family}:{now.isoformat()}:phone:{phone}", 8)
            code = "".join(LINKING_ALPHABET[byte % len(LINKING_ALPHABET)] for byte in raw)
            ends = expires if expires is not None else now + self.lifetime
            link.phone_codes[phone] = (code, ends)
            _remember(link, code, ends)
        return f"{code[:4]}-{code[4:]}"


def png_data_url(payload: str) -> str:
    """The code as WuzAPI's GetQR serves it: a PNG (go-qrcode, medium error correction) in a data URL."""
    import segno  # only a sandbox that draws codes needs it

    buffer = io.BytesIO()
    segno.make(payload, error="m", micro=False).save(buffer, kind="png", scale=4, border=4)
    return PNG_DATA_URL + base64.b64encode(buffer.getvalue()).decode("ascii")


def code_key(text: str) -> str:
    """How a scanned or typed code is looked up: a phone code without its dash, upper case; a QR text as is."""
    stripped = text.strip()
    compact = stripped.replace("-", "").upper()
    if len(compact) == 8 and all(char in LINKING_ALPHABET for char in compact):
        return compact
    return stripped


# ---------------------------------------------------------------------------------------------------------------
# The phone's side: /sandbox/scan and /sandbox/disconnect

Announce = Callable[[Family, LinkEvent], None]  # tell the family's webhook what happened to its link


class PhoneSide:
    """The sandbox's own routes for what a phone does: scan a code, lose the link."""

    def __init__(self, links: Callable[[], dict[Family, Link]], *, number: Callable[[], str], clock: Callable[[], datetime],
                 announce: Announce) -> None:
        self.links = links
        self.number = number
        self.clock = clock
        self.announce = announce

    def routes(self) -> list[web.RouteDef]:
        return [web.post("/sandbox/scan", self.scan), web.post("/sandbox/disconnect", self.disconnect)]

    async def scan(self, request: web.Request) -> web.Response:
        body = await _json_object(request)
        code = body.get("code")
        if not isinstance(code, str) or not code.strip():
            return _error(400, "code: is required: the QR code's text or the phone code, as the gateway gave it")
        key, now = code_key(code), self.clock()
        for family, link in self.links().items():
            expires = link.issued.get(key)
            if expires is None:
                continue
            if now >= expires or link.paired:
                return _error(410, "this code has expired; ask the gateway for the current one")
            link.pair(self.number(), now)
            self.announce(family, LinkEvent.PAIRED)
            return web.json_response({"family": family.value, "number": link.number})
        return _error(410, "no gateway issued this code (or it is long expired); ask the gateway for a new one")

    async def disconnect(self, request: web.Request) -> web.Response:
        body = await _json_object(request)
        try:
            family = Family(str(body.get("family")))
        except ValueError:
            return _error(400, "family: must be instance or session")
        try:
            reason = DropReason(str(body.get("reason")))
        except ValueError:
            return _error(400, f"reason: must be one of {', '.join(DropReason)}")
        link = self.links()[family]
        if not link.connected:
            return _error(409, f"the {family} family is not connected, so there is nothing to drop")
        link.drop(reason, self.clock(), keep_client=family is Family.INSTANCE)
        event = DROP_EVENTS.get(reason)
        if event is not None:
            self.announce(family, event)
        return web.json_response({"family": family.value, "reason": reason.value})


async def _json_object(request: web.Request) -> dict[str, Any]:
    try:
        data = await request.json(loads=_loads)
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def _loads(text: str) -> Any:
    import json

    return json.loads(text) if text.strip() else {}


def _error(status: int, message: str) -> web.Response:
    return web.json_response({"error": message}, status=status)
