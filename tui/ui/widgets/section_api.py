"""What the main screen and the palette use of a section, and what a section uses of the screen that holds it.

Every section (the six `OperationSection`s and Events) is a `Section`; the main screen is a `SectionHost`. These
are base classes with default hooks rather than `typing.Protocol`s: a Protocol cannot be a base of a Textual widget
(their metaclasses conflict), and a nominal base lets the main screen tell a section from the placeholder left
when one fails to build with `isinstance`, typed. This module imports only Textual: the main screen imports it
before any section is built.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, ClassVar, Self

from textual.screen import Screen

from tui.ui.widgets.focus import TypingInForms

if TYPE_CHECKING:  # the services' modules are imported by the app before any section is built
    from tui.core.services import Services
    from tui.ui.widgets.gateway_app import AppState


class Section(TypingInForms):
    """A section of the main screen (alt+1..7). Overrides what it has:

    - `HELP` (Textual's own attribute): markdown for `?`; the section's gateway operations are appended.
    - `OPERATIONS`: its own palette entries (command id -> title); its gateway operations come from the table.
    - `open_operation(op_id)`: its own command ids and the `tui.api.operations` ids placed in it; KeyError for
      any other.
    - `build_deferred()`: builds the parts the first frame does not show, after start (Chats' compose form).
    - `action_cancel()`: Escape when nothing else takes it: cancel the section's work.

    On a form control inside it, printable keys are typing: a section takes them from the keys bound above it
    (`TypingInForms`).
    """

    OPERATIONS: ClassVar[Mapping[str, str]] = {}

    @classmethod
    def with_services(cls, services: Services, state: AppState) -> Self:
        """The section built by the main screen with the services its constructor names (none by default)."""
        return cls()

    def open_operation(self, op_id: str) -> None:
        raise KeyError(op_id)

    async def build_deferred(self) -> None:
        """Nothing deferred by default."""

    def action_cancel(self) -> None:
        """Nothing to cancel by default."""


class SectionHost(Screen[object]):
    """The screen that holds the sections (`tui.ui.main_screen.MainScreen`)."""

    def hold_keys_while(self, work: Awaitable[object], then: Callable[[], object]) -> None:
        """Keep the keys typed until `work` is done, call `then` (which places the focus), then replay them."""
        raise NotImplementedError

    async def make_current(self, name: str) -> None:
        """Make the open account `name` the current one (the Fleet board's Enter, the account picker)."""
        raise NotImplementedError
