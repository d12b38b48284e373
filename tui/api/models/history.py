"""Reading a chat's recent messages back from the gateway (issue 35, catch-up): the question each family asks and the
rows the gateway answers, kept as it wrote them; each gateway's reader (tui.gateways.<name>.history) reads them."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from tui.api.models.base import Request
from tui.api.models.lists import ListAnswer

HISTORY_LIMIT = 1000  # WuzAPI's spec documents 1000 as the most per call; Z-API and Evolution take any


class ChatHistoryQuery(Request):
    """WuzAPI's `GET /chat/history` query: one chat's JID (or `index`: every chat with its newest message's time) and
    how many of its newest messages."""

    chat_jid: str = Field(min_length=1)
    limit: int = Field(default=50, ge=1, le=HISTORY_LIMIT)


class ChatMessagesQuery(Request):
    """One chat's messages, newest first (Z-API's `GET /chat-messages/{phone}`, Evolution's findMessages): `phone` the
    chat ("" asks Evolution for every chat at once; Z-API needs one), `amount` per page, and where the page starts:
    Z-API after `lastMessageId`, Evolution at `page` (from 1)."""

    phone: str = ""
    amount: int = Field(default=10, ge=1, le=HISTORY_LIMIT)
    lastMessageId: str | None = None
    page: int = Field(default=1, ge=1)


class MessageHistory(ListAnswer):
    """The rows of a history answer as the gateway wrote them: WuzAPI's messages or its index of chats, Z-API's bare
    array, Evolution's `messages.records` (with its `pages`)."""

    items: list[dict[str, Any]] = Field(default_factory=list)
    pages: int = 1

    @classmethod
    def _unwrap(cls, value: Any) -> Any:
        if isinstance(value, dict) and isinstance(value.get("messages"), dict):  # Evolution: paginated records
            page = value["messages"]
            records = page.get("records")
            return {"items": [row for row in records if isinstance(row, dict)] if isinstance(records, list) else [],
                    "pages": page.get("pages") if isinstance(page.get("pages"), int) else 1}
        if isinstance(value, dict) and "items" not in value:  # WuzAPI's index: {user id: [{chat_jid, last_updated}]}
            return {"items": [entry for entries in value.values() if isinstance(entries, list)
                              for entry in entries if isinstance(entry, dict)]}
        if isinstance(value, list):
            return [row for row in value if isinstance(row, dict)]
        return value
