"""The app's alerts (issue 35): the alert detector fed with every stored event, one toast per raised alert.

The hook for the app (not wired here, so the runtime's reshaping into services is left alone): after the runtime
has started, in `GatewayApp` (tui/ui/app.py),

    self.alert_toasts = AlertToasts(self, self.runtime.subscribe_events); self.alert_toasts.start()

and `self.alert_toasts.stop()` when the app stops. On the event bus, `subscribe_events` becomes the bus's
subscription to stored events, nothing else changes. The fleet board's mark can read
`alert_toasts.detector.open_alerts(account)`.
"""

from __future__ import annotations

from collections.abc import Callable

from textual.app import App
from textual.timer import Timer

from tui.core.alerts import Alert, AlertDetector, AlertKind, AlertState, SubscribeEvents
from tui.core.alerts.headless import TICK_EVERY
from tui.core.watch import Clock, utc_now
TOAST_SECONDS = 15
SERIOUS = (AlertKind.LOGGED_OUT, AlertKind.RECONNECT_FAILED)  # nothing comes back without the user


class AlertToasts:
    """Subscribes the detector to stored events and ticks it; each raised alert is a toast (its clearing is not:
    the header and the fleet board show the state)."""

    def __init__(self, app: App[object], subscribe_events: SubscribeEvents, *, clock: Clock = utc_now) -> None:
        self.app = app
        self.subscribe_events = subscribe_events
        self.detector = AlertDetector(self._alert, clock=clock)
        self.seen: list[Alert] = []  # every alert, raised and cleared, newest last (bounded by the episodes)
        self._unsubscribe: Callable[[], None] | None = None
        self._timer: Timer | None = None

    def start(self) -> None:
        self._unsubscribe = self.subscribe_events(self.detector.observe)
        self._timer = self.app.set_interval(TICK_EVERY, self.detector.tick)

    def stop(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        if self._timer is not None:
            self._timer.stop()
            self._timer = None

    def _alert(self, alert: Alert) -> None:
        self.seen = [*self.seen[-99:], alert]
        if alert.state is not AlertState.RAISED:
            return
        where = alert.account or "this account"
        self.app.notify(f"{alert.family or ''} {alert.kind}: {alert.detail}".strip(), title=f"Alert: {where}",
                        severity="error" if alert.kind in SERIOUS else "warning", markup=False,
                        timeout=TOAST_SECONDS)
