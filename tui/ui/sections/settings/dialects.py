"""Settings' dialects: how the profile's requests are written (spec, Z-API, WuzAPI), and a connection check."""

from __future__ import annotations

from functools import partial

from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.content import Content
from textual.widgets import Button, Select, Static

from tui.api.dialects import InstanceDialect, SessionDialect
from tui.core.runtime import StartupError
from tui.ui.widgets.feedback import ErrorLine
from tui.ui.widgets.forms import FieldRow, Form
from tui.ui.sections.settings.block import block_status, run_on_section, settings_of

DIALECT_TITLES: dict[InstanceDialect | SessionDialect, str] = {
    InstanceDialect.SPEC: "spec (default)",
    InstanceDialect.ZAPI: "Z-API",
    InstanceDialect.EVOLUTION: "Evolution API",
    SessionDialect.SPEC: "spec (default)",
    SessionDialect.WUZAPI: "WuzAPI",
}


class DialectsBlock(Form):
    """`#dialect-form`."""

    def compose(self) -> ComposeResult:
        yield Static("Dialects: how requests are written", classes="block-title")
        with Horizontal(classes="form-cols"):
            yield FieldRow("Instance family", Select([(DIALECT_TITLES[d], d.value) for d in InstanceDialect],
                                                     value=InstanceDialect.SPEC.value, allow_blank=False,
                                                     id="instance-dialect"), field="instance_dialect")
            yield FieldRow("Session family", Select([(DIALECT_TITLES[d], d.value) for d in SessionDialect],
                                                    value=SessionDialect.SPEC.value, allow_blank=False,
                                                    id="session-dialect"), field="session_dialect")
        with Horizontal(classes="actions"):
            yield Button("Save dialects", id="dialect-apply", compact=True)
            yield Button("Check connection", id="connection-check", compact=True)
        # A note, not the block's answer line: an answer comes into view (tui.ui.widgets.feedback.in_view), and this
        # one is written when the section opens, no answer to anything (it pulled the view off the section's top).
        yield Static("", id="dialect-note", classes="muted")
        yield ErrorLine(classes="block-status")

    def show_dialects(self) -> None:
        host = settings_of(self)
        instance, session = host.accounts.dialects
        self.query_one("#instance-dialect", Select).value = instance.value
        self.query_one("#session-dialect", Select).value = session.value
        sandbox = host.accounts.sandbox_mode
        for selector in ("#instance-dialect", "#session-dialect", "#dialect-apply"):
            self.query_one(selector).disabled = sandbox
        note = self.query_one("#dialect-note", Static)
        note.display = sandbox
        if sandbox:
            note.update(Content("The sandbox speaks what it was started with: gateway-tui --sandbox "
                                "--instance-dialect zapi --session-dialect wuzapi."))

    @on(Button.Pressed, "#dialect-apply")
    def save_dialects(self) -> None:
        instance = InstanceDialect(str(self.query_one("#instance-dialect", Select).value))
        session = SessionDialect(str(self.query_one("#session-dialect", Select).value))
        run_on_section(self, partial(self._save_dialects, instance, session), "settings-dialects")

    async def _save_dialects(self, instance: InstanceDialect, session: SessionDialect) -> None:
        from tui.local.config import ConfigError

        status = block_status(self)
        try:
            await settings_of(self).accounts.set_dialects(instance, session)
        except (ConfigError, OSError, StartupError) as error:
            status.show_error(f"Dialects not changed: {error}")
            return
        status.show_ok(f"Now writing the instance family as {DIALECT_TITLES[instance]} and the session family "
                       f"as {DIALECT_TITLES[session]}; saved to the profile.")
        from tui.ui.widgets.header import GatewayHeader

        for header in self.screen.query(GatewayHeader):
            header.refresh_dialects()

    @on(Button.Pressed, "#connection-check")
    def check_connection(self) -> None:
        from tui.ui.widgets.header import GatewayHeader

        for header in self.screen.query(GatewayHeader):
            header.poll_status()
        block_status(self).show_ok("Reading the connection status: see the header.")
