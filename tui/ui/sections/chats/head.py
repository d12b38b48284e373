"""The send form's title line: the kind picker and, beside the conversations, the way back to them."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import Button, Select, Static

from tui.ui.keymap import label
from tui.ui.sections.chats.kinds import kinds


class ChatHead(Horizontal):
    """`#chat-head`. The kind picker sits on the title line, before the recipient: Tab goes from the recipient
    straight to the message, then the optional parts, in reading order (shift+tab from the recipient reaches the
    picker)."""

    def __init__(self, *, with_inbox: bool, id: str | None = None) -> None:
        super().__init__(id=id)
        self.with_inbox = with_inbox

    def compose(self) -> ComposeResult:
        yield Static("Chats — new message", classes="section-title")
        yield Static("kind", classes="kind-label")
        yield Select(
            [(kind.title, kind.key) for kind in kinds()],
            value="text",
            allow_blank=False,
            compact=True,
            id="kind",
        )
        yield Static(classes="head-gap")
        if self.with_inbox:
            inbox = Button(label("Conversations", "chats.inbox"), id="open-inbox", compact=True)
            inbox.can_focus = False  # a mouse shortcut: tab goes from the section straight to the recipient
            yield inbox
