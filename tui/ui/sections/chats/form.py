"""The send form: its head, the recipient, a form per kind (one shows at a time), Send with the sent id and the
answer, and the chat actions. The section (`tui.ui.sections.chats.section.ChatsSection`) sends and applies what crosses them."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, ContentSwitcher

from tui.ui.keymap import label
from tui.ui.sections.chats.actions import ChatActions
from tui.ui.sections.chats.head import ChatHead
from tui.ui.sections.chats.kind_form import text_row
from tui.ui.sections.chats.kinds import kind_forms
from tui.ui.sections.chats.model_form import RECIPIENT_FIELDS
from tui.ui.widgets.feedback import ErrorLine
from tui.ui.widgets.forms import RecipientValidator
from tui.ui.widgets.section import CopyableValue
from tui.ui.widgets.focus import TypingInForms


class ChatForm(Vertical, TypingInForms):
    """`#compose` of ChatsSection."""

    def __init__(self, *, with_inbox: bool, id: str | None = None) -> None:
        super().__init__(id=id)
        self.with_inbox = with_inbox

    def compose(self) -> ComposeResult:
        yield ChatHead(with_inbox=self.with_inbox, id="chat-head")
        with Horizontal(id="chat-top"):
            yield text_row(
                "Recipient (phone or group JID)",
                RECIPIENT_FIELDS,
                "recipient",
                placeholder="5511999999999 or 120363019502650977@g.us",
                validators=[RecipientValidator()],
            )
        with ContentSwitcher(initial="form-text", id="kinds"):
            yield from kind_forms()
        with Horizontal(classes="actions"):
            yield Button(label("Send", "chats.send"), id="send", variant="primary")
        yield CopyableValue("Sent, message id:", id="sent-id")
        yield ErrorLine(id="chat-status")
        yield ChatActions(id="chat-action-block")
