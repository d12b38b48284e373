"""The quick-reply buttons' form: a message, optional title and footer, up to three labels one per line."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal

from tui.api.dialects import InstanceDialect
from tui.api.models import SendButtonActions
from tui.ui.sections.chats.kind_form import KindForm, text_row
from tui.ui.widgets.forms import FieldRow, optional
from tui.ui.widgets.text_box import TextBox


class ButtonsForm(KindForm):
    """`#form-buttons`."""

    def compose(self) -> ComposeResult:
        yield text_row("Message", "message", "buttons-message")
        with Horizontal(classes="form-cols"):
            yield text_row("Title (optional)", "title", "buttons-title")
            yield text_row("Footer (optional)", "footer", "buttons-footer")
        yield FieldRow("Buttons (one label per line, up to 3)", TextBox(id="buttons-labels"), field="buttons")

    def build(self, recipient: str, dialect: InstanceDialect) -> SendButtonActions:
        # The form's text goes to model_validate: the models turn "12" into 12 by their own rules, and name the
        # field when they cannot.
        return SendButtonActions.model_validate({
            "phone": recipient,
            "message": self.text("buttons-message"),
            "title": optional(self.text("buttons-title")),
            "footer": optional(self.text("buttons-footer")),
            "buttons": self.numbered(self.lines("buttons-labels"), "text"),
        })
