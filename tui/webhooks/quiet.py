"""Which event kinds have gone quiet: silent for much longer than their usual gap while other kinds still arrive.

One rule for the doctor's `event-kind-quiet` finding (read from the store) and the alerts' `kind-quiet` (fed event
by event as they are stored), so both call the same silence quiet.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta

QUIET_FACTOR = 10  # a kind is quiet after ten times its usual gap ...
QUIET_MINIMUM = timedelta(minutes=15)  # ... and never before 15 minutes
QUIET_HISTORY = 200  # the newest events read per kind to learn its usual gap


@dataclass(frozen=True, slots=True)
class QuietKind:
    kind: str
    silent: timedelta
    still_arriving: str  # another kind that arrived since, within its own limit

    def words(self) -> str:
        """"Message quiet for 42 min while ReadReceipt still arrives"."""
        return (f"{self.kind} quiet for {int(self.silent.total_seconds() // 60)} min while {self.still_arriving} "
                "still arrives")


def quiet_kinds_among(times_by_kind: Mapping[str, Iterable[datetime]], now: datetime,
                      listening_since: datetime | None = None) -> list[QuietKind]:
    """Each kind silent for more than ten times its usual gap (at least 15 min, learnt from at least three
    arrivals) while another kind arrived since. `times_by_kind`: when each kind arrived (any order; the newest
    `QUIET_HISTORY` are enough). `listening_since`: when the listener that would have stored them started: a
    silence counts from then at the earliest, since while nothing listened no kind could arrive (the app closed
    for 20 minutes made every kind of its last run "quiet for 22 min" as soon as one event came in)."""
    lasts: dict[str, datetime] = {}
    limits: dict[str, timedelta] = {}
    for kind, arrivals in times_by_kind.items():
        times = sorted(arrivals)
        if not times:
            continue
        lasts[kind] = times[-1]
        if len(times) >= 3:
            gap = statistics.median((b - a).total_seconds() for a, b in zip(times, times[1:], strict=False))
            limits[kind] = max(QUIET_MINIMUM, timedelta(seconds=gap * QUIET_FACTOR))
    quiet = []
    for kind, limit in limits.items():
        silent = now - max(lasts[kind], listening_since) if listening_since is not None else now - lasts[kind]
        if silent <= limit:
            continue
        others = [other for other, last in lasts.items() if other != kind and last > lasts[kind] and now - last <= limit]
        if others:
            quiet.append(QuietKind(kind, silent, others[0]))
    return quiet
