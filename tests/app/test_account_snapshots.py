"""Screenshots of the Account section (issue 23) on the deterministic sandbox in the Z-API and WuzAPI dialects, the
events panel hidden: paired, a QR code shown (the sandbox's codes and the countdown's clock fixed), too small for
the code beside the state at 80×24 (it takes the whole screen), too small even for that at 72×20 (the size it
needs, the phone code offered), and a stuck session's contradiction in words."""

from __future__ import annotations

import json
from datetime import datetime

import httpx

from tests.api.qr_readback import codes_on_screen
from tests.harness import SIZE, screen_text, settle, wait_ready, wait_until
from tui.api.operations import Family
from tui.ui.app import GatewayApp, build_app
from tui.core.runtime import DETERMINISTIC_EPOCH
from tui.ui.sections.account.qr_screen import QRScreen
from tui.ui.sections.account.section import AccountSection
from tui.ui.widgets.forms import set_cursor_blink
from tui.ui.widgets.header import GatewayHeader

SMALL = (80, 24)
TINY = (72, 20)


def account_app(*, logged_out: bool) -> GatewayApp:
    set_cursor_blink(False)
    return build_app(sandbox=True, deterministic=True, sandbox_dialects=("zapi", "wuzapi"),
                     sandbox_logged_out=logged_out)


def fixed_clock() -> datetime:
    return DETERMINISTIC_EPOCH


async def open_account(pilot) -> AccountSection:
    await wait_ready(pilot)
    await pilot.press("f9")
    await pilot.press("alt+8")
    section = pilot.app.screen.query_one(AccountSection)
    await wait_until(pilot, lambda: section.family is not None, what="the account in the section")
    section.clock = fixed_clock  # the countdown reads 20 s, and the code is never refreshed
    pilot.app.runtime.sandbox.context.codes.salt = "snapshot"  # the sandbox's codes are the same every run
    return section


async def instance_number_read(pilot) -> None:
    """Z-API's number comes from its GET /device, read just after the status says connected: wait for it."""
    account = pilot.app.runtime.current

    def known() -> bool:
        state = account.watch.state(Family.INSTANCE)
        return state is not None and state.number is not None

    await wait_until(pilot, known, what="the instance's number (GET /device)")


def test_account_paired(snap_compare):
    async def run_before(pilot):
        await open_account(pilot)
        await instance_number_read(pilot)
        await settle(pilot)

    assert snap_compare(account_app(logged_out=False), terminal_size=SIZE, run_before=run_before)


def test_account_qr_shown(snap_compare):
    async def run_before(pilot):
        await open_account(pilot)
        await pilot.press("q")
        await wait_until(pilot, lambda: "code 1 of 3" in str(pilot.app.screen.query_one("#account-words").content),
                         what="the code")
        await settle(pilot)

    assert snap_compare(account_app(logged_out=True), terminal_size=SIZE, run_before=run_before)


def test_account_qr_on_the_whole_screen_at_80x24(snap_compare):
    """At 80×24 the code fits nowhere beside the state: it takes the whole screen, in sextants (33×22)."""
    async def run_before(pilot):
        await open_account(pilot)
        await pilot.press("q")
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, QRScreen), what="the code on the whole screen")
        await wait_until(pilot, lambda: bool(codes_on_screen(screen_text(pilot.app))), what="a code that scans")
        await settle(pilot)

    assert snap_compare(account_app(logged_out=True), terminal_size=SMALL, run_before=run_before)


def test_account_too_small_for_the_qr(snap_compare):
    """Smaller than 80×24 even the compact code does not fit: the size it needs, and the phone code offered."""
    async def run_before(pilot):
        await open_account(pilot)
        await pilot.press("q")
        await wait_until(pilot, lambda: "needs" in str(pilot.app.screen.query_one("#account-words").content),
                         what="the size it needs")
        await settle(pilot)

    assert snap_compare(account_app(logged_out=True), terminal_size=TINY, run_before=run_before)


def test_account_contradiction(snap_compare):
    async def run_before(pilot):
        await open_account(pilot)
        await instance_number_read(pilot)
        await pilot.press("f")  # the session
        app = pilot.app
        account = app.runtime.current
        account.watch.clock = fixed_clock  # "since" reads the fixed moment
        for watched in account.watch.families.values():
            watched.clock = fixed_clock
        async with httpx.AsyncClient(trust_env=False) as client:
            await client.post(f"{app.runtime.sandbox.url.rstrip('/')}/sandbox/disconnect",
                              content=json.dumps({"family": "session", "reason": "stuck"}))
        app.screen.query_one(GatewayHeader).poll_status()
        await wait_until(pilot, lambda: account.watch.contradiction(Family.SESSION) is not None,
                         what="the contradiction")
        await settle(pilot)
        app.clear_notifications()  # the drop's toast (tests/app/test_header_connection.py checks it) goes in time
        await settle(pilot)

    assert snap_compare(account_app(logged_out=False), terminal_size=SIZE, run_before=run_before)
