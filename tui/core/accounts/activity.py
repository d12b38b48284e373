"""What one account did in this run (issue 26's Fleet board): its events per kind and per minute, its sends today.
Fed by the account's own event subscription and by the runtime when a send is kept (`Account.activity`)."""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from tui.webhooks.events import StoredEvent

Clock = Callable[[], datetime]


def _utc_now() -> datetime:
    return datetime.now(UTC)


@dataclass
class AccountActivity:
    """What one account did in this run: its events (per kind, the last one's time; per minute) and its sends."""

    clock: Clock = _utc_now
    last_by_kind: dict[str, datetime] = field(default_factory=dict)
    sends_by_day: dict[date, int] = field(default_factory=dict)
    _recent: deque[float] = field(default_factory=lambda: deque(maxlen=100_000))
    received: int = 0  # its events in this run (the header's count when several accounts share the listener)

    def record_event(self, event: StoredEvent) -> None:
        if event.duplicate_of is not None or event.rejected:
            return  # counted once; a refused post is not the account's traffic
        self.received += 1
        self.last_by_kind[event.kind] = event.received_at
        self._recent.append(time.monotonic())

    def record_send(self) -> None:
        today = self.clock().date()
        self.sends_by_day[today] = self.sends_by_day.get(today, 0) + 1

    def per_minute(self, now: float | None = None) -> int:
        now = time.monotonic() if now is None else now
        while self._recent and self._recent[0] < now - 60:
            self._recent.popleft()
        return len(self._recent)

    @property
    def sends_today(self) -> int:
        return self.sends_by_day.get(self.clock().date(), 0)

    @property
    def last_event_at(self) -> datetime | None:
        return max(self.last_by_kind.values(), default=None)
