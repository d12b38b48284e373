"""What every Settings block shares: its answer line, the section it runs its calls on and the services that section
was built with (`settings_of`), and saving a changed field to the profile (through the accounts' own save)."""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Self

from textual.widget import Widget

from tui.core.accounts.accounts import Accounts
from tui.core.display import Display
from tui.core.feed.feed import EventFeed
from tui.core.services import Services
from tui.ui.widgets.gateway_app import AppState
from tui.core.webhook_setup import WebhookSetup
from tui.ui.widgets.feedback import ErrorLine
from tui.ui.widgets.section import OperationSection

if TYPE_CHECKING:
    from tui.local.config import Profile

MIB = 1024 * 1024


def block_status(block: Widget) -> ErrorLine:
    """Each block answers under its own buttons, where the user is looking."""
    return block.query_one(".block-status", ErrorLine)


def section_of(block: Widget) -> OperationSection:
    """The section a block runs its calls and workers on: Escape there cancels them, as for every section."""
    return block.query_ancestor(OperationSection)


class SettingsHost(OperationSection):
    """The Settings section as its blocks see it: the services it was built with, which they read from it."""

    def __init__(self, accounts: Accounts, display: Display, webhooks: WebhookSetup, feed: EventFeed, *,
                 id: str | None = None) -> None:
        super().__init__(accounts, display, id=id)
        self.webhooks = webhooks
        self.feed = feed

    @classmethod
    def with_services(cls, services: Services, state: AppState) -> Self:
        return cls(services.accounts, services.display, services.webhooks, services.feed)

    @property
    def profile(self) -> Profile | None:
        """The current account's profile (None before the start has loaded it)."""
        current = self.accounts.current
        return current.profile if current is not None else None


def settings_of(block: Widget) -> SettingsHost:
    """The Settings section a block is part of, and so the services it uses."""
    return block.query_ancestor(SettingsHost)


def run_on_section(block: Widget, work: Callable[[], Coroutine[object, object, object]], group: str) -> None:
    """Run `work` as the section's worker (one at a time per group), as `@work` on the section did."""
    section_of(block).run_worker(work, group=group, exclusive=True, exit_on_error=False)


async def save_to_profile(block: Widget, **changes: object) -> bool:
    """Save changed fields of a real profile (the sandbox has nothing on disk). False when not saved; a failure
    is said under the listener block, as it always was."""
    from tui.local.config import ConfigError

    try:
        return await settings_of(block).accounts.save_profile_changes(**changes)
    except (ConfigError, OSError) as error:
        block_status(section_of(block).query_one("#listener-form")).show_error(f"Not saved to the profile: {error}")
        return False
