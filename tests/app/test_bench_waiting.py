"""bench/waiting.py's workers_done (issue 21 item 13): bench/inbox.py crashed in 2 runs of 3 with WorkerCancelled from
Textual's `workers.wait_for_complete()`, which raises as soon as a worker it awaits ended cancelled, the normal
end of an exclusive worker that a newer one of its group replaced. The benches wait with workers_done instead."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest
from textual.app import App
from textual.worker import WorkerCancelled

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from waiting import workers_done  # noqa: E402


class Reads(App[None]):
    async def read(self) -> None:
        await asyncio.sleep(0.05)

    def read_twice(self) -> list:
        # a second read replaces the first, as the app's exclusive page loads, searches and status reads do
        return [self.run_worker(self.read, group="reads", exclusive=True) for _ in range(2)]


async def test_wait_for_complete_raises_for_a_replaced_worker_and_workers_done_does_not():
    app = Reads()
    async with app.run_test():
        app.read_twice()
        with pytest.raises(WorkerCancelled):
            await app.workers.wait_for_complete()
        replaced, newer = app.read_twice()
        await asyncio.wait_for(workers_done(app, timeout=10), 20)
        assert replaced.is_cancelled and newer.state.name == "SUCCESS"
