"""Help for the current section (`?` or F1): its HELP markdown, the focused widget's keys and the global keys."""

from __future__ import annotations

from typing import Any

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widget import Widget
from textual.app import App
from textual.widgets import Button, DataTable, Footer, Input, Markdown, Select, Static, TextArea

from tui.ui.keymap import ACTIONS_BY_ID, SCOPES, bindings_for, help_table
from tui.ui.widgets.conversation_list import ConversationList
from tui.ui.widgets.forms import FieldRow

_MORE_KEYS = """| `tab` / `shift+tab` | next / previous field |
| `enter` | next field in a form (a one-field look-up runs) |
"""


def where_in_words(node: object, binding_id: str | None) -> str:
    """Where a key acts, as the user reads it: the keys table's scope ("Chats (the conversations)", "everywhere"),
    else the kind of control the focus is in; never a class name."""
    action = ACTIONS_BY_ID.get(binding_id or "")
    if action is not None:
        return SCOPES[action.scope]
    if isinstance(node, App):
        return "everywhere"
    if isinstance(node, Screen):
        return "this screen"
    if isinstance(node, (Input, TextArea)):
        return "text fields"
    if isinstance(node, Select):
        return "pickers"
    if isinstance(node, (DataTable, ConversationList)):
        return "lists"
    if isinstance(node, Button):
        return "buttons"
    return "here"


def focused_in_words(widget: Widget) -> str:
    """The focused control as the user sees it: its field's label ("the Recipient field"), else its kind."""
    row = next((node for node in widget.ancestors_with_self if isinstance(node, FieldRow)), None)
    if row is not None:
        return f"the {row.label} field"
    if isinstance(widget, Button):
        return f"the {widget.label} button"
    if isinstance(widget, (DataTable, ConversationList)):
        return "the list"
    if isinstance(widget, (Input, TextArea)):
        return "a text field"
    return "where the focus is"


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
                table.add_row(Text(display), Text(binding.description), Text(where_in_words(node, binding.id)))
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
                    yield Static(Text(f"Keys here ({focused_in_words(focused)})"), classes="help-heading")
                    yield Static(keys, id="help-focused-keys")
                yield Static("Everywhere", classes="help-heading")
                yield Markdown(help_table() + _MORE_KEYS, id="help-global")
        yield Footer()
