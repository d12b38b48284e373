"""The button list's form: a message and its options, one label per line."""

from __future__ import annotations

from textual.app import ComposeResult

from tui.api.dialects import InstanceDialect
from tui.api.models import SendButtonList
from tui.ui.sections.chats.kind_form import KindForm, text_row
from tui.ui.widgets.forms import FieldRow
from tui.ui.widgets.text_box import TextBox


class ButtonListForm(KindForm):
    """`#form-list`."""

    def compose(self) -> ComposeResult:
        yield text_row("Message", "message", "list-message")
        yield FieldRow("Options (one label per line)", TextBox(id="list-labels"), field="buttonList")

    def build(self, recipient: str, dialect: InstanceDialect) -> SendButtonList:
        return SendButtonList.model_validate({
            "phone": recipient,
            "message": self.text("list-message"),
            "buttonList": {"buttons": self.numbered(self.lines("list-labels"), "label")},
        })
