"""The app header: profile (its dialects when not the spec's, `read-only` when it is), connection state, listener (address,
events, rate, last verdict), warnings (the store failing, the listener shedding load).

The connection state is the current account's live watch (tui.core.watch): each family's status, read at start and
every 10 s (only while the app runs), and the connection events the listener receives. "connected" when every
family is, else what is wrong per family ("session logged out", "instance stuck", "session flapping"). A drop
raises a toast and rings the terminal bell once. Nothing here blocks the UI.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from rich.cells import cell_len
from textual import work
from tui.core.feed.bus import IntakeChanged, ListenerLoadChanged, StoreHealthChanged
from tui.api.dialects import Family
from tui.ui.messages import ConnectionRead
from tui.ui.widgets.webhook_health import WebhookHealth
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.content import Content
from textual.reactive import reactive
from textual.widgets import Static

if TYPE_CHECKING:  # the watch's module loads pydantic: not before the first frame
    from tui.core.services import Services
    from tui.core.watch import Change
    from tui.ui.widgets.gateway_app import AppState

STATUS_INTERVAL = 10.0  # tui.core.watch.POLL_INTERVAL: never faster
RATE_INTERVAL = 5.0
COUNTS_GAP = 0.25
"""Seconds at least between two redraws of the listener's counts while events keep coming: the first event after a
quiet moment shows at once, a flow of them four times a second (at 500 events/s, a redraw per event was ~4 % of the
main thread, and each one laid the screen out again: bench/fleet.py)."""
COMPACT_BELOW = 110
"""Narrower than this, the header uses its short forms (no title, `:port · 3 ev · 0/min · last ✓`) so the
connection and the counts stay on screen at 80 columns."""

VERDICT_BADGES = {
    "valid": ("✓ valid", "$text-success"),
    "invalid": ("✗ invalid", "$text-error"),
    "unsigned": ("– unsigned", "$text-warning"),
    "no-key": ("? no key", "$text-muted"),
    "apikey-ok": ("● apikey ok", "$text-success"),
    "apikey-wrong": ("✗ apikey", "$text-error"),
    "apikey-unchecked": ("? apikey", "$text-muted"),
    "no-apikey": ("– no apikey", "$text-warning"),
    "path-secret-ok": ("● secret url", "$text-success"),
    "path-secret-wrong": ("✗ secret url", "$text-error"),
    "rejected": ("✗ rejected", "$text-error"),
}


def _show(piece: Static, content: Content) -> None:
    """`content` in one of the header's pieces, the screen laid out again only when the piece's width changes: the
    listener's counts change up to four times a second under load ("1204 events" → "1260 events": the same width),
    and each full layout of the screen took ~10-15 ms of the main thread that the keys wait behind (issue 32)."""
    shown = piece.content
    piece.update(content, layout=not isinstance(shown, Content) or shown.cell_length != content.cell_length)


class GatewayHeader(Horizontal):
    """One line at the top of the main screen."""

    DEFAULT_CSS = """
    GatewayHeader {
        dock: top;
        height: 1;
        background: $panel;
        color: $foreground;
    }
    GatewayHeader > Static { width: auto; padding: 0 1; }
    GatewayHeader #header-title { text-style: bold; color: $accent; }
    GatewayHeader #header-spacer { width: 1fr; padding: 0; }
    GatewayHeader #header-insecure { background: $error; color: $text; text-style: bold; }
    GatewayHeader #header-store { background: $error; color: $text; text-style: bold; }
    GatewayHeader #header-load { background: $warning; color: $text; text-style: bold; }
    """

    connection: reactive[str] = reactive("starting")
    """starting | connected | not connected | bad credentials | unreachable | sandbox ... (display text)."""

    def __init__(self, services: Services, state: AppState, *, says_drops: bool = True) -> None:
        """`says_drops`: this header toasts and rings when a family drops. The main screen's does; another screen's
        header (the request log's, over it) only shows the state, or a drop would be said twice."""
        super().__init__()
        self.services = services
        self.accounts = services.accounts
        self.feed = services.feed
        self.state = state
        self.says_drops = says_drops
        self._start_failed = False
        """The app's start failed (its `runtime_error`): a status read that answers after it is not shown."""
        self._clients_seen = False
        self._counts_shown_at = float("-inf")
        self._counts_pending = False

    def compose(self) -> ComposeResult:
        yield Static("gateway-tui", id="header-title")
        yield Static(id="header-profile")
        yield Static(id="header-connection")
        yield WebhookHealth(self.services, self.state, id="header-health")  # issue 24: hidden until the doctor's first report
        store = Static(id="header-store")  # before the listener: when it shows, it matters more than the counts
        store.display = False
        yield store
        load = Static(id="header-load")  # the listener sheds load (issue 20): shown only while it does
        load.display = False
        yield load
        yield Static(id="header-listener")
        yield Static(id="header-spacer")
        if self.state.insecure_storage:
            yield Static(Content("⚠ insecure storage"), id="header-insecure")

    def show_insecure(self) -> None:
        """Storage switched to the 0600 file during this run (set-up without a keyring): say so from now on."""
        if not self.query("#header-insecure"):
            self.mount(Static(Content("⚠ insecure" if self.compact else "⚠ insecure storage"), id="header-insecure"))
            self.call_after_refresh(self._fit)

    _short = False  # the long forms did not fit this width: the short ones are used (until the long ones fit again)
    _fitting = False

    @property
    def compact(self) -> bool:
        width = self.size.width or self.app.size.width
        return width < COMPACT_BELOW or self._short

    def _needed(self) -> int:
        """Cells the pieces shown take (each with its padding), the spacer aside."""
        needed = 0
        for piece in self.query_children(Static):
            if piece.display and piece.id != "header-spacer":
                content = piece.content
                needed += (content.cell_length if isinstance(content, Content) else cell_len(str(content))) + 2
        return needed

    def _fit(self) -> None:
        """A piece changed: when the long forms no longer fit the line (a real gateway's two families, a warning, the
        last verdict), the short ones take their place (the title goes first), rather than the counts being cut."""
        width = self.size.width
        if self._fitting or not width or width < COMPACT_BELOW:
            return
        if self._short:
            # A passing state (a longer connection word, a warning) must not leave the short forms for good: the
            # long ones are tried again, and kept when they fit. Both are drawn before the screen is, so no flicker.
            self._short = False
            self._show_forms()
            if self._needed() <= width:
                return
        elif self._needed() <= width:
            return
        self._short = True
        self._show_forms()

    def on_webhook_health_shown(self, _message: WebhookHealth.Shown) -> None:
        self._fit()  # "webhooks: checked once connected" may not fit beside the long forms

    def on_resize(self) -> None:
        self._short = False  # the long forms again, if they fit the new width
        self._show_forms()
        self._fit()

    def _show_forms(self) -> None:
        self._fitting = True
        try:
            self._show_all_forms()
        finally:
            self._fitting = False

    def _show_all_forms(self) -> None:
        compact = self.compact
        self.query_one("#header-title", Static).display = not compact
        insecure = self.query("#header-insecure")
        if insecure:
            insecure.first(Static).update(Content("⚠ insecure" if compact else "⚠ insecure storage"))
        self._show_profile()
        self._show_connection()
        self._show_listener()
        health = self.query_one(WebhookHealth)
        health.compact = compact
        health.show_health()
        self._show_load()

    def on_mount(self) -> None:
        app = self.app
        self.state.event_received.subscribe(self, self._on_events)
        self.watch(app, "clients_ready", self._on_clients, init=True)
        self.watch(app, "runtime_ready", self._on_ready, init=True)
        self.watch(app, "runtime_error", self._note_start_failure, init=True)
        self.watch(app, "runtime_error", self._on_error, init=False)
        self.rate_timer = self.set_interval(RATE_INTERVAL, self._show_listener)  # the events/min goes down meanwhile
        self.services.bus.subscribe(StoreHealthChanged, lambda _changed: self._show_store())
        self.services.bus.subscribe(ListenerLoadChanged, lambda _changed: self._show_load())
        self.services.bus.subscribe(IntakeChanged, lambda _changed: self._show_listener())  # who listens (issue 32)
        self._show_profile()
        self._show_connection()
        self._show_listener()

    # -- pieces ---------------------------------------------------------------------------------------------

    def _on_ready(self, ready: bool) -> None:
        self._show_profile()
        self._show_listener()
        self._show_store()
        # Deterministic mode (tests, screenshots) has no timer read, as the webhook health has no timer check: on a
        # loaded machine a test runs past 10 s and the read lands in it (a request-log row, a rate limit's token).
        if ready and not self.services.display.deterministic:
            self.set_interval(STATUS_INTERVAL, self._poll_due)

    def _on_clients(self, ready: bool) -> None:
        """The first status read, as soon as the clients exist (the runtime may still be starting); again when
        they are built anew (other credentials, another dialect). The watch's first call is at mount: a header mounted
        once they exist (the request log's) shows what is known."""
        if not self._clients_seen:
            self._clients_seen = True
            if ready:
                self._mounted_after_start()
            return
        if ready:
            self._follow_account()
            self.poll_status()

    def _mounted_after_start(self) -> None:
        """A header mounted once the clients exist (the request log's) shows what the account's watch knows: it
        reads the status only when nothing is known yet. Opening the request log is not a reason to call the
        gateway (the read would be the log's newest row, racing its own screen)."""
        from tui.core.watch import header_words

        self._follow_account()
        account = self.accounts.current
        if account is None:
            return
        known = header_words(account.watch)
        if known == "starting":
            self.poll_status()
        else:
            self.connection = f"sandbox · {known}" if self.accounts.sandbox_mode else known

    def _follow_account(self) -> None:
        account = self.accounts.current
        if account is not None and self._watching is not account:
            if self._unwatch is not None:
                self._unwatch()
            self._watching = account
            self._unwatch = account.watch.subscribe(self._on_connection_change)

    def on_unmount(self) -> None:
        """A closed screen's header (the request log's) stops following the account: it would toast and ring again."""
        if self._unwatch is not None:
            self._unwatch()
            self._unwatch = None

    _watching: object = None
    _unwatch: Callable[[], None] | None = None

    def _on_connection_change(self, change: Change) -> None:
        """A family's state changed (a status read or an event): the header says it; a drop rings once."""
        current = self.accounts.current
        if current is None or self._start_failed or self._watching is not current:
            return  # (an account no longer current: the Fleet board shows it)
        from tui.core.watch import header_words

        state = header_words(current.watch)
        self.connection = f"sandbox · {state}" if self.accounts.sandbox_mode else state
        if change.dropped and self.says_drops and not current.watch.flapping(change.family):
            # (While it flaps, each drop is not told again: the header reads "flapping" and the flapping alert says
            # it once; a toast and a bell per drop rang every few seconds through a storm.)
            reason = change.new.reason or "not connected"
            self.app.notify(f"The {change.family.value} family lost its connection: {reason}. The Account section "
                            "shows it and how to get it back.", title="Disconnected", severity="warning")
            self.app.bell()

    def _note_start_failure(self, text: str) -> None:
        self._start_failed = bool(text)

    def _on_error(self, text: str) -> None:
        if text:
            self.connection = "not started"

    @property
    def counts_pending(self) -> bool:
        """Events came that the listener's counts do not show yet (they show within COUNTS_GAP)."""
        return self._counts_pending

    def _on_events(self, _events: tuple[Any, ...]) -> None:
        if self._counts_pending:
            return
        wait = self._counts_shown_at + COUNTS_GAP - time.monotonic()
        if wait <= 0:
            self._show_counts_of_events()
        else:
            self._counts_pending = True
            self.set_timer(wait, self._show_counts_of_events)

    def show_account(self) -> None:
        """Another account became current: its name, its watch's words and its webhook health."""
        self._follow_account()  # the account left is followed no more: the Fleet board shows it
        self._show_profile()
        self._show_listener()  # its counts
        self.query_one(WebhookHealth).rebind()
        self.poll_status()

    def _show_profile(self) -> None:
        account = self.accounts.current
        name = account.name if account is not None else self.accounts.asked_name or "no profile"
        content = Content.from_markup("[b]$name" if self.compact else "profile [b]$name", name=name)
        instance, session = self.accounts.dialects
        # A family the profile lacks shows as "–", not as the spec dialect it would default to.
        i = instance.value if account is None or account.has(Family.INSTANCE) else "–"
        s = session.value if account is None or account.has(Family.SESSION) else "–"
        # At 80 columns with several accounts open the room goes to the account, its connection and its webhook
        # health (issue 26: ~30 cells); the Fleet board lists each account's dialects.
        crowded = self.compact and len(self.accounts.all) > 1
        whole = account is not None and account.profile.session_through_instance
        if whole and not crowded:
            # One whole gateway (Evolution API): its dialect alone, no session family beside it.
            speaks = " · [b]$i" if self.compact else " · speaks [b]$i"
            content = Content.assemble(content, Content.from_markup(speaks, i=i))
        elif (i, s) != ("spec", "spec") and not crowded:
            # Only a real gateway's dialect is worth the room: the spec's shapes are the default.
            speaks = " · [b]$i[/b]/[b]$s" if self.compact else " · speaks [b]$i[/b]/[b]$s"
            content = Content.assemble(content, Content.from_markup(speaks, i=i, s=s))
        if account is not None and account.profile.read_only:
            # Every write is refused (issue 26): said before anything is tried, in the words the refusals use (r/o
            # at 80 columns, where every cell counts).
            mark = " [b $text-warning]r/o" if self.compact else " [b $text-warning]read-only"
            content = Content.assemble(content, Content.from_markup(mark))
        _show(self.query_one("#header-profile", Static), content)
        self._fit()

    def refresh_dialects(self) -> None:
        """Settings changed the dialects: show them, and read the status again in the new dialect."""
        self._show_profile()
        self.poll_status()

    def watch_connection(self, _old: str, _new: str) -> None:
        self._show_connection()

    def _show_connection(self) -> None:
        state = self.connection
        style = {
            "connected": "$text-success",
            "starting": "$text-muted",
            "sandbox": "$text-success",
            "not connected": "$text-warning",
            "bad credentials": "$text-error",
            "unreachable": "$text-error",
            "not started": "$text-error",
        }.get(state.split(" · ")[-1] if state.startswith("sandbox · ") else state, "$text-warning")
        if self.compact:  # the profile's name already says "sandbox"; the families' short names
            state = state.removeprefix("sandbox · ").replace("instance ", "inst ").replace("session ", "sess ")
        _show(self.query_one("#header-connection", Static), Content.from_markup(f"[{style}]● $state", state=state))
        self._fit()

    def _show_counts_of_events(self) -> None:
        """The counts after events came: while the user types, after their key's frame (tui.ui.widgets.typing_pace)."""
        if self.state.pace.holds(self, self._show_counts_of_events):
            self._counts_pending = True
            return
        self._show_listener()

    def _show_listener(self) -> None:
        self._counts_pending = False
        self._counts_shown_at = time.monotonic()
        stats = self.feed.stats
        address = self.services.display.listener_address()
        # Several accounts share the listener: the counts are the current account's (after a switch the listener's
        # totals read as the new account's events), and the last verdict, maybe another account's, is left out.
        account = self.accounts.current if len(self.accounts.all) > 1 else None
        received, per_minute = ((account.activity.received, account.activity.per_minute()) if account is not None
                                else (stats.received, stats.per_minute()))
        if self.compact:  # the port is what tells listeners apart; the counts must stay
            host, colon, port = address.rpartition(":")
            parts = [("⇄ ", ""), (colon + port if colon and host.startswith("127.") else address, "bold"),
                     (f" · {received} ev · {per_minute}/min", "")]
        else:
            parts = [
                ("listener ", ""),
                (address, "bold"),
                (f" · {received} events · {per_minute}/min", ""),
            ]
        content = Content.assemble(*parts)
        if stats.last_verdict and account is None:
            badge, style = VERDICT_BADGES.get(stats.last_verdict, (stats.last_verdict, ""))
            if self.compact:
                badge = badge.split(" ")[0]
            content = Content.assemble(content, " · last ", Content.from_markup(f"[{style}]$badge", badge=badge))
        _show(self.query_one("#header-listener", Static), content)
        self._fit()

    def _show_store(self) -> None:
        """Only when something is wrong: "⚠ store failing: database or disk is full" (the path is in the tooltip)."""
        status = self.feed.store_status()
        piece = self.query_one("#header-store", Static)
        piece.display = status is not None
        if status is not None:
            piece.update(Content(f"⚠ {status}"))
            store = self.feed.store
            piece.tooltip = str(store.health) if store is not None else self.feed.store_problem
        self._fit()

    def _show_load(self) -> None:
        """Only while the listener cuts or refuses unverified senders to keep room for signed ones."""
        status = self.feed.listener_status()
        piece = self.query_one("#header-load", Static)
        piece.display = status is not None
        if status is not None:
            piece.update(Content("⚠ shedding load" if self.compact else f"⚠ {status}"))
            piece.tooltip = status
        self._fit()

    # -- polling --------------------------------------------------------------------------------------------

    @work(group="header-status", exclusive=True, exit_on_error=False, description="read the connection")
    async def poll_status(self) -> None:
        account = self.accounts.current
        try:
            if account is None or (account.instance is None and account.session is None):
                return
            from tui.core.watch import header_words

            await account.watch.poll(account, force=True)
            if self._start_failed:
                return  # the start failed meanwhile: the header says so ("not started"), not what this read found
            state = header_words(account.watch)
            self.connection = f"sandbox · {state}" if self.accounts.sandbox_mode else state
        finally:
            self.post_message(ConnectionRead())  # the start waits for the first read (GatewayApp._clients_up)

    def _poll_due(self) -> None:
        """The timer's read: skipped when one ran less than 10 s ago (an explicit refresh, a pairing check)."""
        account = self.accounts.current
        if account is not None and account.watch.poll_due():
            self.poll_status()
