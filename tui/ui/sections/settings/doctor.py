"""Settings' webhook doctor (issue 24): the doctor of `gateway-tui doctor` (tui.core.doctor) run for the current account,
its findings listed (id, severity, plain words, fix), one key per fix and a key to check again.

A check sends the probe (a message to the account's own number, timed until its events arrive): against the
sandbox without asking, against a real gateway only after a yes. A fix applies that one fix (tui.core.doctor's
`Doctor.fix`), then checks again. The newest report of either lands in the runtime's doctor record, which the
header's health cell follows (and which the header's own background checks also write: shown here too).
"""

from __future__ import annotations

import asyncio
from functools import partial
from typing import TYPE_CHECKING

from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.widget import Widget
from textual.widgets import Button, Input, Static, TextArea

from tui.ui.keymap import label, shown_key
from tui.ui.widgets.feedback import ErrorLine
from tui.ui.widgets.section import ConfirmScreen
from tui.ui.sections.settings.block import block_status, run_on_section, settings_of, section_of
from tui.ui.widgets.focus import TypingInForms

if TYPE_CHECKING:
    from tui.core.doctor import Finding, Fix, Report

FIX_KEYS = {"point-webhooks": "settings.fix_point", "subscribe": "settings.fix_subscribe",
            "activate": "settings.fix_activate", "set-key": "settings.fix_key"}
"""Each fix of tui.core.doctor.Fix (by value) and the binding id of its key (tui.ui.keymap)."""
SEVERITY_MARKS = {"error": ("✗", "$text-error"), "warning": ("!", "$text-warning"), "info": ("i", "$text-muted")}


class DoctorBlock(Vertical, TypingInForms):
    """`#doctor-block`: `#doctor-findings`, the button `#doctor-check`."""

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.report: Report | None = None
        self._unsubscribe: object = None
        self._reveal = False  # the user asked: the next report is brought into view

    def compose(self) -> ComposeResult:
        yield Static("Webhook doctor", classes="block-title")
        yield Static(Content(f"Not checked yet: {shown_key('settings.doctor_check')} checks why events would not "
                             "arrive."), id="doctor-findings")
        with Horizontal(classes="actions"):
            yield Button(label("Check webhooks", "settings.doctor_check"), id="doctor-check", compact=True)
        yield ErrorLine(classes="block-status")

    @on(Button.Pressed, "#doctor-check")
    def _check_pressed(self) -> None:
        self.check()

    def follow_record(self) -> None:
        """Show the newest report of this run from now on (the header's checks write it too)."""
        if self._unsubscribe is not None:
            return
        record = settings_of(self).webhooks.doctor_record
        self._unsubscribe = record.subscribe(lambda report, _new: self.show_report(report))
        if record.report is not None:
            self.show_report(record.report)

    def on_unmount(self) -> None:
        if callable(self._unsubscribe):
            self._unsubscribe()

    # -- what the section's keys ask -----------------------------------------------------------------------

    def offers(self, fix: str) -> bool:
        """Whether a listed finding is cured by `fix` (its key is shown and acts only then)."""
        return self.report is not None and any(f.fix is not None and f.fix.value == fix for f in self.report.findings)

    def check(self) -> None:
        self._reveal = True
        run_on_section(self, self._check, group="doctor")

    def apply_fix(self, fix: str) -> None:
        from tui.core.doctor import Fix

        if self.offers(fix):
            chosen = Fix(fix)
            self._reveal = True
            run_on_section(self, partial(self._fix, chosen), group="doctor")

    # -- the work --------------------------------------------------------------------------------------------

    async def _check(self) -> None:
        status = block_status(self)
        status.show_ok("Checking the webhooks (and sending the probe)…")
        report = await self._examine()
        if report is not None:
            status.show_ok(_summary(report))
        self._bring_into_view()

    async def _examine(self) -> Report | None:
        from tui.core.accounts.account import ClientsNotReady
        from tui.api.errors import GatewayError
        from tui.core.doctor import Doctor

        host = settings_of(self)
        try:
            report = await Doctor(await host.webhooks.doctor_inputs(self._may_probe)).examine(probe=True)
        except (GatewayError, ClientsNotReady) as error:
            from tui.ui.widgets.feedback import explain_error

            block_status(self).show_error(f"The check stopped: {explain_error(error)}")
            return None
        host.webhooks.doctor_record.update(report, probed=True)
        return report

    async def _fix(self, fix: Fix) -> None:
        from tui.core.accounts.account import ClientsNotReady
        from tui.api.errors import GatewayError
        from tui.core.doctor import PROBE_ONLY, Doctor, Report

        status = block_status(self)
        status.show_ok(f"Fixing ({fix.value})…")
        host = settings_of(self)
        shown = self.report.findings if self.report is not None else []
        try:
            doctor = Doctor(await host.webhooks.doctor_inputs(self._may_probe))
            fresh = await doctor.examine(probe=False)  # what the gateway says now (the fix reads it)
            lines = await doctor.fix(Report([*fresh.findings, *(f for f in shown if f.id in PROBE_ONLY)]), only=fix)
        except (GatewayError, ClientsNotReady) as error:
            from tui.ui.widgets.feedback import explain_error

            status.show_error(f"Not fixed: {explain_error(error)}")
            self._bring_into_view()
            return
        report = await self._examine()
        if report is not None:
            done = "; ".join(host.run_display.scrub(line.strip()) for line in lines) or "nothing needed changing"
            status.show_ok(f"Fixed: {done}. {_summary(report)}")
        self._bring_into_view()

    async def _may_probe(self) -> bool:
        """Against a real gateway: ask before the probe message is sent."""
        answer: asyncio.Future[bool] = asyncio.get_running_loop().create_future()

        def answered(yes: bool | None) -> None:
            if not answer.done():
                answer.set_result(bool(yes))

        self.app.push_screen(ConfirmScreen(
            "Send the probe message?", "The doctor sends a short message to the account's own number and times its "
            "events until they reach the listener. Without it the other checks still run.", confirm_label="Send"),
            answered)
        return await answer

    # -- showing ---------------------------------------------------------------------------------------------

    def show_report(self, report: Report) -> None:
        self.report = report
        self.query_one("#doctor-findings", Static).update(findings_content(report))
        self.screen.refresh_bindings()  # the fix keys follow the findings
        if self.has_focus_within:  # the user is reading it: its top kept in view as it grows
            self.call_after_refresh(self._keep_top_in_view)

    def _keep_top_in_view(self) -> None:
        section = section_of(self)
        if self.region.y < section.content_region.y:  # scrolled above the view (only then: the section's title
            section.scroll_to_widget(self, animate=False, top=True)  # above it stays in view when it can)

    def _bring_into_view(self) -> None:
        """After a check the user asked for (a key works from anywhere in Settings): the focus comes to the panel,
        unless it is in a field with text typed in it, and the panel's top is in view with its answer."""
        if not self._reveal:
            return
        self._reveal = False

        def show() -> None:
            if not self.has_focus_within and not _typing_in(self.screen.focused):
                self.query_one("#doctor-check", Button).focus(scroll_visible=False)
            section_of(self).scroll_to_widget(self, animate=False, top=True)

        self.call_after_refresh(show)


def _typing_in(widget: Widget | None) -> bool:
    return isinstance(widget, (Input, TextArea)) and bool(widget.text if isinstance(widget, TextArea) else widget.value)


def findings_content(report: Report) -> Content:
    if report.healthy:
        latency = ("" if report.probe_latency is None else
                   f" The probe's first event arrived after {report.probe_latency * 1000:.0f} ms.")
        head = Content.from_markup("[$text-success]✓ healthy[/]: nothing keeps the gateway's events from the "
                                   "listener.$latency", latency=latency)
    else:
        head = Content.from_markup("[$text-error]not healthy[/]:")
    lines = [head, *(_finding_content(finding) for finding in report.findings)]
    return Content("\n").join(lines)


def _finding_content(finding: Finding) -> Content:
    mark, style = SEVERITY_MARKS[finding.severity.value]
    where = f" · {finding.family.value}" if finding.family else ""
    key = f" ({shown_key(FIX_KEYS[finding.fix.value])})" if finding.fix is not None else ""
    return Content.from_markup(f"[{style}]$mark [b]$id[/b]$where[/] $words\n  fix$key: $fix", mark=mark,
                               id=finding.id.value, where=where, words=finding.words, key=key, fix=finding.fix_words)


def _summary(report: Report) -> str:
    counted = [finding for finding in report.findings if finding.counts]
    if not counted:
        return "Healthy."
    return f"{len(counted)} finding{'s' if len(counted) != 1 else ''} to fix."
