"""What every Settings block shares: its answer line, the section it runs its calls on, the runtime, and saving
a changed field to the profile (through the runtime's own save)."""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING

from textual.widget import Widget

from tui.widgets.feedback import ErrorLine
from tui.widgets.gateway_app import gateway_app
from tui.widgets.section import OperationSection

if TYPE_CHECKING:
    from tui.runtime import Runtime

MIB = 1024 * 1024


def block_status(block: Widget) -> ErrorLine:
    """Each block answers under its own buttons, where the user is looking."""
    return block.query_one(".block-status", ErrorLine)


def section_of(block: Widget) -> OperationSection:
    """The section a block runs its calls and workers on: Escape there cancels them, as for every section."""
    return block.query_ancestor(OperationSection)


def runtime_of(block: Widget) -> Runtime:
    return gateway_app(block).runtime


def run_on_section(block: Widget, work: Callable[[], Coroutine[object, object, object]], group: str) -> None:
    """Run `work` as the section's worker (one at a time per group), as `@work` on the section did."""
    section_of(block).run_worker(work, group=group, exclusive=True, exit_on_error=False)


async def save_to_profile(block: Widget, **changes: object) -> bool:
    """Save changed fields of a real profile (the sandbox has nothing on disk). False when not saved; a failure
    is said under the listener block, as it always was."""
    from tui.config import ConfigError

    try:
        return await runtime_of(block).open_accounts.save_profile_changes(**changes)
    except (ConfigError, OSError) as error:
        block_status(section_of(block).query_one("#listener-form")).show_error(f"Not saved to the profile: {error}")
        return False
