"""The command palette (ctrl+p): every gateway operation by name, plus the sections' and the app's own commands.

Gateway operations come from the one table, `tui.api.operations` (title, and the section that performs it);
sections add their own commands in `Section.OPERATIONS` (command id -> title; each section's ids are an enum).
Choosing either switches to the section and calls its `open_operation(id)`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

from textual.command import DiscoveryHit, Hit, Hits, Provider

from tui.ui.widgets.gateway_app import GatewayAppBase, gateway_app

if TYPE_CHECKING:
    from tui.ui.main_screen import MainScreen


@dataclass(frozen=True)
class PaletteCommand:
    title: str
    help: str
    run: Callable[[], object]


class GatewayCommands(Provider):
    """Operations by name; the app's commands (panel, request log, export, sections)."""

    async def startup(self) -> None:
        self.commands = await self._collect()

    async def _collect(self) -> list[PaletteCommand]:
        from tui.api.operations import all_operations
        from tui.ui.main_screen import SECTIONS, SECTIONS_BY_ID, section_class

        app = gateway_app(self.screen)
        account = app.runtime.current
        # A read-only profile's writes stay listed (the user learns why they are refused), marked as refused.
        refused = "refused: this profile is read-only · " if account is not None and account.profile.read_only else ""
        commands: list[PaletteCommand] = []
        for op in all_operations():
            info = SECTIONS_BY_ID[op.section.value]
            where = f"{info.title} ({info.key}) · {op.family.value} {op.method} {op.path_template}"
            commands.append(
                PaletteCommand(op.title, (refused if op.writes else "") + where,
                               partial(_open_operation, app, info.id, op.id.value))
            )
        for info in SECTIONS:
            cls = section_class(info.id)
            for op_id, title in (cls.OPERATIONS if cls is not None else {}).items():
                commands.append(
                    PaletteCommand(title, f"{info.title} ({info.key})", partial(_open_operation, app, info.id, op_id))
                )
        for info in SECTIONS:
            commands.append(
                PaletteCommand(f"Go to {info.title}", f"section {info.key}", partial(app.show_section, info.id))
            )
        commands += [
            PaletteCommand("Show request log", "every HTTP exchange; copy as curl (ctrl+r)", app.action_request_log),
            PaletteCommand("Toggle events panel", "show or hide the live events panel (e)", partial(_toggle_panel, app)),
            PaletteCommand("Export events", "write the Events section's selection to JSON Lines", partial(_export_events, app)),
            PaletteCommand("Show events of my last sent message", "filter the panel to it", partial(_follow_last_sent, app)),
            PaletteCommand("Help", "help for the current section (?)", app.action_help),
            PaletteCommand("Set up a profile", "the first-run form: a gateway account and its secrets",
                           app.action_setup),
        ]
        return commands

    async def discover(self) -> Hits:
        for command in self.commands:
            yield DiscoveryHit(command.title, command.run, help=command.help)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for command in self.commands:
            score = matcher.match(command.title)
            if score > 0:
                yield Hit(score, matcher.highlight(command.title), command.run, text=command.title, help=command.help)


def _main_screen(app: GatewayAppBase) -> MainScreen | None:
    from tui.ui.main_screen import MainScreen

    while len(app.screen_stack) > 1 and not isinstance(app.screen, MainScreen):
        app.pop_screen()
    return app.screen if isinstance(app.screen, MainScreen) else None


def _open_operation(app: GatewayAppBase, section_id: str, op_id: str) -> None:
    screen = _main_screen(app)
    if screen is not None:
        screen.open_operation(section_id, op_id)


def _toggle_panel(app: GatewayAppBase) -> None:
    screen = _main_screen(app)
    if screen is not None:
        screen.action_toggle_panel()


def _export_events(app: GatewayAppBase) -> None:
    from tui.ui.sections.events import EventsCommand

    _open_operation(app, "events", EventsCommand.EXPORT)


def _follow_last_sent(app: GatewayAppBase) -> None:
    screen = _main_screen(app)
    if screen is None:
        return
    if not app.last_sent_id:
        app.notify("No message sent yet in this session.")
        return
    from tui.ui.widgets.events_panel import EventsPanel

    panel = screen.query_one(EventsPanel)
    panel.display = True
    panel.show_message(app.last_sent_id)
