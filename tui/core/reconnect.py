"""The reconnect policy (issue 35): after a disconnect, try the gateway's reconnect again and again, further apart
each time, and give up with an alert after N tries. Off unless the profile asks (`reconnect_tries`).

* Backoff: the first try FIRST_DELAY after the disconnect, each gap twice the one before up to MAX_DELAY, with
  "equal jitter" (somewhere in the upper half of the gap): never sooner than half, so the backoff holds, and
  accounts that dropped together drift apart.
* A fleet is staggered: every account's tries go through one FleetLimiter, one at a time and at least SPACING
  seconds apart, so an outage of the whole fleet never sends every account's reconnect to the gateway at once.
* Only a disconnect is retried: a logged-out account needs a new pairing, and nothing here ever logs out or asks
  for a code. The call itself is injected (`reconnect(account, family)`): Z-API's GET /restart, WuzAPI's
  disconnect-then-connect of a still-paired session (tui.core.pairing's RECOVERY_WORDS).

It plugs into the alerts as a sink: `policy.on_alert` starts on a raised `disconnected` and stops on its `cleared`;
`follow_alerts` builds the policy of a run's open accounts and subscribes it to the alert service's `AlertChanged`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from tui.api.dialects import Family
from tui.local.config import Profile
from tui.core.alerts.model import Alert, AlertKind, AlertState
from tui.core.alerts.service import AlertChanged, AlertService
from tui.core.feed.bus import EventBus
from tui.core.watch import SESSION_SUBSCRIPTION

if TYPE_CHECKING:  # pragma: no cover
    from tui.core.accounts.account import Account

log = logging.getLogger(__name__)

FIRST_DELAY = 30.0  # seconds: a phone often comes back by itself within half a minute
MAX_DELAY = 600.0
SPACING = 5.0  # seconds between two reconnects anywhere in the fleet
MAX_TRIES = 20

Reconnect = Callable[[str, str], Awaitable[object]]
Sleep = Callable[[float], Awaitable[None]]


@dataclass(frozen=True)
class ReconnectSettings:
    tries: int
    first_delay: float = FIRST_DELAY
    max_delay: float = MAX_DELAY

    def __post_init__(self) -> None:
        if not 1 <= self.tries <= MAX_TRIES:
            raise ValueError(f"tries: from 1 to {MAX_TRIES} (0 in the profile: no reconnect policy)")


def settings_of_profile(profile: Profile) -> ReconnectSettings | None:
    """The profile's policy (`reconnect_tries`), None when it has none (0, the default)."""
    return ReconnectSettings(tries=profile.reconnect_tries) if profile.reconnect_tries else None


def backoff(attempt: int, settings: ReconnectSettings, jitter: float) -> float:
    """Seconds to wait before try number `attempt` (from 1): the doubled gap, capped, `jitter` (0..1) deciding
    where in its upper half."""
    gap = min(settings.max_delay, settings.first_delay * 2.0 ** (attempt - 1))
    return gap / 2 + gap / 2 * jitter


class FleetLimiter:
    """One reconnect at a time across every account, at least `spacing` seconds after the one before."""

    def __init__(self, spacing: float = SPACING, *, clock: Callable[[], float] = time.monotonic,
                 sleep: Sleep = asyncio.sleep) -> None:
        self.spacing = spacing
        self.clock = clock
        self.sleep = sleep
        self._lock = asyncio.Lock()
        self._next = 0.0

    async def turn(self) -> None:
        async with self._lock:
            wait = self._next - self.clock()
            if wait > 0:
                await self.sleep(wait)
            self._next = self.clock() + self.spacing


class ReconnectPolicy:
    """Per account and family, one run of tries at a time. `settings_of(account)`: its settings, None when the
    profile has no policy; `on_give_up(account, family, tries)`: after the last try failed to bring it back (the
    detector's `reconnect_gave_up`)."""

    def __init__(self, reconnect: Reconnect, *, settings_of: Callable[[str], ReconnectSettings | None],
                 limiter: FleetLimiter, on_give_up: Callable[[str, str, int], None], sleep: Sleep = asyncio.sleep,
                 jitter: Callable[[], float] = random.random) -> None:
        self.reconnect = reconnect
        self.settings_of = settings_of
        self.limiter = limiter
        self.on_give_up = on_give_up
        self.sleep = sleep
        self.jitter = jitter
        self._runs: dict[tuple[str, str], asyncio.Task[None]] = {}
        self.unsubscribe: Callable[[], None] = lambda: None
        """Stops following the alerts (`follow_alerts` sets it); `stop` calls it too."""

    def on_alert(self, alert: Alert) -> None:
        """The alerts' sink: a raised `disconnected` starts the tries, its `cleared` (connected again) stops them.
        `logged-out` is never retried."""
        if alert.kind is not AlertKind.DISCONNECTED or alert.account is None or alert.family is None:
            return
        if alert.state is AlertState.RAISED:
            self.disconnected(alert.account, alert.family)
        else:
            self.connected(alert.account, alert.family)

    def disconnected(self, account: str, family: str) -> None:
        settings = self.settings_of(account)
        key = (account, family)
        if settings is None or key in self._runs:
            return
        task = asyncio.get_running_loop().create_task(self._tries(account, family, settings))
        self._runs[key] = task
        task.add_done_callback(lambda _: self._runs.pop(key, None))

    def connected(self, account: str, family: str) -> None:
        task = self._runs.pop((account, family), None)
        if task is not None:
            task.cancel()

    async def stop(self) -> None:
        self.unsubscribe()
        runs = list(self._runs.values())
        for task in runs:
            task.cancel()
        for task in runs:
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def _tries(self, account: str, family: str, settings: ReconnectSettings) -> None:
        for attempt in range(1, settings.tries + 1):
            await self.sleep(backoff(attempt, settings, self.jitter()))
            await self.limiter.turn()
            try:
                await self.reconnect(account, family)
            except asyncio.CancelledError:
                raise
            except Exception as error:  # the gateway said no or was not there: the next try is the answer
                log.warning("reconnect %s/%s, try %d of %d: %s", account, family, attempt, settings.tries,
                            str(error).splitlines()[0] if str(error) else type(error).__name__)
            # A reconnect that answered OK is not yet a connection: the gateway's Connected (or its status)
            # ends the run through `connected`; until then the next try follows.
        self.on_give_up(account, family, settings.tries)


class NotPaired(RuntimeError):
    """The account is logged out: reconnecting cannot help, and pairing again is the user's to start."""


async def gateway_reconnect(account: Account, family: str) -> None:
    """The gateway's own reconnect of a still-paired account, through the operations of the table: Z-API's
    GET /restart; WuzAPI's disconnect, then connect with the app's subscriptions (tui.core.pairing's recovery). Reads
    the status first: NotPaired when the phone is unpaired (a connect would start a new QR code; never on its own).
    Nothing to do when it is connected already."""
    if family == Family.INSTANCE.value:
        instance = account.instance_client()
        state = (await instance.status()).state
        if state.connected:
            return
        if not state.logged_in:
            raise NotPaired("the instance is logged out: pair it again (no code is asked for on its own)")
        await instance.restart()
        return
    session = account.session_client()
    state = (await session.session_status()).state
    if state.connected and state.logged_in:
        return
    if not state.logged_in:
        raise NotPaired("the session is logged out: pair it again (no code is asked for on its own)")
    await session.disconnect()
    await session.connect(subscribe=SESSION_SUBSCRIPTION)


class NamedAccounts(Protocol):
    """The open accounts by profile name (tui.core.accounts.accounts.Accounts)."""

    def named(self, name: str) -> Account | None: ...


def follow_alerts(bus: EventBus, alerts: AlertService, accounts: NamedAccounts, *,
                  reconnect: Reconnect | None = None, limiter: FleetLimiter | None = None,
                  sleep: Sleep = asyncio.sleep, jitter: Callable[[], float] = random.random) -> ReconnectPolicy:
    """The reconnect policy of a run, following its alerts from now on: each open account's profile says whether
    and how often (`reconnect_tries`), the gateway's own reconnect is the call (`gateway_reconnect`), and giving up
    is the alert service's `reconnect-failed`. Call from the event loop; `await policy.stop()` at the end."""

    def settings_of(name: str) -> ReconnectSettings | None:
        account = accounts.named(name)
        return settings_of_profile(account.profile) if account is not None else None

    async def reconnect_account(name: str, family: str) -> None:
        account = accounts.named(name)
        if account is None:
            raise LookupError(f"{name} is no longer open")
        await gateway_reconnect(account, family)

    policy = ReconnectPolicy(reconnect or reconnect_account, settings_of=settings_of,
                             limiter=limiter or FleetLimiter(sleep=sleep),
                             on_give_up=lambda name, family, tries: alerts.detector.reconnect_gave_up(name, family, tries),
                             sleep=sleep, jitter=jitter)
    policy.unsubscribe = bus.subscribe(AlertChanged, lambda changed: policy.on_alert(changed.alert))
    return policy
