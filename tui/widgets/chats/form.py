"""The send form: its head, the recipient, a form per kind (one shows at a time), Send with the sent id and the
answer, and the chat actions. The section (`tui.screens.chats.ChatsSection`) sends and applies what crosses them."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, ContentSwitcher

from tui.keymap import label
from tui.widgets.chats.actions import ChatActions
from tui.widgets.chats.head import ChatHead
from tui.widgets.chats.kind_form import text_row
from tui.widgets.chats.kinds import kind_forms
from tui.widgets.chats.model_form import RECIPIENT_FIELDS
from tui.widgets.feedback import ErrorLine
from tui.widgets.forms import RecipientValidator
from tui.widgets.section import CopyableValue
from tui.widgets.focus import TypingInForms


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
