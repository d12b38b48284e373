"""The board's filter: `/` on the board focuses it; Esc clears it and goes back to the board; Enter or ↓ keeps it."""

from __future__ import annotations

from textual.message import Message
from textual.widgets import Input

from tui.ui.keymap import bindings_for
from tui.ui.widgets.focus import takes_typed_key


class FleetFilter(Input):
    BINDINGS = bindings_for("fleet_filter")

    class Leave(Message):
        """Back to the board (the filter kept or cleared)."""

    def check_consume_key(self, key: str, character: str | None) -> bool:
        """Typed keys are the filter's, the board's `/` too: Textual's Input asks `key_to_character`, which has no
        character for `slash`, and the footer would offer "/ Filter" while the filter is being typed."""
        return super().check_consume_key(key, character) or takes_typed_key(self, key)

    def action_clear_filter(self) -> None:
        self.value = ""
        self.post_message(self.Leave())

    def action_to_board(self) -> None:
        self.post_message(self.Leave())
