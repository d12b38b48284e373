"""The board's filter: `/` on the board focuses it; Esc clears it and goes back to the board; Enter or ↓ keeps it."""

from __future__ import annotations

from textual.message import Message
from textual.widgets import Input

from tui.ui.keymap import bindings_for


class FleetFilter(Input):
    BINDINGS = bindings_for("fleet_filter")

    class Leave(Message):
        """Back to the board (the filter kept or cleared)."""

    def action_clear_filter(self) -> None:
        self.value = ""
        self.post_message(self.Leave())

    def action_to_board(self) -> None:
        self.post_message(self.Leave())
