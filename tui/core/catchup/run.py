"""One run of a listener in the store's records, written off the start's path: the start only notes the time (no
I/O before the first screen); the record, and the gap since the run before, are written by the catch-up's background
task; the stop records the end."""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING

from tui.core.catchup.runs import Gap, listener_started, listener_stopped

if TYPE_CHECKING:
    from tui.webhooks.store import EventStore


def now_us() -> int:
    return time.time_ns() // 1000


class ListenerRun:
    def __init__(self) -> None:
        self.started_us: int | None = None
        self.run: int | None = None

    def began(self) -> None:
        """The listener listens from now (a note in memory)."""
        self.started_us = now_us()

    async def record(self, store: EventStore) -> Gap | None:
        """Write the run's start; the gap since the run before ended (None: a first run, or not listening)."""
        started = self.started_us
        if started is None or self.run is not None:
            return None
        self.run, gap = await asyncio.to_thread(store.write, lambda connection: listener_started(connection, started))
        return gap

    async def end(self, store: EventStore) -> None:
        """Record the run's end (nothing when its start was never written: the next run reads its newest event)."""
        run, self.run, self.started_us = self.run, None, None
        if run is not None:
            stopped = now_us()
            await asyncio.to_thread(store.write, lambda connection: listener_stopped(connection, run, stopped))
