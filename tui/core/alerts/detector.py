"""Which alerts are open per account, from the events the listener stores and the state changes the app learns.

Each alert is an episode: raised once when it starts, cleared once when it ends, whatever is said in between (a
gateway repeating "Disconnected" is one episode). A disconnect is told once it has lasted DOWN_GRACE (at the next
`tick`): a blip, down and up again within seconds, is not an alert, nor are the first changes of a storm. A storm of connection changes (N in M minutes) is one
`flapping` episode: while it lasts, the single disconnects inside it are not alerted one by one; when the link has
been stable for M minutes it clears, and a link that settled down is then alerted as `disconnected`.

Time comes from the injected clock: `tick()` (called now and then by whoever hosts the detector) ends what ends by
time (flapping settled, codes expired) and finds quiet kinds. Nothing here sleeps, starts threads or does I/O.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import NamedTuple

from tui.api.redaction import redact_url_secrets
from tui.core.alerts.model import Alert, AlertKind, AlertState
from tui.core.watch import LINK_KINDS as CONNECTION_KINDS
from tui.core.watch import Clock, Link, utc_now, where_from
from tui.webhooks.events import StoredEvent
from tui.webhooks.quiet import QUIET_HISTORY, quiet_kinds_among

AlertSink = Callable[[Alert], None]
SubscribeEvents = Callable[[Callable[[StoredEvent], None]], Callable[[], None]]
"""How a host hands the detector the stored events (`Runtime.subscribe_events`, later the event bus): it
subscribes a callback and gets back the function that unsubscribes it."""

FLAP_CHANGES = 3
"""Connection changes within FLAP_WINDOW that make a storm: down, up, down again within minutes is not a blip."""
FLAP_WINDOW = timedelta(minutes=5)
"""How far back changes are counted, and how long a link must stay as it is for `flapping` to clear."""
DOWN_GRACE = timedelta(seconds=10)
"""How long a link stays down before `disconnected` is raised: a restart's or a storm's first changes come within
seconds (28 webhooks in one restart, Evolution API #693), and telling each as a disconnect made a flap two alerts.
A logout is told at once (only a new pairing brings it back)."""
CODE_WARNING = timedelta(seconds=30)
"""A pairing code raises `code-expiring` this long before it expires (a quarter of a shorter lifetime)."""


# WuzAPI's pairing events (docs/gateways/wuzapi.md §4.1): like the connection events, never a quiet kind.
PAIRING_KINDS = frozenset({"PairSuccess", "PairError", "QR", "QRTimeout", "ConnectFailure", "KeepAliveTimeout",
                           "KeepAliveRestored", "TemporaryBan", "ClientOutdated", "StreamError"})


class _Episode(NamedTuple):
    kind: AlertKind
    account: str | None
    family: str | None
    subject: str = ""  # what within the account: the quiet kind's name


@dataclass
class _LinkHistory:
    state: Link | None = None
    changes: deque[datetime] = field(default_factory=deque)  # when it went up or down, within the window
    down_since: datetime | None = None  # down and not told yet: `disconnected` is raised once DOWN_GRACE passed
    down_how: str = ""  # what said it went down


@dataclass
class _Code:
    what: str  # "QR code", "phone code"
    expires_at: datetime


class AlertDetector:
    """Per account and family: disconnected, logged out, flapping, kind quiet, rejected, campaign paused, code
    expiring. `sink` receives each raised and cleared alert as it happens (on the caller's thread)."""

    def __init__(self, sink: AlertSink, *, clock: Clock = utc_now, flap_changes: int = FLAP_CHANGES,
                 flap_window: timedelta = FLAP_WINDOW, code_warning: timedelta = CODE_WARNING,
                 down_grace: timedelta = DOWN_GRACE) -> None:
        if flap_changes < 2:
            raise ValueError("flap_changes: at least 2 (one change is a disconnect, not a storm)")
        self.sink = sink
        self.clock = clock
        self.flap_changes = flap_changes
        self.flap_window = flap_window
        self.code_warning = code_warning
        self.down_grace = down_grace
        self.started_at = clock()  # nothing it was not told of could arrive before: quiet counts from here
        self._open: dict[_Episode, Alert] = {}
        self._links: dict[tuple[str | None, str], _LinkHistory] = {}
        self._arrivals: dict[str | None, dict[str, deque[datetime]]] = {}
        self._kind_family: dict[tuple[str | None, str], str | None] = {}
        self._rejected: dict[_Episode, int] = {}
        self._codes: dict[tuple[str, str], _Code] = {}

    # -- what comes in ----------------------------------------------------------------------------------------------

    def observe(self, event: StoredEvent) -> None:
        """One stored event. A rejected one is counted as a rejection and believed in nothing else (a forged
        "Disconnected" changes no state). A duplicate is not a new arrival nor a new rejection, but a connection
        event marked duplicate still says the state: WuzAPI's Connected and Disconnected carry an empty struct, so
        each is the same bytes as the first (and a real retry of one changes nothing: episodes are idempotent)."""
        account, family = where_from(event)
        link = CONNECTION_KINDS.get(event.kind)
        if event.duplicate_of is not None:
            if link is not None and family is not None and not event.rejected:
                self._link(account, family, link, f"the gateway sent {event.kind}")
            return
        if event.rejected:
            self._rejection(account, family, event)
            return
        rejected = _Episode(AlertKind.REJECTED, account, family)
        if rejected in self._open:
            count = self._rejected.pop(rejected, 0)
            self._clear(rejected, f"events accepted again after {count} rejected")
        self._arrived(account, family, event.kind, event.received_at)
        if link is not None and family is not None:
            self._link(account, family, link, f"the gateway sent {event.kind}")

    def remember(self, event: StoredEvent) -> None:
        """An event stored before the detector started, oldest first: it teaches the kinds' usual gaps (for
        kind-quiet) and raises nothing."""
        if event.duplicate_of is not None or event.rejected:
            return
        self._arrived(*where_from(event), event.kind, event.received_at)

    def link_changed(self, account: str | None, family: str, *, connected: bool, logged_out: bool = False) -> None:
        """A state learnt otherwise than by webhook (the app's status reads, a reconnect that worked)."""
        link = Link.CONNECTED if connected else Link.LOGGED_OUT if logged_out else Link.DISCONNECTED
        self._link(account, family, link, "the gateway's status says so")

    def campaign_paused(self, account: str, reason: str, family: str | None = None) -> None:
        """A campaign stopped sending on its own (`reason`: why, in the product's words)."""
        self._raise(_Episode(AlertKind.CAMPAIGN_PAUSED, account, family), reason)

    def campaign_resumed(self, account: str, family: str | None = None) -> None:
        self._clear(_Episode(AlertKind.CAMPAIGN_PAUSED, account, family), "the campaign is sending again")

    def code_shown(self, account: str, family: str, what: str, *, expires_at: datetime) -> None:
        """A pairing code is on show (`what`: "QR code", "phone code"), valid until `expires_at`
        (tui.core.pairing.Code's). A new code replaces the one before: its warning, if raised, is cleared."""
        self.code_gone(account, family, f"a new {what} replaced it")
        self._codes[account, family] = _Code(what, expires_at)

    def code_gone(self, account: str, family: str, why: str) -> None:
        """The code on show is no longer needed (`why`: "paired", "the run stopped", ...)."""
        self._codes.pop((account, family), None)
        self._clear(_Episode(AlertKind.CODE_EXPIRING, account, family), why)

    def reconnect_gave_up(self, account: str, family: str, tries: int) -> None:
        """The reconnect policy stopped trying (tui.core.reconnect); cleared when the link is back."""
        self._raise(_Episode(AlertKind.RECONNECT_FAILED, account, family),
                    f"still not connected after {tries} reconnect tries; reconnect by hand (no new code is asked "
                    "for on its own)")

    def tick(self) -> None:
        """What ends or starts by time alone: flapping settled, quiet kinds, codes expiring or expired."""
        now = self.clock()
        for (account, family), history in self._links.items():
            self._forget_old_changes(history, now)
            flapping = _Episode(AlertKind.FLAPPING, account, family)
            if flapping in self._open and not history.changes:
                self._clear(flapping, f"stable for {_minutes(self.flap_window)}, {_state_words(history.state)}")
                if history.state is not None and history.state is not Link.CONNECTED:
                    history.down_since = None
                    self._raise_down(account, family, history.state, "it stayed so after flapping")
            if history.down_since is not None and now - history.down_since >= self.down_grace:
                history.down_since = None
                if flapping not in self._open and history.state is Link.DISCONNECTED:
                    self._raise_down(account, family, Link.DISCONNECTED, history.down_how)
        for account, arrivals in self._arrivals.items():
            for quiet in quiet_kinds_among(arrivals, now, self.started_at):
                where = self._kind_family.get((account, quiet.kind))
                self._raise(_Episode(AlertKind.KIND_QUIET, account, where, quiet.kind), quiet.words())
        for (owner, code_family), code in list(self._codes.items()):
            if now >= code.expires_at:
                self.code_gone(owner, code_family, f"the {code.what} expired")
            elif now >= code.expires_at - self.code_warning:
                left = int((code.expires_at - now).total_seconds())
                self._raise(_Episode(AlertKind.CODE_EXPIRING, owner, code_family),
                            f"the {code.what} on show expires in {left} s")

    # -- what is open -----------------------------------------------------------------------------------------------

    def open_alerts(self, account: str | None = None) -> list[Alert]:
        """The raised alerts not cleared yet (all, or `account`'s), oldest first: the fleet board's mark."""
        return [alert for alert in self._open.values() if account is None or alert.account == account]

    # -- how --------------------------------------------------------------------------------------------------------

    def _rejection(self, account: str | None, family: str | None, event: StoredEvent) -> None:
        episode = _Episode(AlertKind.REJECTED, account, family)
        self._rejected[episode] = self._rejected.get(episode, 0) + 1
        reason = redact_url_secrets(event.reason or f"signature {event.verdict}")
        self._raise(episode, f"the listener refused a {event.kind} delivery: {reason}")

    def _arrived(self, account: str | None, family: str | None, kind: str, at: datetime) -> None:
        if kind in CONNECTION_KINDS or kind in PAIRING_KINDS:
            return  # they come from changes, not traffic: their gaps say nothing about what should arrive
        times = self._arrivals.setdefault(account, {}).setdefault(kind, deque(maxlen=QUIET_HISTORY))
        times.append(at)
        self._kind_family[account, kind] = family
        self._clear(_Episode(AlertKind.KIND_QUIET, account, family, kind), f"{kind} arrives again")

    def _link(self, account: str | None, family: str, link: Link, how: str) -> None:
        now = self.clock()
        history = self._links.setdefault((account, family), _LinkHistory())
        was_up = history.state in (None, Link.CONNECTED)
        history.state = link
        if was_up != (link is Link.CONNECTED):
            history.changes.append(now)
        self._forget_old_changes(history, now)
        flapping = _Episode(AlertKind.FLAPPING, account, family)
        if flapping not in self._open and len(history.changes) >= self.flap_changes:
            self._raise(flapping, f"{len(history.changes)} connection changes within {_minutes(self.flap_window)}, "
                                  f"{_state_words(link)} now; single disconnects are not alerted until it settles")
        if link is not Link.DISCONNECTED or flapping in self._open:
            history.down_since = None  # back, logged out, or part of the storm the flapping alert tells
        if link is Link.CONNECTED:
            for kind in (AlertKind.DISCONNECTED, AlertKind.LOGGED_OUT, AlertKind.RECONNECT_FAILED):
                self._clear(_Episode(kind, account, family), f"connected again ({how})")
        elif link is Link.LOGGED_OUT:
            # Always said, storm or not: only a new pairing brings it back.
            self._raise(_Episode(AlertKind.LOGGED_OUT, account, family), f"logged out: pair again ({how})")
        elif flapping not in self._open:
            if self.down_grace <= timedelta(0):
                self._raise_down(account, family, link, how)
            elif history.down_since is None:
                history.down_since, history.down_how = now, how  # told at the first tick after the grace

    def _raise_down(self, account: str | None, family: str, link: Link, how: str) -> None:
        kind = AlertKind.LOGGED_OUT if link is Link.LOGGED_OUT else AlertKind.DISCONNECTED
        self._raise(_Episode(kind, account, family), f"{_state_words(link)} ({how})")

    def _forget_old_changes(self, history: _LinkHistory, now: datetime) -> None:
        while history.changes and now - history.changes[0] >= self.flap_window:
            history.changes.popleft()

    def _raise(self, episode: _Episode, detail: str) -> None:
        if episode in self._open:
            return
        alert = Alert(episode.account, episode.family, episode.kind, AlertState.RAISED, self.clock(), detail)
        self._open[episode] = alert
        self.sink(alert)

    def _clear(self, episode: _Episode, detail: str) -> None:
        if self._open.pop(episode, None) is None:
            return
        self.sink(Alert(episode.account, episode.family, episode.kind, AlertState.CLEARED, self.clock(), detail))


def _state_words(link: Link | None) -> str:
    return "state unknown" if link is None else link.value


def _minutes(span: timedelta) -> str:
    minutes = span.total_seconds() / 60
    return f"{minutes:g} min"
