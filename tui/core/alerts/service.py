"""The app's alerts as a service: the detector fed from the event bus (stored events, pairing codes on show) and
from the campaigns' ledger, ticked by its host, each raised or cleared alert published on the bus (`AlertChanged`)
for whoever shows it (the app's toasts, the fleet board's mark, the reconnect policy).

    alerts = AlertService(bus)
    alerts.start()                                     # subscribes to the bus; nothing runs on its own
    bus.subscribe(AlertChanged, lambda changed: ...)
    alerts.tick()                                      # now and then (the host's timer)
    alerts.stop()
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from typing import TYPE_CHECKING

from tui.core.alerts.model import Alert
from tui.core.feed.bus import EventBus, EventStored

if TYPE_CHECKING:  # pragma: no cover - the detector reads the watch's module (pydantic): built at start, not import
    from tui.core.alerts.detector import AlertDetector
    from tui.core.campaigns.ledger import Campaign
    from tui.core.watch import Clock


@dataclass(frozen=True)
class AlertChanged:
    """An alert was raised or cleared."""

    alert: Alert


@dataclass(frozen=True)
class PairingCodeShown:
    """A pairing code is on show for `account`'s `family` (`what`: "QR code", "phone code") until `expires_at`."""

    account: str
    family: str
    what: str
    expires_at: datetime


@dataclass(frozen=True)
class PairingCodeGone:
    """No code is on show any more (`why`: "paired", "the run stopped", ...)."""

    account: str
    family: str
    why: str


OPERATOR_PAUSES = frozenset({
    "paused by `campaign pause`",  # tui.cli.campaign
    "paused from the app",  # the Campaigns section's key
    "stopped before the end",  # Ctrl+C or SIGTERM of the run (tui.core.campaigns.runner)
    "recipients queued again by the operator",  # `campaign retry`
})
"""The ledger's reasons for a pause somebody asked for: not an alert. Every other pause is a safety stop the
campaign made on its own (a daily cap, failures in a row, a gateway refusing)."""


class AlertService:
    """Built with the runtime (imports nothing heavy); its detector exists from `start`, with `clock` (default the
    wall clock)."""

    def __init__(self, bus: EventBus, *, clock: Clock | None = None, down_grace: timedelta | None = None) -> None:
        self.bus = bus
        self.clock = clock
        self.down_grace = down_grace  # None: the detector's (DOWN_GRACE)
        self._detector: AlertDetector | None = None
        self._unsubscribers: list[Callable[[], None]] = []

    @property
    def detector(self) -> AlertDetector:
        if self._detector is None:
            from tui.core.alerts.detector import DOWN_GRACE, AlertDetector
            from tui.core.watch import utc_now

            self._detector = AlertDetector(self._changed, clock=self.clock or utc_now,
                                           down_grace=DOWN_GRACE if self.down_grace is None else self.down_grace)
        return self._detector

    @property
    def started(self) -> bool:
        return bool(self._unsubscribers)

    def start(self) -> None:
        if self._unsubscribers:
            return
        # The detector is built at the first event, not here: the app starts this before its first frame.
        self._unsubscribers = [
            self.bus.subscribe(EventStored, lambda stored: self.detector.observe(stored.event)),
            self.bus.subscribe(PairingCodeShown, lambda shown: self.detector.code_shown(
                shown.account, shown.family, shown.what, expires_at=shown.expires_at)),
            self.bus.subscribe(PairingCodeGone,
                               lambda gone: self.detector.code_gone(gone.account, gone.family, gone.why)),
        ]

    def stop(self) -> None:
        unsubscribers, self._unsubscribers = self._unsubscribers, []
        for unsubscribe in unsubscribers:
            unsubscribe()

    def tick(self) -> None:
        if self._detector is not None:  # nothing seen yet: nothing can end or start by time
            self._detector.tick()

    def look_at_campaigns(self, campaigns: Sequence[Campaign]) -> None:
        """The ledger's campaigns as they are now: one paused on its own raises `campaign-paused` for each account
        it sends from; running, done or cancelled again clears it. A pause the operator asked for is no alert."""
        from tui.core.campaigns.ledger import CampaignState

        paused: dict[str, str] = {}
        followed: set[str] = set()
        for campaign in campaigns:
            for account in campaign.profiles:
                followed.add(account)
                if campaign.state is CampaignState.PAUSED and campaign.reason not in OPERATOR_PAUSES:
                    paused.setdefault(account, f"campaign {campaign.name}: {campaign.reason or 'paused'}")
        for account in sorted(followed):
            if account in paused:
                self.detector.campaign_paused(account, paused[account])
            else:
                self.detector.campaign_resumed(account)

    def open_alerts(self, account: str | None = None) -> list[Alert]:
        """The alerts raised and not cleared (all, or `account`'s), oldest first."""
        return self._detector.open_alerts(account) if self._detector is not None else []

    def _changed(self, alert: Alert) -> None:
        self.bus.publish(AlertChanged(alert))
