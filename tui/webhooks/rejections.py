"""A bound on what rejected events may write to the store (issue 37): an attacker's refused posts cannot fill the disk.

Each rejected event (a bad or missing signature, an unknown account's path, a body too large, compressed or
unparseable) is stored as before while its window has room: at most WINDOW_ROWS rows and WINDOW_BYTES bytes every
WINDOW seconds. The first ones of a window are kept (they show what the flood looked like); past the bound the rest
are only counted, per account they came for (or none), and each count is stored once the window ends as one
rejected event, "N more rejected from …", whose payload holds the count (`rejected_more`) and the reasons. So every
rejection stays countable (the rows kept plus the counts), and a 20 s flood writes a few hundred rows whatever its
rate (bench/rejected_flood.py). Accepted events are never bounded here.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime

from tui.webhooks.events import EventRecord
from tui.api.signing import Verdict

WINDOW = 10.0  # seconds
WINDOW_ROWS = 100
WINDOW_BYTES = 512 * 1024  # a row's path, headers, body and summary, and ROW_OVERHEAD for the rest and its indexes
ROW_OVERHEAD = 512
REASONS_SHOWN = 4  # the most frequent reasons named in a summary's line (all of them are in its payload)
KIND = "RejectedMore"


@dataclass
class _Uncounted:
    """The rejections of one account not kept in the current window."""

    count: int = 0
    first_path: str = ""
    first_at: datetime | None = None
    last_at: datetime | None = None
    reasons: Counter[str] = field(default_factory=Counter)
    verdicts: Counter[Verdict] = field(default_factory=Counter)


class RejectionBound:
    """Decides, rejected event by rejected event, whether it is stored or counted (`admit`), and hands over the
    counts of the windows that ended (`summaries`). `now`: the event loop's clock, in seconds."""

    def __init__(self, window: float = WINDOW, rows: int = WINDOW_ROWS, size: int = WINDOW_BYTES) -> None:
        self.window = window
        self.rows = rows
        self.size = size
        self._window_end: float | None = None
        self._rows = 0
        self._bytes = 0
        self._uncounted: dict[str | None, _Uncounted] = {}
        self.not_kept = 0  # rejections counted rather than stored, in all

    def admit(self, record: EventRecord, now: float) -> bool:
        """True: store `record`; False: it is counted, and summarised when its window ends."""
        if self._window_end is None or now >= self._window_end:
            self._window_end, self._rows, self._bytes = now + self.window, 0, 0
        cost = _row_bytes(record)
        if self._rows < self.rows and self._bytes + cost <= self.size:
            self._rows += 1
            self._bytes += cost
            return True
        self.not_kept += 1
        uncounted = self._uncounted.setdefault(record.account, _Uncounted(first_path=record.path[:200]))
        uncounted.count += 1
        uncounted.first_at = uncounted.first_at or record.received_at
        uncounted.last_at = record.received_at
        uncounted.reasons[(record.reason or "rejected")[:120]] += 1
        uncounted.verdicts[record.verdict] += 1
        return False

    @property
    def window_end(self) -> float | None:
        """When the current window ends (the loop's clock); None before the first rejection."""
        return self._window_end

    @property
    def counting(self) -> bool:
        """Whether some rejections wait to be summarised."""
        return bool(self._uncounted)

    def summaries(self) -> list[EventRecord]:
        """One rejected event per account whose rejections were counted, not kept; the counts start again."""
        uncounted, self._uncounted = self._uncounted, {}
        return [_summary(account, counted) for account, counted in uncounted.items()]


def _row_bytes(record: EventRecord) -> int:
    """What storing `record` writes, near enough: its path (a request target may be 8 KB), its kept headers (up to
    1 KiB a value), its body and summary as UTF-8, and ROW_OVERHEAD for the other columns and the indexes."""
    headers = sum(_utf8_size(name) + _utf8_size(value) for name, value in record.headers.items())
    return (_utf8_size(record.path) + headers + len(record.body) + _utf8_size(record.summary)
            + _utf8_size(record.reason or "") + ROW_OVERHEAD)


def _utf8_size(text: str) -> int:
    return len(text) if text.isascii() else len(text.encode("utf-8", "replace"))


def _summary(account: str | None, counted: _Uncounted) -> EventRecord:
    source = f"account {account!r}" if account is not None else "no known account"
    reasons = ", ".join(f"{reason}: {count}" for reason, count in counted.reasons.most_common(REASONS_SHOWN))
    more = len(counted.reasons) - REASONS_SHOWN
    line = f"{counted.count} more rejected from {source} ({reasons}{f', {more} other reasons' if more > 0 else ''})"
    first, last = counted.first_at or datetime.now(UTC), counted.last_at or datetime.now(UTC)
    payload = {
        "rejected_more": counted.count,
        "from": account,
        "first_path": counted.first_path,
        "first": first.isoformat(),
        "last": last.isoformat(),
        "reasons": dict(counted.reasons),
    }
    return EventRecord(
        received_at=last,
        path=counted.first_path,
        headers={},
        body=b"",
        payload=payload,
        kind=KIND,
        summary=line,
        verdict=counted.verdicts.most_common(1)[0][0] if counted.verdicts else Verdict.INVALID,
        rejected=True,
        reason="counted, not kept one by one (a flood of refused posts)",
        account=account,
    )


__all__ = ["KIND", "RejectionBound", "WINDOW", "WINDOW_BYTES", "WINDOW_ROWS"]
