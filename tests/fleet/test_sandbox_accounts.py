"""`--sandbox --accounts N` (issue 26): the app opens every account the sandbox serves, sandbox-01 … the first
current, each with its own tokens and key, all served on the one listener's `/a/<name>/` paths; a send from an
account lands under it, in the store and on the board."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

from textual.pilot import Pilot
from textual.widgets import DataTable, Static

from tests.harness import wait_until
from tui.api.models import SendText
from tui.core.accounts.fleet_board import FleetRow
from tui.ui.app import build_app
from tui.gateways.sandbox import SandboxFleet
from tui.ui.sections.events import EventsSection
from tui.ui.sections.chats.inbox import InboxView
from tui.ui.widgets.events_panel import EventsPanel
from tui.ui.widgets.forms import set_cursor_blink


@contextlib.asynccontextmanager
async def sandbox_accounts_app(accounts: int = 3) -> AsyncIterator[Pilot]:
    set_cursor_blink(False)
    app = build_app(sandbox=True, sandbox_accounts=accounts, deterministic=True)
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await wait_until(pilot, lambda: app.runtime_ready or bool(app.runtime_error), timeout=120, what="start")
        assert not app.runtime_error, app.runtime_error
        yield pilot


async def test_every_sandbox_account_is_open_watched_and_served_with_its_own_key() -> None:
    async with sandbox_accounts_app(3) as pilot:
        runtime = pilot.app.runtime
        assert [account.name for account in runtime.accounts] == ["sandbox-01", "sandbox-02", "sandbox-03"]
        assert runtime.current is runtime.accounts[0]
        assert isinstance(runtime.sandbox, SandboxFleet)
        listener = runtime.listener
        assert listener is not None and dict(listener.accounts) == dict.fromkeys(
            ("sandbox-01", "sandbox-02", "sandbox-03"), True)
        assert not listener.old_paths
        keys = [(await runtime.webhooks.doctor_inputs(account=account)).hmac_key for account in runtime.accounts]
        assert len(set(keys)) == 3 and None not in keys  # each its own key, as the doctor checks it
        fleet = runtime.sandbox
        for number, account in enumerate(fleet.accounts, start=1):
            state = account.gateway.state
            assert state.delivery_url == f"{listener.url}/a/sandbox-{number:02d}/delivery"
            assert state.session_webhook.url == f"{listener.url}/a/sandbox-{number:02d}/session"
            assert state.hmac_key == f"sandbox-hmac-key-0123456789abcdef-deterministic-{number:02d}"
        assert runtime.accounts[1].instance is not None
        assert runtime.accounts[1].instance.credentials.instance_id == fleet.accounts[1].instance_id


async def test_a_send_from_the_account_made_current_lands_under_it() -> None:
    async with sandbox_accounts_app(3) as pilot:
        runtime = pilot.app.runtime
        await runtime.open_accounts.switch("sandbox-02")
        assert runtime.instance is not None
        await runtime.instance.send_text(SendText(phone="5511999999999", message="from the second"))
        fleet = runtime.sandbox
        assert isinstance(fleet, SandboxFleet)
        assert [sent.text for sent in fleet.accounts[1].gateway.state.sent] == ["from the second"]
        assert runtime.store is not None
        store = runtime.store
        await wait_until(pilot, lambda: bool(store.newest(10, account="sandbox-02")), timeout=60,
                         what="the send's delivery event under sandbox-02")
        [event, *_] = store.newest(10, account="sandbox-02")
        assert str(event.verdict) in ("valid", "unsigned")
        assert store.newest(10, account="sandbox-01") == [] and store.newest(10, account="sandbox-03") == []
        # The row is stored by the writer thread before the loop hands the event to its account (the board's
        # activity): wait for that hand-over, as the board does at its next refresh.

        def row() -> FleetRow:
            return next(row for row in runtime.open_accounts.fleet_rows() if row.profile == "sandbox-02")

        await wait_until(pilot, lambda: row().last_event_at is not None and row().per_minute >= 1,
                         what="the event counted on sandbox-02's board row")


def events_status(section: EventsSection) -> str:
    return str(section.query_one("#events-status", Static).render())


async def test_events_show_the_current_accounts_own_and_a_shows_every_accounts() -> None:
    async with sandbox_accounts_app(3) as pilot:
        app, runtime = pilot.app, pilot.app.runtime
        await wait_until(pilot, lambda: getattr(app.screen, "all_sections_mounted", False), timeout=120,
                         what="every section mounted")
        await app.screen.make_current("sandbox-02")
        assert runtime.instance is not None and runtime.store is not None
        store = runtime.store
        await runtime.instance.send_text(SendText(phone="5511999999999", message="from the second"))
        await wait_until(pilot, lambda: bool(store.newest(10, account="sandbox-02")), timeout=60, what="its events")
        await pilot.press("alt+7")
        section = app.screen.query_one(EventsSection)
        await wait_until(pilot, lambda: "sandbox-02's events · a: all accounts" in events_status(section)
                         and bool(section.rows), what="sandbox-02's events")
        assert {event.account for event in section.rows} == {"sandbox-02"}
        await app.screen.make_current("sandbox-01")
        await wait_until(pilot, lambda: "sandbox-01's events" in events_status(section) and not section.rows,
                         what="sandbox-01's (none)")
        assert "No events yet" in events_status(section)
        await pilot.press("a")
        await wait_until(pilot, lambda: "all 3 accounts · a: only sandbox-01" in events_status(section)
                         and bool(section.rows), what="every account's events")
        assert {event.account for event in section.rows} == {"sandbox-02"}
        await pilot.press("a")
        await wait_until(pilot, lambda: "sandbox-01's events" in events_status(section) and not section.rows,
                         what="only sandbox-01's again")


async def test_the_inbox_lists_the_current_accounts_conversations_only() -> None:
    """Each sandbox account has the demo chats in its own inbox; the contact's answer to a send from sandbox-02
    is in sandbox-02's inbox only, Chats lists it while sandbox-02 is current and not after the switch back, and
    the board's unread counts each account's own."""
    async with sandbox_accounts_app(3) as pilot:
        app, runtime = pilot.app, pilot.app.runtime
        await wait_until(pilot, lambda: getattr(app.screen, "all_sections_mounted", False), timeout=120,
                         what="every section mounted")
        first, second, third = runtime.accounts
        assert first.inbox is not None and second.inbox is not None and third.inbox is not None
        seeded = {row.chat_id for row in first.inbox.conversations()}
        assert len(seeded) == 6 and {row.chat_id for row in third.inbox.conversations()} == seeded
        await app.screen.make_current("sandbox-02")
        assert runtime.instance is not None
        await runtime.instance.send_text(SendText(phone="5511912345678", message="only on two"))
        await wait_until(pilot, lambda: second.inbox is not None and second.inbox.conversation("5511912345678")
                         is not None, timeout=60, what="the contact's answer in sandbox-02's inbox")
        assert first.inbox.conversation("5511912345678") is None
        assert third.inbox.conversation("5511912345678") is None
        view = app.screen.query_one(InboxView)
        await pilot.press("alt+1")
        await wait_until(pilot, lambda: "5511912345678" in {row.chat_id for row in view.rows},
                         what="Chats to list it")
        await runtime.open_accounts.read_fleet()
        unread = {row.profile: row.unread for row in runtime.open_accounts.fleet_rows()}
        assert unread["sandbox-02"] == unread["sandbox-01"] + 1 and unread["sandbox-03"] == unread["sandbox-01"]
        await app.screen.make_current("sandbox-01")
        await wait_until(pilot, lambda: "5511912345678" not in {row.chat_id for row in view.rows},
                         what="Chats to list sandbox-01's only")
        assert {row.chat_id for row in view.rows} == seeded


def panel_rows(panel: EventsPanel) -> list[str | None]:
    """The accounts of the events the panel's table holds, drawn (not only received)."""
    table = panel.query_one(DataTable)
    events = [panel._by_id(int(str(key.value))) for key in table.rows]
    return [event.account if event is not None else "(a row of no event)" for event in events]


async def test_the_live_panel_shows_the_current_accounts_events_and_follows_a_switch() -> None:
    async with sandbox_accounts_app(3) as pilot:
        app, runtime = pilot.app, pilot.app.runtime
        panel = app.screen.query_one(EventsPanel)
        title = panel.query_one("#events-panel-title", Static)
        await wait_until(pilot, lambda: "Events of sandbox-01" in str(title.render()), what="the title names it")
        assert runtime.instance is not None and runtime.store is not None
        store = runtime.store
        await app.screen.make_current("sandbox-02")
        await wait_until(pilot, lambda: "Events of sandbox-02" in str(title.render()), what="the title follows")
        assert runtime.instance is not None
        await runtime.instance.send_text(SendText(phone="5511999999999", message="from the second"))
        await wait_until(pilot, lambda: not panel.redraw_pending and bool(panel_rows(panel)), timeout=60,
                         what="sandbox-02's events in the panel")
        assert set(panel_rows(panel)) == {"sandbox-02"}
        await app.screen.make_current("sandbox-03")  # an account with no event yet: the panel empties
        await wait_until(pilot, lambda: not panel.redraw_pending and not panel_rows(panel),
                         what="sandbox-03's (none)")
        await wait_until(pilot, lambda: bool(store.newest(10, account="sandbox-02")), what="stored")
        await app.screen.make_current("sandbox-02")  # back: its events read again from the store
        await wait_until(pilot, lambda: not panel.redraw_pending and bool(panel_rows(panel)),
                         what="sandbox-02's again")
        assert set(panel_rows(panel)) == {"sandbox-02"}
        await app.screen.make_current("sandbox-01")
        await wait_until(pilot, lambda: not panel.redraw_pending and not panel_rows(panel), what="sandbox-01's")
        assert runtime.instance is not None
        await runtime.accounts[2].instance.send_text(SendText(phone="5511999999999", message="from the third"))
        await wait_until(pilot, lambda: bool(store.newest(10, account="sandbox-03")), timeout=60,
                         what="the third account's events stored")
        await wait_until(pilot, lambda: not panel.redraw_pending, what="no redraw waiting")
        assert panel_rows(panel) == [] and not panel.events  # another account's live events are not shown
