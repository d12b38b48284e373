"""Issue 35's acceptance in the app: against the in-process sandbox in the Z-API and WuzAPI dialects, the
disconnect fault gives exactly one raised `disconnected` alert and the reconnect one cleared; the flapping fault
exactly one raised `flapping` alert, with one toast and one signal (the bell, by default), and the fleet board marks
the account while the alert is open. Every wait is on a condition."""

from __future__ import annotations

import json

import httpx

from tests.harness import SIZE, screen_text, wait_ready, wait_until
from tui.api.operations import Family
from tui.core.alerts import AlertKind, AlertState
from tui.core.pairing import PairingActions
from tui.ui.app import GatewayApp, build_app
from tui.ui.textual_compat import notifications_of
from tui.ui.widgets.forms import set_cursor_blink


def app_counting_bells() -> tuple[GatewayApp, list[int]]:
    set_cursor_blink(False)
    app = build_app(sandbox=True, deterministic=True, sandbox_dialects=("zapi", "wuzapi"))
    bells: list[int] = []
    app.bell = lambda: bells.append(1)  # type: ignore[method-assign]
    return app, bells


async def post(app: GatewayApp, path: str, body: object) -> None:
    assert app.runtime.sandbox is not None
    async with httpx.AsyncClient(trust_env=False) as client:
        answer = await client.post(f"{app.runtime.sandbox.url.rstrip('/')}{path}", content=json.dumps(body))
    assert answer.status_code == 200, answer.text


def states(app: GatewayApp, kind: AlertKind) -> list[AlertState]:
    return [alert.state for alert in app.alert_toasts.seen if alert.kind is kind]


def alert_toasts(app: GatewayApp) -> list[str]:
    return [str(note.message) for note in notifications_of(app) if str(note.title).startswith("Alert")]


async def test_the_disconnect_fault_raises_one_alert_and_the_reconnect_clears_it() -> None:
    app, _bells = app_counting_bells()
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await wait_ready(pilot)
        assert app.alert_toasts.seen == []  # a sandbox that works raises nothing
        await post(app, "/sandbox/disconnect", {"family": "instance", "reason": "network"})
        await wait_until(pilot, lambda: states(app, AlertKind.DISCONNECTED) == [AlertState.RAISED],
                         what="the disconnected alert")
        assert app.services.alerts.open_alerts("sandbox")[0].kind is AlertKind.DISCONNECTED
        account = app.runtime.current
        assert account is not None
        await PairingActions(account, Family.INSTANCE).reconnect()
        await wait_until(pilot, lambda: states(app, AlertKind.DISCONNECTED) == [AlertState.RAISED, AlertState.CLEARED],
                         what="the disconnected alert cleared")
        await app.runtime.sandbox.wait_for_deliveries()  # type: ignore[union-attr]
        await pilot.pause()
        assert [(alert.kind, alert.state) for alert in app.alert_toasts.seen] == [
            (AlertKind.DISCONNECTED, AlertState.RAISED), (AlertKind.DISCONNECTED, AlertState.CLEARED)]
        assert app.services.alerts.open_alerts() == []


async def test_the_flapping_fault_raises_one_alert_one_toast_and_one_bell() -> None:
    app, bells = app_counting_bells()
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await wait_ready(pilot)
        header_bells = len(bells)
        await post(app, "/sandbox/fault", {"kind": "flap", "family": "session", "times": 10, "interval": 0.01})
        await wait_until(pilot, lambda: states(app, AlertKind.FLAPPING) == [AlertState.RAISED], what="flapping")
        sandbox = app.runtime.sandbox
        await wait_until(pilot, lambda: not sandbox.flapping, what="the flap's last change")  # type: ignore[union-attr]
        await sandbox.wait_for_deliveries()  # type: ignore[union-attr]
        await pilot.pause()
        assert states(app, AlertKind.FLAPPING) == [AlertState.RAISED]
        # One raised alert in all: the storm's first disconnect is not told apart (it lasted less than the grace).
        assert [(alert.kind, alert.state) for alert in app.alert_toasts.seen] == [
            (AlertKind.FLAPPING, AlertState.RAISED)]
        assert len([text for text in alert_toasts(app) if "flapping" in text]) == 1
        assert len(bells) - header_bells >= 1
        assert app.services.alerts.open_alerts("sandbox")


async def test_the_fleet_board_marks_an_account_with_an_open_alert() -> None:
    from tui.ui.sections.fleet.section import FleetSection

    app, _bells = app_counting_bells()
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await wait_ready(pilot)
        await pilot.press("alt+9")
        board = app.screen.query_one(FleetSection)
        await wait_until(pilot, lambda: "sandbox" in screen_text(app), what="the board")
        assert "⚠" not in screen_text(app)
        await post(app, "/sandbox/disconnect", {"family": "session", "reason": "network"})
        await wait_until(pilot, lambda: bool(app.services.alerts.open_alerts("sandbox")), what="the alert")
        board.refresh_board()  # (its timer does it within a second)
        await pilot.pause()
        assert "⚠sandbox" in screen_text(app)  # drawn, not cut off by the name column's width


async def test_the_last_pairing_code_of_a_run_raises_code_expiring_and_the_runs_end_clears_it() -> None:
    from datetime import timedelta

    from tests.app.test_account_section import SandboxClock, open_account
    from tui.core.alerts.service import PairingCodeGone, PairingCodeShown

    set_cursor_blink(False)
    app = build_app(sandbox=True, deterministic=True, sandbox_dialects=("zapi", "wuzapi"), sandbox_logged_out=True)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await wait_ready(pilot)
        told: list[object] = []
        app.services.bus.subscribe(PairingCodeShown, told.append)
        app.services.bus.subscribe(PairingCodeGone, told.append)
        section = await open_account(pilot, Family.INSTANCE)
        clock = SandboxClock()
        section.clock = app.runtime.sandbox.context.clock = clock  # type: ignore[union-attr]  # its codes follow it
        await pilot.press("q")
        for number in (1, 2, 3):
            await wait_until(pilot, lambda number=number: f"code {number} of 3" in screen_text(app), what=f"code {number}")
            assert len(told) == (1 if number == 3 else 0)  # the codes before the last are replaced on their own
            clock.now += timedelta(seconds=20)
        await wait_until(pilot, lambda: len(told) == 2, what="the run's end")
        shown, gone = told
        assert isinstance(shown, PairingCodeShown) and shown.what == "last QR code" and shown.account == "sandbox"
        assert isinstance(gone, PairingCodeGone) and gone.family == "instance"
