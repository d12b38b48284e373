"""Work the start no longer does (bench/start_interactive.py): guarded by what is done, never by how long it takes."""

from __future__ import annotations

from textual.widgets import Tabs, TextArea

from tests.harness import READY_TIMEOUT, running_sandbox_app, settle, wait_until
from tui.ui.textual_compat import FooterKey
from tui.ui.widgets.footer import GatewayFooter
from tui.ui.widgets.header import GatewayHeader


async def test_building_the_footer_restyles_none_of_its_keys(monkeypatch):
    """A FooterKey starts compact and the footer's binding made it not compact as it was mounted: two restyles of each
    key, ~20 each time the footer was built (at start, and whenever the keys in force change). The keys now start with
    the classes they end with; what is drawn is the same (the snapshots)."""
    async with running_sandbox_app(size=(80, 24)) as pilot:
        footer = pilot.app.screen.query_one(GatewayFooter)
        restyled: list[FooterKey] = []
        restyle = FooterKey.update_node_styles

        def counting(self: FooterKey, animate: bool = True) -> None:
            restyled.append(self)
            restyle(self, animate)

        monkeypatch.setattr(FooterKey, "update_node_styles", counting)
        before = list(footer.query(FooterKey))
        footer.refresh(recompose=True)
        await settle(pilot)
        keys = list(footer.query(FooterKey))
        assert keys and not set(keys) & set(before)  # built anew
        assert len(keys) > 3 and restyled == []
        assert [key.has_class("-compact") for key in keys] == [key.compact for key in keys]
        assert not footer.compact and [key.compact for key in keys] == [False] * (len(keys) - 1) + [True]  # palette


async def test_the_main_screen_is_built_with_the_breakpoint_classes_its_first_resize_gives_it():
    """Given at that resize, -narrow/-wide and -short/-tall restyled the whole screen once more during the start."""
    for size, classes in (((80, 24), {"-narrow", "-short"}), ((120, 40), {"-wide", "-tall"})):
        async with running_sandbox_app(size=size) as pilot:
            assert classes <= set(pilot.app.get_default_screen().classes)
            assert classes <= set(pilot.app.screen.classes)


async def test_the_footer_is_rebuilt_once_for_changes_before_a_frame_and_not_for_the_same_keys(monkeypatch):
    """Textual's footer recomposed after every change of the bindings in force, three times in a row during the start
    for the same keys (~30 ms before the app took keys). Now the changes before a frame make one rebuild, and none
    when the keys it would show are the ones it shows."""
    async with running_sandbox_app(size=(80, 24)) as pilot:
        screen = pilot.app.screen
        footer = screen.query_one(GatewayFooter)
        await settle(pilot)
        rebuilds: list[GatewayFooter] = []
        recompose = GatewayFooter.recompose

        async def counting(self: GatewayFooter) -> None:
            rebuilds.append(self)
            await recompose(self)

        monkeypatch.setattr(GatewayFooter, "recompose", counting)
        keys = list(footer.query(FooterKey))
        for _ in range(3):
            screen.refresh_bindings()  # the keys in force are the same
        await settle(pilot)
        assert rebuilds == [] and list(footer.query(FooterKey)) == keys

        shown = [key.description for key in keys]
        pilot.app.set_focus(None)  # the keys in force change (the field's own go), three times before a frame
        screen.refresh_bindings()
        screen.refresh_bindings()
        await settle(pilot)
        assert rebuilds == [footer]
        assert [key.description for key in footer.query(FooterKey)] != shown


async def test_with_the_sandbox_in_its_own_process_the_clients_come_before_the_first_section_is_built(monkeypatch):
    """`gateway-tui --sandbox`: the runtime's start takes the sandbox on before Chats is imported, and builds the clients
    before Chats is built, so the header's first status read is answered while Chats mounts and one frame shows both.
    Before, both waited until Chats was mounted (~40 ms and a frame more before "connected"). The sandbox speaks plain
    http: the start reads no CA bundle (it did, in a thread, and the clients waited 40-50 ms for it)."""
    import time

    import tui.api.gateway_http
    import tui.ui.main_screen
    from tui.ui.app import build_app
    from tui.sandbox.process import SandboxProcess
    from tui.ui.sections.chats.section import ChatsSection

    process = SandboxProcess.spawn(("spec", "spec"))
    try:
        deadline = time.monotonic() + READY_TIMEOUT  # a bound: a loaded machine starts a process slowly
        while not process.answered():  # listening: the start finds its answer there and does not wait for it
            assert time.monotonic() < deadline, "the sandbox process never answered"
            time.sleep(0.02)
        app = build_app(sandbox=True, sandbox_process=process)
        seen: dict[str, object] = {}
        load = tui.ui.main_screen.section_class

        def loading(section_id: str):
            seen.setdefault(f"{section_id} imported, the sandbox taken on", app.runtime.sandbox is process)
            return load(section_id)

        build = ChatsSection.__init__

        def building(self: ChatsSection, *args: object, **kwargs: object) -> None:
            seen.setdefault("chats built, the clients ready", app.clients_ready)
            build(self, *args, **kwargs)

        def no_bundle() -> object:
            raise AssertionError("the sandbox's start read the CA bundle")

        monkeypatch.setattr(tui.ui.main_screen, "section_class", loading)
        monkeypatch.setattr(ChatsSection, "__init__", building)
        monkeypatch.setattr(tui.api.gateway_http, "tls_context", no_bundle)
        async with app.run_test(size=(80, 24)) as pilot:
            await wait_until(pilot, lambda: app.screen.sections_ready, what="the first section")
            assert seen == {"chats imported, the sandbox taken on": True, "chats built, the clients ready": True}
            await wait_until(pilot, lambda: app.runtime_ready or bool(app.runtime_error), what="the start")
            assert app.runtime_ready and not app.runtime_error
            header = app.screen.query_one(GatewayHeader)
            await wait_until(pilot, lambda: header.connection != "starting", what="the status read")
            assert "connected" in header.connection and "not" not in header.connection
            await wait_until(pilot, lambda: app.screen.all_sections_mounted, what="every section")
    finally:
        process.stop_now()


def test_the_app_never_loads_httpx_s_command_line():
    """httpx's package imports its command line when it can (`httpx._main`: click, pygments' lexers, rich's progress and
    syntax modules), ~20 ms of the main thread before the app took keys; the app never uses it. The secret store's
    import is the start's first of httpx (tui.local.config)."""
    import json
    import subprocess
    import sys

    probe = ("import json, sys; from tui.cli.main import build_parser; import tui.local.secrets, httpx; "
             "print(json.dumps([m for m in ('click', 'pygments.lexers', 'rich.syntax') if m in sys.modules]))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True)
    assert json.loads(done.stdout) == []


def test_the_sandbox_process_is_spawned_before_asyncio_is_imported_and_answers_before_httpx_is():
    """The sandbox process is on the way to "connected" (~300 ms to listen: its interpreter, aiohttp, the API models),
    so it is spawned as early as can be: the command line's imports (tui.cli.main, which `prepare_app` runs after) no longer
    load asyncio (~25 ms, imported by Textual after the spawn), and the child no longer loads httpx before it listens
    (~10 ms: it delivers webhooks with it, the first one well after the start)."""
    import json
    import subprocess
    import sys

    probe = ("import json, sys, importlib; importlib.import_module(sys.argv[1]); "
             "print(json.dumps(sorted({'asyncio', 'httpx'} & set(sys.modules))))")
    loaded = {}
    for module in ("tui.cli.main", "tui.cli.sandbox"):
        done = subprocess.run([sys.executable, "-c", probe, module], capture_output=True, text=True, timeout=60,
                              check=True)
        loaded[module] = json.loads(done.stdout)
    assert loaded == {"tui.cli.main": [], "tui.cli.sandbox": ["asyncio"]}


async def test_the_runtime_starts_with_the_first_frame_not_after_the_screen_has_settled(monkeypatch):
    """Started after the first refresh (`call_after_refresh`), the runtime waited until the screen had settled: ~5 more
    layouts after the first frame (sizes, the header's and the section bar's fit, the footer's keys), each on a later
    refresh tick, ~35 ms for ~15 ms of work. It starts on Textual's Ready (the first frame drawn), and the main screen
    imports its first section only once that start is under way (its first step, the profiles file or the sandbox,
    then runs beside the import), whichever of the two the event loop runs first."""
    import tui.ui.main_screen
    from tui.core.runtime import Runtime

    order: list[str] = []
    start, load = Runtime.start, tui.ui.main_screen.section_class

    async def starting(self: Runtime, *args: object, **kwargs: object) -> None:
        order.append("runtime")
        await start(self, *args, **kwargs)

    def loading(section_id: str) -> object:
        order.append(f"{section_id} imported")
        return load(section_id)

    monkeypatch.setattr(Runtime, "start", starting)
    monkeypatch.setattr(tui.ui.main_screen, "section_class", loading)
    async with running_sandbox_app(size=(80, 24)):
        assert order[:2] == ["runtime", "chats imported"]


async def test_the_first_section_takes_the_focus_before_its_first_frame(monkeypatch):
    """The kept keys were replayed (and the first field focused) only after the section's first layout, so the frame
    that showed the section was followed by one more for the focus (~15 ms and a refresh tick before the app took
    keys). The focus chain is built from the DOM and the styles, both there once the section is mounted: no frame is
    drawn between the section mounted and the app taking keys."""
    from textual.screen import Screen

    from tui.ui.app import GatewayApp
    from tui.ui.main_screen import MainScreen

    frames: list[Screen] = []
    at: dict[str, int] = {}
    draw, mount, ready = Screen._compositor_refresh, MainScreen._mount_section, GatewayApp.report_keymap_problems

    def drawing(self: Screen) -> None:
        frames.append(self)
        draw(self)

    async def mounting(self: MainScreen, section_id: str, **kwargs: object) -> None:
        await mount(self, section_id, **kwargs)  # type: ignore[arg-type]
        at.setdefault(f"{section_id} mounted", len(frames))

    def taking_keys(self: GatewayApp) -> None:
        at.setdefault("keys taken", len(frames))
        ready(self)

    monkeypatch.setattr(Screen, "_compositor_refresh", drawing)
    monkeypatch.setattr(MainScreen, "_mount_section", mounting)
    monkeypatch.setattr(GatewayApp, "report_keymap_problems", taking_keys)
    async with running_sandbox_app(size=(80, 24)):
        assert at["keys taken"] == at["chats mounted"]


async def test_the_frame_that_shows_a_new_focus_shows_its_keys_in_the_footer(monkeypatch):
    """The footer was rebuilt after the frame that showed the focus change, so that frame showed the keys of the widget
    no longer focused, and one more frame was needed (at start: the field's focus, then its keys ~15-30 ms later)."""
    async with running_sandbox_app(size=(80, 24)) as pilot:
        app = pilot.app
        screen = app.screen
        footer = screen.query_one(GatewayFooter)
        await settle(pilot)
        assert app.focused is not None
        frames: list[tuple[object, tuple[str, ...]]] = []
        display = type(app)._display

        def recording(self: object, screen: object, renderable: object) -> None:
            frames.append((app.focused, tuple(key.description for key in footer.query(FooterKey))))
            display(self, screen, renderable)  # type: ignore[arg-type]

        monkeypatch.setattr(type(app), "_display", recording)
        before = tuple(key.description for key in footer.query(FooterKey))
        app.set_focus(None)
        await settle(pilot)
        after = tuple(key.description for key in footer.query(FooterKey))
        assert after != before
        unfocused = [keys for focused, keys in frames if focused is None]
        assert unfocused and unfocused[0] == after, frames


# What the app's first frame does not use, and which it no longer imports before it takes keys (each was, ~2-15 ms).
NOT_BEFORE_INTERACTIVE = (
    "tui.webhooks.conversations",  # the inbox's reads (the row types are in tui.webhooks.rows)
    "tui.webhooks.inbox_sql",  # the inbox's tables and writes
    "tui.webhooks.inbox_changes",  # what an event means for the inbox
    "tui.webhooks.events",  # the event store's rows and marks
    "sqlite3",
    "tui.ui.sections.chats.form",  # Chats' send form, built after the start
    "tui.ui.sections.chats.media",
    TextArea.__module__,  # the focus rules' other form controls
    Tabs.__module__,
    "rich._emoji_codes",  # markup in the events panel's column titles
    # the subcommands' parsers: the app's start reads its own flags alone (tui.cli.main.parse_arguments)
    "tui.cli.call", "tui.cli.campaign", "tui.cli.connection", "tui.cli.doctor", "tui.cli.fleet", "tui.cli.fleet_import",
    "tui.cli.locate", "tui.cli.message", "tui.cli.send",
)

INTERACTIVE_PROBE = """
import asyncio, json, sys, time
from tui.cli.main import parse_arguments, prepare_app

app, process = prepare_app(parse_arguments(["--sandbox"]))

def interactive():
    from textual.widgets import Input
    from tui.ui.main_screen import MainScreen
    from tui.ui.widgets.header import GatewayHeader
    screen = app.screen
    if not isinstance(screen, MainScreen) or not screen.sections_ready or not isinstance(app.focused, Input):
        return False
    headers = [header for header in screen.query(GatewayHeader) if header.is_mounted]
    return bool(headers) and headers[0].connection == "sandbox · connected"

async def until_interactive(pilot):
    deadline = time.monotonic() + 120  # a bound, not a speed: the app started in over 20 s on a loaded machine
    while not interactive():
        if time.monotonic() > deadline:
            raise SystemExit("never became interactive")
        await asyncio.sleep(0.005)
    print(json.dumps(sorted(name for name in json.loads(sys.argv[1]) if name in sys.modules)), flush=True)
    app.exit()

try:
    app.run(headless=True, auto_pilot=until_interactive)
finally:
    process.stop_now()
"""


def test_the_app_takes_keys_before_importing_what_its_first_frame_does_not_use():
    """`gateway-tui --sandbox` until its search field has the focus and the header says connected (as
    bench/start_interactive.py waits for it): none of these modules is imported by then."""
    import json
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", INTERACTIVE_PROBE, json.dumps(NOT_BEFORE_INTERACTIVE)],
                          capture_output=True, text=True, timeout=240, check=True)
    assert json.loads(done.stdout.strip().splitlines()[-1]) == []
