"""Alerts (issue 35): what went wrong with an account, raised once per episode and cleared once, and where they go.

    detector = AlertDetector(sink, clock=utc_now)   # tui.core.alerts.detector; sink: Callable[[Alert], None]
    detector.observe(stored_event)                   # each stored event (the listener's on_event)
    detector.tick()                                  # now and then: quiet kinds, flapping settled, codes expiring

The app holds an `AlertService` (tui.core.alerts.service) that feeds a detector from the event bus. Only the alert
object is imported here: the detector reads the watch's module (pydantic), which the app loads after its first
frame, and the runtime builds the service before it.
"""

from tui.core.alerts.model import Alert, AlertKind, AlertState

__all__ = ["Alert", "AlertKind", "AlertState"]
