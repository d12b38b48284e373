"""WuzAPI's message history (issue 35 item 4) as it answers: `GET /chat/history?chat_jid=…&limit=…` (handlers.go
GetHistory: newest first, the user's `history` setting > 0 or 501) and `?chat_jid=index` (each user's chats with
their newest message). Literal answers from WuzAPI's spec (static/api/spec.yml) and its handler's JSON tags."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from tui.gateways.wuzapi.history import HistoryUnreadable, read_chat_history, read_history_index

# static/api/spec.yml, GET /chat/history, 200 example (s.Respond wraps the handler's JSON in code/data/success).
CHAT_HISTORY = """{
  "code": 200,
  "success": true,
  "data": [
    {"id": 1, "user_id": "abc123def456", "chat_jid": "5491155553333@s.whatsapp.net",
     "sender_jid": "5491155554444@s.whatsapp.net", "message_id": "3EB0C767D26A1B5F7C83",
     "timestamp": "2023-12-01T15:30:00Z", "message_type": "text", "text_content": "Hello, how are you?",
     "media_link": ""},
    {"id": 2, "user_id": "abc123def456", "chat_jid": "5491155553333@s.whatsapp.net",
     "sender_jid": "5491155553333@s.whatsapp.net", "message_id": "4FB1D878E37B2C6G8D94",
     "timestamp": "2023-12-01T15:25:00Z", "message_type": "image", "text_content": "Check out this photo!",
     "media_link": "https://example.com/media/image123.jpg"}
  ]
}"""

# handlers.go GetHistory with chat_jid=index: {user_id: [{chat_jid, last_updated}]} (ChatInfo's JSON tags).
HISTORY_INDEX = """{"code": 200, "success": true, "data": {"abc123def456": [
  {"chat_jid": "5491155553333@s.whatsapp.net", "last_updated": "2023-12-01T15:30:00Z"},
  {"chat_jid": "120363313346913103@g.us", "last_updated": "2023-11-30T08:00:00.123456789Z"}]}}"""

# handlers.go GetHistory when the user's history setting is 0.
DISABLED = '{"code": 501, "error": "message history is disabled for this user", "success": false}'


def test_the_chat_history_reads_as_listed_messages_oldest_first() -> None:
    listed = read_chat_history(json.loads(CHAT_HISTORY))
    chat = "5491155553333@s.whatsapp.net"
    assert [(m.message_id, m.chat_jid, m.sender, m.kind, m.text) for m in listed] == [
        ("4FB1D878E37B2C6G8D94", chat, chat, "image", "Check out this photo!"),
        ("3EB0C767D26A1B5F7C83", chat, "5491155554444@s.whatsapp.net", "text", "Hello, how are you?"),
    ]
    assert listed[1].at == datetime(2023, 12, 1, 15, 30, tzinfo=UTC)
    assert not listed[0].from_me


def test_the_index_names_each_chat_with_its_newest_message() -> None:
    index = read_history_index(json.loads(HISTORY_INDEX))
    assert index == [("5491155553333@s.whatsapp.net", datetime(2023, 12, 1, 15, 30, tzinfo=UTC)),
                     ("120363313346913103@g.us", datetime(2023, 11, 30, 8, 0, 0, 123456, tzinfo=UTC))]


@pytest.mark.parametrize("answer", [DISABLED, '{"code": 200, "success": true, "data": "nope"}', "[]"])
def test_an_answer_without_a_history_is_refused_in_words(answer: str) -> None:
    with pytest.raises(HistoryUnreadable):
        read_chat_history(json.loads(answer))
