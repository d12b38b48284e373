"""A message as a gateway's history lists it (issue 35, catch-up): what the inbox needs to show a message the
listener missed while it was down. Each gateway's reader (tui.gateways.<name>.history) turns its answer into these."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True, slots=True)
class ListedMessage:
    """`chat_jid` and `sender`: the gateway's JIDs (None: the account's own message); `kind` the
    gateway's word for it (text, image, ...); `text` the text or caption ("" for none)."""

    message_id: str
    chat_jid: str
    sender: str | None
    at: datetime
    kind: str
    text: str
    from_me: bool = False


class HistoryUnreadable(ValueError):
    """The gateway's answer is not a history we can read (or the gateway keeps none); the message says why."""


class HistoryCutShort(HistoryUnreadable):
    """Read only in part (too many messages, a page refused midway): `listed` holds what was read."""

    def __init__(self, why: str, listed: list[ListedMessage]) -> None:
        super().__init__(why)
        self.listed = listed
