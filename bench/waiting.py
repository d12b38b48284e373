"""What the app benches share: waiting, in the app's own loop, for a condition the screen reaches."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable


async def until(condition: Callable[[], object], what: str, timeout: float = 60.0) -> None:
    """Poll every millisecond (a bench measures the wait, so it must not oversleep); TimeoutError names `what`."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError(what)
        await asyncio.sleep(0.001)
