"""A QR code a phone can scan: block characters (█ ▀ ▄, two modules a row, one a column; or sextants, three a row,
two a column, where room is short), its 4-module quiet zone,
painted black on white in explicit colours whatever the theme (tui.api.qr lays it out)."""

from __future__ import annotations

from rich.style import Style
from rich.text import Text
from textual.widgets import Static

from tui.api.qr import CompactQRText, QRText

DARK_ON_LIGHT = Style(color="#000000", bgcolor="#ffffff")


class QRView(Static):
    """The drawn code, or nothing (hidden)."""

    DEFAULT_CSS = """
    QRView { width: auto; height: auto; display: none; }
    QRView.-shown { display: block; }
    """

    def show_code(self, drawn: QRText | CompactQRText | None) -> None:
        if drawn is None:
            self.remove_class("-shown")
            self.update("")
            return
        self.update(Text("\n".join(drawn.rows), style=DARK_ON_LIGHT, no_wrap=True, overflow="crop"))
        self.add_class("-shown")
