"""Each family's connection, live (issue 23): what the account's gateway last said about its link to WhatsApp, fed
by reading its status (polled by the app, never faster than every `POLL_INTERVAL`) and by the connection events
the listener receives. Watching never connects anything by itself: it only reads and listens. No Textual here.

    watch = account.watch                      # one per account, a FamilyWatch per family the profile has
    await watch.poll(account)                  # read each family's status (the app's timer calls this)
    watch.apply_event("LoggedOut", payload)    # what the listener received (the account's event subscription)
    watch.subscribe(on_change)                 # on_change(change: Change) after every change of state
    watch.state(Family.SESSION)                # ConnectionState (connected, logged_in, number, since, reason)
    watch.flapping(Family.SESSION)             # several changes in the last minute

The events, from the gateways' docs and code: WuzAPI (whatsmeow's events as wuzapi forwards them) `Connected`,
`Disconnected`, `LoggedOut`, `PairSuccess`, `PairError`, `QR`, `QRTimeout`, `ConnectFailure`, `TemporaryBan`;
Z-API `ConnectedCallback`, `DisconnectedCallback`. Their kinds are the payload's `type` as
`tui.webhooks.classify` names them. Evolution API's `connection.update` and `qrcode.updated` are known by their
envelope's `event`, whatever kind they are classified as (tui.gateways.evolution.connection says what they mean).

The paired number: WuzAPI's status and both gateways' connect events say it; Z-API's status never does, so a
connected Z-API instance whose number is not known has its `GET /device` read once (again only after it was seen
not connected). A failing read leaves the number unknown, logged at info.
"""

from __future__ import annotations

import enum
import logging
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Protocol

from tui.api.connection import NO_SESSION_STATE, ConnectionState, ZapiQr, number_of_jid, says_no_session
from tui.api.models import NoBody
from tui.api.operations import DEVICE, Family

if TYPE_CHECKING:  # pragma: no cover
    from tui.api.client import InstanceClient, SessionClient
    from tui.api.dialects import InstanceDialect, SessionDialect
    from tui.webhooks.events import StoredEvent


class Account(Protocol):
    """What a watch reads through: an account's clients and dialects (tui.core.accounts.account.Account, which holds the watch)."""

    @property
    def dialects(self) -> tuple[InstanceDialect, SessionDialect]: ...

    def instance_client(self) -> InstanceClient: ...

    def session_client(self) -> SessionClient: ...

log = logging.getLogger(__name__)

POLL_INTERVAL = 10.0
"""Seconds between two status reads, at least (the app's timer; a read asked sooner is skipped)."""
FLAP_WINDOW = timedelta(minutes=1)
FLAP_CHANGES = 3
"""This many changes of connected/not connected within FLAP_WINDOW: the connection is flapping."""

SESSION_CONNECTION_KINDS = ("Connected", "Disconnected", "LoggedOut", "PairSuccess", "PairError", "QR", "QRTimeout",
                            "ConnectFailure", "TemporaryBan")
SESSION_KINDS = frozenset(SESSION_CONNECTION_KINDS)
SESSION_SUBSCRIPTION = ("Message", "ReadReceipt", "ChatPresence", *SESSION_CONNECTION_KINDS)
"""What the app subscribes a WuzAPI account to: the messages, receipts and presence it shows, and the connection
events it watches. Every `POST /session/connect` sends it again (WuzAPI stores what each connect sends)."""
INSTANCE_KINDS = frozenset({"ConnectedCallback", "DisconnectedCallback"})
CONNECTION_KINDS = SESSION_KINDS | INSTANCE_KINDS

Clock = Callable[[], datetime]


class Link(enum.Enum):
    CONNECTED = "connected"
    DISCONNECTED = "disconnected"
    LOGGED_OUT = "logged out"


# What a stored connection event says of the link, for the alerts (tui.core.alerts) and the catch-up of a
# disconnected period (tui.core.catchup.outages). The kinds as the classifier names them (tui.webhooks.classify):
# WuzAPI's Connected, Disconnected and LoggedOut (docs/gateways/wuzapi.md §4.3), Z-API's ConnectedCallback and
# DisconnectedCallback (docs/gateways/zapi.md §5.4).
LINK_KINDS = {
    "Connected": Link.CONNECTED,
    "ConnectedCallback": Link.CONNECTED,
    "Disconnected": Link.DISCONNECTED,
    "DisconnectedCallback": Link.DISCONNECTED,
    "LoggedOut": Link.LOGGED_OUT,
}


def where_from(event: StoredEvent) -> tuple[str | None, str | None]:
    """(account, family) of a stored event: its account (else the one its `/a/<profile>/` path names) and the family
    whose path it came on (None for another path)."""
    from tui.webhooks.families import PathFamily, family_of, split_account

    named, below = split_account(event.path)
    path_family = family_of(below)
    return (event.account if event.account is not None else named,
            path_family.value if path_family is not PathFamily.OTHER else None)


def utc_now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True)
class Change:
    """One family's state changed: `old` is None the first time it is known."""

    family: Family
    old: ConnectionState | None
    new: ConnectionState
    problem: str | None = None
    contradiction: str | None = None

    @property
    def dropped(self) -> bool:
        """Was connected, is not any more (what raises a toast and rings the bell)."""
        return self.old is not None and self.old.connected and not self.new.connected


NO_STATUS_READ = "no status read in the spec dialect"
UNREADABLE_ANSWER = "the answer could not be read"


def header_words(watch: ConnectionWatch) -> str:
    """The connection in a few words for the app's header: "connected" when every family that can be read is;
    else what is wrong, family by family ("session logged out", "instance stuck", "session flapping")."""
    pieces: list[tuple[Family, str]] = []
    known = 0
    for family in sorted(watch.families, key=lambda family: family.value):
        watched = watch.families[family]
        if watched.problem == NO_STATUS_READ and watched.state is None:
            continue
        known += 1
        state = watched.state
        if watched.flapping():
            pieces.append((family, "flapping"))
        elif watched.contradiction is not None:
            pieces.append((family, "stuck"))
        elif watched.problem is not None:  # the last read failed: what it met, not the state before it
            pieces.append((family, watched.problem))
        elif state is None:
            pieces.append((family, "unknown"))
        elif state.waiting_for_scan:
            pieces.append((family, "waiting for a scan"))
        elif not state.connected:
            pieces.append((family, "not connected"))
    if not known:
        return "starting"
    if not pieces:
        return "connected"
    if known == 1:
        return pieces[0][1]
    words = {said for _family, said in pieces}
    if len(pieces) == known and len(words) == 1:
        return f"both {words.pop()}"  # "both not connected": short enough for 80 columns
    return " · ".join(f"{family.value} {said}" for family, said in pieces)


class FamilyWatch:
    """What is known of one family's connection. `problem`: why its status could not be read (bad credentials,
    unreachable, a dialect without a status read), None when the last read answered."""

    def __init__(self, family: Family, clock: Clock) -> None:
        self.family = family
        self.clock = clock
        self.state: ConnectionState | None = None
        self.problem: str | None = None
        self.contradiction: str | None = None
        """The gateway's answers contradict each other (a wedged session): what they said, in plain words."""
        self.changes: deque[datetime] = deque(maxlen=32)
        self.number_asked = False
        """Z-API's `GET /device` was asked for the number during this connection (asked once; again after the
        family was seen not connected)."""

    def flapping(self) -> bool:
        now = self.clock()
        return sum(1 for moment in self.changes if now - moment <= FLAP_WINDOW) >= FLAP_CHANGES


def _text(value: object) -> str:
    return value.strip() if isinstance(value, str) else ""


def _event_of(payload: object) -> dict[str, object]:
    if isinstance(payload, dict):
        event = payload.get("event")
        if isinstance(event, dict):
            return event
    return {}


class ConnectionWatch:
    """Every family of one account. Changes are told to subscribers on the caller's thread (the event loop)."""

    def __init__(self, families: frozenset[Family], *, clock: Clock = utc_now) -> None:
        self.clock = clock
        self.families: dict[Family, FamilyWatch] = {family: FamilyWatch(family, clock) for family in families}
        self._subscribers: list[Callable[[Change], None]] = []
        self._last_poll: datetime | None = None

    def state(self, family: Family) -> ConnectionState | None:
        watched = self.families.get(family)
        return watched.state if watched is not None else None

    def problem(self, family: Family) -> str | None:
        watched = self.families.get(family)
        return watched.problem if watched is not None else None

    def flapping(self, family: Family) -> bool:
        watched = self.families.get(family)
        return watched is not None and watched.flapping()

    def subscribe(self, callback: Callable[[Change], None]) -> Callable[[], None]:
        self._subscribers.append(callback)
        return lambda: self._subscribers.remove(callback) if callback in self._subscribers else None

    # -- feeding -------------------------------------------------------------------------------------------

    def contradiction(self, family: Family) -> str | None:
        watched = self.families.get(family)
        return watched.contradiction if watched is not None else None

    def set_state(self, family: Family, state: ConnectionState, *, problem: str | None = None,
                  contradiction: str | None = None) -> None:
        """A new reading of `family` (a status answer, an event, or the pairing flow's own check)."""
        watched = self.families.get(family)
        if watched is None:
            return
        old = watched.state
        now = self.clock()
        flipped = old is None or old.connected != state.connected or old.logged_in != state.logged_in
        if old is not None and state.number is None and state.logged_in and old.number:
            state = state.model_copy(update={"number": old.number})  # a status answer that does not say it
        if state.since is None and old is not None:
            # A status answer never says since when: only a change this watch saw does (the first reading: unknown).
            state = state.model_copy(update={"since": now if flipped else old.since})
        if old is not None and old.connected != state.connected and (old.logged_in or state.logged_in):
            # A flap is a paired phone's connection going up and down; a pairing's own steps (closed, connecting
            # for a scan, closed when a code lapses) are not: pairing a phone read "flapping" on Evolution.
            watched.changes.append(now)
        if not state.connected:
            watched.number_asked = False  # the next connection may ask again
        same = old == state and watched.problem == problem and watched.contradiction == contradiction
        watched.state, watched.problem, watched.contradiction = state, problem, contradiction
        if not same:
            self._tell(Change(family, old, state, problem, contradiction))

    def set_problem(self, family: Family, problem: str) -> None:
        """The status could not be read: the state stays what it was, the problem is said beside it."""
        watched = self.families.get(family)
        if watched is None or watched.problem == problem:
            return
        watched.problem = problem
        state = watched.state or ConnectionState(connected=False, logged_in=False, reason=problem,
                                                 since=self.clock())
        self._tell(Change(family, watched.state, state, problem))

    def _tell(self, change: Change) -> None:
        for callback in list(self._subscribers):
            try:
                callback(change)
            except Exception:
                log.exception("connection subscriber failed")

    def apply_event(self, kind: str, payload: object) -> bool:
        """A connection event the listener received; False when `kind` is not one (nothing changes)."""
        from tui.gateways.evolution.connection import evolution_event, state_after

        evolution = evolution_event(payload)
        if evolution is not None:
            return self._apply(Family.INSTANCE, lambda old: state_after(*evolution, old))
        if kind in INSTANCE_KINDS:
            family = Family.INSTANCE
        elif kind in SESSION_KINDS:
            family = Family.SESSION
        else:
            return False
        return self._apply(family, lambda old: _after_event(kind, payload, old))

    def _apply(self, family: Family, after: Callable[[ConnectionState], ConnectionState | None]) -> bool:
        watched = self.families.get(family)
        if watched is None:
            return False
        old = watched.state or ConnectionState(connected=False, logged_in=False)
        new = after(old)
        if new is not None and watched.state is None:  # the event is the change: it happened now
            new = new.model_copy(update={"since": self.clock()})
        if new is not None:
            self.set_state(family, new)
        return new is not None

    # -- polling -------------------------------------------------------------------------------------------

    def poll_due(self) -> bool:
        """At least POLL_INTERVAL since the last read (never faster, however often the timer fires)."""
        return self._last_poll is None or (self.clock() - self._last_poll).total_seconds() >= POLL_INTERVAL - 0.5

    async def poll(self, account: Account, *, force: bool = False) -> None:
        """Read each family's status once (reads only: never connects). Skipped when the last read is too recent,
        unless `force` (a user's explicit refresh, a pairing step's check)."""
        if not force and not self.poll_due():
            return
        self._last_poll = self.clock()
        for family in list(self.families):
            await self.read(account, family)

    async def read(self, account: Account, family: Family) -> ConnectionState | None:
        """One family's status, read now and recorded; None when it could not be read (the problem says why)."""
        from tui.api.errors import AnswerTooLarge, Conflict, GatewayError, MalformedResponse, TransportFault, Unauthorized
        from tui.api.operations import DialectRefusal

        try:
            if family is Family.INSTANCE:
                state = (await account.instance_client().status()).state
            else:
                state = (await account.session_client().session_status()).state
        except DialectRefusal:
            self.set_problem(family, NO_STATUS_READ)
            return None
        except Unauthorized:
            self.set_problem(family, "bad credentials")
            return None
        except TransportFault:
            self.set_problem(family, "unreachable")
            return None
        except Conflict:
            self.set_problem(family, "not connected")
            return None
        except (MalformedResponse, AnswerTooLarge):  # an answer that is not a status (a hostile gateway's)
            self.set_problem(family, UNREADABLE_ANSWER)
            return None
        except GatewayError as error:
            if family is Family.SESSION and says_no_session(error.message):
                self.set_state(family, NO_SESSION_STATE)  # the older WuzAPI's answer for no client: a state
                return self.state(family)
            self.set_problem(family, f"error {error.status}" if error.status else "error")
            return None
        except Exception as error:  # ClientsNotReady, MissingFamily: not a reading
            log.debug("status of %s not read: %s", family, error)
            return None
        contradiction = await _contradiction(account, family, state)
        if contradiction is not None:
            state = state.model_copy(update={"connected": False, "logged_in": True,
                                             "reason": "stuck: the gateway contradicts itself"})
        self.set_state(family, state, contradiction=contradiction)
        if family is Family.INSTANCE:
            await self._read_number(account)
        return self.state(family)

    async def _read_number(self, account: Account) -> None:
        """Z-API's status never says the paired number: when the instance is connected and its number is not
        known, read `GET /device` once, where the account's gateway has that call (its adapter refuses it
        otherwise; not on every poll; again after it was seen not connected). A failing read leaves the number
        unknown and is only logged: it is no problem of the connection's."""
        from tui.api.errors import GatewayError
        from tui.gateways import adapter_for

        watched = self.families[Family.INSTANCE]
        state = watched.state
        if (state is None or not state.connected or state.number or watched.number_asked
                or adapter_for(account.dialects[0]).refusal(DEVICE.id) is not None):
            return
        watched.number_asked = True
        try:
            number = (await account.instance_client().request(DEVICE, NoBody())).number
        except GatewayError as error:  # 404, unreachable, a bad answer: the number stays unknown
            log.info("paired number not read (Z-API GET /device): %s%s", type(error).__name__,
                     f" {error.status}" if error.status else "")
            return
        except Exception as error:  # ClientsNotReady and the like: not a reading either
            log.info("paired number not read (Z-API GET /device): %s", type(error).__name__)
            return
        current = watched.state
        if not number or current is None or not current.connected or current.number:
            return
        self.set_state(Family.INSTANCE, current.model_copy(update={"number": number}),
                       problem=watched.problem, contradiction=watched.contradiction)


async def _contradiction(account: Account, family: Family, state: ConnectionState) -> str | None:
    """When the gateway's answers disagree (WuzAPI issues #133 and #90; Z-API's wedged sessions), what they said: its
    adapter knows how its gateway contradicts itself, and reads only (a QR read while connected gives no code)."""
    from tui.gateways import adapter_for

    instance_dialect, session_dialect = account.dialects
    adapter = adapter_for(instance_dialect if family is Family.INSTANCE else session_dialect)
    return await adapter.contradiction(family, state, _QrReads(account))


class _QrReads:
    """An open account's QR reads, as a gateway's connection check asks for them (`ConnectionReads`)."""

    def __init__(self, account: Account) -> None:
        self.account = account

    async def instance_qr(self) -> ZapiQr:
        return await self.account.instance_client().qr_code()

    async def session_qr(self) -> object:
        return await self.account.session_client().session_qr()


def _after_event(kind: str, payload: object, old: ConnectionState) -> ConnectionState | None:
    """The state a connection event leaves behind (from the state before it)."""
    data = payload if isinstance(payload, dict) else {}
    event = _event_of(payload)
    if kind == "ConnectedCallback":
        number = _text(data.get("phone")) or old.number
        return ConnectionState(connected=True, logged_in=True, number=number or None)
    if kind == "DisconnectedCallback":
        error = _text(data.get("error"))
        return ConnectionState(connected=False, logged_in=old.logged_in, number=old.number,
                               reason=f"disconnected: {error}" if error else "disconnected")
    if kind == "Connected":
        return ConnectionState(connected=True, logged_in=True, number=old.number)
    if kind == "PairSuccess":
        number = number_of_jid(_text(event.get("ID"))) or old.number
        return ConnectionState(connected=old.connected, logged_in=True, number=number, reason="paired")
    if kind == "Disconnected":
        return ConnectionState(connected=False, logged_in=old.logged_in, number=old.number,
                               reason="disconnected from WhatsApp (network)")
    if kind == "LoggedOut":
        return ConnectionState(connected=False, logged_in=False, reason="logged out (unlinked from the phone)")
    if kind == "QR":
        return ConnectionState(connected=False, logged_in=False, reason="waiting for a phone to scan the QR code",
                               waiting_for_scan=True)
    if kind == "QRTimeout":
        return ConnectionState(connected=False, logged_in=False, reason="the QR codes expired without a scan")
    if kind == "PairError":
        error = _text(event.get("Error")) or _text(data.get("error"))
        return ConnectionState(connected=False, logged_in=False,
                               reason=f"pairing failed: {error}" if error else "pairing failed")
    if kind == "ConnectFailure":
        reason = event.get("Reason")
        words = f"could not connect (reason {reason})" if isinstance(reason, (int, str)) and reason != "" else \
            "could not connect"
        return ConnectionState(connected=False, logged_in=old.logged_in, number=old.number, reason=words)
    if kind == "TemporaryBan":
        expire = event.get("Expire")
        words = "temporarily banned by WhatsApp" + (f" ({expire})" if isinstance(expire, (int, str)) and expire else "")
        return ConnectionState(connected=False, logged_in=old.logged_in, number=old.number, reason=words)
    return None
