"""A small dialog that asks for a file's path in one field (enter answers, escape cancels): the Events export and
the thread's save-a-file use it. Its one field takes every key typed: nothing typed there is a command."""

from __future__ import annotations

from pathlib import Path

from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Input, Label, Static


class PathDialog(ModalScreen[Path | None]):
    """Asks `question` with `default` in the field; answers the path typed (~ expanded) once `refusal(path)` has
    nothing against it. Subclasses set BINDINGS (escape: `cancel`) and may refuse more."""

    DEFAULT_CSS = """
    PathDialog { align: center middle; }
    PathDialog > Vertical { width: 90; max-width: 100%; height: auto; border: thick $primary; background: $surface; padding: 1 2; }
    PathDialog .path-error { color: $text-error; height: auto; }
    """

    def __init__(self, question: str, default: str, *, field_id: str, hint: str) -> None:
        super().__init__()
        self.question = question
        self.default = default
        self.field_id = field_id
        self.hint = hint

    def compose(self) -> ComposeResult:
        from tui.ui.widgets.forms import CURSOR_BLINK

        with Vertical():
            yield Label(Content(self.question))
            field = Input(self.default, id=self.field_id)
            field.cursor_blink = CURSOR_BLINK
            yield field
            yield Static(classes="path-error")
            yield Label(self.hint, classes="dim")

    def refusal(self, path: Path) -> str | None:
        """Why `path` is not taken (None: it is)."""
        if path.is_dir():
            return f"{path} is a folder: give a file name."
        if not path.parent.is_dir():
            return f"The folder {path.parent} does not exist."
        return None

    @on(Input.Submitted)
    def _submit(self, message: Input.Submitted) -> None:
        message.stop()
        typed = message.value.strip()
        error = self.query_one(".path-error", Static)
        if not typed:
            error.update("Give a file name.")
            return
        path = Path(typed).expanduser()
        refusal = self.refusal(path)
        if refusal is not None:
            error.update(Content(refusal))
            return
        self.dismiss(path)

    def action_cancel(self) -> None:
        self.dismiss(None)
