"""Settings' session webhook (operation 24): URL, event kinds and active switch; and pointing both webhooks at the
listener (the profile's public URL, a tunnel, else the listener's own)."""

from __future__ import annotations

from typing import Any

from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import Button, Input, SelectionList, Static, Switch

from tui.api.models import SESSION_EVENT_KINDS, WebhookUpdate
from tui.api.operations import WEBHOOK
from tui.ui.widgets.feedback import ErrorLine
from tui.ui.widgets.forms import FieldProblems, FieldRow, Form, TextInput, validated, value_of
from tui.ui.sections.settings.block import block_status, settings_of, section_of
from tui.ui.sections.settings.health import HealthBlock

DEFAULT_EVENTS = ("Message", "ReadReceipt", "ChatPresence")


class SessionWebhookBlock(Form):
    """`#session-webhook-form`."""

    def compose(self) -> ComposeResult:
        yield Static("Session webhook (operation 24)", classes="block-title")
        yield FieldRow("URL", TextInput(id="session-url", placeholder="https://example.com/session"),
                       field="webhook")
        yield FieldRow(
            "Event kinds",
            SelectionList[str](*[(kind, kind, kind in DEFAULT_EVENTS) for kind in SESSION_EVENT_KINDS],
                               id="session-events"),
            field="events",
        )
        with Horizontal(classes="switch-row"):
            yield Static("Active")
            yield Switch(value=True, id="session-active")
        with Horizontal(classes="actions"):
            yield Button("Set session webhook", id="session-apply", compact=True)
            yield Button("Point both webhooks at the listener", id="point-webhooks", compact=True,
                         variant="primary")
        yield ErrorLine(classes="block-status")

    def show_listener(self, base: str) -> None:
        """The listener's own address as the example."""
        self.query_one("#session-url", Input).placeholder = base + "/session"

    @on(Button.Pressed, "#session-apply")
    def set_session_webhook(self) -> None:
        events = list(self.query_one("#session-events", SelectionList).selected)
        active = self.query_one("#session-active", Switch).value
        status = block_status(self)

        def build() -> WebhookUpdate:
            if not events:
                raise FieldProblems({"events": "choose at least one event kind"})
            return WebhookUpdate(webhook=_required(self, "#session-url", "webhook"), events=events, active=active)

        request = validated(self.rows(), build, status=status)
        if request is not None:
            section_of(self).run_operation(
                WEBHOOK, request, group="session-webhook", busy=self, status=status,
                done=lambda config: status.show_ok(
                    f"Session webhook: {config.webhook or request.webhook} · {', '.join(events)} · "
                    f"{'active' if active else 'inactive'}."))

    @on(Button.Pressed, "#point-webhooks")
    def point_webhooks(self) -> None:
        host = settings_of(self)
        base = host.webhooks.listener_base()
        status = block_status(self)
        if not base:
            status.show_error("The listener is not running; nothing was changed.")
            return
        section = section_of(self)

        def done(_: Any) -> None:
            status.show_ok(f"Both webhooks now point at {host.run_display.scrub(base)} (/delivery and /session).")
            section.query_one(HealthBlock).show_webhook_drift()

        section.call("Point webhooks at the listener", lambda _: host.webhooks.configure_webhooks(base),
                     group="session-webhook", family="instance", busy=self, status=status, done=done)


def _required(form: Form, selector: str, field: str) -> str:
    value = value_of(form.query_one(selector))
    if not value:
        raise FieldProblems({field: "required"})
    return value
