"""The location's form: place name, address, latitude and longitude, an optional delay."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal

from tui.api.dialects import InstanceDialect
from tui.api.models import SendLocation
from tui.ui.sections.chats.kind_form import KindForm, text_row


class LocationForm(KindForm):
    """`#form-location`."""

    def compose(self) -> ComposeResult:
        with Horizontal(classes="form-cols"):
            yield text_row("Place name", "title", "location-title")
            yield text_row("Address", "address", "location-address")
        with Horizontal(classes="form-cols"):
            yield text_row("Latitude", "lat", "location-lat", placeholder="-23.5505")
            yield text_row("Longitude", "lng", "location-lng", placeholder="-46.6333")
            yield text_row("Delay ms (optional)", "delayMessage", "location-delay")

    def show_dialect_rules(self, dialect: InstanceDialect) -> None:
        self.show_delay_rule("location-delay", dialect)

    def build(self, recipient: str, dialect: InstanceDialect) -> SendLocation:
        # "-23.5" becomes a float by the model's own rules, which name the field when it cannot.
        return SendLocation.model_validate({
            "phone": recipient,
            "title": self.text("location-title"),
            "address": self.text("location-address"),
            "lat": self.text("location-lat"),
            "lng": self.text("location-lng"),
            "delayMessage": self.delay_ms("location-delay", dialect),
        })
