"""Settings' forwarding: every accepted event goes on to the user's app, unchanged (loopback only unless a remote
host is allowed), saved to the profile."""

from __future__ import annotations

from functools import partial

from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import Button, Input, Static, Switch

from tui.ui.widgets.feedback import ErrorLine
from tui.ui.widgets.forms import FieldRow, Form, TextInput, value_of
from tui.ui.sections.settings.block import block_status, run_on_section, settings_of, save_to_profile


class ForwardBlock(Form):
    """`#forward-form`."""

    def compose(self) -> ComposeResult:
        yield Static("Forward events to your app", classes="block-title")
        yield Static("Every accepted event goes on to this URL as it arrived (body, content type, signature) "
                     "plus X-Gateway-Tui-Event; retried while your app is down.", classes="muted")
        yield FieldRow("App URL", TextInput(id="forward-url", placeholder="http://127.0.0.1:3000/webhook"),
                       field="forward_to")
        with Horizontal(classes="switch-row"):
            yield Static("Allow a remote host")
            yield Switch(value=False, id="forward-remote")
        with Horizontal(classes="actions"):
            yield Button("Forward there", id="forward-apply", compact=True)
            yield Button("Stop forwarding", id="forward-stop", compact=True)
        yield ErrorLine(classes="block-status")

    def show_target(self) -> None:
        host = settings_of(self)
        profile = host.profile
        if profile is not None:
            self.query_one("#forward-url", Input).value = host.feed.forward_target or ""
            self.query_one("#forward-remote", Switch).value = profile.forward_allow_remote

    @on(Button.Pressed, "#forward-apply")
    def forward_to_app(self) -> None:
        self.clear_errors()
        url = value_of(self.query_one("#forward-url"))
        if not url:
            self.apply_errors({"forward_to": "required (Stop forwarding turns it off)"})
            return
        self._set_forward(url, self.query_one("#forward-remote", Switch).value)

    @on(Button.Pressed, "#forward-stop")
    def stop_forwarding(self) -> None:
        self.clear_errors()
        self._set_forward("", False)

    def _set_forward(self, url: str, allow_remote: bool) -> None:
        run_on_section(self, partial(self._forward, url, allow_remote), "settings-forward")

    async def _forward(self, url: str, allow_remote: bool) -> None:
        status = block_status(self)
        try:
            await settings_of(self).feed.set_forward_target(url or None, allow_remote=allow_remote)
        except ValueError as error:  # ForwardTargetRefused: not a URL, or a remote host not allowed
            self.apply_errors({"forward_to": str(error)})
            return
        saved = await save_to_profile(self, forward_to=url, forward_allow_remote=allow_remote)
        where = " and saved to the profile" if saved else ""
        if url:
            status.show_ok(f"Forwarding every accepted event to {url}{where}.")
        else:
            status.show_ok(f"Forwarding stopped{where}.")
