"""The form of an operation no form was written for, read off its row's request model as Chats reads a kind's
(`forms.model_rows`, `forms.model_from_rows`): a row per field, a button, a status line and the answer under it.

Every section but Chats holds one `DerivedForms`: a form for each operation of its part of the table that the
section does not declare hand-built (`HAND_BUILT`, op id -> the control that performs it), hidden until the palette
(`open_operation`) opens one. A new row of the table thus has a working form with no edit in the UI, unless a
field of its model cannot be typed on one line (then it needs a hand-built form; the completeness test names it).

The form posts `OperationForm.Submitted`; the section (`OperationSection`) sends it through the table.
"""

from __future__ import annotations

from collections.abc import Collection

from pydantic import BaseModel
from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Button, Input, Static

from tui.api.models import OperationResult, Request
from tui.api.operations import ErasedOperation, Section, in_section
from tui.ui.keymap import label
from tui.ui.widgets.feedback import ErrorLine
from tui.ui.widgets.forms import FieldRow, Form, model_from_rows, model_rows


ANSWER_LINES = 200
"""At most this many lines of an answer are shown under its form."""


def derived_operations(section: Section, hand_built: Collection[str]) -> tuple[ErasedOperation, ...]:
    """The section's rows of the table that have no hand-built form, in the table's order."""
    return tuple(op for op in in_section(section) if op.id not in hand_built)


def form_id(op: ErasedOperation) -> str:
    """`op-<id>`, the id's `/` written `-` (`privacy/group-add` -> `op-privacy-group-add`)."""
    return "op-" + op.id.value.replace("/", "-")


class OperationForm(Form):
    """`#op-<id>`: one operation's fields (`#op-<id>-<field>`), its button, its status line and its answer."""

    DEFAULT_CSS = """
    OperationForm { border: round $panel-lighten-2; padding: 0 1; margin-bottom: 1; }
    OperationForm > .operation-title { text-style: bold; padding: 0 1; }
    OperationForm > .operation-answer { height: auto; padding: 0 1; display: none; }
    OperationForm > .operation-answer.-shown { display: block; }
    """

    class Submitted(Message):
        """Send what is typed (ctrl+s, the button, or Enter in a form of one field)."""

        def __init__(self, form: OperationForm) -> None:
            super().__init__()
            self.form = form

    def __init__(self, op: ErasedOperation, rows: list[FieldRow], *, run_binding: str) -> None:
        super().__init__(id=form_id(op))
        self.op = op
        self._model_rows = rows
        self._run_binding = run_binding

    def compose(self) -> ComposeResult:
        yield Static(Content(self.op.title), classes="operation-title")
        yield from self._model_rows
        with Horizontal(classes="actions"):
            yield Button(label("Run" if self.op.is_read else "Send", self._run_binding), classes="operation-run",
                         variant="warning" if self.op.destructive else "primary")
        # the line saying how it went under the button, where the focus comes back; the answer follows it
        yield ErrorLine(classes="operation-status")
        yield Static("", classes="operation-answer")

    @property
    def status(self) -> ErrorLine:
        return self.query_one(".operation-status", ErrorLine)

    def first_control(self) -> Widget:
        """The first field; with none, the button."""
        rows = self.rows()
        return rows[0].control if rows else self.query_one(".operation-run", Button)

    def request(self) -> Request:
        """The request of what is typed; raises ValidationError as the model does."""
        return model_from_rows(self.op.request, self.rows(), {})

    def show_answer(self, result: BaseModel, command: str) -> None:
        """The answer as the gateway's fields, and a line saying how it went (a 200 that says false is a no);
        `command`: the `gateway-tui call` of this request, named when the answer is too long to show whole."""
        lines = result.model_dump_json(indent=2, exclude_none=True).splitlines()
        if len(lines) > ANSWER_LINES:  # a long list: the app stays quick; the command line prints it whole
            lines = [*lines[:ANSWER_LINES], f"… {len(lines) - ANSWER_LINES} more lines: `{command}` prints the whole "
                     "answer"]
        answer = self.query_one(".operation-answer", Static)
        answer.update(Content("\n".join(lines)))
        answer.add_class("-shown")
        if isinstance(result, OperationResult) and not result.ok:
            self.status.show_error(f"{self.op.title}: the gateway answered {result.refusal}; it may not have been done.")
        else:
            self.status.show_ok(f"{self.op.title}: done.")

    def submit(self) -> None:
        self.post_message(self.Submitted(self))

    @on(Button.Pressed, ".operation-run")
    def _pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.submit()

    @on(Input.Submitted)
    def _entered(self, event: Input.Submitted) -> None:
        """Enter sends a form of one field; in a longer one it moves on to the next field, never sends."""
        event.stop()
        if len(self.rows()) == 1:
            self.submit()
        else:
            self.screen.focus_next()


class DerivedForms(Vertical):
    """`#derived-forms`: a section's forms read off the table, hidden until one is opened (then only that one
    shows)."""

    DEFAULT_CSS = """
    DerivedForms { height: auto; display: none; }
    DerivedForms.-shown { display: block; }
    DerivedForms > OperationForm { display: none; }
    DerivedForms > OperationForm.-open { display: block; }
    """

    def __init__(self, section: Section, hand_built: Collection[str], *, run_binding: str) -> None:
        super().__init__(id="derived-forms")
        self.section = section
        self.hand_built = hand_built
        self.run_binding = run_binding

    def compose(self) -> ComposeResult:
        for op in derived_operations(self.section, self.hand_built):
            rows = model_rows(op.request, form_id(op))
            if rows is not None:
                yield OperationForm(op, rows, run_binding=self.run_binding)

    def form_of(self, op_id: str) -> OperationForm | None:
        return next((form for form in self.query_children(OperationForm) if form.op.id == op_id), None)

    def open(self, op_id: str) -> OperationForm | None:
        """Show the form of `op_id` (alone) and focus its first field; None when it has no form here."""
        form = self.form_of(op_id)
        if form is None:
            return None
        for other in self.query_children(OperationForm):
            other.set_class(other is form, "-open")
        self.add_class("-shown")
        control = form.first_control()
        if self.screen.is_current:
            self.screen.set_focus(control, scroll_visible=False)  # at once: what is typed next goes into it
        self.call_after_refresh(self._reveal, form, control)
        return form

    def _reveal(self, form: OperationForm, control: Widget) -> None:
        control.focus(scroll_visible=False)
        form.scroll_visible(animate=False, top=True)
