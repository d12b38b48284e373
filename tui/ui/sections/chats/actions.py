"""The chat actions (operation 23 on the recipient's chat): read, archive, pin, mute, clear, delete... and their
answer line. What they act on (the recipient) is the section's, which applies them."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, Select, Static

from tui.api.models import ChatAction
from tui.ui.keymap import label
from tui.ui.widgets.feedback import ErrorLine

CHAT_ACTION_TITLES: dict[ChatAction, str] = {
    ChatAction.READ: "Mark chat as read",
    ChatAction.ARCHIVE: "Archive chat",
    ChatAction.UNARCHIVE: "Unarchive chat",
    ChatAction.PIN: "Pin chat",
    ChatAction.UNPIN: "Unpin chat",
    ChatAction.MUTE: "Mute chat",
    ChatAction.UNMUTE: "Unmute chat",
    ChatAction.CLEAR: "Clear chat history",
    ChatAction.DELETE: "Delete chat",
}


class ChatActions(Vertical):
    """The subtitle, `#chat-actions` (the action picker and Apply) and `#chat-action-status` under them."""

    DEFAULT_CSS = """
    ChatActions { height: auto; }
    """

    def compose(self) -> ComposeResult:
        yield Static("Chat actions (on the recipient's chat)", classes="subtitle")
        with Horizontal(id="chat-actions", classes="actions"):
            yield Select(
                [(title, action.value) for action, title in CHAT_ACTION_TITLES.items()],
                value=ChatAction.READ.value,
                allow_blank=False,
                id="chat-action",
            )
            yield Button(label("Apply", "chats.chat_action"), id="apply-action")
        yield ErrorLine(id="chat-action-status")  # the chat action's answer, under it

    @property
    def action(self) -> ChatAction:
        return ChatAction(str(self.query_one("#chat-action", Select).value))

    @action.setter
    def action(self, action: ChatAction) -> None:
        self.query_one("#chat-action", Select).value = action.value
