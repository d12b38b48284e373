"""The app's alerts (issue 35): one toast per raised alert, and the signal the preferences choose (`alert_signal`:
the terminal bell, a desktop notification where the terminal shows one, or none).

The app starts it once mounted and stops it when unmounted: it starts the alert service (tui.core.alerts.service:
the detector fed from the event bus), follows its `AlertChanged` on the bus, ticks it every TICK_EVERY and hands it
the campaigns' ledger now and then. The clearing of an alert is no toast: the fleet board's mark goes.

A drop of the current account's connection is already toasted, with the bell, by the header (it also sees what no
event says: a wedged session's status read); its `disconnected` or `logged-out` alert is therefore not toasted a
second time. Every other alert is, the current account's flapping among them.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from textual.app import App
from textual.timer import Timer

from tui.core.alerts import Alert, AlertKind, AlertState
from tui.core.alerts.service import AlertChanged, AlertService
from tui.ui.textual_compat import write_to_terminal

if TYPE_CHECKING:
    from tui.core.campaigns.ledger import Campaign

log = logging.getLogger(__name__)

TICK_EVERY = 5.0
"""Seconds between two looks at what ends or starts by time (quiet kinds, flapping settled, codes expiring) and at
the campaigns' ledger (as `listen`'s alerts, tui.core.alerts.headless)."""
TOAST_SECONDS = 15
SERIOUS = (AlertKind.LOGGED_OUT, AlertKind.RECONNECT_FAILED)  # nothing comes back without the user
SAID_BY_THE_HEADER = (AlertKind.DISCONNECTED, AlertKind.LOGGED_OUT)


class AlertToasts:
    """`signal`: "bell", "desktop" or "none" (tui.local.preferences.ALERT_SIGNALS); `current`: the current
    account's name (its drops are the header's to say)."""

    def __init__(self, app: App[object], alerts: AlertService, *, signal: str = "bell",
                 current: Callable[[], str | None] = lambda: None,
                 environ: Mapping[str, str] = os.environ) -> None:
        self.app = app
        self.alerts = alerts
        self.signal = signal
        self.current = current
        self.environ = environ
        self.seen: list[Alert] = []  # every alert, raised and cleared, newest last (the newest 100)
        self._unsubscribe: Callable[[], None] | None = None
        self._timer: Timer | None = None
        self._reading_campaigns = False

    def start(self) -> None:
        if self._unsubscribe is not None:
            return
        self._unsubscribe = self.alerts.bus.subscribe(AlertChanged, lambda changed: self._alert(changed.alert))
        self.alerts.start()
        self._timer = self.app.set_interval(TICK_EVERY, self._tick, name="alerts")

    def stop(self) -> None:
        self.alerts.stop()
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        if self._timer is not None:
            self._timer.stop()
            self._timer = None

    async def _tick(self) -> None:
        self.alerts.tick()
        if self._reading_campaigns:
            return
        self._reading_campaigns = True
        try:
            campaigns = await asyncio.to_thread(_campaigns)
        finally:
            self._reading_campaigns = False
        if campaigns is not None:
            self.alerts.look_at_campaigns(campaigns)

    def _alert(self, alert: Alert) -> None:
        self.seen = [*self.seen[-99:], alert]
        if alert.state is not AlertState.RAISED:
            return
        if alert.kind in SAID_BY_THE_HEADER and alert.account == self.current():
            return
        where = alert.account or "this account"
        title = f"Alert: {where}"
        message = f"{alert.family or ''} {alert.kind}: {alert.detail}".strip()
        self.app.notify(message, title=title, severity="error" if alert.kind in SERIOUS else "warning",
                        markup=False, timeout=TOAST_SECONDS)
        if self.signal == "desktop":
            escape = desktop_notification(self.environ, title, message)
            if escape is not None:
                write_to_terminal(self.app, escape)
                return
        if self.signal != "none":
            self.app.bell()


def _campaigns() -> list[Campaign] | None:
    """The ledger's campaigns, None when there is no ledger or it cannot be read (the Campaigns section says why)."""
    from tui.core.campaigns.ledger import LedgerUnusable, campaigns_read_only, ledger_path

    path = ledger_path()
    if not path.exists():
        return None
    try:
        return campaigns_read_only(path)
    except (LedgerUnusable, OSError) as error:
        log.debug("alerts: the campaigns' ledger: %s", error)
        return None


def desktop_notification(environ: Mapping[str, str], title: str, body: str) -> str | None:
    """The escape sequence that asks this terminal for a desktop notification, None when it has none we know:
    OSC 9 (iTerm2, WezTerm, Ghostty, Windows Terminal), OSC 777 (foot, rxvt-unicode's notify), OSC 99 (kitty). Inside
    tmux or screen an escape reaches the outer terminal only when passed through, so None there (the bell instead)."""
    if environ.get("TMUX") or environ.get("STY"):
        return None
    text = _printable(f"{title}: {body}")
    term = environ.get("TERM", "")
    program = environ.get("TERM_PROGRAM", "")
    if program in ("iTerm.app", "WezTerm", "ghostty") or environ.get("WT_SESSION"):
        return f"\x1b]9;{text}\x07"
    if term == "xterm-kitty":
        return f"\x1b]99;;{text}\x1b\\"
    if term.startswith(("foot", "rxvt-unicode")):
        return f"\x1b]777;notify;{_printable(title).replace(';', ',')};{_printable(body)}\x07"
    return None


def _printable(text: str, limit: int = 200) -> str:
    """No control character (an ESC or BEL would end the sequence early), one line, bounded."""
    clean = "".join(character if character.isprintable() else " " for character in text)
    return clean if len(clean) <= limit else clean[: limit - 1] + "…"
