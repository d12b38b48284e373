"""Settings' listener and theme: the local webhook listener's address, port, largest body and whether unsigned
webhooks are refused (restarted here, saved to the profile); and the theme."""

from __future__ import annotations

from functools import partial

from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.content import Content
from textual.widgets import Button, Input, Select, Static, Switch

from tui.core.feed.bus import IntakeChanged
from tui.ui.widgets.feedback import ErrorLine
from tui.ui.widgets.forms import FieldRow, Form, TextInput, value_of
from tui.ui.sections.settings.block import MIB, block_status, run_on_section, settings_of, save_to_profile, section_of
from tui.ui.sections.settings.health import HealthBlock


class ListenerBlock(Form):
    """`#listener-form`."""

    def compose(self) -> ComposeResult:
        yield Static("Listener and theme", classes="block-title")
        yield Static("", id="listener-who")  # who listens when it is not this app (issue 32)
        yield FieldRow("Listener address", TextInput(id="listener-host", value="127.0.0.1"), field="listener_host")
        yield FieldRow("Listener port (0: any free port)", TextInput(id="listener-port", type="integer"),
                       field="listener_port")
        yield FieldRow("Largest webhook body (MiB)", TextInput(id="listener-max-body", type="integer"),
                       field="max_body", hint="WuzAPI sends media inline: a 100 MB document needs 150")
        with Horizontal(classes="switch-row"):
            yield Static("Refuse unsigned webhooks on every path (Z-API never signs)")
            yield Switch(value=False, id="listener-require-signatures")
        with Horizontal(classes="actions"):
            yield Button("Restart listener here", id="listener-apply", compact=True)
        yield FieldRow("Theme", Select([], allow_blank=True, id="theme"), field="theme")
        yield ErrorLine(classes="block-status")

    def show_themes(self) -> None:
        themes = sorted(self.app.available_themes)
        theme = self.query_one("#theme", Select)
        theme.set_options([(name, name) for name in themes])
        theme.value = self.app.theme if self.app.theme in themes else Select.NULL

    def on_mount(self) -> None:
        self.query_one("#listener-who", Static).display = False
        self._unsubscribe = settings_of(self).feed.bus.subscribe(IntakeChanged, lambda _changed: self.show_who())

    def on_unmount(self) -> None:
        self._unsubscribe()

    def show_who(self) -> None:
        """"Events come from `listen`, pid 4242, on :8787, store …" (forwarding, its queue and the signature policy
        are then that process's), or why no listener runs; hidden while this app listens itself."""
        feed = settings_of(self).feed
        who = feed.intake_description()
        line = self.query_one("#listener-who", Static)
        line.display = who is not None
        if feed.attached is not None and feed.attachment is not None and feed.attachment.alive:
            who = (f"Events come from {who}. Forwarding, its queue and the signature policy are that process's: "
                   "change them there")
        line.update(Content(who or ""))  # a path is not markup

    def show_address(self) -> None:
        self.show_who()
        host = settings_of(self)
        profile = host.profile
        if profile is not None:
            self.query_one("#listener-host", Input).value = profile.listener_host or "127.0.0.1"
            port = host.feed.listener.port if host.feed.listener is not None else profile.listener_port
            self.query_one("#listener-port", Input).value = str(profile.listener_port or port or 0)

    def show_limits(self) -> None:
        listener = settings_of(self).feed.listener
        if listener is not None:
            self.query_one("#listener-max-body", Input).value = str(max(1, listener.max_body // MIB))
            self.query_one("#listener-require-signatures", Switch).value = listener.require_signatures

    @on(Button.Pressed, "#listener-apply")
    def change_listener(self) -> None:
        host = value_of(self.query_one("#listener-host"))
        port_text = value_of(self.query_one("#listener-port"))
        problems = {}
        if not host or " " in host:
            problems["listener_host"] = "an address such as 127.0.0.1"
        if not port_text.isdigit() or not 0 <= int(port_text) <= 65535:
            problems["listener_port"] = "a port from 0 to 65535"
        max_body_text = value_of(self.query_one("#listener-max-body"))
        if not max_body_text.isdigit() or not 1 <= int(max_body_text) <= 4096:
            problems["max_body"] = "a size from 1 to 4096 MiB"
        self.clear_errors()
        if problems:
            self.apply_errors(problems)
            return
        require = self.query_one("#listener-require-signatures", Switch).value
        run_on_section(self, partial(self._restart_listener, host, int(port_text), int(max_body_text) * MIB, require),
                       "settings-listener")

    async def _restart_listener(self, host: str, port: int, max_body: int, require_signatures: bool) -> None:
        status = block_status(self)
        settings = settings_of(self)
        try:
            await settings.webhooks.restart_listener(host, port, max_body=max_body, require_signatures=require_signatures)
        except OSError as error:
            status.show_error(f"The listener could not bind {host}:{port} ({error.strerror or error}); "
                              "it keeps running on its old address.")
            return
        saved = await save_to_profile(
            self, listener_host=host, listener_port=port, max_body=max_body, require_signatures=require_signatures
        )
        moved = f"Listener now on {settings.run_display.listener_address()}{' and saved to the profile' if saved else ''}."
        section_of(self).query_one(HealthBlock).show_webhook_drift()
        if settings.webhooks.webhook_drift() is not None:
            status.show_ok(moved + " The gateway still sends events to the old address, so sends produce no events "
                           "here until the webhooks point here (the button at the top of Settings).")
            self.app.notify("The listener moved: sends produce no events until the webhooks point here "
                            "(Settings, top: Point the webhooks here).", severity="warning", markup=False, timeout=10)
        else:
            status.show_ok(moved + " Point the webhooks at it if the gateway should follow.")

    @on(Select.Changed, "#theme")
    def change_theme(self, event: Select.Changed) -> None:
        if event.value is Select.NULL or event.value == self.app.theme:
            return
        self.app.theme = str(event.value)
        run_on_section(self, partial(save_to_profile, self, theme=str(event.value)), "settings-theme")
