"""One received webhook call, before and after it is stored, and its JSON form for scripts and export."""

from __future__ import annotations

import base64
import dataclasses
import json
import math
import re
from datetime import datetime
from typing import Any

from tui.webhooks.classify import classify
from tui.webhooks.spliced import MediaSpan
from tui.api.signing import Verdict

__all__ = [
    "EventRecord", "StoredEvent", "classify", "HEADERS_OF_INTEREST", "strict_json", "duplicate_marker", "terminal_line",
]

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
    # The body's size as received when `body` holds only its first bytes (a big rejected event); None: whole.
    cut_from: int | None = None
    # The profile the event came for: `/a/<profile>/...`, or the old paths' single account; None when none is known.
    account: str | None = None
    # Where the body's inline file sits, kept once in the media folder: the store keeps the body without it
    # (tui.webhooks.spliced) and rebuilds the exact bytes on reading. None: the body is stored whole.
    media: MediaSpan | None = None


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
    # The id of the first event with the same fingerprint (the same body bytes, or the same message ids, kind and
    # summary): a delivery received again (a gateway retry, a replay). Stored and shown, counted once.
    duplicate_of: int | None = None
    # The body's size as received when `body` holds only its first bytes: a rejected event keeps no more than
    # that (listener.REJECTED_BODY_KEPT), so a flood of big forged posts cannot fill the disk. None: the body is whole.
    cut_from: int | None = None
    # The profile the event came for (one listener serves several accounts); None when none is known (an event
    # stored before events carried their account, an unknown `/a/<name>/`, or the old paths with several open).
    account: str | None = None

    @property
    def body_cut(self) -> bool:
        return self.cut_from is not None

    def cut_note(self) -> str | None:
        """`body cut: the first 4096 of 5242880 bytes kept (...)` for a cut body, None for a whole one."""
        if self.cut_from is None:
            return None
        return (f"body cut: the first {len(self.body)} of {self.cut_from} bytes kept "
                "(a rejected event keeps no more; it cannot be replayed)")

    def replay_refusal(self) -> str | None:
        """Why this event cannot be sent again as it came: its body cut, or none kept (a rejected event the listener
        did not read, e.g. one for an account it does not serve); None when it can be."""
        if self.cut_from is not None:
            return self.cut_note()
        if not self.body:
            return (f"it was stored without its body ({self.reason or 'rejected'}), so there is nothing to send "
                    "again")
        return None

    def body_text(self) -> str | None:
        """The body as UTF-8 text, None when it is not text. A cut body may end inside a character: that
        character is left out, not taken for binary data."""
        try:
            return self.body.decode("utf-8")
        except UnicodeDecodeError as error:
            if self.cut_from is not None and error.reason == "unexpected end of data":
                return self.body[: error.start].decode("utf-8", "replace")
            return None

    @property
    def authentic(self) -> bool:
        """True only for a valid signature on an accepted event; nothing else may be shown as authentic."""
        return self.verdict is Verdict.VALID and not self.rejected

    def to_json(self) -> dict[str, Any]:
        """The event as a JSON-ready dict: `--print-json` lines and exports use this one shape."""
        body_text = self.body_text()
        document: dict[str, Any] = {
            "id": self.id,
            "account": self.account,
            "received_at": self.received_at.isoformat(),
            "path": self.path,
            "kind": self.kind,
            "summary": self.summary,
            "verdict": str(self.verdict),
            "rejected": self.rejected,
            "reason": self.reason,
            "message_ids": list(self.message_ids),
            "duplicate_of": self.duplicate_of,
            "headers": self.headers,
            "payload": self.payload,
            "body": body_text,
            "body_cut": self.cut_from is not None,  # only the first bytes are in `body` (a big rejected event)
            "body_size": self.cut_from if self.cut_from is not None else len(self.body),  # as received
        }
        if body_text is None:
            # Binary garbage is kept exactly; a lossy text form would hide what was actually sent.
            document["body_base64"] = base64.b64encode(self.body).decode("ascii")
        return document

    def to_json_line(self) -> str:
        """`to_json()` as one line of strict JSON (see `strict_json`); non-ASCII text stays readable unless it
        cannot be encoded."""
        return strict_json(self.to_json())


def duplicate_marker(event: StoredEvent) -> str:
    """"duplicate of #N · " for a delivery received again (a gateway retry, a replay): shown, counted once."""
    return f"duplicate of #{event.duplicate_of} · " if event.duplicate_of is not None else ""


REJECTED = "rejected"
KIND_WIDTH, VERDICT_WIDTH = 22, 9


def verdict_word(event: StoredEvent) -> str:
    """"rejected" for a refused event (whatever its signature's verdict), else the verdict."""
    return REJECTED if event.rejected else str(event.verdict)


def terminal_line(event: StoredEvent) -> str:
    """Kind, verdict and summary in columns, for a person at a terminal (`events list`, `listen`): duplicates
    marked, a rejection's reason named. What a sender wrote (kind, summary) is made harmless: a control character
    (an escape sequence would recolour or rewrite the terminal) shows as "�"."""
    summary = event.summary
    if event.rejected and event.reason and event.reason not in summary:
        summary = f"{summary} — {event.reason}"
    line = f"{event.kind:<{KIND_WIDTH}} {verdict_word(event):<{VERDICT_WIDTH}} {duplicate_marker(event)}{summary}"
    return line if line.isprintable() else "".join(c if c.isprintable() else "\ufffd" for c in line)


def strict_json(document: Any, *, indent: int | None = None) -> str:
    """JSON every strict reader accepts, as UTF-8: a body may carry NaN or Infinity (Python's json reads them), which
    are not JSON, so a non-finite number is written as the string "NaN", "Infinity" or "-Infinity"; a lone
    surrogate becomes U+FFFD."""
    try:
        text = json.dumps(document, ensure_ascii=False, allow_nan=False, indent=indent)
    except ValueError:
        document = _finite(document)
        text = json.dumps(document, ensure_ascii=False, allow_nan=False, indent=indent)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        # A lone surrogate (a `\ud800` escape in a body's JSON) has no UTF-8 form, and strict readers (jq) refuse
        # its `\ud800` escape too: it becomes U+FFFD, as in any UTF-8 decoder.
        text = _LONE_SURROGATE.sub("\ufffd", text)
    return text


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _finite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(item) for item in value]
    return value


# Once, not per stored event; a hint only the store reads (payload_is_body) is not part of the stored event.
_RECORD_FIELDS = tuple(
    field.name
    for field in dataclasses.fields(EventRecord)
    if field.name in {stored_field.name for stored_field in dataclasses.fields(StoredEvent)}
)


def stored(record: EventRecord, event_id: int, duplicate_of: int | None = None) -> StoredEvent:
    # Spelled out (once per stored event, on the store's writer thread); test_events checks it copies every field.
    return StoredEvent(
        event_id, record.received_at, record.path, record.headers, record.body, record.payload, record.kind,
        record.summary, record.verdict, record.rejected, record.reason, record.message_ids, duplicate_of,
        record.cut_from, record.account,
    )
