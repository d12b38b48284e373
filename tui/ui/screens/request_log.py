"""The request log (F2, the palette, or `r` from Events): every HTTP exchange with the gateway.

Table: time, method, redacted URL, status, duration; below it the highlighted exchange's request headers and
bodies, response body and error. `c` copies it as curl (secrets replaced by shell variables) and shows the
text. Everything here was redacted by the client before it was recorded.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.console import Group
from rich.syntax import Syntax
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static

from tui.ui.widgets.clipboard import copy_text
from tui.ui.widgets.columns import Column, fit_columns
from tui.ui.keymap import bindings_for

from tui.ui.widgets.header import GatewayHeader
from tui.ui.widgets.timefmt import duration_text, moment_text

if TYPE_CHECKING:
    from tui.core.services import Services
    from tui.ui.widgets.gateway_app import AppState

# Status never gives way; at 80 columns the URL shrinks (keeping its end, where the operation is).
COLUMNS = (
    Column("time", 8),
    Column("method", 6),
    Column("url", 62, minimum=16, flex=True),
    Column("status", 9),
    Column("duration", 8, minimum=6, give_way=1),
)


def _pretty(body: str | None) -> tuple[str, str]:
    if body is None:
        return "", "text"
    import json

    try:
        return json.dumps(json.loads(body), indent=2, ensure_ascii=False), "json"
    except ValueError:
        return body, "text"


class RequestLogScreen(Screen):
    """Full screen, over the main screen; escape or q goes back."""

    BINDINGS = bindings_for("requests")

    DEFAULT_CSS = """
    RequestLogScreen #requests-title { height: auto; padding: 0 1; background: $boost; text-style: bold; }
    RequestLogScreen #requests-table { height: 12; }
    RequestLogScreen.-short #requests-table { height: 7; }
    RequestLogScreen #requests-detail { height: 1fr; border-top: solid $primary; padding: 0 1; }
    RequestLogScreen #requests-curl { height: auto; padding: 0 1; background: $boost; display: none; }
    RequestLogScreen #requests-curl.-shown { display: block; }
    """

    def __init__(self, services: Services, state: AppState) -> None:
        super().__init__()
        self.services = services
        self.request_log = services.accounts.request_log
        self.run_display = services.display
        self.state = state
        self.exchanges: list[Any] = []

    def compose(self) -> ComposeResult:
        yield GatewayHeader(self.services, self.state, says_drops=False)  # the main screen's header, under it, says a drop
        yield Static(
            "Request log · newest first · c: copy as curl (secrets become $GATEWAY_TUI_… variables)",
            id="requests-title",
            markup=False,
        )
        with Vertical():
            table: DataTable[str] = DataTable(id="requests-table", cursor_type="row", zebra_stripes=True)
            for column, title in zip(COLUMNS, ("Time", "Method", "URL", "Status", "Duration"), strict=True):
                table.add_column(title, key=column.key, width=column.width)
            yield table
            yield Static(id="requests-curl")
            with VerticalScroll(id="requests-detail"):
                yield Static(id="requests-exchange")
        yield Footer()

    def on_mount(self) -> None:
        self.state.exchange_recorded.subscribe(self, self._on_exchange)
        self.exchanges = list(reversed(list(self.request_log)))
        self._redraw()
        self.query_one("#requests-table", DataTable).focus()

    def on_resize(self) -> None:
        self._redraw()

    def _on_exchange(self, exchange: Any) -> None:
        self.exchanges.insert(0, exchange)
        self._redraw()

    def _redraw(self) -> None:
        table = self.query_one("#requests-table", DataTable)
        row = table.cursor_row
        url_width = fit_columns(table, COLUMNS)["url"]
        table.clear()
        display = self.run_display
        for index, exchange in enumerate(self.exchanges):
            if exchange.status is None:
                status = Text("no answer", style="bold red")
            else:
                status = Text(str(exchange.status), style="green" if exchange.ok else "bold red")
            url = display.scrub(exchange.url)
            table.add_row(
                Text(moment_text(exchange.started_at, deterministic=display.deterministic)),
                Text(exchange.method),
                Text(url if len(url) <= url_width else "…" + url[-(url_width - 1) :]),
                status,
                Text(duration_text(exchange.duration_ms, deterministic=display.deterministic), justify="right"),
                key=str(index),
            )
        if self.exchanges:
            table.move_cursor(row=min(max(row, 0), len(self.exchanges) - 1), animate=False)
            self._show(self.exchanges[table.cursor_row])
        else:
            self.query_one("#requests-exchange", Static).update(Text("No exchanges yet."))

    @on(DataTable.RowHighlighted, "#requests-table")
    def _highlighted(self, message: DataTable.RowHighlighted) -> None:
        if 0 <= message.cursor_row < len(self.exchanges):
            self._show(self.exchanges[message.cursor_row])
            self.query_one("#requests-curl", Static).remove_class("-shown")

    def selected(self) -> Any | None:
        table = self.query_one("#requests-table", DataTable)
        if 0 <= table.cursor_row < len(self.exchanges):
            return self.exchanges[table.cursor_row]
        return None

    def _show(self, exchange: Any) -> None:
        display = self.run_display
        parts: list[Any] = []
        head = Text.assemble((f"{exchange.method} ", "bold"), display.scrub(exchange.url))
        outcome = str(exchange.status) if exchange.status is not None else "no answer"
        head.append(f"\n→ {outcome} in {duration_text(exchange.duration_ms, deterministic=display.deterministic)}")
        if exchange.error:
            head.append(f"\nerror: {display.scrub(exchange.error)}", style="red")
        parts.append(head)
        if exchange.request_headers:
            headers = Text("\nRequest headers\n", style="bold")
            for name, value in exchange.request_headers.items():
                headers.append(f"{name}: ", style="bold")
                headers.append(display.scrub(value) + "\n", style="")
            parts.append(headers)
        for title, body in (("Request body", exchange.request_body), ("Response body", exchange.response_body)):
            if body is None:
                continue
            text, lexer = _pretty(body)
            parts.append(Text(f"\n{title}", style="bold"))
            parts.append(Syntax(display.scrub(text), lexer, theme="ansi_dark", word_wrap=True, background_color="default"))
        self.query_one("#requests-exchange", Static).update(Group(*parts))

    def action_copy_curl(self) -> None:
        exchange = self.selected()
        if exchange is None:
            return
        curl = exchange.as_curl()
        copy_text(self.app, curl, "The curl command", note="Set the GATEWAY_TUI_* variables before running it.")
        shown = self.query_one("#requests-curl", Static)
        display = self.run_display
        shown.update(Text.assemble(("as curl: ", "bold"), display.scrub(curl)))
        shown.add_class("-shown")
