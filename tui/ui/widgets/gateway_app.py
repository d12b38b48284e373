"""What the app shares with its screens and widgets: `AppState`, handed down with the services (the signals it
fans events out on, the messages sent in this session, where secrets are kept), and `GatewayAppBase`, the app's
own typed side, which only the composition (the app, the main screen, the palette) reaches with `gateway_app(node)`.

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
from tui.ui.widgets.typing_pace import TypingPace

if TYPE_CHECKING:
    from tui.api.exchange import Exchange
    from tui.core.services import Services
    from tui.core.runtime import ForwardAttempt, Runtime, StoredEvent

SENT_REMEMBERED = 1000


class SentMessages:
    """The messages sent in this session (the newest SENT_REMEMBERED), so the gateway's later events are linked to
    them ("↳ your text · ")."""

    def __init__(self) -> None:
        self.by_id: OrderedDict[str, MessageSent] = OrderedDict()
        self.last_id: str | None = None

    def remember(self, message: MessageSent) -> None:
        self.by_id[message.message_id] = message
        self.by_id.move_to_end(message.message_id)
        while len(self.by_id) > SENT_REMEMBERED:
            self.by_id.popitem(last=False)
        self.last_id = message.message_id

    def message_for(self, event: StoredEvent) -> MessageSent | None:
        """The message we sent that this event refers to, if any."""
        for message_id in event.message_ids:
            sent = self.by_id.get(message_id)
            if sent is not None:
                return sent
        return None


class AppState:
    """What the app shares with its screens and widgets beside the services, handed down when they are built:
    the signals it publishes on the UI's loop, the messages sent in this session, and whether secrets are kept in
    the 0600 file (set-up may switch to it during the run: the app says so with `InsecureStorageChosen`)."""

    def __init__(self, owner: App[Any], *, insecure_storage: bool) -> None:
        self.event_received: Signal[tuple[StoredEvent, ...]] = Signal(owner, "event-received")
        """The events stored since the last publication, oldest first, in one loop callback per batch."""
        self.exchange_recorded: Signal[Exchange] = Signal(owner, "exchange-recorded")
        self.sent_changed: Signal[str] = Signal(owner, "sent-changed")
        """A message id, after a section posted `tui.ui.messages.MessageSent`."""
        self.forward_attempted: Signal[ForwardAttempt] = Signal(owner, "forward-attempted")
        self.sent = SentMessages()
        self.insecure_storage = insecure_storage
        self.pace = TypingPace(owner)
        """The keys' pace: background redraws wait for the moment after a key is drawn while the user types."""


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
    state: AppState
    """Handed down with the services: the signals, the messages sent, where secrets are kept."""
    sandbox: bool
    deterministic: bool
    first_status_read: asyncio.Event
    first_section_shown: asyncio.Event
    runtime_settled: asyncio.Event

    @property
    def insecure_storage(self) -> bool:
        return self.state.insecure_storage

    @property
    def event_received(self) -> Signal[tuple[StoredEvent, ...]]:
        return self.state.event_received

    @property
    def exchange_recorded(self) -> Signal[Exchange]:
        return self.state.exchange_recorded

    @property
    def sent_changed(self) -> Signal[str]:
        return self.state.sent_changed

    @property
    def forward_attempted(self) -> Signal[ForwardAttempt]:
        return self.state.forward_attempted

    @property
    def last_sent_id(self) -> str | None:
        return self.state.sent.last_id

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


def gateway_app(node: DOMNode) -> GatewayAppBase:
    """The gateway app `node` runs in (a TypeError in any other app: a programming error, not a user's)."""
    app = node.app
    if not isinstance(app, GatewayAppBase):
        raise TypeError(f"{type(node).__name__} runs in {type(app).__name__}, not the gateway app")
    return app
