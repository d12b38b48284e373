"""A bound on the bytes of webhook bodies held in memory at once.

WuzAPI inlines media as base64 (wuzapi.md §4.3), so one body can be a hundred megabytes. Each request reserves
its declared size before its body is read and gives it back once the event is stored; a request that does not
fit waits (its body stays in the socket, so TCP pushes back on the sender) and, past a deadline, is answered 503
so the sender retries later.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from tui.config import DEFAULT_MAX_BODY

__all__ = ["DEFAULT_MAX_BODY", "BudgetExhausted", "ByteBudget"]



class BudgetExhausted(Exception):
    """The bytes could not be reserved before the deadline."""


class ByteBudget:
    def __init__(self, capacity: int) -> None:
        if capacity < 1:
            raise ValueError("capacity must be at least 1 byte")
        self.capacity = capacity
        self.in_use = 0
        self.peak = 0  # the most ever reserved at once (tests and the bench read it)
        self._released: asyncio.Condition | None = None

    @contextlib.asynccontextmanager
    async def reserve(self, size: int, *, timeout: float) -> AsyncIterator[None]:
        """Hold `size` bytes (at most the capacity) for the block; BudgetExhausted after `timeout` seconds."""
        size = max(0, min(size, self.capacity))
        if self._released is None:
            self._released = asyncio.Condition()
        released = self._released
        async with released:
            try:
                await asyncio.wait_for(released.wait_for(lambda: self.in_use + size <= self.capacity), timeout)
            except TimeoutError:
                raise BudgetExhausted(f"{self.in_use} of {self.capacity} bytes already in flight") from None
            self.in_use += size
            self.peak = max(self.peak, self.in_use)
        try:
            yield
        finally:
            async with released:
                self.in_use -= size
                released.notify_all()
