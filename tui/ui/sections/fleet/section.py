"""The Fleet section (alt+9, issue 26): the board, one row per open account, refreshed every second without taking
the focus or moving the cursor. `/` filters across all columns (Esc clears), `s` sorts by the next column, Enter makes
the account current, space marks it, and `w`, `d`, `r` act on the marked accounts (or the one under the cursor)
after one confirmation naming the count."""

from __future__ import annotations

from collections.abc import Mapping

import asyncio
from datetime import UTC, datetime
from typing import ClassVar, Self

from textual import on, work
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.widgets import DataTable, Static

from tui.core.accounts.accounts import Accounts
from tui.core.alerts.service import AlertService
from tui.core.display import Display
from tui.core.services import Services
from tui.ui.widgets.gateway_app import AppState
from tui.core.webhook_setup import WebhookSetup
from tui.core.runtime import Account, FleetRow
from tui.ui.sections.fleet.filter import FleetFilter
from tui.ui.sections.fleet.rows import COLUMN_KEYS, COLUMNS, arranged, cells
from tui.ui.sections.fleet.table import FleetTable
from tui.ui.keymap import bindings_for
from tui.ui.widgets.section import ConfirmScreen
from tui.ui.widgets.section_api import Section, SectionHost

REFRESH_INTERVAL = 1.0
"""Seconds between two refreshes of the board (at least once a second, as the issue asks)."""
READ_INTERVAL = 5.0
"""Seconds between two reads behind the board (status reads when due, the unread count)."""

ALERT_MARK = "⚠"
"""Before the name of an account with an alert raised and not cleared yet (issue 35)."""

BULK: dict[str, tuple[str, str]] = {
    "point": ("Point the webhooks of", "at this app's listener"),
    "fix": ("Run the doctor's fixes on", "(the check, then what needs no secret)"),
    "reconnect": ("Reconnect", "(Z-API restart; WuzAPI disconnect, then connect)"),
}

HELP = """\
### Fleet

One row per open account (`--profiles a,b,c` or `--all-profiles`): its number, dialects, connection (what the
status reads and connection events say: nothing here connects), webhook health (the doctor's findings; "unchecked"
until the doctor looked while it was current, or a bulk fix ran), unread chats, events per minute, messages sent
today and how long ago each kind of event last came.

- `/` filters: rows with every word in some column; Esc clears it.
- `s` sorts by the next column; the line above the board says which.
- Enter makes the account under the cursor current: the other sections act on it. F3 does the same from anywhere.
- ⚠ before a name: an alert is open for the account (disconnected, flapping, a campaign paused, ...); it goes when the
  alert clears.
- Space marks accounts; `w` points their webhooks here, `d` runs the doctor's fixes, `r` reconnects them. Each asks
  once, naming how many accounts (with none marked: the one under the cursor).
"""


class FleetSection(Section):
    BINDINGS = bindings_for("fleet")
    HELP = HELP
    OPERATIONS: ClassVar[Mapping[str, str]] = {}

    DEFAULT_CSS = """
    FleetSection { height: 1fr; }
    FleetSection #fleet-line { height: 1; padding: 0 1; color: $text-muted; }
    FleetSection #fleet-filter { height: 1; border: none; padding: 0 1; }
    FleetSection FleetTable { height: 1fr; }
    """

    def __init__(self, accounts: Accounts, webhooks: WebhookSetup, display: Display,
                 alerts: AlertService | None = None) -> None:
        super().__init__(id="fleet-section")
        self.accounts = accounts
        self.alerts = alerts
        self.webhooks = webhooks
        self.run_display = display
        self.sort = "name"
        self.marked: set[str] = set()
        self.rows: list[FleetRow] = []
        """What the board shows now, filtered and sorted."""

    @classmethod
    def with_services(cls, services: Services, state: AppState) -> Self:
        return cls(services.accounts, services.webhooks, services.display, services.alerts)

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(id="fleet-line")
            yield FleetFilter(placeholder="/ filter: words in any column (Esc clears)", id="fleet-filter")
            table = FleetTable(id="fleet-table")
            for column in COLUMNS:
                table.add_column(column.title, key=column.key)
            yield table

    def on_mount(self) -> None:
        self.query_one(FleetFilter).display = False  # shown by `/` (and while it holds words): the board has the focus
        self.refresh_board()
        self.set_interval(REFRESH_INTERVAL, self._refresh_on_screen, name="fleet board")
        self.set_interval(READ_INTERVAL, self._read, name="fleet reads")
        self._read()

    @property
    def table(self) -> FleetTable:
        return self.query_one(FleetTable)

    # -- the board ---------------------------------------------------------------------------------------------

    def refresh_board(self) -> None:
        """Rows from what the runtime knows now; the focus and the cursor stay where they are."""
        accounts = self.accounts
        now = None if self.run_display.deterministic else datetime.now(UTC)
        words = self.query_one(FleetFilter).value
        self.rows = arranged(accounts.fleet_rows(), words=words, sort=self.sort, now=now)
        current = accounts.current.name if accounts.current is not None else None
        shown = []
        for row in self.rows:
            row_cells = cells(row, now)
            alerted = self.alerts is not None and bool(self.alerts.open_alerts(row.profile))
            # In the mark's two columns, not after the name: a cell rewritten in place keeps its column's width.
            mark = ("✓" if row.profile in self.marked else " ") + (ALERT_MARK if alerted else " ")
            here = " ◀" if row.profile == current else ""
            shown.append((row.profile, (mark + row_cells[0] + here, *row_cells[1:])))
        self.table.show(shown)
        title = next(column.title for column in COLUMNS if column.key == self.sort)
        total = len(accounts.all)
        parts = [f"{total} account{'s' if total != 1 else ''}"]
        if words:
            parts.append(f"{len(self.rows)} match “{words}”")
        parts.append(f"sorted by {title.lower()}")
        if self.marked:
            parts.append(f"{len(self.marked)} marked")
        if accounts.note:
            parts.append(accounts.note)
        # One line of fixed height: its words change, never the screen's layout (issue 32: each layout of the screen
        # is ~10-15 ms the keys wait behind).
        self.query_one("#fleet-line", Static).update(Content(" · ".join(parts)), layout=False)

    def _refresh_on_screen(self) -> None:
        """The timer's turn: only while the board is on screen. Behind another section its rows are not seen, and at
        1,000 accounts building them was ~10 % of the main thread while the user typed elsewhere (issue 32)."""
        if self.region.area:
            self.refresh_board()

    def on_show(self) -> None:
        self.refresh_board()  # what is known now, at once: the rows were not kept up while another section was shown
        self._read()  # and the status, at once, not at the next turn of the timer

    @work(group="fleet-reads", exclusive=True, exit_on_error=False, description="read the fleet's status")
    async def _read(self) -> None:
        if not self.region.area:
            return  # not on screen (mounted in the background, another section shown): no status reads for it
        await self.accounts.read_fleet()
        self.refresh_board()

    # -- keys ------------------------------------------------------------------------------------------------

    def action_filter(self) -> None:
        field = self.query_one(FleetFilter)
        field.display = True
        field.focus()

    @on(FleetFilter.Changed)
    def _filtered(self) -> None:
        self.refresh_board()

    @on(FleetFilter.Leave)
    def _leave_filter(self) -> None:
        field = self.query_one(FleetFilter)
        field.display = bool(field.value)
        self.refresh_board()
        self.table.focus()

    def action_sort(self) -> None:
        self.sort = COLUMN_KEYS[(COLUMN_KEYS.index(self.sort) + 1) % len(COLUMN_KEYS)]
        self.refresh_board()

    def action_mark(self) -> None:
        name = self.table.cursor_name
        if name is None:
            return
        self.marked.symmetric_difference_update({name})
        self.refresh_board()
        if self.table.cursor_row < self.table.row_count - 1:  # as a file manager: on to the next row
            self.table.move_cursor(row=self.table.cursor_row + 1)

    @on(DataTable.RowSelected)
    def _selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.action_make_current()

    def action_make_current(self) -> None:
        name = self.table.cursor_name
        host = self.screen
        if name is not None and isinstance(host, SectionHost):
            self.run_worker(self._make_current(host, name), group="fleet-current", exclusive=True,
                            exit_on_error=False, description="make the account current")

    async def _make_current(self, host: SectionHost, name: str) -> None:
        await host.make_current(name)
        self.refresh_board()

    def chosen(self) -> list[Account]:
        """The marked accounts still open, in the board's order; none marked: the one under the cursor."""
        names = [row.profile for row in self.rows if row.profile in self.marked] if self.marked else (
            [self.table.cursor_name] if self.table.cursor_name else [])
        return [account for name in names if (account := self.accounts.named(name)) is not None]

    def action_bulk(self, what: str) -> None:
        accounts = self.chosen()
        if not accounts or what not in BULK:
            return
        verb, detail = BULK[what]
        count = len(accounts)
        question = f"{verb} {count} account{'s' if count != 1 else ''}?"
        names = ", ".join(account.name for account in accounts[:6]) + (" …" if count > 6 else "")

        def answered(yes: bool | None) -> None:
            if yes:
                self._run_bulk(what, accounts)

        self.app.push_screen(ConfirmScreen(question, f"{names} {detail}"), answered)

    @work(group="fleet-bulk", exclusive=True, exit_on_error=False, description="act on the marked accounts")
    async def _run_bulk(self, what: str, accounts: list[Account]) -> None:
        results = await asyncio.gather(*(self._one(what, account) for account in accounts))
        failed = [f"{account.name}: {problem}" for account, problem in zip(accounts, results, strict=True) if problem]
        done = len(accounts) - len(failed)
        verb = BULK[what][0].split(" ")[0].lower()
        if failed:
            self.notify(f"{verb}: {done} done, {len(failed)} not: " + "; ".join(failed[:5]),
                        title="Fleet", severity="warning", markup=False, timeout=12)
        else:
            self.notify(f"{verb}: {done} account{'s' if done != 1 else ''} done", title="Fleet", markup=False)
        self.marked.clear()
        self._read()

    async def _one(self, what: str, account: Account) -> str | None:
        """One account's share of a bulk action; the problem in words, or None."""
        from tui.api.errors import GatewayError
        from tui.core.pairing import PairingActions, PairingRefused
        from tui.core.runtime import ClientsNotReady
        from tui.ui.widgets.feedback import explain_error

        webhooks = self.webhooks
        try:
            if what == "point":
                await webhooks.configure_webhooks(webhooks.listener_base(), account=account)
                await webhooks.check_webhooks(account)  # the board's health says what it is now
            elif what == "fix":
                await webhooks.fix_webhooks(account)
            else:
                for family in sorted(account.families, key=lambda family: family.value):
                    await PairingActions(account, family).reconnect()
        except GatewayError as error:
            return explain_error(error)
        except (ClientsNotReady, PairingRefused) as error:
            return str(error)
        except Exception as error:  # one account's trouble must not stop the others' (said, never raised)
            return f"{type(error).__name__}: {error}"
        return None
