"""The reconnect policy follows the run's alerts (issue 35, item 3): a raised `disconnected` of an account whose
profile asks for it starts the tries, its clearing stops them, the last failed try raises `reconnect-failed` through
the alert service; an account without the setting is never reconnected. On virtual time (the test owns the clock)."""

from __future__ import annotations

from datetime import timedelta

from dataclasses import dataclass

from tests.alerts.events import WUZAPI_CONNECTED, WUZAPI_DISCONNECTED, Clock, event
from tests.alerts.test_reconnect import Gateway, VirtualTime
from tui.core.alerts import AlertKind
from tui.core.alerts.service import AlertService
from tui.core.feed.bus import EventBus, EventStored
from tui.core.reconnect import FleetLimiter, follow_alerts


@dataclass
class Profile:
    reconnect_tries: int


@dataclass
class Account:
    name: str
    profile: Profile


class Accounts:
    def __init__(self, *accounts: Account) -> None:
        self.all = list(accounts)

    def named(self, name: str) -> Account | None:
        return next((account for account in self.all if account.name == name), None)


def drop(bus: EventBus, clock: Clock, account: str, body: str = WUZAPI_DISCONNECTED) -> None:
    bus.publish(EventStored(event(body, clock(), account=account), account))


async def test_a_disconnect_is_retried_for_the_profiles_that_ask_and_gives_up_with_an_alert() -> None:
    time = VirtualTime()
    clock = Clock()
    bus = EventBus()
    alerts = AlertService(bus, clock=clock, down_grace=timedelta(0))
    alerts.start()
    gateway = Gateway(time)
    policy = follow_alerts(bus, alerts, Accounts(Account("shop", Profile(2)), Account("quiet", Profile(0))),
                           reconnect=gateway.reconnect, limiter=FleetLimiter(clock=time, sleep=time.sleep),
                           sleep=time.sleep, jitter=lambda: 0.0)
    drop(bus, clock, "shop")
    drop(bus, clock, "quiet")
    await time.run()
    assert [(account, family) for _, account, family in gateway.calls] == [("shop", "session"), ("shop", "session")]
    assert [alert.kind for alert in alerts.open_alerts("shop")] == [AlertKind.DISCONNECTED, AlertKind.RECONNECT_FAILED]
    drop(bus, clock, "shop", WUZAPI_CONNECTED)
    assert alerts.open_alerts("shop") == []
    await policy.stop()
    alerts.stop()


async def test_connected_again_stops_the_tries() -> None:
    time = VirtualTime()
    clock = Clock()
    bus = EventBus()
    alerts = AlertService(bus, clock=clock, down_grace=timedelta(0))
    alerts.start()
    gateway = Gateway(time)
    policy = follow_alerts(bus, alerts, Accounts(Account("shop", Profile(5))), reconnect=gateway.reconnect,
                           limiter=FleetLimiter(clock=time, sleep=time.sleep), sleep=time.sleep, jitter=lambda: 0.0)
    drop(bus, clock, "shop")
    await time.run(until=20.0)  # the first try waits 15 s (half of 30 s with no jitter)
    assert len(gateway.calls) == 1
    drop(bus, clock, "shop", WUZAPI_CONNECTED)
    await time.run()
    assert len(gateway.calls) == 1
    policy.unsubscribe()
    await policy.stop()
    alerts.stop()
