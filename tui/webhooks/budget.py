"""A bound on the bytes of webhook bodies held in memory at once.

WuzAPI inlines media as base64 (docs/gateways/wuzapi.md §4.3), so one body can be a hundred megabytes. Two kinds of
request:

- On a *proven* connection (one that already carried a validly signed event), a request reserves its declared
  size (max_body when chunked) from `capacity` before its body is read and gives it back once the event is
  stored; a request that does not fit waits (its body stays in the socket, so TCP pushes back on the sender) and,
  past a deadline, is answered 503 so the sender retries later. That is one comparison and two additions.
- On an *unproven* connection nothing is reserved up front: a declared size costs the sender nothing, so it must
  buy nothing. Its body's bytes are counted as they arrive (`arrived`/`left`), against `unproven_capacity`, a
  quarter of `capacity` beside it (the whole of it when the listener has no key: then nothing can be proven).
  The server (connections.py) keeps that share by cutting the longest-stalled unproven bodies still arriving;
  a body arriving is never cut for the share, so one unproven body may grow past the share, up to the body limit,
  while every other one is cut as more of it arrives. Unproven bodies hold at most the larger of the share and one
  body limit (plus one socket read per connection), whatever their senders declare, and never take a proven
  sender's room.
"""

from __future__ import annotations

import asyncio

from tui.local.config import DEFAULT_MAX_BODY

__all__ = ["DEFAULT_MAX_BODY", "UNPROVEN_SHARE", "BudgetExhausted", "ByteBudget"]


class BudgetExhausted(Exception):
    """The bytes could not be reserved before the deadline."""


UNPROVEN_SHARE = 4  # unproven bodies together: at most capacity // UNPROVEN_SHARE, as their bytes arrive


class ByteBudget:
    def __init__(self, capacity: int, *, keyed: bool = True) -> None:
        if capacity < 1:
            raise ValueError("capacity must be at least 1 byte")
        self.capacity = capacity
        self.in_use = 0
        self.peak = 0  # the most ever reserved at once (tests and the bench read it)
        self._waiters: list[asyncio.Future[None]] = []
        self.unproven_capacity = capacity
        self.unproven_in_use = 0
        self.unproven_peak = 0
        self.set_keyed(keyed)

    def set_keyed(self, keyed: bool) -> None:
        """With a key, unproven bodies get a quarter of the capacity; without one, nothing can be proven, so
        every body is unproven and the share is the whole capacity."""
        self.unproven_capacity = max(1, self.capacity // UNPROVEN_SHARE) if keyed else self.capacity

    def arrived(self, size: int) -> bool:
        """`size` more bytes of an unproven body have arrived; True when unproven bodies are now over their share."""
        self.unproven_in_use += size
        if self.unproven_in_use > self.unproven_peak:
            self.unproven_peak = self.unproven_in_use
        return self.unproven_in_use > self.unproven_capacity

    def left(self, size: int) -> None:
        """`size` bytes of unproven bodies are no longer held (stored, answered, or cut)."""
        self.unproven_in_use -= size

    @property
    def unproven_over(self) -> bool:
        return self.unproven_in_use > self.unproven_capacity

    def reserve(self, size: int, *, timeout: float) -> _Reservation:
        """Hold `size` bytes (at most the capacity) for an `async with` block; BudgetExhausted after `timeout` s.

        A plain object rather than an async generator: every webhook passes through here, and when the bytes fit
        (nearly always) entering and leaving cost two additions and no task, lock or timer.
        """
        return _Reservation(self, max(0, min(size, self.capacity)), timeout)

    async def _take(self, size: int, timeout: float) -> None:
        if self.in_use + size > self.capacity:
            await self._wait_for_room(size, timeout)
        self.in_use += size
        if self.in_use > self.peak:
            self.peak = self.in_use

    async def _wait_for_room(self, size: int, timeout: float) -> None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while self.in_use + size > self.capacity:
            waiter: asyncio.Future[None] = loop.create_future()
            self._waiters.append(waiter)
            try:
                async with asyncio.timeout_at(deadline):
                    await waiter
            except TimeoutError:
                raise BudgetExhausted(f"{self.in_use} of {self.capacity} bytes already in flight") from None
            finally:
                if waiter in self._waiters:
                    self._waiters.remove(waiter)

    def _give_back(self, size: int) -> None:
        self.in_use -= size
        if self._waiters:
            waiters, self._waiters = self._waiters, []
            for waiter in waiters:  # each one checks again whether its size fits now
                if not waiter.done():
                    waiter.set_result(None)


class _Reservation:
    __slots__ = ("_budget", "_size", "_timeout")

    def __init__(self, budget: ByteBudget, size: int, timeout: float) -> None:
        self._budget = budget
        self._size = size
        self._timeout = timeout

    async def __aenter__(self) -> None:
        await self._budget._take(self._size, self._timeout)

    async def __aexit__(self, *exc_info: object) -> None:
        self._budget._give_back(self._size)
