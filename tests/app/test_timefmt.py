"""Display formatting lives in the UI (tui.ui.widgets.timefmt): deterministic runs show fixed times and durations, so
snapshots do not change from run to run; other runs show local times."""

from __future__ import annotations

from datetime import UTC, datetime
from types import SimpleNamespace

from tui.core.runtime import DETERMINISTIC_EPOCH
from tui.ui.widgets.timefmt import duration_text, event_time_text, inbox_time_text, moment_text


def test_deterministic_runs_show_fixed_times_and_durations():
    event = SimpleNamespace(id=75, received_at=datetime(2026, 11, 27, 3, 4, 5, tzinfo=UTC))
    assert event_time_text(event, deterministic=True) == "12:01:15"  # type: ignore[arg-type]
    assert event_time_text(event, deterministic=True, with_date=True) == "2025-01-01 12:01:15"  # type: ignore[arg-type]
    assert duration_text(4.4, deterministic=True) == "n ms" and duration_text(4.4) == "4 ms"
    assert moment_text(datetime.now(UTC), deterministic=True) == "12:00:00"
    seeded = int(datetime(2025, 1, 1, 9, 30, tzinfo=UTC).timestamp() * 1_000_000)
    during_the_run = int(DETERMINISTIC_EPOCH.timestamp() * 1_000_000) + 1
    assert inbox_time_text(seeded, deterministic=True) == "09:30"
    assert inbox_time_text(during_the_run, deterministic=True) == "12:00"
    assert inbox_time_text(0, deterministic=True) == inbox_time_text(0) == ""


def test_other_runs_show_local_time():
    moment = datetime(2026, 11, 27, 3, 4, 5, tzinfo=UTC)
    event = SimpleNamespace(id=1, received_at=moment)
    assert event_time_text(event) == moment.astimezone().strftime("%H:%M:%S")  # type: ignore[arg-type]
    assert moment_text(moment) == moment.astimezone().strftime("%H:%M:%S")
    now_us = int(datetime.now(UTC).timestamp() * 1_000_000)
    assert inbox_time_text(now_us) == datetime.fromtimestamp(now_us / 1_000_000, UTC).astimezone().strftime("%H:%M")
