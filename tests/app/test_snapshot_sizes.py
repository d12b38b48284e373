"""Every section, help, the event detail, the request log and the set-up screen at 80×24 (a first-class size)
and at 120×40, on deterministic sandbox data: the Events table keeps Verdict and the request log Status at 80
columns, help and detail text wraps, the header keeps its counts, the events panel gives rows to the form."""

from __future__ import annotations

import keyring
import pytest
from keyring.backends import fail
from textual.widgets import DataTable, Input

from tests.app.test_snapshots import send_text
from tests.harness import sandbox_app, screen_text, settle, setup_screen_shown, show_section, wait_ready, wait_until
from tui.ui.app import build_app
from tui.ui.widgets.forms import set_cursor_blink

SIZES = [pytest.param((80, 24), id="80x24"), pytest.param((120, 40), id="120x40")]
SECTIONS = ["chats", "groups", "communities", "privacy", "catalog", "settings", "events"]


async def open_view(pilot, view: str) -> None:
    if view in ("events", "detail", "requests"):
        await send_text(pilot)
    if view == "detail":
        table = pilot.app.screen.query_one("#events-panel-table", DataTable)
        table.focus()
        await pilot.pause()
        await pilot.press("enter")
    elif view == "requests":
        pilot.app.action_request_log()
    elif view == "help":
        await show_section(pilot, "chats")
        pilot.app.screen.set_focus(None)
        await pilot.press("question_mark")
    else:
        await show_section(pilot, view)


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("view", [*SECTIONS, "help", "detail", "requests"])
def test_view(snap_compare, view, size):
    async def run_before(pilot):
        await wait_ready(pilot)
        await open_view(pilot, view)
        await settle(pilot)

    assert snap_compare(sandbox_app(), terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES)
def test_setup(snap_compare, size):
    set_cursor_blink(False)

    async def run_before(pilot):
        app = pilot.app
        await wait_until(pilot, lambda: setup_screen_shown(app), what="the set-up screen")
        await app.workers.wait_for_complete()
        await pilot.pause()

    assert snap_compare(build_app(), terminal_size=size, run_before=run_before)


# -- what must stay on screen at 80×24 (literal text, so a regression names what went missing) ---------------


async def test_at_80x24_the_tables_keep_verdict_and_status_and_the_header_its_counts():
    app = sandbox_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_ready(pilot)
        await send_text(pilot)
        shown = screen_text(app)
        header = shown.splitlines()[0]
        assert "● connected" in header and " ev · " in header, header
        assert "7Events" in shown.splitlines()[1]  # the nine names at 80 columns: digit against name
        panel_rows = [line for line in shown.splitlines() if line.startswith(" 12:00:0")]
        assert panel_rows and all(line.rstrip().endswith("✓ valid") for line in panel_rows), shown
        assert "Send (ctrl+s)" in shown or "Send" in shown  # the form keeps room above the panel

        await show_section(pilot, "events")
        await settle(pilot)
        shown = screen_text(app)
        assert "Verdict" in shown and "Summary" in shown, shown

        app.action_request_log()
        await settle(pilot)
        shown = screen_text(app)
        heading = next(line for line in shown.splitlines() if "Method" in line)
        assert "Status" in heading and "URL" in heading, shown


async def test_at_80x24_help_wraps_whole_words():
    app = sandbox_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_ready(pilot)
        await show_section(pilot, "chats")
        app.screen.set_focus(None)
        await pilot.press("question_mark")
        await settle(pilot)
        shown = screen_text(app)
        assert "Help · Chats" in shown
        # The first help sentence wraps between words, inside the dialog's border.
        assert "digits" in shown and "only, e.g. 5511999999999" in shown, shown
        assert all(len(line) <= 80 for line in shown.splitlines())


async def test_events_panel_gives_rows_to_the_form_on_short_screens():
    app = sandbox_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_ready(pilot)
        assert app.screen.query_one("#events-panel").outer_size.height == 7
    app = sandbox_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(pilot)
        assert app.screen.query_one("#events-panel").outer_size.height == 12




@pytest.mark.parametrize("size", SIZES)
def test_settings_warnings(snap_compare, size):
    """The listener moved and the gateway lost the profile's key: both warnings at the top, each with its fix."""

    async def run_before(pilot):
        await wait_ready(pilot)
        await show_section(pilot, "settings")
        pilot.app.runtime.sandbox.state.hmac_key = None
        screen = pilot.app.screen
        screen.query_one("#listener-port", Input).value = "0"
        screen.query_one("#listener-apply").press()
        await settle(pilot)
        screen.query_one("#hmac-status").press()
        await settle(pilot)
        pilot.app.clear_notifications()
        screen.query_one("#health-block").scroll_visible(animate=False, top=True)
        await settle(pilot)

    assert snap_compare(sandbox_app(), terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES)
def test_setup_without_a_keyring(snap_compare, size):
    """The keyring error at the top of set-up, with the in-place way out (a private file) under it."""
    set_cursor_blink(False)

    async def run_before(pilot):
        keyring.set_keyring(fail.Keyring())
        app = pilot.app
        await wait_until(pilot, lambda: setup_screen_shown(app), what="the set-up screen")
        for field, value in {"name": "work", "base_url": "https://api.example.com", "instance_id": "1",
                             "session_url": "https://wuz.example.com", "client-token": "c" * 20,
                             "instance-token": "i" * 20, "session-token": "s" * 20}.items():
            app.screen.query_one(f"#setup-{field}", Input).value = value
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: app.screen.query_one("#setup-way-out").has_class("-shown"),
                         what="the way out")
        await app.workers.wait_for_complete()
        await pilot.pause()

    assert snap_compare(build_app(), terminal_size=size, run_before=run_before)
