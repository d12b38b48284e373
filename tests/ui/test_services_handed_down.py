"""Screens and widgets are handed the services and the app's state they use, and post messages up for what they
want done: only the composition (the app, the main screen, the palette) reaches into the gateway app."""

from __future__ import annotations

from pathlib import Path

from textual.app import App, ComposeResult
from textual.reactive import reactive
from textual.widgets import Static

from tui.core.runtime import Runtime
from tui.ui.widgets.gateway_app import AppState
from tui.ui.widgets.header import GatewayHeader

TUI = Path(__file__).resolve().parents[2] / "tui"
COMPOSITION = {"ui/app.py", "ui/main_screen.py", "ui/commands.py", "ui/widgets/gateway_app.py"}
"""The app itself, the screen that builds the sections and their shared widgets, the palette (whose commands are the
app's actions), and the module that defines the reach."""


def test_only_the_composition_reaches_into_the_app() -> None:
    reaching = sorted(
        str(path.relative_to(TUI)) for path in TUI.rglob("*.py")
        if "gateway_app(" in path.read_text(encoding="utf-8") and str(path.relative_to(TUI)) not in COMPOSITION
    )
    assert reaching == []


class BareApp(App[None]):
    """A plain Textual app with the start-up flags the header watches: not the gateway app."""

    runtime_ready: reactive[bool] = reactive(False)
    clients_ready: reactive[bool] = reactive(False)
    runtime_error: reactive[str] = reactive("")

    def __init__(self) -> None:
        super().__init__()
        self.runtime = Runtime(profile="alpha")  # never started: nothing is read from a gateway
        self.state = AppState(self, insecure_storage=True)

    def compose(self) -> ComposeResult:
        yield GatewayHeader(self.runtime.services, self.state)


async def test_the_header_shows_what_it_is_handed_in_any_app() -> None:
    app = BareApp()
    async with app.run_test(size=(120, 5)) as pilot:
        await pilot.pause()
        header = app.query_one(GatewayHeader)
        profile = str(header.query_one("#header-profile", Static).render())
        assert "alpha" in profile  # the profile asked for, before any start
        assert header.query("#header-insecure")  # the state handed down says where secrets are
        app.runtime_error = "boom"
        await pilot.pause()
        assert header.connection == "not started"
