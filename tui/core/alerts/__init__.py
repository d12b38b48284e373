"""Alerts (issue 35): what went wrong with an account, raised once per episode and cleared once, and where they go.

    detector = AlertDetector(sink, clock=utc_now)   # sink: Callable[[Alert], None]
    detector.observe(stored_event)                   # each stored event (the listener's on_event)
    detector.tick()                                  # now and then: quiet kinds, flapping settled, codes expiring
"""

from tui.core.alerts.detector import AlertDetector, SubscribeEvents
from tui.core.alerts.model import Alert, AlertKind, AlertState

__all__ = ["Alert", "AlertDetector", "AlertKind", "AlertState", "SubscribeEvents"]
