"""Screenshots (120×40, deterministic sandbox) of the Settings section and of the set-up screen with inline errors."""

from __future__ import annotations

from textual.widgets import Input

from tests.harness import SIZE, settle, setup_screen_shown, show_section, wait_ready, wait_until
from tests.harness import sandbox_app
from tui.ui.app import build_app
from tui.ui.widgets.forms import set_cursor_blink


def test_settings_section(snap_compare):
    async def run_before(pilot):
        await wait_ready(pilot)
        await show_section(pilot, "settings")
        await settle(pilot)

    assert snap_compare(sandbox_app(), terminal_size=SIZE, run_before=run_before)


def test_settings_hmac_block_with_an_inline_error(snap_compare):
    async def run_before(pilot):
        await wait_ready(pilot)
        await show_section(pilot, "settings")
        pilot.app.screen.query_one("#hmac-key", Input).value = "too-short"
        pilot.app.screen.query_one("#hmac-set").press()
        await settle(pilot)
        pilot.app.screen.query_one("#hmac-form").scroll_visible(animate=False, top=True)
        await settle(pilot)

    assert snap_compare(sandbox_app(), terminal_size=SIZE, run_before=run_before)


def test_setup_screen_with_inline_errors(snap_compare):
    set_cursor_blink(False)

    async def run_before(pilot):
        app = pilot.app
        await wait_until(pilot, lambda: setup_screen_shown(app), what="the set-up screen")
        app.screen.query_one("#setup-name", Input).value = "has space"
        app.screen.query_one("#setup-base_url", Input).value = "api.example.com"
        await pilot.press("ctrl+s")
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()

    assert snap_compare(build_app(), terminal_size=SIZE, run_before=run_before)
