"""The rejections' bound counts every byte a rejected row writes (issue 37 review): its path and headers too, not only
its body and summary. A forged post with an empty body, an 8 KB request target and the kept headers at their 1 KiB
limit wrote about 12 KB a row while it was counted as 0.5 KB, so a window stored twenty times its bytes."""

from __future__ import annotations

from datetime import UTC, datetime

from tui.webhooks.events import EventRecord
from tui.webhooks.listener import HEADER_VALUE_LIMIT
from tui.webhooks.rejections import ROW_OVERHEAD, WINDOW_BYTES, RejectionBound
from tui.api.signing import Verdict


def forged(number: int) -> EventRecord:
    return EventRecord(
        received_at=datetime(2026, 11, 27, 5, 0, tzinfo=UTC),
        path="/session?" + "q" * 8000 + str(number),
        headers={"content-type": "application/json", "x-hmac-signature": "f" * HEADER_VALUE_LIMIT,
                 "user-agent": "u" * HEADER_VALUE_LIMIT, "x-forwarded-for": "1" * HEADER_VALUE_LIMIT},
        body=b"",
        payload=None,
        kind="unknown",
        summary="rejected: signature invalid",
        verdict=Verdict.INVALID,
        rejected=True,
        reason="signature invalid",
    )


def row_bytes(record: EventRecord) -> int:
    headers = sum(len(name.encode()) + len(value.encode()) for name, value in record.headers.items())
    return len(record.path.encode()) + headers + len(record.body) + len(record.summary.encode()) + ROW_OVERHEAD


def test_a_windows_rows_hold_at_most_its_bytes_path_and_headers_counted() -> None:
    bound = RejectionBound()
    kept = [record for record in map(forged, range(200)) if bound.admit(record, now=0.0)]
    assert kept  # the first ones of a window are stored
    assert sum(map(row_bytes, kept)) <= WINDOW_BYTES
    assert bound.not_kept == 200 - len(kept)  # the others are counted, to be summarised
