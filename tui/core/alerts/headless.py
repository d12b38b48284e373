"""Alerts for `gateway-tui listen`: the detector fed with each stored event, ticked now and then, its alerts sent
to the sinks the flags name (`--alert-command`, `--alert-webhook`) and told in one line each to `report`."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable

from tui.core.alerts.detector import AlertDetector
from tui.core.alerts.model import Alert
from tui.core.alerts.sinks import STOP_GRACE, AlertCommand, AlertWebhook
from tui.webhooks.events import StoredEvent
from tui.webhooks.quiet import QUIET_HISTORY
from tui.webhooks.store import EventStore

TICK_EVERY = 5.0
"""Seconds between two looks at what ends or starts by time (quiet kinds, flapping settled, codes expiring)."""


class HeadlessAlerts:
    """The listener's alerts. Built before the loop runs (a bad flag is refused before anything starts); `start`
    and `stop` inside it."""

    def __init__(self, sinks: list[AlertCommand | AlertWebhook], report: Callable[[str], None]) -> None:
        self.sinks = sinks
        self.report = report
        self.detector = AlertDetector(self._send)
        self._ticker: asyncio.Task[None] | None = None

    @classmethod
    def from_flags(cls, command: str | None, webhook: str | None, *, allow_remote: bool,
                   report: Callable[[str], None]) -> HeadlessAlerts | None:
        """None when neither flag is given. ValueError for an empty or unbalanced command; ForwardTargetRefused
        for a webhook URL that may not be used (another host without `allow_remote`)."""
        sinks: list[AlertCommand | AlertWebhook] = []
        if command is not None:
            sinks.append(AlertCommand.parse(command))
        if webhook is not None:
            sinks.append(AlertWebhook(webhook, allow_remote=allow_remote))
        return cls(sinks, report) if sinks else None

    def remember(self, store: EventStore) -> None:
        """What the store already holds teaches each kind's usual gap, so a quiet kind is noticed without first
        waiting for three new arrivals of it."""
        for kind in store.kinds():
            for event in reversed(store.newest(QUIET_HISTORY, kind=kind)):
                self.detector.remember(event)

    async def start(self) -> None:
        for sink in self.sinks:
            await sink.start()
        self._ticker = asyncio.get_running_loop().create_task(self._tick())

    def observe(self, event: StoredEvent) -> None:
        self.detector.observe(event)

    async def stop(self, grace: float = STOP_GRACE) -> None:
        """Stop ticking; let the alerts already raised go out for up to `grace` seconds."""
        if self._ticker is not None:
            self._ticker.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._ticker
            self._ticker = None
        await asyncio.gather(*(sink.stop(grace) for sink in self.sinks))

    def describe(self) -> str:
        """`alerts to the command notify.sh and http://127.0.0.1:9000/alerts`, for the start-up line."""
        names = [f"the command {sink.argv[0]}" if isinstance(sink, AlertCommand) else _shown(sink.url)
                 for sink in self.sinks]
        return "alerts to " + " and ".join(names)

    async def _tick(self) -> None:
        while True:
            await asyncio.sleep(TICK_EVERY)
            self.detector.tick()

    def _send(self, alert: Alert) -> None:
        self.report(f"alert: {alert.line()}")
        for sink in self.sinks:
            sink.submit(alert)


def _shown(url: str) -> str:
    from tui.webhooks.forwarder import shown_target

    return shown_target(url)
