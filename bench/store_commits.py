"""The store alone under the listener bench's events: how long each COMMIT takes on the writer thread.

    uv run python bench/store_commits.py [--events 15000] [--appenders 16] [--runs 2]

Every answer waits for the COMMIT of its batch, so the tail of COMMIT times is the tail of the listener's answers
that the store causes. Each run stores the bench's ~1 KB signed Message events from 16 appenders (each appends
its next event once the previous one is acknowledged, like the bench's 16 connections), twice per round: once
as the store works ("checkpointer": WAL checkpoints on their own thread), once with SQLite's auto-checkpoint put
back on the writer's connection (every 1,000 WAL pages, inside the COMMIT that crosses them: how it was before
issue 13's change). The process is pinned to CPU 0, as the bench's server is. Bounded: --events per run.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sqlite3
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from listener import make_requests  # noqa: E402  (the listener bench's events)

from tui.webhooks import store as store_module  # noqa: E402
from tui.webhooks.events import EventRecord  # noqa: E402
from tui.webhooks.listener import _judge  # noqa: E402


class TimedCommits:
    """The writer's connection, with the wall time of each COMMIT statement noted."""

    def __init__(self, connection: sqlite3.Connection, times: list[float]) -> None:
        self._connection = connection
        self._times = times

    def execute(self, sql: str, *args: Any) -> sqlite3.Cursor:
        if sql != "COMMIT":
            return self._connection.execute(sql, *args)
        started = time.perf_counter()
        try:
            return self._connection.execute(sql, *args)
        finally:
            self._times.append(time.perf_counter() - started)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._connection, name)


def records() -> list[EventRecord]:
    made = []
    for request in make_requests(1000):
        body = request.split(b"\r\n\r\n", 1)[1]
        judged = _judge(None, body, None, "application/json")
        made.append(
            EventRecord(
                received_at=datetime.now(UTC), path="/webhook", headers={}, body=body, payload=judged.payload,
                kind=judged.kind, summary=judged.summary, verdict=judged.verdict, message_ids=judged.message_ids,
                payload_is_body=judged.payload_is_body,
            )
        )
    return made


async def run(events: list[EventRecord], count: int, appenders: int, auto_checkpoint: bool, scratch: Path) -> list[float]:
    times: list[float] = []
    write_forever = store_module.EventStore._write_forever
    store_module.EventStore._write_forever = lambda self, connection: write_forever(  # type: ignore[method-assign]
        self, TimedCommits(connection, times)  # type: ignore[arg-type]
    )
    try:
        with store_module.EventStore(scratch / f"commits-{time.monotonic_ns()}.sqlite3") as store:
            if auto_checkpoint:
                store.on_writer(lambda connection: connection.execute("PRAGMA wal_autocheckpoint=1000"))
            sent = 0

            async def appender() -> None:
                nonlocal sent
                while sent < count:
                    sent += 1
                    await store.append(events[sent % len(events)])

            await asyncio.gather(*(appender() for _ in range(appenders)))
    finally:
        store_module.EventStore._write_forever = write_forever  # type: ignore[method-assign]
    return sorted(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--events", type=int, default=15_000)
    parser.add_argument("--appenders", type=int, default=16)
    parser.add_argument("--runs", type=int, default=2, help="rounds; each runs both variants, alternating")
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity") and (os.cpu_count() or 1) >= 2:
        os.sched_setaffinity(0, {0})
    events = records()
    print(f"load average before: {os.getloadavg()[0]:.1f}")
    print("| variant | commits | COMMIT p50 | p90 | p99 | max | over 4 ms | over 8 ms |")
    print("|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory(prefix="bench-commits-") as scratch:
        for _round in range(args.runs):
            for label, auto in (("checkpointer", False), ("auto-checkpoint in COMMIT", True)):
                times = asyncio.run(run(events, args.events, args.appenders, auto, Path(scratch)))
                n = len(times)
                print(
                    f"| {label} | {n} | {statistics.median(times) * 1e3:.2f} ms | {times[int(n * 0.9)] * 1e3:.2f} ms "
                    f"| {times[int(n * 0.99)] * 1e3:.2f} ms | {times[-1] * 1e3:.1f} ms "
                    f"| {sum(t > 0.004 for t in times)} | {sum(t > 0.008 for t in times)} |",
                    flush=True,
                )
    print(f"load average after: {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
