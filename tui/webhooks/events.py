"""One received webhook call, before and after it is stored, and its JSON form for scripts and export."""

from __future__ import annotations

import base64
import dataclasses
import json
from datetime import datetime
from typing import Any

from tui.webhooks.classify import classify
from tui.webhooks.signing import Verdict

__all__ = ["EventRecord", "StoredEvent", "classify", "HEADERS_OF_INTEREST"]

# Only these are kept: enough to explain a verdict or a rejection, without storing cookies or auth headers.
HEADERS_OF_INTEREST = (
    "content-type",
    "content-length",
    "transfer-encoding",
    "user-agent",
    "x-hmac-signature",
    "x-forwarded-for",
    "x-real-ip",
    "host",
)


@dataclasses.dataclass(frozen=True, slots=True)
class EventRecord:
    """What the listener hands to the store; the store adds the id."""

    received_at: datetime
    path: str
    headers: dict[str, str]
    body: bytes
    payload: Any | None
    kind: str
    summary: str
    verdict: Verdict
    rejected: bool = False
    reason: str | None = None
    message_ids: tuple[str, ...] = ()
    # True when `payload` is exactly what the body's JSON text parses to (the listener knows it from parsing):
    # the store then keeps no second copy of it and does not parse the body again to find out.
    payload_is_body: bool = False


@dataclasses.dataclass(frozen=True, slots=True)
class StoredEvent:
    id: int
    received_at: datetime
    path: str
    headers: dict[str, str]
    body: bytes
    payload: Any | None
    kind: str
    summary: str
    verdict: Verdict
    rejected: bool
    reason: str | None
    message_ids: tuple[str, ...]

    @property
    def authentic(self) -> bool:
        """True only for a valid signature on an accepted event; nothing else may be shown as authentic."""
        return self.verdict is Verdict.VALID and not self.rejected

    def to_json(self) -> dict[str, Any]:
        """The event as a JSON-ready dict: `--print-json` lines and exports use this one shape."""
        try:
            body_text: str | None = self.body.decode("utf-8")
        except UnicodeDecodeError:
            body_text = None
        document: dict[str, Any] = {
            "id": self.id,
            "received_at": self.received_at.isoformat(),
            "path": self.path,
            "kind": self.kind,
            "summary": self.summary,
            "verdict": str(self.verdict),
            "rejected": self.rejected,
            "reason": self.reason,
            "message_ids": list(self.message_ids),
            "headers": self.headers,
            "payload": self.payload,
            "body": body_text,
        }
        if body_text is None:
            # Binary garbage is kept exactly; a lossy text form would hide what was actually sent.
            document["body_base64"] = base64.b64encode(self.body).decode("ascii")
        return document

    def to_json_line(self) -> str:
        """`to_json()` as one line of JSON; non-ASCII text stays readable unless it cannot be encoded."""
        document = self.to_json()
        line = json.dumps(document, ensure_ascii=False)
        try:
            line.encode("utf-8")
        except UnicodeEncodeError:  # lone surrogates from `\ud800` escapes in the payload
            line = json.dumps(document)
        return line


# Once, not per stored event; a hint only the store reads (payload_is_body) is not part of the stored event.
_RECORD_FIELDS = tuple(
    field.name
    for field in dataclasses.fields(EventRecord)
    if field.name in {stored_field.name for stored_field in dataclasses.fields(StoredEvent)}
)


def stored(record: EventRecord, event_id: int) -> StoredEvent:
    return StoredEvent(event_id, *(getattr(record, name) for name in _RECORD_FIELDS))
