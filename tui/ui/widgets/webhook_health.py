"""The header's webhook health (issue 24): a few cells saying what the doctor's newest report means (healthy,
quiet kind, failing, rejected), and one toast for each finding that is new.

While the app runs it checks the current account with the doctor's cheap checks (no probe: that sends a message)
every `CHECK_INTERVAL` and when an event may change the answer (a refused event, a connection event), never closer
than `CHECK_MIN_GAP` to the last check. The Settings panel's checks land in the same record (the runtime's
`doctor_record`), so the cell follows them too. Nothing shows until the first report. In deterministic mode
(screenshots) only the panel's checks run: a background check's timing would make the pictures differ.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from textual import work
from textual.content import Content
from textual.message import Message
from textual.widgets import Static

if TYPE_CHECKING:
    from tui.core.doctor import Finding, Report
    from tui.core.services import Services
    from tui.ui.widgets.gateway_app import AppState

# (wide words, compact words, style) per tui.core.doctor.Health value
SHOWN = {
    "healthy": ("webhooks healthy", "✓ hooks", "$text-success"),
    "quiet kind": ("webhooks: quiet kind", "◌ quiet kind", "$text-warning"),
    "failing": ("webhooks failing", "✗ hooks failing", "$text-error"),
    "rejected": ("webhooks rejected", "✗ hooks rejected", "$text-error"),
    "unchecked": ("webhooks: checked once connected", "◌ hooks", "$text-muted"),
}


class WebhookHealth(Static):
    """`#header-health`: hidden until the doctor's first report."""

    class Shown(Message):
        """A report changed what the piece says: the header fits its line again (its words may no longer fit)."""

    def __init__(self, services: Services, state: AppState, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.accounts = services.accounts
        self.webhooks = services.webhooks
        self.deterministic = services.display.deterministic
        self.state = state
        self.display = False
        self.health: str | None = None
        self.compact = False  # the header's short forms (set by the header)
        self._last_check: float | None = None
        self._pending = False
        self._unsubscribe: Any = None

    def on_mount(self) -> None:
        self.watch(self.app, "runtime_ready", self._on_ready, init=True)

    def on_unmount(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()

    def _on_ready(self, ready: bool) -> None:
        if not ready or self._unsubscribe is not None:
            return
        record = self.webhooks.doctor_record
        self._unsubscribe = record.subscribe(self._on_report)
        if record.report is not None:
            self._show(record.report)
        if self.deterministic:
            return
        from tui.core.doctor import CHECK_INTERVAL

        self.state.event_received.subscribe(self, self._on_events)
        self.set_interval(CHECK_INTERVAL, self.ask)
        self.ask()

    # -- checking ---------------------------------------------------------------------------------------------

    def _on_events(self, events: tuple[Any, ...]) -> None:
        from tui.core.watch import CONNECTION_KINDS

        if any(event.rejected or event.kind in CONNECTION_KINDS for event in events):
            self.ask()

    def ask(self) -> None:
        """A check now, or as soon as CHECK_MIN_GAP since the last one has passed (one pending at most)."""
        from tui.core.doctor import CHECK_MIN_GAP

        wait = 0.0 if self._last_check is None else self._last_check + CHECK_MIN_GAP - time.monotonic()
        if wait <= 0:
            self.check()
        elif not self._pending:
            self._pending = True
            self.set_timer(wait, self._pending_due)

    def _pending_due(self) -> None:
        self._pending = False
        self.check()

    @work(group="webhook-health", exclusive=True, exit_on_error=False, description="check the webhooks")
    async def check(self) -> None:
        from tui.core.accounts.account import ClientsNotReady
        from tui.api.errors import GatewayError
        from tui.core.doctor import Doctor

        account = self.accounts.current
        if account is None or not self.accounts.started:
            return
        self._last_check = time.monotonic()
        record = self.webhooks.doctor_record  # the account checked, even if another becomes current meanwhile
        try:
            report = await Doctor(await self.webhooks.doctor_inputs(account=account)).examine(probe=False)
        except (GatewayError, ClientsNotReady):
            return  # the header's connection words say when the gateway cannot be reached
        record.update(report, probed=False)

    def rebind(self) -> None:
        """Another account became current: show its record (hidden until it has a report) and check it soon."""
        if self._unsubscribe is None:
            return  # not ready yet: _on_ready subscribes to the current account's record
        self._unsubscribe()
        record = self.webhooks.doctor_record
        self._unsubscribe = record.subscribe(self._on_report)
        self.health = None
        self.display = False
        if record.report is not None:
            self._show(record.report)
        if not self.deterministic:
            self._last_check = None
            self.ask()

    # -- showing ----------------------------------------------------------------------------------------------

    def _on_report(self, report: Report, new: list[Finding]) -> None:
        self._show(report)
        for finding in new:
            where = f" ({finding.family.value})" if finding.family else ""
            self.app.notify(f"{finding.words} Fix: {finding.fix_words}", title=f"Webhooks: {finding.id.value}{where}",
                            severity="error" if finding.severity.value == "error" else "warning", timeout=8)

    def _show(self, report: Report) -> None:
        from tui.core.doctor import health_of

        health = health_of(report).value
        changed = health != self.health or not self.display
        self.health = health
        self.show_health()
        if changed:  # (not when the header itself redraws its forms: it fits the line then)
            self.post_message(self.Shown())

    def show_health(self) -> None:
        if self.health is None:
            return
        wide, short, style = SHOWN[self.health]
        self.update(Content.from_markup(f"[{style}]$words", words=short if self.compact else wide))
        self.display = True
