"""The pairing QR code on the whole screen, for a terminal where it fits nowhere else (80×24: the section keeps a
header, the tabs, the footer and the state, and a code is 22 rows at its most compact, tui.api.qr). The Account
section opens it when the code does not fit beside the state, keeps it current (each new code, the countdown) and
closes it when the run of codes ends. Escape stops the codes, as it does in the section; p asks for a phone code."""

from __future__ import annotations

from enum import StrEnum

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Center, Vertical
from textual.screen import Screen
from textual.widgets import Footer, Static

from tui.api.qr import CompactQRText, QRText
from tui.ui.keymap import bindings_for
from tui.ui.sections.account.qr_view import QRView


class QRScreenClosed(StrEnum):
    """Why the screen closed: what the section does next."""

    STOP = "stop"  # Escape: stop the run of codes
    PHONE = "phone"  # p: a phone code instead
    ENDED = "ended"  # the run ended (paired, given up) or the section drew the code itself


class QRScreen(Screen[QRScreenClosed]):
    """The code, its one line of words (the countdown, where to scan), the keys."""

    BINDINGS = bindings_for("account_qr")

    DEFAULT_CSS = """
    QRScreen { align: center top; }
    QRScreen #qr-screen-body { height: auto; width: 100%; }
    QRScreen #qr-screen-words { height: 1; width: 100%; padding: 0 1; text-align: center; }
    """

    def __init__(self, drawn: QRText | CompactQRText, words: str) -> None:
        super().__init__()
        self._drawn = drawn
        self._words = words

    def compose(self) -> ComposeResult:
        with Vertical(id="qr-screen-body"):
            with Center():
                yield QRView(id="qr-screen-code")
            yield Static(Text(self._words, no_wrap=True, overflow="ellipsis"), id="qr-screen-words")
        yield Footer()

    def on_mount(self) -> None:
        self.show(self._drawn, self._words)

    def show(self, drawn: QRText | CompactQRText, words: str) -> None:
        self._drawn, self._words = drawn, words
        if self.is_mounted:
            self.query_one(QRView).show_code(drawn)
            self.query_one("#qr-screen-words", Static).update(Text(words, no_wrap=True, overflow="ellipsis"))

    def say(self, words: str) -> None:
        """New words under the code (an expired code's, while the next is asked for)."""
        self._words = words
        if self.is_mounted:
            self.query_one("#qr-screen-words", Static).update(Text(words, no_wrap=True, overflow="ellipsis"))

    def action_stop(self) -> None:
        self.dismiss(QRScreenClosed.STOP)

    def action_phone_code(self) -> None:
        self.dismiss(QRScreenClosed.PHONE)
