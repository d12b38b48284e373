"""The text message's form (operation 1): one message box, long text wraps."""

from __future__ import annotations

from textual.app import ComposeResult

from tui.api.dialects import InstanceDialect
from tui.api.models import SendText
from tui.ui.sections.chats.kind_form import KindForm
from tui.ui.widgets.forms import FieldRow
from tui.ui.widgets.text_box import TextBox


class TextForm(KindForm):
    """`#form-text`."""

    def compose(self) -> ComposeResult:
        yield FieldRow("Message", TextBox(id="text-message", soft_wrap=True), field="message")  # long text wraps

    def build(self, recipient: str, dialect: InstanceDialect) -> SendText:
        return SendText(phone=recipient, message=self.text("text-message"))
