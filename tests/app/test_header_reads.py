"""When the header reads the connection status, and when it must not: a read is an exchange in the request log and,
under a rate limit, a spent token, so a read nobody asked for changes what a screenshot shows.

- Deterministic mode (tests, screenshots) has no 10 s timer read: on a loaded machine a test ran past 10 s and
  the timer's read landed in it (the 429 screenshot's one token spent before its send; a request-log row).
  Outside it, the timer reads as before.
- Opening the request log shows the connection the app already knows; it does not read the status again (the
  read it started as it opened raced the screenshot, and added a row to the very log being opened)."""

from __future__ import annotations

import asyncio

from tests.app.test_snapshots import send_text
from tests.harness import SIZE, running_sandbox_app, settle, wait_ready, wait_until
from tui.core import watch as watch_module
from tui.ui.app import build_app
from tui.ui.widgets import header as header_module
from tui.ui.widgets.forms import set_cursor_blink
from tui.ui.widgets.header import GatewayHeader
from tui.ui.textual_compat import notifications_of


def status_reads(app) -> int:
    return sum(1 for exchange in app.runtime.request_log if exchange.url.endswith("/status"))


def log_shown(app) -> bool:
    """The request log is on top with its header mounted."""
    return type(app.screen).__name__ == "RequestLogScreen" and bool(app.screen.query(GatewayHeader))


def often(monkeypatch) -> None:
    """The timer fires every 50 ms and a read is always due (as on a machine where the test takes minutes)."""
    monkeypatch.setattr(header_module, "STATUS_INTERVAL", 0.05)
    monkeypatch.setattr(watch_module, "POLL_INTERVAL", 0.5)


async def test_deterministic_mode_has_no_timer_read(monkeypatch):
    often(monkeypatch)
    async with running_sandbox_app() as pilot:
        app = pilot.app
        before = status_reads(app)
        assert before == 1  # the first read, at start
        await asyncio.sleep(0.6)  # a dozen of the timer's turns: nothing is to happen, so no condition to wait for
        await settle(pilot)
        assert status_reads(app) == before


async def test_outside_deterministic_mode_the_timer_reads(monkeypatch):
    often(monkeypatch)
    set_cursor_blink(False)
    app = build_app(sandbox=True)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        before = status_reads(app)
        await wait_until(pilot, lambda: status_reads(app) >= before + 2, what="two timer reads")


async def test_opening_the_request_log_reads_nothing():
    async with running_sandbox_app() as pilot:
        app = pilot.app
        await send_text(pilot)
        before = list(app.runtime.request_log)
        app.action_request_log()
        await wait_until(pilot, lambda: log_shown(app), what="the request log")
        await settle(pilot)
        await asyncio.sleep(0.2)  # a read started by the opening would have answered by now (loopback)
        await settle(pilot)
        assert list(app.runtime.request_log) == before
        assert app.screen.query_one(GatewayHeader).connection == "sandbox · connected"


async def test_a_drop_rings_once_with_the_request_log_open_and_after_it_closed():
    """Each header follows the account's watch; only the main screen's says a drop (one toast, one bell), and a
    closed request log's header stops following it."""
    from tests.app.test_header_connection import app_counting_bells, drop
    from tui.api.operations import Family
    from tui.core.pairing import PairingActions

    app, bells = app_counting_bells()
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await wait_ready(pilot)
        # The header's bells are counted here: drop, reconnect, drop is also a flap, whose alert rings on its own
        # (tests/alerts/test_app_alerts.py holds that one to once).
        app.alert_toasts.stop()
        account = app.runtime.current
        assert account is not None and app.runtime.sandbox is not None
        url = app.runtime.sandbox.url.rstrip("/")
        actions = PairingActions(account, Family.INSTANCE)

        def toasts() -> int:
            return sum("lost its connection" in str(note.message) for note in notifications_of(app))

        app.action_request_log()
        await wait_until(pilot, lambda: log_shown(app), what="the request log")
        await settle(pilot)
        header = app.screen.query_one(GatewayHeader)
        await drop(url, Family.INSTANCE, "network")
        await wait_until(pilot, lambda: header.connection != "sandbox · connected", what="the drop shown")
        await settle(pilot)
        assert (bells, toasts()) == ([1], 1)
        await actions.reconnect()
        await wait_until(pilot, lambda: header.connection == "sandbox · connected", what="connected again")

        app.action_request_log()  # closes it
        await wait_until(pilot, lambda: type(app.screen).__name__ == "MainScreen", what="the main screen")
        await settle(pilot)
        header = app.screen.query_one(GatewayHeader)
        # The other family: the instance's drop, reconnect and a second drop would be a flap, told by its alert alone
        # (tests/app/test_header_connection.py).
        await drop(url, Family.SESSION, "network")
        await wait_until(pilot, lambda: header.connection != "sandbox · connected", what="the second drop shown")
        await settle(pilot)
        assert (bells, toasts()) == ([1, 1], 2)
