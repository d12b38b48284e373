"""The phone number to pair with a code: one field, shown when asked for (p); Enter asks for the code. Nothing
typed there is a command (the main screen's rule for forms)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import Input, Label


class PhoneField(Horizontal):
    DEFAULT_CSS = """
    PhoneField { height: auto; display: none; padding: 0 1; }
    PhoneField.-shown { display: block; layout: horizontal; }
    PhoneField Label { padding: 1 1 0 0; width: auto; }
    PhoneField Input { width: 1fr; min-width: 28; max-width: 48; }  /* room for "5511… (your own phone)" at 80 */
    """

    def compose(self) -> ComposeResult:
        yield Label("Phone (country code and number), Enter:")
        yield Input(placeholder="5511999999999", id="account-phone", restrict=r"[0-9+ ()-]*", max_length=24)

    @property
    def input(self) -> Input:
        return self.query_one("#account-phone", Input)

    def open(self) -> None:
        self.add_class("-shown")
        self.input.focus()

    def close(self) -> None:
        self.remove_class("-shown")
