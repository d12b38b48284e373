"""The flapping fault: a connected family's link goes down and up again `times` times, `interval` seconds apart,
each change told to its webhook as the gateway tells it (a network loss: WuzAPI `Disconnected`, Z-API
`DisconnectedCallback`; back: `Connected`, `ConnectedCallback`), as a gateway whose phone keeps losing the
network would (Evolution API #693: one restart, 28 webhooks flapping)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from tui.api.operations import Family
from tui.sandbox.pairing import DropReason, Link, LinkEvent

DEFAULT_TIMES = 6
DEFAULT_INTERVAL = 1.0
MAX_TIMES = 1000
MAX_INTERVAL = 600.0


class FlapRefused(ValueError):
    """A flap request the sandbox cannot run; `status` is the answer's HTTP status."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class Flap:
    family: Family
    times: int
    interval: float

    @classmethod
    def from_body(cls, body: dict[str, Any]) -> Flap:
        try:
            family = Family(str(body.get("family")))
        except ValueError:
            raise FlapRefused("family: must be instance or session") from None
        times = body.get("times", DEFAULT_TIMES)
        if isinstance(times, bool) or not isinstance(times, int) or not 1 <= times <= MAX_TIMES:
            raise FlapRefused(f"times: the number of changes, a whole number from 1 to {MAX_TIMES}")
        interval = body.get("interval", DEFAULT_INTERVAL)
        if isinstance(interval, bool) or not isinstance(interval, int | float) or not 0 <= interval <= MAX_INTERVAL:
            raise FlapRefused(f"interval: seconds between two changes, from 0 to {MAX_INTERVAL:g}")
        return cls(family, times, float(interval))

    def describe(self) -> dict[str, Any]:
        return {"family": self.family.value, "times": self.times, "interval": self.interval}


async def run_flap(flap: Flap, link: Link, *, clock: Callable[[], datetime],
                   announce: Callable[[Family, LinkEvent], None],
                   sleep: Callable[[float], Awaitable[None]] = asyncio.sleep) -> None:
    """Down, up, down, ... `flap.times` changes; an even number ends connected, as it began."""
    for change in range(flap.times):
        if change:
            await sleep(flap.interval)
        if change % 2 == 0:
            link.drop(DropReason.NETWORK, clock(), keep_client=True)
            announce(flap.family, LinkEvent.NETWORK_LOST)
        else:
            link.reconnect(clock())
            announce(flap.family, LinkEvent.CONNECTED)
