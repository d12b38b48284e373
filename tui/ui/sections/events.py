"""Events section (7): the whole stored history, with filters (kind, verdict), search, paging and export.

Every store call runs in a thread worker (the store's read methods are synchronous SQLite). Paging is keyset
paging on the event id, so page N of a million events costs what page 1 costs. The total is counted in its
own worker, so a slow count never delays the page.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from enum import StrEnum
from pathlib import Path
from typing import Any, ClassVar, Self

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.widgets import DataTable, Input, Select, Static

from tui.ui.widgets.columns import Column, fit_columns
from tui.core.accounts.accounts import Accounts
from tui.core.display import Display
from tui.core.feed.feed import EventFeed
from tui.core.services import Services
from tui.ui.widgets.gateway_app import AppState
from tui.core.runtime import duplicate_marker
from tui.ui.messages import EventChosen
from tui.ui.widgets.event_marks import BADGE_WIDTH, DUPLICATE_STYLE, clip, cut_marker, sent_marker, verdict_badge
from tui.ui.keymap import bindings_for
from tui.ui.widgets.feedback import is_shown
from tui.ui.widgets.path_dialog import PathDialog
from tui.ui.widgets.section_api import Section
from tui.ui.widgets.timefmt import event_time_text
from tui.ui.widgets.focus import TypingInForms

PAGE_SIZE = 100
# At 80 columns the Verdict stays; the date, the id's padding, the summary, then the kind give way.
TABLE_COLUMNS = (
    Column("id", 8, minimum=5, give_way=1),
    Column("time", 19, minimum=8, give_way=0),  # below 19 the date goes, the time of day stays
    Column("kind", 12, minimum=10, give_way=3),
    Column("summary", 52, minimum=14, give_way=2, flex=True),
    Column("verdict", BADGE_WIDTH),
)
# With `a` (every open account's events): whose each event is, beside its id.
ACCOUNT_COLUMN = Column("account", 14, minimum=8, give_way=4)
TABLE_COLUMNS_ALL_ACCOUNTS = (TABLE_COLUMNS[0], ACCOUNT_COLUMN, *TABLE_COLUMNS[1:])
COLUMN_TITLES = {"id": "#", "account": "Account", "time": "Received", "kind": "Kind", "summary": "Summary",
                 "verdict": "Verdict"}
SEARCH_DELAY = 0.25
LIVE_REFRESH_DELAY = 0.3

VERDICT_OPTIONS = [
    ("✓ valid", "valid"),
    ("✗ invalid", "invalid"),
    ("– unsigned", "unsigned"),
    ("? no key", "no-key"),
    ("● apikey ok", "apikey-ok"),
    ("– no apikey", "no-apikey"),
    ("● secret url", "path-secret-ok"),
    ("⛔ rejected", "rejected"),
]

HELP = """\
### Events

The whole history of webhook events received by the listener, newest first, from the event store.

- **Kind** and **Verdict** filter the list; **Search** finds words anywhere in the body (full text, the
  last word may be a prefix).
- `]` / `n` older page, `[` / `p` newer page, `g` back to the newest events.
- `enter` on a row opens the event (headers, verdict, pretty JSON).
- `x` exports the current selection (all pages, oldest first) to a JSON Lines file you confirm.
- `F2` opens the request log: every HTTP exchange with the gateway, and *copy as curl*.
- `m` shows only the events of the message of the highlighted row; `m` again clears it.
- With several accounts open, the current account's events show (the line above the table names it); `a` shows
  every open account's, each named in an Account column, `a` again only the current one's.

Verdicts: ✓ valid signature · ✗ invalid signature · – unsigned (a key is set, no signature) ·
? no key configured (nothing checked) · ⛔ rejected by the listener (never authentic).
"""


class EventsCommand(StrEnum):
    """The Events section's own palette commands."""

    EXPORT = "export"
    SEARCH = "search"
    NEWEST = "newest"


class EventsFilters(Horizontal, TypingInForms):
    """The kind and verdict pickers and the search field. On them the section's own letters (`g`, `x`, `/`...) are
    typing: the pickers are form controls right under the section, with no form around them to take the keys."""


class EventsSection(Vertical, Section):
    """The stored history. Built by the main screen into the `#events` slot."""

    HELP = HELP
    OPERATIONS: ClassVar[Mapping[str, str]] = {
        EventsCommand.EXPORT: "Export events to JSON Lines",
        EventsCommand.SEARCH: "Search events",
        EventsCommand.NEWEST: "Show newest events",
    }

    BINDINGS = bindings_for("events")

    DEFAULT_CSS = """
    EventsSection { height: 1fr; }
    EventsSection #events-filters { height: 3; }
    EventsSection #events-filters Select { width: 24; }
    EventsSection #events-filters Input { width: 1fr; }
    EventsSection #events-status { height: 1; padding: 0 1; color: $text-muted; }
    EventsSection #events-table { height: 1fr; }
    """

    def __init__(self, accounts: Accounts, feed: EventFeed, display: Display, state: AppState) -> None:
        super().__init__()
        self.accounts = accounts
        self.feed = feed
        self.run_display = display
        self.state = state
        self._runtime_ready = False  # the app's flag, as its watch last said
        self.page_starts: list[int | None] = [None]  # `before_id` of each page shown so far
        self.rows: list[Any] = []
        self.total: int | None = None
        self.only_message: str | None = None
        self.all_accounts = False
        """With several accounts open: every account's events (`a`), not only the current one's."""
        self._live_pending = False
        self._stale = False  # events came while the section was not shown: read the newest page when it shows

    @classmethod
    def with_services(cls, services: Services, state: AppState) -> Self:
        return cls(services.accounts, services.feed, services.display, state)

    @property
    def refresh_pending(self) -> bool:
        """Events arrived and the newest page is to be read again in a moment (tests wait for it before they look)."""
        return self._live_pending

    def compose(self) -> ComposeResult:
        with EventsFilters(id="events-filters"):
            yield Select([], prompt="Kind: all", id="events-kind", allow_blank=True)
            yield Select(VERDICT_OPTIONS, prompt="Verdict: all", id="events-verdict", allow_blank=True)
            yield Input(placeholder="Search body text…", id="events-search", compact=False)
        yield Static(id="events-status")
        table: DataTable[Any] = DataTable(id="events-table", cursor_type="row", zebra_stripes=True)
        self._add_columns(table)
        yield table

    def _columns(self) -> tuple[Column, ...]:
        return TABLE_COLUMNS_ALL_ACCOUNTS if self.all_accounts else TABLE_COLUMNS

    def _add_columns(self, table: DataTable[Any]) -> None:
        for column in self._columns():
            table.add_column(COLUMN_TITLES[column.key], key=column.key, width=column.width)

    def first_field(self) -> DataTable[Any]:
        """The table: the section opens on the events, where its letter keys act (the filters are a form: typing
        there is never a command)."""
        return self.query_one("#events-table", DataTable)

    def on_resize(self) -> None:
        if self.rows:  # widths follow the terminal; the highlighted row stays
            table = self.query_one("#events-table", DataTable)
            row = table.cursor_row
            self._show_page(self.rows, None)
            table.move_cursor(row=row, animate=False)

    def on_mount(self) -> None:
        from tui.ui.widgets.forms import CURSOR_BLINK

        self.query_one("#events-search", Input).cursor_blink = CURSOR_BLINK
        self.state.event_received.subscribe(self, self._on_live_events)
        self.watch(self.app, "runtime_ready", self._on_ready, init=True)

    def _on_ready(self, ready: bool) -> None:
        self._runtime_ready = ready
        if ready:
            self.reload()
        else:
            self._status("Starting the event store…")

    # -- filters --------------------------------------------------------------------------------------------

    def account_shown(self) -> str | None:
        """The account whose events show: the current one when several are open (unless `a` asked for all)."""
        return None if self.all_accounts else self.accounts.shown

    def accounts_shown(self) -> str | tuple[str, ...] | None:
        """The store's account filter: the account shown, or with `a` every open account (an account not open
        here, whose events another app or `listen --all` stored, is not among them)."""
        if self.all_accounts:
            return tuple(account.name for account in self.accounts.all)
        return self.account_shown()

    def action_all_accounts(self) -> None:
        if len(self.accounts.all) < 2:
            self.app.notify("Only one account is open: its events are all shown.", markup=False)
            return
        self.all_accounts = not self.all_accounts
        self.only_message = None
        table = self.query_one("#events-table", DataTable)
        table.clear(columns=True)  # the Account column comes and goes with `a`
        self._add_columns(table)
        self.reload()

    def filters(self) -> dict[str, Any]:
        chosen = self._chosen_filters()
        if (accounts := self.accounts_shown()) is not None:
            chosen["account"] = accounts
        return chosen

    def _chosen_filters(self) -> dict[str, Any]:
        """What the user chose in the filter fields."""
        kind = self.query_one("#events-kind", Select).value
        verdict = self.query_one("#events-verdict", Select).value
        search = self.query_one("#events-search", Input).value.strip()
        chosen: dict[str, Any] = {}
        if isinstance(kind, str):
            chosen["kind"] = kind
        if verdict == "rejected":
            chosen["rejected"] = True
        elif isinstance(verdict, str):
            chosen["verdict"] = verdict
        if search:
            chosen["search"] = search
        return chosen

    @on(Select.Changed, "#events-kind, #events-verdict")
    def _filter_changed(self) -> None:
        self.only_message = None
        self.reload()

    @on(Input.Changed, "#events-search")
    def _search_changed(self) -> None:
        self.only_message = None
        self.set_timer(SEARCH_DELAY, self._search_settled)
        self._search_generation = getattr(self, "_search_generation", 0) + 1
        self._pending_generation = self._search_generation

    def _search_settled(self) -> None:
        if getattr(self, "_pending_generation", None) == getattr(self, "_search_generation", None):
            self._pending_generation = None
            self.reload()

    @on(Input.Submitted, "#events-search")
    def _search_submitted(self) -> None:
        self.reload()
        self.query_one("#events-table", DataTable).focus()

    # -- loading --------------------------------------------------------------------------------------------

    def reload(self) -> None:
        """Back to the newest page with the current filters."""
        self.page_starts = [None]
        self._load_page(None, self.filters(), count=True)

    @work(thread=True, group="events-page", exclusive=True, exit_on_error=False, description="read events")
    def _load_page(self, before_id: int | None, filters: dict[str, Any], count: bool = False) -> None:
        store = self.feed.store
        if store is None:
            return
        if self.only_message is not None:
            rows = list(reversed(store.find_by_message_id(self.only_message)))
        elif before_id is None:
            rows = store.newest(PAGE_SIZE, **filters)
        else:
            rows = store.page_before(before_id, PAGE_SIZE, **filters)
        kinds = store.kinds() if count else None
        self.app.call_from_thread(self._show_page, rows, kinds)
        if count:
            self.app.call_from_thread(self._count, filters)

    @work(thread=True, group="events-count", exclusive=True, exit_on_error=False, description="count events")
    def _count(self, filters: dict[str, Any]) -> None:
        store = self.feed.store
        if store is None:
            return
        if self.only_message is not None:
            total = len(self.rows)
        else:
            total = store.count(**filters)
        self.app.call_from_thread(self._show_total, total)

    def _show_total(self, total: int) -> None:
        self.total = total
        self._show_status()

    def _show_page(self, rows: list[Any], kinds: list[str] | None) -> None:
        self.rows = rows
        if kinds is not None:
            self._set_kinds(kinds)
        table = self.query_one("#events-table", DataTable)
        widths = fit_columns(table, self._columns())
        table.clear()
        display = self.run_display
        for event in rows:
            marker = sent_marker(self.state.sent, event)
            duplicate = duplicate_marker(event) + cut_marker(event)
            summary = Text(clip(duplicate + marker + display.scrub(event.summary), widths["summary"]), no_wrap=True)
            if duplicate:
                summary.stylize(DUPLICATE_STYLE, 0, len(duplicate))
            if marker:
                summary.stylize("bold cyan", len(duplicate), len(duplicate) + len(marker))
            cells = [Text(str(event.id), justify="right")]
            if self.all_accounts:
                cells.append(Text(clip(event.account or "–", widths["account"]), no_wrap=True))
            table.add_row(
                *cells,
                Text(event_time_text(event, deterministic=display.deterministic,
                                     with_date=not display.deterministic and widths["time"] >= 19)),
                Text(clip(event.kind, widths["kind"]), style="red" if event.rejected else ""),
                summary,
                verdict_badge(event),
                key=str(event.id),
            )
        self._show_status()

    def _set_kinds(self, kinds: list[str]) -> None:
        select = self.query_one("#events-kind", Select)
        current = select.value
        options = [(kind, kind) for kind in kinds]
        if getattr(self, "_kinds", None) == kinds:
            return
        self._kinds = kinds
        with self.prevent(Select.Changed):
            select.set_options(options)
            if isinstance(current, str) and current in kinds:
                select.value = current

    def _show_status(self) -> None:
        page = len(self.page_starts)
        if self.only_message is not None:
            text = f"only message {self.only_message}: {len(self.rows)} events · m: show all"
        elif not self.rows:
            text = ("No events match." if self._chosen_filters()
                    else "No events yet: send something, or point a gateway here.")
        else:
            first = self.rows[0].id
            last = self.rows[-1].id
            total = f"{self.total:,}" if self.total is not None else "…"
            text = f"page {page} · ids {first}–{last} · {total} matching · ] older · [ newer · x export"
        self._status(self._whose() + text)

    def _whose(self) -> str:
        """With several accounts open: whose events these are, and the key that shows the others."""
        accounts = self.accounts
        if len(accounts.all) < 2 or self.only_message is not None:
            return ""
        account = self.account_shown()
        if account is None:
            current = accounts.current.name if accounts.current is not None else "the current account"
            return f"all {len(accounts.all)} accounts · a: only {current} · "
        return f"{account}'s events · a: all accounts · "

    def _status(self, text: str) -> None:
        self.query_one("#events-status", Static).update(Content(text))

    # -- paging ---------------------------------------------------------------------------------------------

    def action_older(self) -> None:
        if self.only_message is not None or len(self.rows) < PAGE_SIZE:
            return
        before = self.rows[-1].id
        self.page_starts.append(before)
        self._load_page(before, self.filters())

    def action_newer(self) -> None:
        if len(self.page_starts) <= 1:
            return
        self.page_starts.pop()
        self._load_page(self.page_starts[-1], self.filters())

    def action_newest(self) -> None:
        self.only_message = None
        self.reload()

    def action_search(self) -> None:
        self.query_one("#events-search", Input).focus()

    def action_message(self) -> None:
        if self.only_message is not None:
            self.only_message = None
            self.reload()
            return
        event = self.highlighted_event()
        if event is None or not event.message_ids:
            self.app.notify("The highlighted event names no message.")
            return
        self.show_message(event.message_ids[0])

    def show_message(self, message_id: str) -> None:
        """Only the events of one message (all of them, newest first)."""
        self.only_message = message_id
        self.page_starts = [None]
        self._load_page(None, {}, count=False)

    def highlighted_event(self) -> Any | None:
        table = self.query_one("#events-table", DataTable)
        if not self.rows or table.cursor_row < 0 or table.cursor_row >= len(self.rows):
            return None
        return self.rows[table.cursor_row]

    @on(DataTable.RowSelected, "#events-table")
    def _open(self, message: DataTable.RowSelected) -> None:
        message.stop()
        event = next((row for row in self.rows if str(row.id) == message.row_key.value), None)
        if event is not None:
            self.post_message(EventChosen(event))  # the app opens it in full

    # -- live updates ---------------------------------------------------------------------------------------

    def _on_live_events(self, _events: tuple[Any, ...]) -> None:
        # Only the newest page moves; older pages stay put while the user reads them.
        if len(self.page_starts) == 1 and self.only_message is None and not self._live_pending:
            self._live_pending = True
            self.set_timer(LIVE_REFRESH_DELAY, self._live_refresh)

    def _live_refresh(self) -> None:
        """The newest page again, while the section shows. Behind another section it is read once, when it shows:
        its read (a page, the kinds, the count) and its 100 rows rebuilt every 0.3 s while events flow were main-
        thread work in every section (bench/fleet.py)."""
        self._live_pending = False
        if len(self.page_starts) == 1 and self.only_message is None and self._runtime_ready:
            if not is_shown(self):
                self._stale = True
                return
            self._stale = False
            self._load_page(None, self.filters(), count=True)

    def on_show(self) -> None:
        if self._stale:
            self._live_refresh()

    # -- operations -----------------------------------------------------------------------------------------

    def open_operation(self, op_id: str) -> None:
        self.query_one("#events-table", DataTable).focus()  # the palette opened it: the focus comes here
        if op_id == EventsCommand.EXPORT:
            self.action_export()
        elif op_id == EventsCommand.SEARCH:
            self.action_search()
        elif op_id == EventsCommand.NEWEST:
            self.action_newest()

    def action_export(self) -> None:
        from tui.local.paths import data_dir

        filters = {} if self.only_message is not None else self.filters()
        # The data dir, not the current directory: exports hold people's messages (and are written 0600).
        name = "events-export.jsonl"
        if not self.run_display.deterministic:
            name = f"events-export-{datetime.now().strftime('%Y%m%d-%H%M%S')}.jsonl"
        default = str(data_dir() / name)

        def chosen(path: Path | None) -> None:
            if path is not None:
                self._export(path, filters)

        self.app.push_screen(ExportScreen(default, filters), chosen)

    @work(thread=True, group="events-export", exclusive=True, exit_on_error=False, description="export events")
    def _export(self, path: Path, filters: dict[str, Any]) -> None:
        store = self.feed.store
        if store is None:
            self.app.call_from_thread(self.app.notify, "No event store: nothing to export.", severity="error")
            return
        try:
            written = store.export_jsonl(path, **filters)
        except OSError as error:
            self.app.call_from_thread(
                self.app.notify, f"Export failed: {error.strerror or error} ({path}).", severity="error", markup=False
            )
            return
        except RuntimeError as error:  # the store is failing (e.g. the search index cannot be updated) or closed
            self.app.call_from_thread(self.app.notify, f"Export failed: {error}.", severity="error", markup=False)
            return
        self.app.call_from_thread(self.app.notify, f"Exported {written:,} events to {path}.", markup=False)


class ExportScreen(PathDialog):
    """Asks where to write the export; Enter confirms, Escape cancels. Refuses to overwrite a file."""

    BINDINGS = bindings_for("export")

    def __init__(self, default: str, filters: dict[str, Any]) -> None:
        described = ", ".join(f"{k}={v}" for k, v in filters.items()) or "all events"
        super().__init__(f"Export {described} to JSON Lines (oldest first). File:", default, field_id="export-path",
                         hint="enter: export · escape: cancel")
        self.filters = filters

    def refusal(self, path: Path) -> str | None:
        if path.exists():
            return f"{path} already exists: choose another name (nothing is overwritten)."
        return super().refusal(path)
