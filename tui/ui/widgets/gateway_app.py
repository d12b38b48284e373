"""What screens and widgets may use of the app, and the one typed way to reach it: `gateway_app(widget)`.

`tui.ui.app.GatewayApp` is the one subclass. Screens and widgets import this module, never `tui.ui.app`: the app
imports its screens (the main screen, set-up, the palette's commands), and a screen importing the app back would
close an import cycle (tests/test_import_cycles.py).
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from typing import TYPE_CHECKING, Any

from textual.app import App
from textual.dom import DOMNode
from textual.reactive import reactive
from textual.signal import Signal

from tui.ui.messages import MessageSent

if TYPE_CHECKING:
    from tui.core.services import Services
    from tui.core.runtime import Runtime, StoredEvent


class GatewayAppBase(App[Any]):
    """The app's state shared with its screens: the runtime, the start-up flags and events, the signals and the
    messages sent in this session; and the few app actions a screen or the palette asks for."""

    runtime_ready: reactive[bool] = reactive(False)
    """True once the Runtime has started (clients, listener, store usable)."""

    clients_ready: reactive[bool] = reactive(False)
    """True once the gateway clients can be used: in sandbox mode before the runtime has finished starting (the
    header reads the connection while the store, the listener and the webhooks are set up), else with it."""

    runtime_error: reactive[str] = reactive("")
    """Plain text of a start-up failure, shown in the header; empty when none."""

    runtime: Runtime
    services: Services
    """The runtime's services, handed down: the main screen builds each section with the ones it names."""
    sandbox: bool
    insecure_storage: bool
    deterministic: bool
    event_received: Signal[Any]  # data: tuple[StoredEvent, ...], oldest first
    exchange_recorded: Signal[Any]  # data: Exchange
    sent_changed: Signal[str]  # data: message id
    forward_attempted: Signal[Any]  # data: ForwardAttempt
    sent_messages: OrderedDict[str, MessageSent]
    last_sent_id: str | None
    first_status_read: asyncio.Event
    first_section_shown: asyncio.Event
    runtime_settled: asyncio.Event

    def sent_message_for(self, event: StoredEvent) -> MessageSent | None:
        """The message we sent that this event refers to, if any."""
        for message_id in event.message_ids:
            sent = self.sent_messages.get(message_id)
            if sent is not None:
                return sent
        return None

    # The app's own actions (tui.ui.app.GatewayApp implements them: they open screens this module cannot import).

    def report_keymap_problems(self) -> None:
        raise NotImplementedError

    def keep_start_up_out_of_collections(self) -> None:
        raise NotImplementedError

    def show_section(self, section_id: str) -> None:
        raise NotImplementedError

    def action_request_log(self) -> None:
        raise NotImplementedError

    def action_help(self) -> None:
        raise NotImplementedError

    def action_setup(self) -> None:
        raise NotImplementedError

    def show_event_detail(self, event: Any) -> None:
        """One stored event in full (the events panel asks: widgets do not import screens)."""
        raise NotImplementedError


def gateway_app(node: DOMNode) -> GatewayAppBase:
    """The gateway app `node` runs in (a TypeError in any other app: a programming error, not a user's)."""
    app = node.app
    if not isinstance(app, GatewayAppBase):
        raise TypeError(f"{type(node).__name__} runs in {type(app).__name__}, not the gateway app")
    return app
