"""The forward's form: the message id and the chat it is in."""

from __future__ import annotations

from textual.app import ComposeResult

from tui.api.dialects import InstanceDialect
from tui.api.models import ForwardMessage
from tui.ui.sections.chats.kind_form import KindForm, text_row
from tui.ui.widgets.forms import RecipientValidator


class ForwardForm(KindForm):
    """`#form-forward`."""

    def compose(self) -> ComposeResult:
        yield text_row("Message id to forward", "messageId", "forward-id")
        yield text_row("Chat it is in (phone or group JID)", "messagePhone", "forward-phone",
                       validators=[RecipientValidator()])

    def build(self, recipient: str, dialect: InstanceDialect) -> ForwardMessage:
        return ForwardMessage(phone=recipient, messageId=self.text("forward-id"),
                              messagePhone=self.text("forward-phone"))
