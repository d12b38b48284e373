"""Settings' delivery webhook (operation 16): where the gateway posts delivery notifications."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import Button, Input, Static

from tui.api.models import DeliveryWebhook
from tui.api.operations import UPDATE_WEBHOOK_DELIVERY
from tui.ui.widgets.feedback import ErrorLine
from tui.ui.widgets.forms import FieldRow, Form, TextInput, validated, value_of
from tui.ui.widgets.section import ConfirmScreen
from tui.ui.sections.settings.block import block_status, section_of


class DeliveryWebhookBlock(Form):
    """`#delivery-form`."""

    def compose(self) -> ComposeResult:
        yield Static("Delivery webhook (operation 16)", classes="block-title")
        yield FieldRow("URL", TextInput(id="delivery-url", placeholder="https://example.com/delivery"),
                       field="value", hint="Empty: remove the delivery webhook (asks first).")
        with Horizontal(classes="actions"):
            yield Button("Set delivery webhook", id="delivery-apply", compact=True)
        yield ErrorLine(classes="block-status")

    def show_listener(self, base: str) -> None:
        """The listener's own address as the example."""
        self.query_one("#delivery-url", Input).placeholder = base + "/delivery"

    @on(Button.Pressed, "#delivery-apply")
    def set_delivery_webhook(self) -> None:
        """Set the delivery webhook; an empty URL removes it (the spec's operation 16), after asking."""
        status = block_status(self)
        request = validated(self.rows(), lambda: DeliveryWebhook(value=value_of(self.query_one("#delivery-url"))),
                            status=status)
        if request is None:
            return

        def send() -> None:
            done = (f"Delivery notifications now go to {request.value}." if request.value
                    else "Delivery webhook removed: the gateway no longer posts delivery notifications.")
            section_of(self).run_operation(UPDATE_WEBHOOK_DELIVERY, request, group="delivery", busy=self,
                                           status=status, done=lambda _: status.show_ok(done))

        if request.value:
            send()
            return
        self.app.push_screen(
            ConfirmScreen("Remove the delivery webhook?", "The URL is empty: the gateway stops posting delivery "
                          "notifications, so sent messages show no delivery events.", confirm_label="Remove"),
            lambda yes: send() if yes else status.show_ok("Not removed; type a URL to set one."),
        )
