"""Several accounts in one app (issue 26), with Pilot: three profiles on three in-process sandbox gateways. Switching
the current account (F3's fuzzy picker, the board's Enter) moves the header and the clients; the Fleet board
filters, sorts, marks and asks once, naming the count, before a bulk action."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

from textual.pilot import Pilot
from textual.widgets import Static

from tests.fleet.fleet_harness import sandbox_fleet
from tests.harness import wait_until, settle
from tui.api.models import SendText
from tui.ui.app import GatewayApp, build_app
from tui.gateways.sandbox import SandboxGateway
from tui.ui.sections.fleet.picker import AccountPicker, fuzzy_order
from tui.ui.sections.fleet.section import FleetSection
from tui.ui.widgets.forms import set_cursor_blink
from tui.ui.widgets.header import GatewayHeader
from tui.ui.widgets.section import ConfirmScreen
from tui.ui.textual_compat import notifications_of

NAMES = ("shop-1", "shop-2", "shop-3")


@contextlib.asynccontextmanager
async def fleet_app(size: tuple[int, int] = (120, 40)) -> AsyncIterator[tuple[Pilot, list[SandboxGateway]]]:
    async with sandbox_fleet(3) as gateways:
        set_cursor_blink(False)
        app = build_app(profiles=NAMES, deterministic=True, insecure_storage=True)
        async with app.run_test(size=size, notifications=True) as pilot:
            await wait_until(pilot, lambda: app.runtime_ready or bool(app.runtime_error), timeout=120, what="start")
            assert not app.runtime_error, app.runtime_error
            await wait_until(pilot, lambda: getattr(app.screen, "all_sections_mounted", False), timeout=120,
                             what="every section mounted")
            yield pilot, gateways


def header_text(app: GatewayApp) -> str:
    header = app.screen.query_one(GatewayHeader)
    return " ".join(str(piece.render()) for piece in header.query(Static) if piece.display)


def board(app: GatewayApp) -> FleetSection:
    return app.screen.query_one(FleetSection)


def shown_names(app: GatewayApp) -> list[str]:
    return [row.profile for row in board(app).rows]


def test_fuzzy_order_finds_letters_in_order() -> None:
    assert fuzzy_order(["shop-1", "shop-2", "support"], "s2") == ["shop-2"]
    assert fuzzy_order(["shop-1", "shop-2"], "") == ["shop-1", "shop-2"]
    assert fuzzy_order(["shop-1"], "zz") == []


async def test_f3_picks_another_account_and_the_sections_act_on_it() -> None:
    async with fleet_app() as (pilot, gateways):
        app = pilot.app
        assert [account.name for account in app.runtime.accounts] == list(NAMES)
        assert app.runtime.current is not None and app.runtime.current.name == "shop-1"
        assert "shop-1" in header_text(app)
        await pilot.press("f3")
        await wait_until(pilot, lambda: isinstance(app.screen, AccountPicker), what="the picker")
        await pilot.press("3", "enter")
        await wait_until(pilot, lambda: app.runtime.current is not None and app.runtime.current.name == "shop-3",
                         what="shop-3 current")
        await wait_until(pilot, lambda: "shop-3" in header_text(app), what="the header to name shop-3")
        assert app.runtime.instance is not None
        await app.runtime.instance.send_text(SendText(phone="5511999999999", message="from shop-3"))
        assert [sent.text for sent in gateways[2].state.sent] == ["from shop-3"]
        assert [sent.text for sent in gateways[0].state.sent] == []


async def test_the_board_filters_sorts_and_enter_makes_current() -> None:
    async with fleet_app() as (pilot, _gateways):
        app = pilot.app
        await pilot.press("alt+9")
        await wait_until(pilot, lambda: shown_names(app) == list(NAMES), what="three rows")
        table = board(app).table
        assert app.focused is table
        await pilot.press("slash")
        await wait_until(pilot, lambda: app.focused is not None and app.focused.id == "fleet-filter", what="the filter")
        await pilot.press("2")
        await wait_until(pilot, lambda: shown_names(app) == ["shop-2"], what="the filter")
        await pilot.press("escape")
        await wait_until(pilot, lambda: shown_names(app) == list(NAMES), what="the filter cleared")
        assert app.focused is table
        assert table.cursor_name == "shop-2"  # the row found stays under the cursor when the others come back
        await pilot.press("s")  # sorted by number: the same order here, the cursor stays on shop-2
        assert "sorted by number" in str(app.screen.query_one("#fleet-line", Static).render())
        assert table.cursor_name == "shop-2"
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.runtime.current is not None and app.runtime.current.name == "shop-2",
                         what="shop-2 current")
        assert app.focused is table and table.cursor_name == "shop-2"


async def test_marked_rows_take_a_bulk_action_after_one_confirmation_naming_the_count() -> None:
    async with fleet_app() as (pilot, gateways):
        app = pilot.app
        await pilot.press("alt+9")
        await wait_until(pilot, lambda: shown_names(app) == list(NAMES), what="three rows")
        await pilot.press("space", "down", "space")  # shop-1 and shop-3 (space moves on a row)
        assert board(app).marked == {"shop-1", "shop-3"}
        await pilot.press("r")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="the confirmation")
        assert app.screen.question == "Reconnect 2 accounts?"
        await pilot.press("n")  # no: nothing done, the marks stay
        await wait_until(pilot, lambda: not isinstance(app.screen, ConfirmScreen), what="closed")
        assert board(app).marked == {"shop-1", "shop-3"}
        await pilot.press("r")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="asked again")
        await pilot.press("y")
        await wait_until(pilot, lambda: any("reconnect: 2 accounts done" in str(note.message)
                                            for note in notifications_of(app)), what="done")
        assert board(app).marked == set()
        await settle(pilot)


async def test_at_80_columns_the_header_keeps_account_connection_and_health_whole() -> None:
    """With several accounts, the dialects give up their room (the board lists them): the account, its connection,
    its webhook health and the insecure-storage warning all fit in 80 cells, none cut."""
    async with fleet_app(size=(80, 24)) as (pilot, _gateways):
        app = pilot.app
        await wait_until(pilot, lambda: "connected" in header_text(app), what="the connection read")
        header = app.screen.query_one(GatewayHeader)
        used = sum(piece.outer_size.width for piece in header.query(Static) if piece.display and piece.id != "header-spacer")
        assert used <= 80, f"the header needs {used} cells: {header_text(app)}"
        text = header_text(app)
        assert "shop-1" in text and "● connected" in text and "⚠ insecure" in text
        assert "zapi/wuzapi" not in text, text


async def test_the_board_is_built_only_while_it_is_on_screen(monkeypatch) -> None:
    # Issue 32: at 1,000 accounts building the board's rows every second cost ~10 % of the main thread while the user
    # typed in another section. Behind another section the timer's turn builds nothing; shown, the rows are current.
    async with fleet_app() as (pilot, _gateways):
        app = pilot.app
        section = board(app)
        built: list[int] = []
        original = FleetSection.refresh_board

        def counting(self: FleetSection) -> None:
            built.append(1)
            original(self)

        monkeypatch.setattr(FleetSection, "refresh_board", counting)
        assert not section.region.area  # Chats is shown
        section._refresh_on_screen()
        assert built == []
        section.accounts.note = "a word the board has not shown yet"
        await pilot.press("alt+9")
        await wait_until(pilot, lambda: "a word the board has not shown yet" in str(
            app.screen.query_one("#fleet-line", Static).render()), what="the board current when shown")
        count = len(built)
        section._refresh_on_screen()
        assert len(built) == count + 1
