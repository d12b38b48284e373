"""The one way tests run the real app against the embedded sandbox: deterministic tokens, ids and clock,
a fixed terminal size, no cursor blink, and helpers that wait for workers and webhook deliveries (bounded in
time) before anything is asserted or captured.

    async with running_sandbox_app() as pilot:
        await show_section(pilot, "groups")
        ...
        await settle(pilot)

Snapshot tests are plain `def` tests: `snap_compare(sandbox_app(), terminal_size=SIZE, run_before=...)` with a
`run_before` that starts with `await wait_ready(pilot)` and ends with `await settle(pilot)`.
"""

from __future__ import annotations

import asyncio
import contextlib
import html
import os
import re
import sys
import time
from collections.abc import AsyncIterator, Callable, Mapping

from textual.pilot import Pilot
from textual.screen import Screen
from textual.widgets import TextArea

from tui.ui.app import GatewayApp, build_app
from tui.gateways.sandbox import SandboxGateway
from tui.ui.widgets.forms import set_cursor_blink

SIZE = (120, 40)
# Bounds on waits for conditions, not promises of speed: a start or a settle that takes long on a busy 2-core
# machine (the suite beside other work: the app's start took over 20 s at a load of 12) is still correct. A test
# that promises a time measures it on a clock of its own.
READY_TIMEOUT = 120.0
SETTLE_TIMEOUT = 60.0


def sandbox_app() -> GatewayApp:
    set_cursor_blink(False)
    return build_app(sandbox=True, deterministic=True)


async def wait_until(pilot: Pilot, condition: Callable[[], bool], *, timeout: float = SETTLE_TIMEOUT, what: str = "") -> None:
    """Let the app run until `condition()` holds; fail after `timeout` seconds with `what` in the message."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what or condition}")
        await pilot.pause(0.02)


async def wait_ready(pilot: Pilot) -> None:
    """Until the runtime (sandbox, listener, store, clients, webhooks, HMAC key) is up and every section mounted;
    fail on a start-up error."""
    app = pilot.app
    await wait_until(
        pilot, lambda: app.runtime_ready or bool(app.runtime_error), timeout=READY_TIMEOUT, what="runtime start"
    )
    assert not app.runtime_error, app.runtime_error
    await wait_until(pilot, lambda: getattr(app.screen, "all_sections_mounted", True), timeout=READY_TIMEOUT,
                     what="every section mounted")  # the ones not shown at start follow the runtime's start
    await settle(pilot)


async def settle(pilot: Pilot) -> None:
    """Until workers are done, the sandbox has delivered every webhook, the views on screen that redraw a moment
    after events (the Events section, the events panel, the inbox) have, a thread on screen that follows its newest
    message is scrolled to it (it scrolls after its layout) with its scrollbar in step, and the screen has
    refreshed."""
    app = pilot.app
    for _ in range(3):  # a delivery can start a worker and a worker can cause a delivery
        await _workers_done(pilot)
        sandbox = getattr(app.runtime, "sandbox", None)
        if sandbox is not None:
            await sandbox.wait_for_deliveries(timeout=SETTLE_TIMEOUT)
        await pilot.pause()
    # Their timers were no part of the pauses above: the Events section's 0.3 s could still be running when a
    # screenshot was taken (it showed the page from before the events).
    await wait_until(pilot, lambda: not _redraws_scheduled(app), what="the redraws the events scheduled")
    await _workers_done(pilot)
    await pilot.pause()
    await wait_until(pilot, lambda: all(thread.at_newest for thread in _following_threads(app)),
                     what="the thread scrolled to its newest message")
    await wait_until(pilot, lambda: all(thread.settled for thread in _threads_on_screen(app)),
                     what="the thread laid out whole, its scrollbar in step")
    await pilot.wait_for_scheduled_animations()
    await pilot.pause()


async def _workers_done(pilot: Pilot) -> None:
    """Until no worker runs. An exclusive worker replaced by a newer one ends cancelled, which `wait_for_complete`
    raises: then wait for the rest (bounded)."""
    from textual.worker import WorkerCancelled

    for _ in range(50):
        try:
            await asyncio.wait_for(pilot.app.workers.wait_for_complete(), SETTLE_TIMEOUT)
            return
        except WorkerCancelled:
            await pilot.pause()
    raise AssertionError("workers kept being cancelled and replaced")


def _redraws_scheduled(app) -> bool:
    """A view on screen has a redraw coming (a burst of events is drawn once, a moment after it)."""
    from tui.ui.sections.events import EventsSection
    from tui.ui.sections.chats.inbox import InboxView
    from tui.ui.widgets.events_panel import EventsPanel
    from tui.ui.widgets.header import GatewayHeader

    screen = app.screen
    return (any(section.refresh_pending for section in _on_screen(screen.query(EventsSection)))
            or any(panel.redraw_pending for panel in _on_screen(screen.query(EventsPanel)))
            or any(not view.idle for view in _on_screen(screen.query(InboxView)))
            or any(header.counts_pending for header in _on_screen(screen.query(GatewayHeader))))


def _on_screen(widgets) -> list:
    return [widget for widget in widgets if widget.region.height]


def _threads_on_screen(app) -> list:
    from tui.ui.widgets.thread_view import ThreadView

    return _on_screen(app.screen.query(ThreadView))


def _following_threads(app) -> list:
    return [thread for thread in _threads_on_screen(app) if thread.following]


@contextlib.asynccontextmanager
async def running_sandbox_app(size: tuple[int, int] = SIZE, *, notifications: bool = False) -> AsyncIterator[Pilot]:
    app = sandbox_app()
    async with app.run_test(size=size, notifications=notifications) as pilot:
        await wait_ready(pilot)
        yield pilot


async def show_section(pilot: Pilot, section_id: str) -> None:
    """Show a section directly (tests of the number keys press them instead)."""
    pilot.app.show_section(section_id)
    await pilot.pause()


async def open_chat_form(pilot: Pilot) -> None:
    """Chats opens on the conversations (its search field focused): ctrl+n shows the new-message form, its
    recipient field focused, as a user reaches it."""
    await pilot.press("ctrl+n")
    await wait_until(pilot, lambda: getattr(pilot.app.focused, "id", None) == "recipient", what="the Chats form")


_SVG_TEXT = re.compile(r'<text class="[^"]*" x="([\d.]+)" y="([\d.]+)" textLength="([\d.]+)"[^>]*>(.*?)</text>')


def screen_text(app: GatewayApp) -> str:
    """What the terminal shows right now, as plain lines with cells in their columns (from the app's own SVG
    screenshot, where every text run carries its x position and width)."""
    rows: dict[float, dict[int, str]] = {}
    for match in _SVG_TEXT.finditer(app.export_screenshot()):
        text = html.unescape(match.group(4)).replace("\xa0", " ")
        if not text:
            continue
        cell_width = float(match.group(3)) / len(text)
        column = round(float(match.group(1)) / cell_width)
        cells = rows.setdefault(float(match.group(2)), {})
        for offset, character in enumerate(text):
            cells[column + offset] = character
    lines = []
    for _, cells in sorted(rows.items()):
        width = max(cells) + 1
        lines.append("".join(cells.get(column, " ") for column in range(width)).rstrip())
    return "\n".join(lines)


def fill_first_profile(screen: Screen, gateway_url: str) -> None:
    """Set-up's fields for a profile "first" on the sandbox gateway at `gateway_url`, with the sandbox tests'
    tokens (tests/sandbox/conftest.py)."""
    from textual.widgets import Input

    from tests.sandbox.conftest import CLIENT_TOKEN, INSTANCE_TOKEN, SESSION_TOKEN

    for field, value in {"name": "first", "base_url": gateway_url, "instance_id": "first",
                         "session_url": gateway_url, "listener_port": "0", "client-token": CLIENT_TOKEN,
                         "instance-token": INSTANCE_TOKEN, "session-token": SESSION_TOKEN}.items():
        screen.query_one(f"#setup-{field}", Input).value = value


def setup_screen_shown(app: GatewayApp) -> bool:
    """The set-up screen is on top and composed (its fields can be filled)."""
    return type(app.screen).__name__ == "SetupScreen" and bool(app.screen.query("#setup-name"))


@contextlib.asynccontextmanager
async def sandbox_for_env_tokens(instance_id: str, tokens: Mapping[str, str]) -> AsyncIterator[SandboxGateway]:
    """A sandbox gateway on loopback whose credentials are the GATEWAY_TUI_* values in `tokens` (what a command
    run with that environment will send)."""
    gateway = SandboxGateway(
        instance_id=instance_id,
        instance_token=tokens["GATEWAY_TUI_INSTANCE_TOKEN"],
        client_token=tokens["GATEWAY_TUI_CLIENT_TOKEN"],
        session_token=tokens["GATEWAY_TUI_SESSION_TOKEN"],
        delivery_delay=0.0,
    )
    await gateway.start()
    try:
        yield gateway
    finally:
        await gateway.stop()


async def run_gateway_tui(*args: str, env: Mapping[str, str]) -> tuple[int, str, str]:
    """`gateway-tui ARGS` as a real process with `env` added to ours: (exit code, stdout, stderr)."""
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "tui", *args,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env={**os.environ, **env},
    )
    out, err = await asyncio.wait_for(process.communicate(), timeout=60)
    return process.returncode or 0, out.decode(), err.decode()


async def palette(pilot: Pilot, title: str) -> None:
    """Open the palette, search `title`, and choose it once it is the highlighted entry (not before: the search
    runs in the background, and Enter pressed earlier would choose what was highlighted then)."""
    from textual.widgets import Input

    await pilot.press("ctrl+p")
    await wait_until(pilot, lambda: type(pilot.app.screen).__name__ == "CommandPalette", what="the palette")
    pilot.app.screen.query_one(Input).value = title
    await wait_until(pilot, lambda: highlighted(pilot.app).startswith(title), what=f"palette hit {title!r}")
    await pilot.press("enter")


def highlighted(app: GatewayApp) -> str:
    """The palette's highlighted entry (the one Enter chooses), as plain text; "" while the search runs."""
    from textual.widgets import OptionList

    for options in app.screen.query(OptionList):
        if options.highlighted is not None:
            prompt = options.get_option_at_index(options.highlighted).prompt
            return str(getattr(prompt, "plain", prompt))
    return ""


def fill(screen: Screen, values: Mapping[str, str]) -> None:
    """Set each field named by id to its value, as if typed (text areas take theirs as loaded text)."""
    for widget_id, value in values.items():
        widget = screen.query_one(f"#{widget_id}")
        if isinstance(widget, TextArea):
            widget.load_text(value)
        else:
            widget.value = value  # type: ignore[attr-defined]  # an Input, Select or MaskedInput
