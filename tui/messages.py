"""App-level messages that cross UI regions (widget-scoped messages live nested in their widget)."""

from __future__ import annotations

from textual.message import Message


class MessageSent(Message):
    """A section sent a message; the events panel links the gateway's later events to this id."""

    def __init__(self, message_id: str, kind: str, recipient: str) -> None:
        super().__init__()
        self.message_id = message_id
        self.kind = kind
        self.recipient = recipient
