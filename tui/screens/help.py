"""Help for the current section (`?` or F1): its HELP markdown, the focused widget's keys and the global keys."""

from __future__ import annotations

from typing import Any

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widget import Widget
from textual.widgets import Footer, Markdown, Static

from tui.keymap import bindings_for, help_table

_MORE_KEYS = """| `tab` / `shift+tab` | next / previous field |
| `enter` | next field in a form (a one-field look-up runs) |
"""


def _bindings_table(widget: Widget | None) -> Table | None:
    """The keys active where the focus is (the focused widget and its ancestors), first binding wins."""
    if widget is None:
        return None
    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold cyan", no_wrap=True)
    table.add_column()
    table.add_column(style="dim")
    seen: set[str] = set()
    for node in [widget, *widget.ancestors]:
        bindings = getattr(node, "_bindings", None)
        if bindings is None:
            continue
        for key, entries in bindings.key_to_bindings.items():
            for binding in entries:
                if not binding.description or key in seen:
                    continue
                seen.add(key)
                display = binding.key_display or key
                table.add_row(Text(display), Text(binding.description), Text(type(node).__name__))
    return table if seen else None


class HelpScreen(ModalScreen[None]):
    """Modal help; Escape, q or ? closes it."""

    BINDINGS = bindings_for("help")

    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > #help {
        width: 96; height: 34; max-width: 100%; max-height: 100%;
        border: thick $primary; background: $surface; padding: 0 1;
    }
    HelpScreen #help-title { text-style: bold; color: $text-accent; height: 1; }
    HelpScreen .help-heading { text-style: bold; margin-top: 1; }
    HelpScreen Markdown { margin: 0; padding: 0; }
    """

    def __init__(self, *, title: str, markdown: str, bindings_of: Widget | None = None) -> None:
        super().__init__()
        self.help_title = title
        self.markdown = markdown
        self.bindings_of = bindings_of

    def compose(self) -> ComposeResult:
        with Vertical(id="help"):
            yield Static(Text(f"Help · {self.help_title}"), id="help-title")
            with VerticalScroll():
                if self.markdown:
                    yield Markdown(self.markdown, id="help-section")
                keys = _bindings_table(self.bindings_of)
                if keys is not None:
                    focused: Any = self.bindings_of
                    yield Static(Text(f"Keys here ({type(focused).__name__})"), classes="help-heading")
                    yield Static(keys, id="help-focused-keys")
                yield Static("Everywhere", classes="help-heading")
                yield Markdown(help_table() + _MORE_KEYS, id="help-global")
        yield Footer()
