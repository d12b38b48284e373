"""The account picker (F3 while several accounts are open): type a few letters of a name (fuzzy: `s2` finds
`shop-2`), ↑/↓ choose, Enter makes it current, Esc closes. Dismisses with the name, or None."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.fuzzy import Matcher
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from tui.ui.keymap import bindings_for

SHOWN_AT_MOST = 200


def fuzzy_order(names: Sequence[str], query: str) -> list[str]:
    """The names that match `query` (its letters in order), best first; all of them, in order, for no query."""
    if not query.strip():
        return list(names)
    matcher = Matcher(query.strip())
    scored = [(matcher.match(name), index, name) for index, name in enumerate(names)]
    return [name for score, _index, name in sorted(scored, key=lambda item: (-item[0], item[1])) if score > 0]


class AccountPicker(ModalScreen[str | None]):
    BINDINGS = bindings_for("picker")

    DEFAULT_CSS = """
    AccountPicker { align: center top; }
    AccountPicker > Vertical { width: 50; max-width: 90%; height: auto; max-height: 80%; margin-top: 2;
                               border: thick $accent; background: $surface; padding: 0 1; }
    AccountPicker #picker-title { text-style: bold; }
    AccountPicker OptionList { height: auto; max-height: 16; border: none; }
    """

    def __init__(self, names: Sequence[str], current: str, opening: Mapping[str, str] | None = None) -> None:
        super().__init__()
        self.names = list(names)
        self.current = current
        self.opening = dict(opening or {})
        """Accounts whose secrets are still being read, or could not be: listed, each with the board's word for it."""

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(f"Switch account (now {self.current})", id="picker-title")
            yield Input(placeholder="a few letters of the name", id="picker-query")
            yield OptionList(id="picker-list")

    def on_mount(self) -> None:
        self._list("")
        self.query_one(Input).focus()

    @on(Input.Changed, "#picker-query")
    def _typed(self, event: Input.Changed) -> None:
        self._list(event.value)

    def _list(self, query: str) -> None:
        options = self.query_one(OptionList)
        options.clear_options()
        shown = fuzzy_order(self.names, query)[:SHOWN_AT_MOST]
        options.add_options([Option(name + self._mark(name), id=name) for name in shown])
        if shown:
            options.highlighted = 0

    def _mark(self, name: str) -> str:
        if name == self.current:
            return "  (current)"
        return f"  ({self.opening[name]})" if name in self.opening else ""

    @on(Input.Submitted, "#picker-query")
    def _submitted(self) -> None:  # Enter in the field (the field takes Enter before the screen's binding)
        self.action_choose()

    def action_move(self, step: int) -> None:
        options = self.query_one(OptionList)
        if options.option_count:
            options.highlighted = ((options.highlighted or 0) + step) % options.option_count

    def action_choose(self) -> None:
        options = self.query_one(OptionList)
        if options.highlighted is None or not options.option_count:
            return
        self.dismiss(options.get_option_at_index(options.highlighted).id)

    @on(OptionList.OptionSelected)
    def _clicked(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)
