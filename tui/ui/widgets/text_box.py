"""A multi-line box (one item per line): a Textual TextArea with the forms' cursor-blink switch. A module of its own
so that the forms' other fields do not import Textual's text area (~5 ms of the start, where no box shows)."""

from __future__ import annotations

from textual.widgets import TextArea

from tui.ui.widgets import forms


class TextBox(TextArea):
    """A multi-line box (one item per line) with the same cursor-blink switch as the forms' inputs."""

    DEFAULT_CSS = """
    TextBox { height: 5; }
    """

    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("soft_wrap", False)
        kwargs.setdefault("show_line_numbers", False)
        super().__init__(*args, **kwargs)
        self.cursor_blink = forms.CURSOR_BLINK
