"""The live events panel, docked on the main screen (`e` toggles it): newest first, one line per event.

It follows the newest event: new ones show at the top. Once the user moves in it (the cursor or the view off the
top row), it holds what they look at; events arriving meanwhile are counted in its title ("▲ 3 new · g newest"),
`g` jumps to the newest and follows again, and so does Escape, which leaves the panel for where the user was.

Each line: time, kind, summary, verdict badge (✓ valid, ✗ invalid, – unsigned, ? no key). Rejected events are
flagged and never shown as authentic (a valid signature on a rejected event shows as rejected, not ✓).
Events whose `message_ids` contain a message this app sent are marked `↳ your <kind>`; events forwarded to
the user's app start with →✓ (delivered), →… (retrying) or →✗ (failed). `Enter` opens the
detail; `f` shows only the events of the highlighted (or last sent) message, `f` again shows all.

With several accounts open, the panel shows the current account's events (its title names it), like the Events
section: another account's events neither show nor cost a redraw (100 accounts at 500 events a second in all give
the current one 5). Switching accounts reads the new one's newest events.

Incoming events are coalesced: the table is redrawn REDRAW_DELAY seconds after the first event of a burst, so a burst
of webhooks costs one redraw, not one per event; while they keep coming, at most every FLOW_REDRAW_GAP (a flow of
hundreds a second redrawn 20 times a second was a third of the main thread, and a typed key waited behind it). While
the panel is hidden it is not redrawn at all (each redraw
rebuilds its 200 rows, ~35 % of the main thread at 30 events/s, and their garbage fed the collector's full passes):
it is redrawn once when shown again.
"""

from __future__ import annotations

import time
from collections import deque
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import on, work
from textual.coordinate import Coordinate
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.widgets import DataTable, Static

from tui.core.feed.bus import InboxChanged, IntakeChanged
from tui.core.runtime import duplicate_marker
from tui.ui.widgets.columns import Column, fit_columns
from tui.ui.keymap import bindings_for, shown_key
from tui.ui.widgets.event_marks import (
    BADGE_WIDTH,
    DUPLICATE_STYLE,
    clip,
    cut_marker,
    event_time,
    forward_mark,
    sent_marker,
    verdict_badge,
)
from tui.ui.messages import EventChosen
from tui.ui.textual_compat import FreedCachesTable, clear_render_caches
from tui.webhooks.identities import UNKNOWN_NUMBER, identities_in, renamed, unknown_lids
from tui.webhooks.families import inbox_of

if TYPE_CHECKING:
    from tui.core.services import Services
    from tui.ui.widgets.gateway_app import AppState

PANEL_SIZE = 200
# The verdict never gives way; at 80 columns the summary shrinks first, then the kind.
COLUMNS = (
    Column("time", 8),
    Column("kind", 12, minimum=8, give_way=1),
    Column("summary", 70, minimum=16, give_way=0, flex=True),
    Column("verdict", BADGE_WIDTH),
)
REDRAW_DELAY = 0.05
FLOW_REDRAW_GAP = 0.25


class TimeCell(Text):
    """A row's time, carrying its event's id: the table is ordered on it once new rows are added below."""

    __slots__ = ("event_id",)

    def __init__(self, text: str, event_id: int) -> None:
        super().__init__(text)
        self.event_id = event_id


class EventsTable(FreedCachesTable):
    """The panel's table (a DataTable with row cursor). Its `f` says what it does now: "Only this message", or
    "All events" while one message's are shown; `g` (Newest) shows while the panel holds an older event."""

    BINDINGS = bindings_for("panel")

    @property
    def panel(self) -> EventsPanel | None:
        return next((a for a in self.ancestors if isinstance(a, EventsPanel)), None)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        panel = self.panel
        if panel is None:
            return True
        if action == "filter_message":
            return panel.only_message is None
        if action == "all_events":
            return panel.only_message is not None
        if action == "newest":
            return not panel.following
        return True

    def newest_first(self) -> None:
        """Order the rows on their event ids, newest first, after new rows were added below. The table's render
        caches are keyed on its update count, which ordering bumps: emptied here (as `clear` does), they would
        otherwise fill with lines never used again (thousands of kept objects that each full pass of the
        collector walks: its passes grew from ~10 to ~100 ms in a minute of events), freed at once (FreedCachesTable)."""
        self.sort("time", key=lambda cell: cell.event_id, reverse=True)
        clear_render_caches(self)

    def action_filter_message(self) -> None:
        if (panel := self.panel) is not None:
            panel.toggle_message_filter()

    def action_all_events(self) -> None:
        if (panel := self.panel) is not None:
            panel.toggle_message_filter()

    def action_newest(self) -> None:
        if (panel := self.panel) is not None:
            panel.follow_newest()

    def watch_cursor_coordinate(self, old_coordinate: Coordinate, new_coordinate: Coordinate) -> None:
        super().watch_cursor_coordinate(old_coordinate, new_coordinate)
        if (panel := self.panel) is not None:
            panel.moved()

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        if (panel := self.panel) is not None:
            panel.moved()


class EventsPanel(Vertical):
    """Docked at the bottom of the main screen."""

    DEFAULT_CSS = """
    EventsPanel {
        dock: bottom;
        height: 12;
        border-top: solid $primary;
        background: $surface;
    }
    EventsPanel #events-panel-title { height: 1; padding: 0 1; color: $text-muted; }
    EventsPanel EventsTable { height: 1fr; background: $surface; }
    EventsPanel EventsTable > .datatable--header { background: $surface; }
    """

    def __init__(self, services: Services, state: AppState, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.accounts = services.accounts
        self.feed = services.feed
        self.bus = services.bus
        self.run_display = services.display
        self.state = state
        self.events: deque[Any] = deque(maxlen=PANEL_SIZE)
        self.forward_marks: dict[int, Any] = {}  # event id → newest forward attempt
        self.only_message: str | None = None
        self._redraw_pending = False
        self._held = False  # a redraw for events waits for the moment after a key (tui.ui.widgets.typing_pace)
        self._for_user = False  # the redraw pending shows something the user did: never held
        self._drawn_at = float("-inf")  # time.monotonic() of the last redraw of the table
        self._loaded_history = False
        self.following = True
        """New events show at the top (the cursor and the view on the first row); False once the user moved."""
        self.new_above = 0
        """Events that arrived while the panel held an older one (the title's "▲ N new")."""
        self._newest_drawn: int | None = None  # id of the newest event drawn, to count what arrives after it
        self._drawing = False  # a redraw moves the cursor itself: that is not the user moving
        self._stale = False  # events came while the panel was hidden: redraw when it shows
        # What the table holds: its layout (widths, filter), its rows' event ids in order, each row's marks.
        self._drawn_layout: tuple[int, int, str | None] | None = None
        self._drawn_order: list[int] = []
        self._drawn: dict[int, tuple[str, Any, str | None]] = {}
        # Summaries written before a LID's number was known, with the number the store learned since (event id →
        # summary): the line reads as `listen`'s and `events list`'s do (issue 35).
        self._renamed: dict[int, str] = {}

    @property
    def redraw_pending(self) -> bool:
        """Events arrived and the table is redrawn in a moment (tests wait for it before they look)."""
        return self._redraw_pending

    def compose(self) -> ComposeResult:
        yield Static(id="events-panel-title")
        table = EventsTable(id="events-panel-table", cursor_type="row", zebra_stripes=False, show_header=False)
        for column, title in zip(COLUMNS, ("Time", "Kind", "Summary", "Verdict"), strict=True):
            # Text, not a str: DataTable reads a str label as markup, whose emoji table costs ~2 ms of the start.
            table.add_column(Text(title), key=column.key, width=column.width)
        yield table

    def on_mount(self) -> None:
        self.state.event_received.subscribe(self, self._on_events)
        self.state.sent_changed.subscribe(self, lambda _id: self._schedule_redraw())
        self.state.forward_attempted.subscribe(self, self._on_forward_attempt)
        self.watch(self.app, "runtime_ready", self._on_ready, init=True)
        self.bus.subscribe(IntakeChanged, lambda _changed: self._show_title())  # who listens (issue 32)
        self.bus.subscribe(InboxChanged, self._on_inbox_changed)  # a LID looked up, a group's members read
        self._show_title()

    def on_resize(self) -> None:
        self._schedule_redraw()

    def on_show(self) -> None:
        if self._stale:
            self._schedule_redraw()

    # -- data -----------------------------------------------------------------------------------------------

    def _on_ready(self, ready: bool) -> None:
        if ready and not self._loaded_history:
            self._loaded_history = True
            self._load_history(self.account_shown())

    def account_shown(self) -> str | None:
        """The account whose events show (`Accounts.shown`)."""
        return self.accounts.shown

    def account_changed(self) -> None:
        """Another account became current: its newest events replace the other's."""
        self.events.clear()
        self.only_message = None
        self.new_above = 0
        self._newest_drawn = None
        self._show_title()
        self._schedule_redraw()
        if self._loaded_history:
            self._load_history(self.account_shown())

    @work(thread=True, group="events-panel-history", exclusive=True, exit_on_error=False)
    def _load_history(self, account: str | None) -> None:
        store = self.feed.store
        if store is None:
            return
        history = store.newest(PANEL_SIZE, account=account)
        marks = self.feed.latest_forward_attempts([event.id for event in history])
        self.app.call_from_thread(self._merge_history, history, marks, account)

    def _merge_history(self, history: list[Any], marks: dict[int, Any] | None = None,
                       account: str | None = None) -> None:
        if account != self.account_shown():
            return  # read for an account that is no longer current: the switch asked for the new one's
        for event_id, attempt in (marks or {}).items():
            self.forward_marks.setdefault(event_id, attempt)
        known = {event.id for event in self.events}
        merged = list(self.events) + [event for event in history if event.id not in known]
        merged.sort(key=lambda event: event.id, reverse=True)
        self.events = deque(merged[:PANEL_SIZE], maxlen=PANEL_SIZE)
        self._schedule_redraw()
        self._ask_numbers()

    def _on_events(self, events: tuple[Any, ...]) -> None:
        account = self.account_shown()
        mine = events if account is None else tuple(event for event in events if event.account == account)
        if mine:
            # An attached app's follower starts at the store's newest id when it attaches, the history is read when
            # the app is ready: an event stored between the two comes both ways (a second row of one key).
            shown = {event.id for event in self.events}
            mine = tuple(event for event in mine if event.id not in shown)
        if not mine:
            return
        self.events.extendleft(mine)  # oldest first: the newest ends on the left
        self._schedule_redraw(gap=FLOW_REDRAW_GAP, background=True)
        if any(UNKNOWN_NUMBER in event.summary for event in mine) or (
                self._unnamed() and any(identity.phone for event in mine for identity in identities_in(event.payload))):
            self._ask_numbers()

    # -- numbers learned after the line was written ------------------------------------------------------------

    def _unnamed(self) -> dict[int, tuple[str, str]]:
        """The shown events whose summary says "unknown number" and whose number is not known yet, with the inbox
        whose identities name them (its `/a/<profile>/` path's account, else the store's one: "")."""
        return {event.id: (inbox_of(event.path), event.summary) for event in self.events
                if event.id not in self._renamed and UNKNOWN_NUMBER in event.summary}

    def _on_inbox_changed(self, _changed: InboxChanged) -> None:
        self.call_later(self._ask_numbers)

    def _ask_numbers(self) -> None:
        if unnamed := self._unnamed():
            self._learn_numbers(unnamed)

    @work(thread=True, group="events-panel-numbers", exclusive=True, exit_on_error=False)
    def _learn_numbers(self, unnamed: dict[int, tuple[str, str]]) -> None:
        lids: dict[str, set[str]] = {}
        for account, summary in unnamed.values():
            lids.setdefault(account, set()).update(unknown_lids(summary))
        known = {account: self.feed.known_identities(wanted, account) for account, wanted in lids.items()}
        found = {event_id: renamed(summary, known[account].get) for event_id, (account, summary) in unnamed.items()}
        self.app.call_from_thread(self._numbers_learned, {
            event_id: summary for event_id, summary in found.items() if summary != unnamed[event_id][1]})

    def _numbers_learned(self, found: dict[int, str]) -> None:
        if not found:
            return
        if len(self._renamed) > PANEL_SIZE * 4:  # keep only the lines the panel can show
            shown = {event.id for event in self.events}
            self._renamed = {key: value for key, value in self._renamed.items() if key in shown}
        self._renamed.update(found)
        self._schedule_redraw(background=True)

    def _on_forward_attempt(self, attempt: Any) -> None:
        self.forward_marks[attempt.event_id] = attempt
        if len(self.forward_marks) > PANEL_SIZE * 4:  # keep only the marks of events the panel can show
            shown = {event.id for event in self.events}
            self.forward_marks = {key: value for key, value in self.forward_marks.items() if key in shown}
        self._schedule_redraw(background=True)

    def toggle_message_filter(self) -> None:
        """Only the events of the highlighted event's message (or the last message sent); again: all."""
        if self.only_message is not None:
            self.only_message = None
        else:
            self.only_message = self._message_of_cursor() or self.state.sent.last_id
            if self.only_message is None:
                self.app.notify("No message to follow yet: send one, or highlight an event that names one.")
        self._schedule_redraw()
        self.query_one(EventsTable).refresh_bindings()  # `f` says what it does now

    # -- following the newest event ---------------------------------------------------------------------------

    def moved(self) -> None:
        """The cursor or the view moved: by the user, unless a redraw is placing it. Off the first row the panel
        holds what is shown; back on it, it follows the newest event again."""
        if self._drawing or not self.is_attached:
            return
        table = self.query_one(EventsTable)
        following = table.cursor_row <= 0 and table.scroll_y <= 0
        if following != self.following:
            self.following = following
            if following:
                self.new_above = 0
            self._show_title()
            table.refresh_bindings()

    def follow_newest(self) -> None:
        """`g`, and leaving the panel: the newest event on top, the cursor on it, following again."""
        table = self.query_one(EventsTable)
        self._drawing = True
        try:
            table.move_cursor(row=0, animate=False)
            table.scroll_to(y=0, animate=False, immediate=True)
        finally:
            self._drawing = False
        self.following = True
        self.new_above = 0
        self._show_title()
        table.refresh_bindings()

    def leave(self, back_to: Any) -> None:
        """Escape in the panel: the focus goes back to `back_to` (where the user was), and the panel follows."""
        self.follow_newest()
        self.screen.set_focus(back_to)

    def show_message(self, message_id: str | None) -> None:
        self.only_message = message_id
        self._schedule_redraw()

    def _message_of_cursor(self) -> str | None:
        event = self.highlighted_event()
        if event is None or not event.message_ids:
            return None
        message_ids: list[str] = event.message_ids  # a StoredEvent's (the layers keep its type from this module)
        for message_id in message_ids:
            if message_id in self.state.sent.by_id:
                return message_id
        return message_ids[0]

    def visible_events(self) -> list[Any]:
        if self.only_message is None:
            return list(self.events)
        return [event for event in self.events if self.only_message in event.message_ids]

    def highlighted_event(self) -> Any | None:
        table = self.query_one(EventsTable)
        if table.row_count == 0:
            return None
        try:
            key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key
        except Exception:
            return None
        return self._by_id(int(key.value)) if key.value is not None else None

    def _by_id(self, event_id: int) -> Any | None:
        for event in self.events:
            if event.id == event_id:
                return event
        return None

    # -- drawing --------------------------------------------------------------------------------------------

    def _schedule_redraw(self, gap: float = 0.0, *, background: bool = False) -> None:
        """A redraw in REDRAW_DELAY, and at least `gap` seconds after the last one. `background`: for events that
        came, not for something the user did; such a redraw waits for the moment after a key while the user types
        (tui.ui.widgets.typing_pace), theirs never does."""
        if not background:
            self._for_user = True
            if self._held:  # the user's own change shows now, not with the events' held redraw
                self._held = False
                self.set_timer(REDRAW_DELAY, self._redraw)
        if not self._redraw_pending:
            self._redraw_pending = True
            self.set_timer(max(REDRAW_DELAY, self._drawn_at + gap - time.monotonic()), self._redraw)

    def _show_title(self) -> None:
        shown = "only message " + self.only_message if self.only_message else "newest first"
        if self.only_message:
            f_does = Content.from_markup("[dim]$key[/] all events", key=shown_key("panel.unfilter"))
        else:
            f_does = Content.from_markup("[dim]$key[/] this message only", key=shown_key("panel.filter"))
        account = self.account_shown()
        if self.following and account is not None:  # several accounts: whose events, in place of "newest first"
            head = Content.from_markup("[b]Events[/b] of $account", account=account) if not self.only_message else \
                Content.from_markup("[b]Events[/b] of $account ($shown)", account=account, shown=shown)
        elif self.following:
            head = Content.from_markup("[b]Events[/b] ($shown)", shown=shown)
        else:  # holding an older event: what arrived meanwhile, and the key back to it
            head = Content.from_markup("[b]Events[/b] · [b $accent]▲ $count new[/] · [dim]$newest[/] newest",
                                       count=str(self.new_above), newest=shown_key("panel.newest"))
        text = Content.assemble(
            head, Content.from_markup(" · [dim]$detail[/] detail · ", detail=shown_key("panel.detail")), f_does,
            Content.from_markup(" · [dim]$hide[/] hide", hide=shown_key("panel.toggle")),
        )
        if (problem := self.feed.intake_problem()) is not None:  # why no event can come
            text = Content.assemble(Content.from_markup("[b]Events[/b] · [$text-warning]$problem[/]", problem=problem))
        # One line of fixed size (its CSS): no layout of the whole screen for it (Static.update's default), a third of
        # the main thread under a flood of events (bench/README.md).
        self.query_one("#events-panel-title", Static).update(text, layout=False)

    def _redraw(self) -> None:
        if not self._for_user and self.state.pace.holds(self, self._redraw):
            self._held = True  # events' redraw while the user types: after their key's frame (still pending)
            return
        self._redraw_pending = self._held = self._for_user = False
        if not self.is_attached:
            return
        if not self.display:  # hidden (F9): nothing to see, so no rebuild until it shows again
            self._stale = True
            return
        self._stale = False
        self._drawing = True
        self._drawn_at = time.monotonic()
        try:
            self._draw()
        finally:
            self._drawing = False
        self._show_title()

    def _draw(self) -> None:
        table = self.query_one(EventsTable)
        previous = self.highlighted_event()
        visible = self.visible_events()
        newest_before = self._newest_drawn
        self._newest_drawn = visible[0].id if visible else None
        if not self.following and newest_before is not None:
            self.new_above += sum(1 for event in visible if event.id > newest_before)
        widths = fit_columns(table, COLUMNS)
        layout = (widths["summary"], widths["kind"], self.only_message)
        states = {event.id: (sent_marker(self.state.sent, event), self.forward_marks.get(event.id),
                             self._renamed.get(event.id)) for event in visible}
        ids = [event.id for event in visible]
        fresh = 0  # the new events on top; the rest must be the rows drawn, unchanged, in their order
        while fresh < len(ids) and ids[fresh] not in self._drawn:
            fresh += 1
        kept = ids[fresh:]
        if (layout == self._drawn_layout and table.row_count == len(self._drawn_order) and 2 * fresh <= len(ids)
                and kept == self._drawn_order[:len(kept)]
                and all(self._drawn[event_id] == states[event_id] for event_id in kept)):
            # Only new events on top (the oldest leaving at the bottom): add those rows and order the table, not
            # clear and re-add all 200 (with the measuring of every row after it) 20 times a second.
            for gone in self._drawn_order[len(kept):]:
                table.remove_row(str(gone))
            for event in visible[:fresh]:
                table.add_row(*self._cells(event, states[event.id], widths), key=str(event.id))
            if fresh:
                table.newest_first()
        else:
            table.clear()
            for event in visible:
                table.add_row(*self._cells(event, states[event.id], widths), key=str(event.id))
        self._drawn_layout, self._drawn_order, self._drawn = layout, ids, states
        if self.following:  # the newest on top, in view, whatever the cursor or a resize did meanwhile
            table.move_cursor(row=0, animate=False)
            table.scroll_to(y=0, animate=False, immediate=True)
        elif previous is not None:  # the user's event stays under the cursor
            try:
                table.move_cursor(row=table.get_row_index(str(previous.id)), animate=False)
            except Exception:
                pass

    def _cells(self, event: Any, state: tuple[str, Any, str | None],
               widths: dict[str, int]) -> tuple[Text, Text, Text, Text]:
        marker, attempt, learned = state
        forwarded = forward_mark(attempt)
        duplicate = duplicate_marker(event) + cut_marker(event)
        summary_text = clip(marker + self.run_display.scrub(learned or event.summary),
                            widths["summary"] - len(forwarded) - len(duplicate))
        summary = Text(duplicate + summary_text, no_wrap=True, overflow="ellipsis")
        if duplicate:
            summary.stylize(DUPLICATE_STYLE, 0, len(duplicate))
        if marker:
            summary.stylize("bold cyan", len(duplicate), len(duplicate) + len(marker))
        summary = forwarded + summary if forwarded else summary
        kind = Text(clip(event.kind, widths["kind"]), style="red" if event.rejected else "")
        return TimeCell(event_time(event, deterministic=self.run_display.deterministic), event.id), kind, summary, verdict_badge(event)

    @on(DataTable.RowSelected, "#events-panel-table")
    def _open_detail(self, message: DataTable.RowSelected) -> None:
        message.stop()
        if message.row_key.value is None:
            return
        event = self._by_id(int(message.row_key.value))
        if event is not None:
            self.post_message(EventChosen(event))  # the app opens it in full
