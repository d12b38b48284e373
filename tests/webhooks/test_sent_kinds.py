"""What is a send, and what kind of inbox message it makes, is the operations table's `sends` column:
`webhooks/sent.py` keeps no list of its own."""

from __future__ import annotations

import pytest

from tests.sandbox.test_client_in_each_dialect import REQUESTS
from tui.api.operations import OPERATIONS
from tui.webhooks.sent import send_operations, sent_message

# Literal, as the inbox stored them before the column existed (conversations.py's `kind`): a pin on these, which
# must not change; a new send's kind is its row's and is checked below with the rest.
KINDS = {
    "send-text": "text", "send-button-actions": "buttons", "send-button-list": "list", "send-link": "link",
    "send-poll": "poll", "send-location": "location", "send-sticker": "sticker", "forward-message": "forward",
    "send-contact": "contact",
    # media (issue 25): the kinds the inbox already gives received media (render.py's _MEDIA)
    "send-image": "image", "send-video": "video", "send-audio": "audio", "send-document": "document",
    "chat-send-image": "image", "chat-send-video": "video", "chat-send-audio": "audio",
    "chat-send-document": "document",
}


def test_the_sends_are_the_tables_column() -> None:
    sends = {op_id.value: op.sends for op_id, op in OPERATIONS.items() if op.sends}
    assert KINDS.items() <= sends.items()
    assert {op_id.value for op_id in send_operations()} == set(sends)


@pytest.mark.parametrize("op", list(OPERATIONS.values()), ids=lambda op: op.id.value)
def test_every_send_reads_in_the_inbox_and_nothing_else_does(op) -> None:
    message = sent_message(op.id, REQUESTS[op.id](), "3EB0ABC")
    if op.sends is None:
        assert message is None
    else:
        assert message is not None, f"{op.id} sends a message but the inbox cannot render its request"
        assert (message.kind, message.outgoing, message.message_id) == (op.sends.value, True, "3EB0ABC")
        assert message.body


def test_the_sent_message_id_is_read_from_each_answer_shape() -> None:
    from tui.api.models import ContactSent, OperationResult, SendResult
    from tui.webhooks.sent import message_id_of

    assert message_id_of(SendResult.model_validate({"zaapId": "Z1"})) == "Z1"
    assert message_id_of(SendResult.model_validate({"messageId": "3EB0A", "id": "3EB0A"})) == "3EB0A"
    assert message_id_of(ContactSent.model_validate({"Details": "Sent", "Id": "ABC", "Timestamp": None})) == "ABC"
    assert message_id_of(ContactSent.model_validate({"Id": ""})) is None
    assert message_id_of(OperationResult.model_validate({"value": True})) is None
