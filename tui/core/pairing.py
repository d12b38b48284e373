"""Pairing an account's family and getting it back (issue 23): the actions of the table, in each gateway's way,
and the run of codes that ends paired, unanswered or timed out. Shared by the Account section and
`gateway-tui connect`; no Textual, no printing.

    | action      | Z-API                               | WuzAPI                                           |
    | state       | GET /status                         | GET /session/status                              |
    | show a QR   | GET /qr-code (payload or PNG)       | POST /session/connect, then GET /session/qr      |
    | phone code  | GET /phone-code/{phone}             | POST /session/pairphone                          |
    | reconnect   | GET /restart                        | POST /session/disconnect, then /session/connect  |
    | log out     | GET /disconnect (it unpairs)        | POST /session/logout                             |

Every WuzAPI connect sends `tui.core.watch.SESSION_SUBSCRIPTION` (WuzAPI stores what each connect sends; an empty
list would wipe the subscriptions).

A WuzAPI user never paired has no session: the older release answers its status 500 "No session", the newer one
`{connected: false, loggedIn: false}`; either way the run connects. The connect is immediate, so it returns before
the session is up ("you will have to check shortly after", API.md) and the code answers "not connected" (QR) or
"websocket not connected" (phone code) for a moment: the run asks again every second for up to `STARTING_LIMIT`,
telling `on_wait` the seconds left, and only then says the gateway's answer as final.

A code's expiry is the gateway's where it is known: WhatsApp's 20 s for a QR code (both gateways) and Z-API's
phone code; WuzAPI's phone code lasts until its pairing websocket closes, 160 s after it came up (whatsmeow's
PairPhone doc). When WuzAPI says its pairing ended (its status no longer waiting for a scan) the code on show is
expired at once.

    actions = PairingActions(account, Family.SESSION)
    outcome = await run_codes(actions, on_code=show, phone=None, timeout=120)   # PAIRED / UNANSWERED / TIMED_OUT
"""

from __future__ import annotations

import asyncio
import enum
import math
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from tui.api.operations import Family
from tui.core.watch import SESSION_SUBSCRIPTION, Clock, utc_now

if TYPE_CHECKING:  # pragma: no cover
    from tui.core.accounts.account import Account
    from tui.api.errors import GatewayError
    from tui.api.connection import ConnectionState

CODE_LIFETIME = timedelta(seconds=20)
"""How long a code lasts: WhatsApp gives a new QR code every 20 s (Z-API's and WuzAPI's docs)."""
UNANSWERED_LIMIT = 3
"""Codes shown without a scan before the run stops (and says so)."""
CHECK_EVERY = 1.0
"""Seconds between two checks while a code is shown (the status read, and the next code when it is due)."""
REFRESH_AHEAD = timedelta(seconds=1)
"""Ask for the next code this long before the shown one expires, so the new one is on screen in time."""
STARTING_LIMIT = timedelta(seconds=30)
"""How long a run waits for a WuzAPI session to come up (its code asked again every `STARTING_RETRY`)."""
STARTING_RETRY = 1.0
PAIRING_LIMIT = timedelta(seconds=160)
"""WuzAPI's phone code lasts as long as its pairing websocket: "the login websocket is closed after the QR codes
run out, which means there's a 160-second time limit" (whatsmeow, PairPhone)."""

GATEWAY_NAMES = {Family.INSTANCE: "Z-API", Family.SESSION: "WuzAPI"}
"""Each family's usual gateway: what the spec's dialect, which is no gateway's, is named by (its sandbox plays it)."""


def gateway_name(family: Family, dialect: str) -> str:
    """The gateway a family's dialect is, by its name ("Evolution API", "Z-API"); the spec's by the family's usual
    gateway (GATEWAY_NAMES)."""
    from tui.api.dialects import InstanceDialect, SessionDialect
    from tui.gateways import adapter_for

    speaks = InstanceDialect(dialect) if family is Family.INSTANCE else SessionDialect(dialect)
    if speaks in (InstanceDialect.SPEC, SessionDialect.SPEC):
        return GATEWAY_NAMES[family]
    return adapter_for(speaks).name
SANDBOX_PAIRING_DIALECT = {Family.INSTANCE: "--instance-dialect zapi", Family.SESSION: "--session-dialect wuzapi"}
RECOVERY_WORDS = {Family.INSTANCE: "restart the instance (GET /restart)",
                  Family.SESSION: "disconnect, then connect again (POST /session/disconnect, /session/connect)"}


class CodeKind(enum.Enum):
    QR = "QR code"
    PHONE = "phone code"


@dataclass
class Code:
    """One code on show: its text (the QR payload, or the phone code `XXXX-XXXX`), when it expires, its number."""

    kind: CodeKind
    text: str
    shown_at: datetime
    expires_at: datetime
    number: int
    expired: bool = False
    """The gateway said it is gone before its time (WuzAPI closed its pairing websocket)."""

    def seconds_left(self, now: datetime) -> int:
        return 0 if self.expired else max(0, int((self.expires_at - now).total_seconds() + 0.999))


class Outcome(enum.Enum):
    PAIRED = "paired"
    UNANSWERED = "unanswered"
    TIMED_OUT = "timed out"


def connected_words(number: str | None) -> str:
    """`connected as 5511…`, or, where the gateway's status does not say the number (the spec's dialect),
    `connected` and why no number: "an unknown number" read as if a stranger's phone were paired."""
    return f"connected as {number}" if number else "connected (the gateway does not say which number)"


@dataclass(frozen=True)
class RunResult:
    outcome: Outcome
    number: str | None = None
    codes: int = 0

    def words(self) -> str:
        if self.outcome is Outcome.PAIRED:
            return connected_words(self.number)
        if self.outcome is Outcome.UNANSWERED:
            return (f"Stopped after {self.codes} codes went unanswered (each lasts 20 s). Nothing is paired; "
                    "ask for a code again when the phone is at hand.")
        return "Stopped: the time given ran out before a phone paired. Nothing is paired."


class PairingRefused(Exception):
    """The gateway would not give a code or do the action; the message is in the product's words."""


class NotUpYet(Exception):
    """The gateway's session is missing or still starting (WuzAPI "no session", "not connected", "websocket not
    connected", an empty QR code): asking again shortly may give the code. `said`: the gateway's words."""

    def __init__(self, said: str) -> None:
        super().__init__(said)
        self.said = said


def _gateway_words(error: GatewayError) -> str:
    """What the gateway said, without the HTTP status line the error's message starts with."""
    from tui.api.answers import server_message

    return server_message(error.body or "") or error.message


class PairingActions:
    """One family of one account: each action of the table in its gateway's way."""

    def __init__(self, account: Account, family: Family, *, clock: Clock = utc_now) -> None:
        self.account = account
        self.family = family
        self.clock = clock
        self.connected_at: datetime | None = None
        """When this run last sent WuzAPI's connect (the session is starting for a while after it)."""
        self.session_up_at: datetime | None = None
        """When WuzAPI's session first gave a code after that connect: its pairing websocket was up."""

    @property
    def gateway(self) -> str:
        """The gateway's name as the profile's dialect says it (Evolution API, Z-API, WuzAPI, the spec)."""
        client = self.account.instance_client() if self.family is Family.INSTANCE else self.account.session_client()
        return client.adapter.name

    def _refuse(self, action: str, error: Exception) -> PairingRefused:
        from tui.api.errors import GatewayError, ReadOnlyRefused

        from tui.api.operations import DialectRefusal

        if isinstance(error, ReadOnlyRefused):  # the profile refused it, not the gateway: its own words
            return PairingRefused(error.message)
        if isinstance(error, DialectRefusal):  # nothing was sent: this dialect has no call to pair (the spec's)
            return PairingRefused(
                f"The {self.family.value} family speaks a dialect with no call to pair a phone, so nothing was "
                f"sent ({error.field} {error.problem}). Pair it where the gateway says (its dashboard); to try pairing "
                f"in the sandbox, start it with {SANDBOX_PAIRING_DIALECT[self.family]}.")
        said = error.message if isinstance(error, GatewayError) else str(error)
        return PairingRefused(f"{self.gateway} would not {action}: {said}")

    async def check(self) -> ConnectionState | None:
        """The status, read now and recorded on the account's watch (a contradiction included)."""
        return await self.account.watch.read(self.account, self.family)

    async def _session_client_up(self) -> None:
        """WuzAPI gives codes only once it has a client for the account: connect when its status shows none (the
        older release's 500 "No session", the newer one's connected and logged in both false)."""
        from tui.api.connection import says_no_session
        from tui.api.errors import GatewayError

        now = self.clock()
        if self.connected_at is not None and now - self.connected_at < STARTING_LIMIT and self.session_up_at is None:
            return  # connected a moment ago: still starting (the code is asked again)
        client = self.account.session_client()
        try:
            status = await client.session_status()
        except GatewayError as error:
            if not says_no_session(error.message):
                raise self._refuse("start a session to pair", error) from None
            status = None
        if status is not None and status.loggedIn and status.connected:
            raise PairingRefused(f"{self.gateway} gives no code: a phone is paired and connected (log out first to "
                                 "pair another phone)")
        if status is not None and status.loggedIn:
            raise PairingRefused(f"{self.gateway} says a phone is paired (not connected): no code is needed; "
                                 f"reconnect instead ({RECOVERY_WORDS[self.family]}).")
        if status is not None and status.connected:
            return
        try:
            await client.connect(subscribe=SESSION_SUBSCRIPTION)
        except GatewayError as error:
            if "already connected" not in error.message.lower():
                raise self._refuse("start a session to pair", error) from None
            return  # a client, its websocket not up yet (or coming up): the code is asked again
        self.connected_at, self.session_up_at = self.clock(), None

    def _session_came_up(self) -> None:
        if self.session_up_at is None:
            self.session_up_at = self.clock()

    async def qr_text(self) -> str:
        """The current QR code's text (read from the PNG where the gateway sends one). NotUpYet while WuzAPI's
        session is missing or starting."""
        from tui.api import qr
        from tui.api.connection import says_not_up
        from tui.api.errors import GatewayError

        try:
            if self.family is Family.INSTANCE:
                answer = await self.account.instance_client().qr_code()
                if answer.connected and not answer.value:
                    raise PairingRefused(f"{self.gateway} gives no code: it says \"{answer.error or 'connected'}\" "
                                         "(a paired instance: log out first to pair another phone)")
                try:
                    return answer.payload()
                except qr.NoImageYet:  # Evolution's first connect starts the connection, its code comes next
                    raise NotUpYet("no QR code yet") from None
            await self._session_client_up()
            try:
                session_qr = await self.account.session_client().session_qr()
            except GatewayError as error:
                if says_not_up(error.message):
                    raise NotUpYet(_gateway_words(error)) from None
                raise
            try:
                text = session_qr.payload()
            except qr.NoImageYet:
                raise NotUpYet("no QR code yet") from None  # WhatsApp has not sent the first one
            self._session_came_up()
            return text
        except GatewayError as error:
            raise self._refuse("give a QR code", error) from None
        except qr.QRError as error:
            raise PairingRefused(f"{self.gateway}'s QR code could not be read: {error}") from None

    async def phone_code(self, phone: str) -> str:
        """A code to type on the phone (WhatsApp › Linked devices › Link with phone number instead). NotUpYet while
        WuzAPI's session is missing or starting."""
        from pydantic import ValidationError

        from tui.api.connection import says_not_up
        from tui.api.errors import GatewayError, NoCodeYet

        try:
            if self.family is Family.INSTANCE:
                try:
                    return (await self.account.instance_client().phone_code(phone)).code
                except NoCodeYet:  # Evolution's first connect starts the connection, its code comes next
                    raise NotUpYet("no phone code yet") from None
            await self._session_client_up()
            try:
                code = (await self.account.session_client().pair_phone(phone)).code
            except GatewayError as error:
                if says_not_up(error.message):
                    raise NotUpYet(_gateway_words(error)) from None
                raise
            self._session_came_up()
            return code
        except ValidationError:
            raise PairingRefused("The phone number is the country code and number, digits only "
                                 "(e.g. 5511999999999); nothing was sent.") from None
        except GatewayError as error:
            raise self._refuse("give a phone code", error) from None

    def expiry(self, kind: CodeKind, shown_at: datetime) -> datetime:
        """When a code shown at `shown_at` expires at the gateway (what its countdown counts to)."""
        if self.family is Family.SESSION and kind is CodeKind.PHONE:
            return (self.session_up_at or shown_at) + PAIRING_LIMIT
        return shown_at + CODE_LIFETIME

    def pairing_closed(self, state: ConnectionState | None) -> bool:
        """WuzAPI says its pairing ended (the websocket closed when its QR codes ran out, or the client went): its
        status neither paired nor waiting for a scan, after the session had come up."""
        return (self.family is Family.SESSION and self.session_up_at is not None and state is not None
                and not state.logged_in and not state.waiting_for_scan)

    async def reconnect(self) -> ConnectionState | None:
        """The recovery that works: Z-API restart; WuzAPI disconnect, then connect (with the subscriptions).
        Then the status is read again, and returned."""
        from tui.api.errors import GatewayError

        try:
            if self.family is Family.INSTANCE:
                await self.account.instance_client().restart()
            else:
                client = self.account.session_client()
                try:
                    await client.disconnect()
                except GatewayError:
                    pass  # no session to drop ("no session", "not logged in"): connect is what matters
                await client.connect(subscribe=SESSION_SUBSCRIPTION)
        except GatewayError as error:
            raise self._refuse("reconnect", error) from None
        return await self.check()

    async def logout(self) -> ConnectionState | None:
        """Unpair the phone (Z-API GET /disconnect; WuzAPI POST /session/logout): pairing again needs a code."""
        from tui.api.errors import GatewayError

        try:
            if self.family is Family.INSTANCE:
                await self.account.instance_client().disconnect()
            else:
                await self.account.session_client().logout()
        except GatewayError as error:
            raise self._refuse("log out", error) from None
        return await self.check()


Sleep = Callable[[float], Awaitable[None]]


@dataclass(frozen=True)
class Waiting:
    """The gateway's session is not up yet: what it said, and how long the run still waits for it."""

    kind: CodeKind
    said: str
    seconds_left: int


async def run_codes(
    actions: PairingActions,
    *,
    on_code: Callable[[Code], None],
    phone: str | None = None,
    timeout: float | None = None,
    sleep: Sleep = asyncio.sleep,
    limit: int = UNANSWERED_LIMIT,
    on_wait: Callable[[Waiting], None] | None = None,
) -> RunResult:
    """Show codes until the family is paired, `limit` codes went unanswered, or `timeout` seconds passed. Each
    code is asked for again shortly before it expires; a new text is a new code (`on_code` is told, and told again
    when the gateway says the code on show is gone). While WuzAPI's session is not up the code is asked again
    every `STARTING_RETRY` for up to `STARTING_LIMIT` (`on_wait` is told each time); then PairingRefused."""
    clock = actions.clock
    started = clock()
    deadline = started + timedelta(seconds=timeout) if timeout is not None else None
    kind = CodeKind.PHONE if phone else CodeKind.QR
    shown: Code | None = None
    renewed = 0  # times the gateway answered the code on show again (a lifetime more each, towards `limit`)
    starting: datetime | None = None  # since when the gateway says its session is not up
    while True:
        state = await actions.check()
        if state is not None and state.connected and state.logged_in:
            return RunResult(Outcome.PAIRED, state.number, shown.number if shown else 0)
        now = clock()
        if deadline is not None and now >= deadline:
            return RunResult(Outcome.TIMED_OUT, codes=shown.number if shown else 0)
        if shown is not None and not shown.expired and actions.pairing_closed(state):
            shown = replace(shown, expires_at=now, expired=True)
            on_code(shown)
        if shown is not None and now >= shown.expires_at and shown.number + renewed >= limit:
            return RunResult(Outcome.UNANSWERED, codes=shown.number)
        if shown is None or (shown.number + renewed < limit and now >= shown.expires_at - REFRESH_AHEAD):
            try:
                text = await (actions.phone_code(phone) if phone else actions.qr_text())
            except NotUpYet as not_up:
                starting = starting or now
                left = (STARTING_LIMIT - (now - starting)).total_seconds()
                if left <= 0:
                    raise PairingRefused(
                        f"{actions.gateway} did not start the session within {STARTING_LIMIT.seconds} s of "
                        f"connecting: it still says \"{not_up.said}\". Nothing is paired; try again in a moment, or "
                        "look at the gateway's log.") from None
                if on_wait is not None:
                    on_wait(Waiting(kind, not_up.said, math.ceil(left)))
                await sleep(STARTING_RETRY)
                continue
            starting = None
            if shown is None or text != shown.text or shown.expired:
                now = clock()
                shown = Code(kind, text, now, actions.expiry(kind, now), (shown.number if shown else 0) + 1)
                on_code(shown)
            elif now >= shown.expires_at:
                # The gateway answers the same code again: it still holds, so its countdown starts again (a phone
                # code shown as "expired" while the gateway would take it sent the user to ask for another). Each
                # renewal counts as a code towards the limit, so the run still ends.
                shown = replace(shown, expires_at=actions.expiry(kind, clock()))
                renewed += 1
                on_code(shown)
        await sleep(CHECK_EVERY)
