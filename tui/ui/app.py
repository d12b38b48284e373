"""The Textual application: `build_app()` is the one factory the CLI and every test use.

Start-up order keeps the first frame fast: this module imports only Textual; the main screen draws its
frame with empty section slots; then, after that first refresh, the sections are imported and mounted and
the Runtime (httpx, pydantic, aiohttp, the sandbox, the listener, the store) starts in a worker.

Screens and widgets are handed what they use when they are built: the runtime's `Services` (the accounts' clients
are None until `app.clients_ready` turns True, the listener and store until `app.runtime_ready` does) and the app's
`AppState` (tui.ui.widgets.gateway_app: the signals `event_received`, a tuple of StoredEvents, oldest first, one
per batch; `exchange_recorded`; `sent_changed` after a section posts `tui.ui.messages.MessageSent`;
`forward_attempted` after each forward or replay). They watch the start-up flags on `self.app` and post messages
(tui.ui.messages) for what they want the app to do.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
from typing import TYPE_CHECKING, Any

from textual import events, work
from textual.app import App
from textual.command import Provider

from tui.core.feed.bus import EventStored, ForwardAttempted
from tui.ui.keymap import bindings_for, load_user_keymap, use_keymap
from tui.ui.messages import ConnectionRead, EventChosen, MessageSent, SendUnanswered
from tui.ui.widgets.gateway_app import AppState, GatewayAppBase
from tui.ui.textual_compat import FinishBeforeShutdown, alt_digits_driver

if TYPE_CHECKING:
    from textual.driver import Driver
    from textual.screen import Screen

    from textual.theme import Theme

    from tui.api.exchange import Exchange
    from tui.core.reconnect import ReconnectPolicy
    from tui.core.runtime import ForwardAttempt, Runtime, SandboxProcess, StoredEvent  # by way of the runtime (layers)

FIRST_STATUS_WAIT = 3.0
"""Seconds the sandbox's set-up (store, listener, webhooks) waits for the header's first status read, and then
for the first section to take keys."""
SHUTDOWN_MOUNT_WAIT = 5.0
"""Seconds an exit waits for a section being mounted in the background (see GatewayApp.before_shutdown)."""
COLLECTOR_OFF_AT_MOST = 30.0
"""Seconds after the first frame at which a collector paused for the start (`resume_collector`) runs again even if
the sections are not all built yet."""


class GatewayApp(GatewayAppBase, FinishBeforeShutdown):
    """gateway-tui. Build it with `build_app()`. Only the composition (the main screen, the palette) reaches it, as
    `gateway_app(node)` (tui.ui.widgets.gateway_app, which also declares the reactive start-up flags)."""

    TITLE = "gateway-tui"
    CSS_PATH = "app.tcss"
    ENABLE_COMMAND_PALETTE = True
    COMMAND_PALETTE_BINDING = "ctrl+p"
    COMMANDS = App.COMMANDS | {lambda: _gateway_commands()}
    # Every screen gets -narrow (< 100 columns) or -wide, -short (< 32 rows) or -tall: app.tcss fits 80×24.
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (100, "-wide")]
    VERTICAL_BREAKPOINTS = [(0, "-short"), (32, "-tall")]

    BINDINGS = bindings_for("app")  # every key of the app is a row of tui.ui.keymap.ACTIONS

    def __init__(
        self,
        runtime: Runtime,
        *,
        sandbox: bool = False,
        insecure_storage: bool = False,
        deterministic: bool = False,
        resume_collector: bool = False,
    ) -> None:
        super().__init__()
        self.runtime = runtime
        self.services = runtime.services
        self._resume_collector = resume_collector
        """The command line turned the garbage collector off for the start (`tui.cli.main.prepare_app`): it runs again once
        every section is built (`keep_start_up_out_of_collections`), after COLLECTOR_OFF_AT_MOST, or at exit."""
        self.sandbox = sandbox
        self.state = AppState(self, insecure_storage=insecure_storage)
        self.deterministic = deterministic
        self._events_pending: list[StoredEvent] = []
        self.first_status_read = asyncio.Event()
        """Set by the header once its first read of the gateway's status has answered (or failed)."""
        self.first_section_shown = asyncio.Event()
        """Set by the main screen once the section on screen takes keys and that frame is drawn."""
        self.runtime_settled = asyncio.Event()
        """Set once the first start of the Runtime has finished, started or not (the main screen mounts the
        sections not shown yet after it: before, they would compete with the start for the event loop)."""
        self.keymap_problems: list[str] = []
        self.preference_problems: list[str] = []
        self._load_keymap()
        self._unsubscribers = [
            runtime.bus.subscribe(EventStored, lambda stored: self._publish_event(stored.event)),
            runtime.request_log.subscribe(self._publish_exchange),
            runtime.bus.subscribe(ForwardAttempted, lambda forwarded: self._publish_attempt(forwarded.attempt)),
        ]

    def _load_keymap(self) -> None:
        """The user's `keymap.toml` (binding id = keys); refused entries keep their default and are reported."""
        from tui.local.paths import config_dir

        keymap, self.keymap_problems = load_user_keymap(config_dir())
        use_keymap(keymap)
        if keymap:
            self.set_keymap(keymap)

    # -- start-up -------------------------------------------------------------------------------------------

    def get_driver_class(self) -> type[Driver]:
        """Textual's driver for this terminal, reading ESC+digit (what xterm, GNOME Terminal and tmux send for
        alt+1..9) as alt+digit rather than as the macOS Option characters ("™"): the section keys work while
        typing (tests/app/test_tmux.py)."""
        return alt_digits_driver(super().get_driver_class())

    def get_default_screen(self) -> Screen:
        from tui.ui.main_screen import MainScreen

        screen = MainScreen()
        # The breakpoint classes its first resize will give it, given now: added at that resize, they restyled the
        # whole screen once more during the start (the resize then finds nothing to change).
        width, height = self.size
        screen.add_class(*_breakpoints(width, self.HORIZONTAL_BREAKPOINTS), *_breakpoints(height, self.VERTICAL_BREAKPOINTS))
        return screen

    def on_mount(self) -> None:
        self._use_saved_theme()
        self._start_alerts()
        self.theme_changed_signal.subscribe(self, self._theme_changed)
        if self._resume_collector:
            self.set_timer(COLLECTOR_OFF_AT_MOST, self._collector_back_on, name="collector back on")

    def on_ready(self) -> None:
        """Textual's Ready: the first frame is drawn. The Runtime starts now, while the screen settles (its sizes, the
        header's and the section bar's fit, the footer's keys: ~5 more layouts, each on a later refresh tick); after
        them (`call_after_refresh`), its start waited ~35 ms more for ~15 ms of work (bench/start_interactive.py)."""
        self.start_runtime()

    def _start_alerts(self) -> None:
        """One toast per raised alert of any open account, and the signal the preferences choose (issue 35)."""
        from tui.local.preferences import PreferencesError, load_alert_signal
        from tui.ui.widgets.alert_toasts import AlertToasts

        try:
            signal = load_alert_signal()
        except PreferencesError as error:
            self.preference_problems.append(f"{error}; alerts ring the bell until it is fixed.")
            signal = "bell"
        current = self.runtime.open_accounts
        self.alert_toasts = AlertToasts(self, self.services.alerts, signal=signal,
                                        current=lambda: current.current.name if current.current is not None else None)
        self.alert_toasts.start()

    reconnects: ReconnectPolicy | None = None
    """The reconnect policy (tui.core.reconnect), following the alerts once the runtime has started: it reconnects
    the accounts whose profile asks for it (`reconnect_tries`) after a disconnect."""

    def _follow_reconnects(self) -> None:
        from tui.core.reconnect import follow_alerts

        if self.reconnects is None:
            self.reconnects = follow_alerts(self.services.bus, self.services.alerts, self.runtime.open_accounts)

    # -- the theme: the one chosen last (Settings or the palette) is used from the first frame of the next start

    saved_theme: str | None = None
    """The theme read from preferences.toml at start (None: none saved, or the file is unusable)."""

    def _use_saved_theme(self) -> None:
        from tui.local.preferences import PreferencesError, load_theme

        try:
            self.saved_theme = load_theme()
        except PreferencesError as error:
            self.preference_problems.append(f"{error}; the theme is not kept until it is fixed.")
            return
        if self.saved_theme in self.available_themes:
            self.theme = self.saved_theme

    def _theme_changed(self, theme: Theme) -> None:
        profile = self.runtime.profile
        profile_theme = profile.theme if profile is not None else None
        if self.saved_theme is None and theme.name == profile_theme:
            return  # the profile's own theme, applied at start: not a choice to keep
        if theme.name != self.saved_theme:
            self.saved_theme = theme.name
            self._save_theme(theme.name)

    @work(group="save-theme", exclusive=True, exit_on_error=False, description="keep the theme for next time")
    async def _save_theme(self, name: str) -> None:
        from tui.local.preferences import PreferencesError, save_theme

        try:
            await asyncio.to_thread(save_theme, name)
        except (PreferencesError, OSError) as error:
            self.notify(f"The theme is not kept for next time: {error}", severity="warning", markup=False)

    def report_keymap_problems(self) -> None:
        """Toast each refused keymap.toml entry and an unusable preferences.toml (the main screen calls this once
        its first section is up: a toast raised before then is not drawn)."""
        problems, self.keymap_problems = self.keymap_problems, []
        for problem in problems:
            self.notify(problem, title="Key map", severity="warning", markup=False, timeout=30)
        problems, self.preference_problems = self.preference_problems, []
        for problem in problems:
            self.notify(problem, title="Preferences", severity="warning", markup=False, timeout=30)

    def start_runtime(self) -> None:
        """Start (or retry, after set-up) the Runtime in a worker; the UI stays responsive meanwhile."""
        self.runtime_error = ""
        if not self.runtime_ready:
            self.clients_ready = False
        self._run_runtime()

    @work(group="runtime", exclusive=True, exit_on_error=False, description="start the runtime")
    async def _run_runtime(self) -> None:
        from tui.core.runtime import SetupRequired

        try:
            await self.runtime.start(on_clients=self._clients_up)
        except SetupRequired:
            self._open_setup()
            return
        except Exception as error:  # shown, never raised: the app stays usable (Settings can fix things)
            self.runtime_error = _startup_text(error)
            self.notify(self.runtime_error, title="Could not start", severity="error", markup=False, timeout=15)
            return
        finally:
            self.runtime_settled.set()
        if self.runtime.feed.store_problem:
            self.notify(self.runtime.feed.store_problem, title="Events are off", severity="error", markup=False, timeout=60)
        if self.runtime.feed.listener_problem:  # the rest started: only events are off (issue 32)
            self.notify(self.runtime.feed.listener_problem, title="No events", severity="warning", markup=False,
                        timeout=30)
        profile = self.runtime.profile
        theme = profile.theme if profile is not None else None  # a profile's own theme, unless one was chosen since
        if theme and theme in self.available_themes and not self.deterministic and self.saved_theme is None:
            self.theme = theme
        if self.runtime.insecure_storage and not self.insecure_storage:  # the profile keeps its secrets in the file
            self.state.insecure_storage = True
            self._after_setup()
        self.clients_ready = True
        self.runtime_ready = True
        self._follow_reconnects()

    async def _clients_up(self) -> None:
        """The sandbox answers and the clients exist: the header reads the connection now, and the rest of the start
        (store, listener, webhooks: ~300 ms of the event loop, aiohttp's import among them) waits for that read and
        for the first section to take keys: those are what a user waits for (and the request log lists the calls
        in one order)."""
        self.clients_ready = True
        for step in (self.first_status_read, self.first_section_shown):
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(step.wait(), FIRST_STATUS_WAIT)
        # And the frame that shows the connection drawn: the header's update is only scheduled when its read sets
        # first_status_read, and the rest of the start held the event loop before that frame (~30-160 ms later).
        drawn = asyncio.Event()
        self.call_after_refresh(drawn.set)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(drawn.wait(), FIRST_STATUS_WAIT)

    def _open_setup(self) -> None:
        try:
            from tui.ui.screens.setup import SetupScreen
        except ImportError:
            self.runtime_error = "No profile yet: run `gateway-tui profile add NAME ...` or `gateway-tui --sandbox`."
            self.notify(self.runtime_error, severity="warning", markup=False, timeout=20)
            return

        def done(result: object) -> None:
            self._after_setup()
            if result is False:
                self.runtime_error = "No profile: set-up was cancelled. Reopen it with ctrl+p → Set up a profile."
                return
            if isinstance(result, str) and result:
                self.runtime.profile_name = result
            self.start_runtime()

        self.push_screen(SetupScreen(self.state), done)

    def _after_setup(self) -> None:
        if self.insecure_storage:  # chosen on the set-up screen (no keyring): the header says so from now on
            self.runtime.insecure_storage = True  # and the start reads the secrets from the file
            from tui.ui.widgets.header import GatewayHeader

            for screen in self.screen_stack:
                for header in screen.query(GatewayHeader):
                    header.show_insecure()

    def action_setup(self) -> None:
        """The palette's "Set up a profile": before a profile runs, set-up starts the app on it; later it adds a
        profile to use with --profile."""
        from tui.ui.screens.setup import SetupScreen

        if not self.runtime_ready and not self.runtime.sandbox_mode:
            if not isinstance(self.screen, SetupScreen):
                self._open_setup()
            return

        def saved(result: object) -> None:
            self._after_setup()
            if isinstance(result, str) and result:
                self.notify(f"Profile {result} saved. Start it with: gateway-tui --profile {result}", markup=False,
                            timeout=15)

        self.push_screen(SetupScreen(self.state, first_run=False), saved)

    # A section being mounted in the background when the app exits is let finish first: Textual closes widgets even
    # while one is being composed, and the section's own Mount handlers then fail on children that were never
    # mounted (Groups' tabs: "No Tab with id"), which the exit would report as a crash. Both ways out wait: exit()
    # (ctrl+q, the palette; once it has posted its message the mount can no longer finish) and Textual's shutdown
    # (which test harnesses call directly; `before_shutdown`).

    def exit(self, result: Any = None, return_code: int = 0, message: Any = None) -> None:
        if not any(screen.mounting for screen in self._main_screens()):
            super().exit(result, return_code, message)
            return

        async def after_the_mounts() -> None:
            await self._finish_mounting()
            super(GatewayApp, self).exit(result, return_code, message)

        self.run_worker(after_the_mounts(), group="exit", exclusive=True, description="exit after the mounts")

    async def before_shutdown(self) -> None:
        await self._finish_mounting()

    async def _finish_mounting(self) -> None:
        for screen in self._main_screens():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(screen.finish_mounting(), SHUTDOWN_MOUNT_WAIT)

    def _main_screens(self) -> list[Any]:
        from tui.ui.main_screen import MainScreen

        return [screen for screen in self.screen_stack if isinstance(screen, MainScreen)]

    _start_up_frozen = False

    def keep_start_up_out_of_collections(self) -> None:
        """Once every section is built: what the start created lives as long as the app, so the collector's full
        passes skip it (`gc.freeze`). They walked all of it, a 150-250 ms stall in one of every few switches back
        to Chats (bench/inbox.py; none with the collector off). Undone when the app stops, so a process that runs
        one app after another (the tests) can free each."""
        gc.freeze()
        self._start_up_frozen = True
        self._collector_back_on()

    def _collector_back_on(self) -> None:
        """The collector paused for the start runs again (it was off from the command line's first import: its passes
        over the start's objects took ~50-80 ms before the app took keys, bench/start_interactive.py)."""
        if self._resume_collector:
            self._resume_collector = False
            gc.enable()

    async def on_unmount(self) -> None:
        self._collector_back_on()
        if self._start_up_frozen:
            gc.unfreeze()
        for unsubscribe in self._unsubscribers:
            unsubscribe()
        self.alert_toasts.stop()
        if self.reconnects is not None:
            await self.reconnects.stop()
        await self.runtime.stop()

    # -- fan-out to widgets ---------------------------------------------------------------------------------

    def _publish_event(self, event: StoredEvent) -> None:
        """Events are handed to the widgets in batches: the listener's requests whose events one commit of the
        store settled resume in the same turn of the loop, and the one callback scheduled by the first publishes
        them all after them. One event at a time, each subscriber's `call_next` (a message-pump callback, and a
        signature inspection of its partial) ran 5 times per event: ~10 % of the main thread at 500 events/s
        (bench/fleet.py)."""
        if not self._running:
            return
        if not self._events_pending:
            asyncio.get_running_loop().call_soon(self._publish_events)
        self._events_pending.append(event)

    def _publish_events(self) -> None:
        batch, self._events_pending = tuple(self._events_pending), []
        if batch and self._running:
            self.event_received.publish(batch)

    def _publish_attempt(self, attempt: ForwardAttempt) -> None:
        if self._running:
            self.forward_attempted.publish(attempt)

    def _publish_exchange(self, exchange: Exchange) -> None:
        if self._running:
            self.exchange_recorded.publish(exchange)

    def on_message_sent(self, message: MessageSent) -> None:
        """A section sent a message: remember its id so the panel can link the gateway's events to it."""
        if not message.message_id:
            return
        self.state.sent.remember(message)
        self.sent_changed.publish(message.message_id)
        if message.request is not None:
            self._record_sent(message)

    @work(group="record-sent", exit_on_error=False, description="keep a sent message in the inbox")
    async def _record_sent(self, message: MessageSent) -> None:
        """The inbox keeps what was sent (and reports what it could not keep instead of losing it silently)."""
        from tui.api.models import Request

        if not isinstance(message.request, Request):
            return  # nothing the inbox can show was sent
        try:
            await self.runtime.inbox_service.record_sent(message.kind, message.request, message.result)
        except Exception as error:
            self.notify(f"Sent, but the inbox could not keep it: {error}", severity="warning", markup=False)

    def on_send_unanswered(self, message: SendUnanswered) -> None:
        self._record_unanswered(message)

    @work(group="record-sent", exit_on_error=False, description="keep an unanswered send in the inbox")
    async def _record_unanswered(self, message: SendUnanswered) -> None:
        """The thread shows a send that may have reached the gateway, so a second one is not sent unknowingly."""
        from tui.api.models import Request

        if not isinstance(message.request, Request):
            return
        try:
            await self.runtime.inbox_service.record_unanswered(message.kind, message.request)
        except Exception as error:
            self.notify(f"A send got no answer, and the inbox could not keep it: {error}", severity="warning",
                        markup=False)

    # -- actions (the main screen binds the keys; these also serve the palette) -----------------------------

    def action_request_log(self) -> None:
        from tui.ui.screens.request_log import RequestLogScreen

        if isinstance(self.screen, RequestLogScreen):
            self.pop_screen()  # the same key closes it
        else:
            self.push_screen(RequestLogScreen(self.services, self.state))

    def action_help(self) -> None:
        from tui.ui.screens.help import HelpScreen
        from tui.ui.main_screen import MainScreen

        if isinstance(self.screen, HelpScreen):
            self.screen.dismiss()  # the same key closes it
        elif isinstance(self.screen, MainScreen):
            self.screen.action_help()
        else:
            self.push_screen(HelpScreen(title="gateway-tui", markdown="", bindings_of=self.focused))

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, events.Key):  # the app's first look at a key: background redraws wait for its frame
            self.state.pace.key_typed()
        await super().on_event(event)

    def on_event_chosen(self, message: EventChosen) -> None:
        """One stored event in full, over whichever screen chose it."""
        from tui.ui.screens.event_detail import EventDetailScreen

        self.push_screen(EventDetailScreen(message.event, self.services, self.state))

    def on_connection_read(self, _message: ConnectionRead) -> None:
        self.first_status_read.set()

    def show_section(self, section_id: str) -> None:
        from tui.ui.main_screen import MainScreen

        while len(self.screen_stack) > 1 and not isinstance(self.screen, MainScreen):
            self.pop_screen()
        if isinstance(self.screen, MainScreen):
            self.screen.show_section(section_id)


def _breakpoints(dimension: int, breakpoints: list[tuple[int, str]] | None) -> list[str]:
    """The class of the widest breakpoint `dimension` reaches (none if it reaches none, or there are none), as
    Textual's Screen picks it on a resize."""
    reached = [name for threshold, name in sorted(breakpoints or ()) if dimension >= threshold]
    return reached[-1:]


def _gateway_commands() -> type[Provider]:
    from tui.ui.commands import GatewayCommands

    return GatewayCommands


def _startup_text(error: BaseException) -> str:
    try:
        from tui.ui.widgets.feedback import explain_error

        from tui.api.errors import GatewayError

        if isinstance(error, GatewayError):
            return explain_error(error)
    except ImportError:  # pragma: no cover - the feedback module is part of the package
        pass
    name = type(error).__name__
    if name == "KeyringUnavailable":
        return f"{error} Start with --insecure-storage to keep secrets in a private file instead."
    if isinstance(error, OSError):
        return f"Could not start the webhook listener: {error.strerror or error}. Change its port in Settings."
    text = str(error) or name
    return text if name in ("StartupError", "ConfigError") else f"{name}: {text}"


def build_app(
    *,
    sandbox: bool = False,
    profile: str | None = None,
    insecure_storage: bool = False,
    deterministic: bool = False,
    sandbox_dialects: tuple[str, str] = ("spec", "spec"),
    sandbox_process: SandboxProcess | None = None,
    resume_collector: bool = False,
    sandbox_logged_out: bool = False,
    profiles: tuple[str, ...] = (),
    all_profiles: bool = False,
    max_accounts: int = 100,
    sandbox_accounts: int = 1,
) -> GatewayApp:
    """The app, wired but not started: the Runtime starts after the first frame. `sandbox_process`: a
    `tui.sandbox.process.SandboxProcess` already started (`gateway-tui --sandbox`); without it the sandbox runs
    in this process (the tests). `sandbox_accounts`: the sandbox serves that many accounts, each open in the app
    (`--sandbox --accounts N`; a started process says its own number). `resume_collector`: the caller turned the garbage collector off for the start; the
    app turns it back on when the start is done."""
    from tui.core.runtime import Runtime

    runtime = Runtime(
        sandbox=sandbox,
        profile=profile,
        insecure_storage=insecure_storage,
        deterministic=deterministic,
        sandbox_dialects=sandbox_dialects,
        sandbox_process=sandbox_process,
        sandbox_logged_out=sandbox_logged_out,
        profiles=profiles,
        all_profiles=all_profiles,
        max_accounts=max_accounts,
        sandbox_accounts=sandbox_accounts,
    )
    return GatewayApp(runtime, sandbox=sandbox, insecure_storage=insecure_storage, deterministic=deterministic,
                      resume_collector=resume_collector)
