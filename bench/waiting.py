"""What the app benches share: waiting, in the app's own loop, for a condition the screen reaches."""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from textual.app import App


async def until(condition: Callable[[], object], what: str, timeout: float = 60.0) -> None:
    """Poll every millisecond (a bench measures the wait, so it must not oversleep); TimeoutError names `what`."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError(what)
        await asyncio.sleep(0.001)


async def workers_done(app: App[object], timeout: float = 60.0) -> None:
    """Until none of the app's workers runs. Not Textual's `workers.wait_for_complete()`: that raises
    WorkerCancelled as soon as one of the workers it awaits ended cancelled, which is how an exclusive worker ends
    when a newer one of its group replaces it (a second search, status read or page load: the app's normal way
    of dropping a stale read). bench/inbox.py crashed on it in 2 runs of 3 on a quiet machine, where such a
    replacement happened to fall inside a wait. A cancelled worker counts as ended; each is named on stderr so
    a run says which one it was."""
    from textual.worker import WorkerState

    workers = app.workers
    watched = list(workers)
    # An ended worker leaves the manager (a worker cancelled before it ran never leaves the RUNNING state itself).
    await until(lambda: not any(worker.state in (WorkerState.PENDING, WorkerState.RUNNING) for worker in workers),
                "the app's workers", timeout)
    for worker in watched:
        if worker.is_cancelled:
            print(f"(a worker ended cancelled, replaced or stopped by the app: {worker.group}: "
                  f"{worker.description[:80]})", file=sys.stderr)
