"""The reconnect policy (issue 35, item 3): after a disconnect, the gateway's reconnect with exponential backoff
and jitter, one account at a time across the fleet, N tries then an alert; off unless the profile says so. On
virtual time: the test moves the clock, nothing sleeps."""

from __future__ import annotations

from datetime import timedelta

import asyncio
import heapq
import itertools

import pytest

from tests.alerts.events import T0, Clock
from tui.core.alerts import Alert, AlertKind, AlertState
from tui.core.alerts.detector import AlertDetector
from tui.core.reconnect import FleetLimiter, ReconnectPolicy, ReconnectSettings, backoff


class VirtualTime:
    """asyncio sleeps on a clock of its own: `run()` lets every task run until all of them sleep, then jumps to
    the earliest wake-up."""

    def __init__(self) -> None:
        self.now = 0.0
        self._sleepers: list[tuple[float, int, asyncio.Future[None]]] = []
        self._order = itertools.count()

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._sleepers, (self.now + max(0.0, seconds), next(self._order), future))
        await future

    async def run(self, until: float | None = None) -> None:
        for _ in range(100_000):
            for _ in range(20):  # let every ready task reach its next sleep
                await asyncio.sleep(0)
            if not self._sleepers or (until is not None and self._sleepers[0][0] > until):
                self.now = max(self.now, until) if until is not None else self.now
                return
            wake, _, future = heapq.heappop(self._sleepers)
            self.now = wake
            if not future.done():
                future.set_result(None)
        raise AssertionError("virtual time ran too long")


class Gateway:
    """The injected reconnect: records (time, account, family); says it worked or raises as told."""

    def __init__(self, time: VirtualTime, fails: bool = True) -> None:
        self.time = time
        self.calls: list[tuple[float, str, str]] = []
        self.fails = fails

    async def reconnect(self, account: str, family: str) -> None:
        self.calls.append((self.time(), account, family))
        if self.fails:
            raise OSError("connection refused")


def policy(time: VirtualTime, gateway: Gateway, *, tries: int | None = 3, spacing: float = 5.0,
           jitter: float = 1.0) -> tuple[ReconnectPolicy, list[tuple[str, str, int]]]:
    gave_up: list[tuple[str, str, int]] = []
    settings = ReconnectSettings(tries=tries, first_delay=30.0, max_delay=600.0) if tries else None
    return ReconnectPolicy(
        gateway.reconnect, settings_of=lambda account: settings,
        limiter=FleetLimiter(spacing, clock=time, sleep=time.sleep),
        on_give_up=lambda account, family, n: gave_up.append((account, family, n)),
        sleep=time.sleep, jitter=lambda: jitter,
    ), gave_up


def test_backoff_doubles_from_the_first_delay_up_to_the_cap_with_jitter_in_its_upper_half() -> None:
    settings = ReconnectSettings(tries=8, first_delay=30.0, max_delay=600.0)
    assert [backoff(n, settings, 1.0) for n in range(1, 8)] == [30, 60, 120, 240, 480, 600, 600]
    assert [backoff(n, settings, 0.0) for n in range(1, 4)] == [15, 30, 60]  # never sooner than half
    with pytest.raises(ValueError):
        ReconnectSettings(tries=0)


async def test_n_tries_with_growing_gaps_then_one_give_up() -> None:
    time = VirtualTime()
    gateway = Gateway(time)
    reconnects, gave_up = policy(time, gateway, tries=3)
    reconnects.disconnected("shop", "instance")
    reconnects.disconnected("shop", "instance")  # told again: still one run of tries
    await time.run()
    assert [at for at, _, _ in gateway.calls] == [30.0, 90.0, 210.0]
    assert gave_up == [("shop", "instance", 3)]


async def test_connected_again_stops_the_tries() -> None:
    time = VirtualTime()
    gateway = Gateway(time)
    reconnects, gave_up = policy(time, gateway, tries=5)
    reconnects.disconnected("shop", "session")
    await time.run(until=100)
    reconnects.connected("shop", "session")
    await time.run()
    assert len(gateway.calls) == 2 and gave_up == []


async def test_off_unless_the_profile_asks_for_it() -> None:
    time = VirtualTime()
    gateway = Gateway(time)
    reconnects, gave_up = policy(time, gateway, tries=None)
    reconnects.disconnected("shop", "instance")
    await time.run()
    assert gateway.calls == [] and gave_up == []


async def test_a_fleet_is_staggered_never_all_at_once() -> None:
    time = VirtualTime()
    gateway = Gateway(time)
    reconnects, gave_up = policy(time, gateway, tries=2, spacing=5.0)
    accounts = [f"acct{n}" for n in range(10)]
    for account in accounts:  # a fleet-wide outage: all disconnected at the same moment
        reconnects.disconnected(account, "instance")
    await time.run()
    times = sorted(at for at, _, _ in gateway.calls)
    assert len(times) == 20 and len(gave_up) == 10
    assert all(later - earlier >= 5.0 for earlier, later in itertools.pairwise(times))


async def test_a_logged_out_account_is_never_retried() -> None:
    """Reconnecting cannot bring back an unpaired phone; trying would ask for a new code: never on its own."""
    time = VirtualTime()
    gateway = Gateway(time)
    reconnects, _ = policy(time, gateway)
    clock = Clock(T0)
    detector = AlertDetector(reconnects.on_alert, clock=clock, down_grace=timedelta(0))
    detector.link_changed("shop", "session", connected=False, logged_out=True)
    await time.run()
    assert gateway.calls == []


async def test_plugs_into_the_detector_and_its_give_up_is_an_alert() -> None:
    time = VirtualTime()
    gateway = Gateway(time)
    alerts: list[Alert] = []
    clock = Clock(T0)
    detector: AlertDetector

    def fan_out(alert: Alert) -> None:
        alerts.append(alert)
        reconnects.on_alert(alert)

    reconnects, _ = policy(time, gateway, tries=2)
    reconnects.on_give_up = lambda account, family, n: detector.reconnect_gave_up(account, family, n)
    detector = AlertDetector(fan_out, clock=clock, down_grace=timedelta(0))
    detector.link_changed("shop", "instance", connected=False)
    await time.run()
    assert len(gateway.calls) == 2
    assert [(a.kind, a.state) for a in alerts] == [(AlertKind.DISCONNECTED, AlertState.RAISED),
                                                    (AlertKind.RECONNECT_FAILED, AlertState.RAISED)]
    detector.link_changed("shop", "instance", connected=True)
    assert [(a.kind, a.state) for a in alerts[2:]] == [(AlertKind.DISCONNECTED, AlertState.CLEARED),
                                                       (AlertKind.RECONNECT_FAILED, AlertState.CLEARED)]
