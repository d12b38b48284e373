"""Settings' warnings, above everything and shown only when something is wrong: the webhooks no longer point at
the listener, or the gateway's key status disagrees with the profile's key. Each has the one button that fixes it
(the section acts on them: they act on other blocks)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.widgets import Button, Static

from tui.core.runtime import HmacDisagreement
from tui.ui.sections.settings.block import settings_of
from tui.ui.widgets.focus import TypingInForms


class HealthBlock(Vertical, TypingInForms):
    """`#health-block`: `#webhook-warning` (button `#health-point`) and `#hmac-warning` (button `#health-hmac`)."""

    def compose(self) -> ComposeResult:
        with Horizontal(classes="health-row", id="webhook-warning"):
            yield Static("", id="webhook-warning-text", classes="health-text")
            yield Button("Point the webhooks here", id="health-point", compact=True, variant="warning")
        with Horizontal(classes="health-row", id="hmac-warning"):
            yield Static("", id="hmac-warning-text", classes="health-text")
            yield Button("Set this key on the gateway", id="health-hmac", compact=True, variant="warning")

    def set_warning(self, selector: str, text: str) -> None:
        row = self.query_one(selector)
        row.query_one(".health-text", Static).update(Content(text))
        row.set_class(bool(text), "-shown")
        self.set_class(any(r.has_class("-shown") for r in self.query(".health-row")), "-shown")

    def show_webhook_drift(self) -> None:
        host = settings_of(self)
        drift = host.webhooks.webhook_drift()
        text = ""
        if drift is not None:
            old, new = (host.run_display.scrub(url) for url in drift)
            text = (f"The webhooks still point at {old}, but the listener is now at {new}: the gateway's events "
                    "go to the old address, so sends produce no events here.")
        self.set_warning("#webhook-warning", text)

    def show_hmac_disagreement(self, disagreement: HmacDisagreement | None) -> None:
        text, button = "", "Set this key on the gateway"
        if disagreement is HmacDisagreement.PROFILE_ONLY:
            text = ("The profile has an HMAC key but the gateway has none: the gateway sends events unsigned and "
                    "the listener cannot verify (or refuses) them.")
        elif disagreement is HmacDisagreement.GATEWAY_ONLY:
            text = ("The gateway signs events with a key this profile does not have: nothing is verified. Set a "
                    "new key on both.")
            button = "Generate a key for both"
        self.query_one("#health-hmac", Button).label = button
        self.set_warning("#hmac-warning", text)

    @property
    def hmac_disagrees(self) -> bool:
        return self.query_one("#hmac-warning").has_class("-shown")
