"""App-level messages that cross UI regions (widget-scoped messages live nested in their widget)."""

from __future__ import annotations

from textual.message import Message


class MessageSent(Message):
    """A section sent a message; the events panel links the gateway's later events to this id."""

    def __init__(self, message_id: str, kind: str, recipient: str, request: object = None, result: object = None) -> None:
        super().__init__()
        self.message_id = message_id
        self.kind = kind
        self.recipient = recipient
        self.request = request  # what was sent and the gateway's answer: the inbox records the message from them
        self.result = result


class SendUnanswered(Message):
    """A send got no answer (cancelled, timed out, its connection lost) and may have reached the gateway: the inbox
    keeps it in its thread as such."""

    def __init__(self, kind: str, request: object) -> None:
        super().__init__()
        self.kind = kind
        self.request = request  # the Sendable request: its recipient and how it reads


class EventChosen(Message):
    """The user chose a stored event (Enter in the events panel or the Events section): the app opens it in full
    (widgets and sections do not open screens over the main screen)."""

    def __init__(self, event: object) -> None:
        super().__init__()
        self.event = event  # a tui.core.feed StoredEvent


class ConnectionRead(Message):
    """The header's read of the gateway's status answered (or failed): the start waits for the first one."""
