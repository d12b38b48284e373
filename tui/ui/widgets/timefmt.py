"""Times, durations and forward attempts as the screens show them (local time). With `deterministic` (tests and
snapshots) what changes from run to run reads as fixed text: an event's time derives from its id, a moment of
the run is 12:00:00, a duration is "n ms", and the inbox shows the seeded history's own UTC times.

    event_time_text(event, deterministic=runtime.deterministic)        # "14:03:07"
    attempt_text(display, attempt)                                     # "attempt 1 → …: HTTP 200 (delivered, 4 ms)"
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from tui.core.runtime import DETERMINISTIC_EPOCH

if TYPE_CHECKING:  # pragma: no cover - imports for type checkers only
    from tui.core.display import Display
    from tui.core.runtime import ForwardAttempt, StoredEvent


def event_time_text(event: StoredEvent, *, deterministic: bool = False, with_date: bool = False) -> str:
    """The one place event times are formatted (local time); deterministic mode derives them from the id."""
    moment = DETERMINISTIC_EPOCH + timedelta(seconds=event.id) if deterministic else event.received_at.astimezone()
    return moment.strftime("%Y-%m-%d %H:%M:%S" if with_date else "%H:%M:%S")


def duration_text(duration_ms: float, *, deterministic: bool = False) -> str:
    return "n ms" if deterministic else f"{duration_ms:.0f} ms"


def moment_text(moment: datetime, *, deterministic: bool = False) -> str:
    if deterministic:
        return "12:00:00"
    return moment.astimezone().strftime("%H:%M:%S")


def inbox_time_text(at_us: int, *, deterministic: bool = False) -> str:
    """A message's time in the inbox (local); deterministic mode shows the seeded history's own UTC times and a
    fixed time for everything that happened during the run; nothing for 0 (a chat the gateway lists without saying
    when its last message was)."""
    if at_us <= 0:
        return ""
    moment = datetime.fromtimestamp(at_us / 1_000_000, UTC)
    if deterministic:
        return moment.strftime("%H:%M") if moment < DETERMINISTIC_EPOCH else "12:00"
    local = moment.astimezone()
    if local.date() == datetime.now().astimezone().date():
        return local.strftime("%H:%M")
    return local.strftime("%d %b")


def attempt_text(display: Display, attempt: ForwardAttempt) -> str:
    """One line about a forward attempt (its duration hidden, and random ports named, in deterministic mode)."""
    from tui.core.runtime import describe_forward_attempt

    duration = duration_text(attempt.duration_ms, deterministic=display.deterministic)
    return display.scrub(describe_forward_attempt(attempt, duration=duration))
