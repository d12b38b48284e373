"""The listener's runs, kept in the event store itself: a start after a stop (or after a run that ended without
saying so: a crash, a kill -9) is a gap in what the store holds."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from datetime import UTC, datetime, tzinfo

RUNS_SCHEMA = """CREATE TABLE IF NOT EXISTS listener_runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    started_us INTEGER NOT NULL,
    stopped_us INTEGER                  -- NULL: running, or it ended without saying so
)"""


@dataclass(frozen=True)
class Gap:
    """When the listener was not listening."""

    start: datetime
    end: datetime

    def words(self, zone: tzinfo | None = None) -> str:
        """"03:10–03:42" in `zone` (the machine's when None); the dates too when it spans midnight."""
        start, end = self.start.astimezone(zone), self.end.astimezone(zone)
        shape = "%H:%M" if start.date() == end.date() else "%Y-%m-%d %H:%M"
        return f"{start.strftime(shape)}–{end.strftime(shape)}"


def _at(micros: int) -> datetime:
    return datetime.fromtimestamp(micros / 1_000_000, UTC)


def listener_started(connection: sqlite3.Connection, now_us: int) -> tuple[int, Gap | None]:
    """Record a run starting now: its id, and the gap since the run before ended (None for a first run). A run with no
    stop recorded ended at the newest event stored during it (or its start). Inside the store's write."""
    connection.execute(RUNS_SCHEMA)
    previous = connection.execute(
        "SELECT started_us, stopped_us FROM listener_runs ORDER BY id DESC LIMIT 1").fetchone()
    gap = None
    if previous is not None:
        started_us, stopped_us = previous
        if stopped_us is None:
            newest = connection.execute("SELECT max(received_us) FROM events WHERE received_us >= ?",
                                        (started_us,)).fetchone()[0]
            stopped_us = max(started_us, newest or 0)
        if now_us > stopped_us:
            gap = Gap(_at(stopped_us), _at(now_us))
    run = connection.execute("INSERT INTO listener_runs(started_us) VALUES (?)", (now_us,)).lastrowid
    assert run is not None
    return run, gap


def listener_stopped(connection: sqlite3.Connection, run: int, now_us: int) -> None:
    connection.execute(RUNS_SCHEMA)
    connection.execute("UPDATE listener_runs SET stopped_us = ? WHERE id = ?", (now_us, run))


RUN_START_MARGIN_US = 1_000_000
"""A listener answers from the moment it binds and records its run just after: events up to this much older than
the run's start may be its own."""


def newest_before_run(connection: sqlite3.Connection) -> int:
    """The id of the newest event stored before the newest run began (0: none), less RUN_START_MARGIN_US: a viewer
    that starts following a store its listener just began writing (tui.core.feed.attached) reads on from there, so
    the events that listener stored before the viewer found it are not missed. A store without runs: its newest."""
    try:
        started = connection.execute("SELECT max(started_us) FROM listener_runs").fetchone()[0]
    except sqlite3.OperationalError:  # no runs table yet
        started = None
    if started is None:
        newest = connection.execute("SELECT max(id) FROM events").fetchone()[0]
    else:
        newest = connection.execute("SELECT max(id) FROM events WHERE received_us < ?",
                                    (started - RUN_START_MARGIN_US,)).fetchone()[0]
    return int(newest or 0)
