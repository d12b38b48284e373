"""Per-instance token bucket: `rate` requests per second on average, bursts up to `max(1, rate)`."""

from __future__ import annotations

import math
import time
from collections.abc import Callable


class TokenBucket:
    def __init__(self, rate: float, *, monotonic: Callable[[], float] = time.monotonic) -> None:
        if rate <= 0:
            raise ValueError("rate must be positive")
        self.rate = rate
        self.capacity = max(1.0, rate)
        self._tokens = self.capacity
        self._monotonic = monotonic
        self._updated = monotonic()

    def take(self) -> int:
        """0 when the request may proceed (a token is spent), else whole seconds to wait (at least 1)."""
        now = self._monotonic()
        self._tokens = min(self.capacity, self._tokens + (now - self._updated) * self.rate)
        self._updated = now
        if self._tokens >= 1.0:
            self._tokens -= 1.0
            return 0
        return max(1, math.ceil((1.0 - self._tokens) / self.rate))


class RateLimiter:
    """One bucket per instance; the keys are authenticated instance ids only, so memory stays bounded."""

    def __init__(self, rate: float | None, *, monotonic: Callable[[], float] = time.monotonic) -> None:
        self.rate = rate
        self._monotonic = monotonic
        self._buckets: dict[str, TokenBucket] = {}

    def retry_after(self, instance_id: str) -> int:
        if self.rate is None:
            return 0
        bucket = self._buckets.get(instance_id)
        if bucket is None:
            bucket = self._buckets[instance_id] = TokenBucket(self.rate, monotonic=self._monotonic)
        return bucket.take()
