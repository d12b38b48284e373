"""The services of a run, in one typed bundle the app holds and hands down: the main screen builds each section with
the ones it uses (named in its constructor), and a section hands its widgets what they show."""

from __future__ import annotations

from dataclasses import dataclass

from tui.core.accounts.accounts import Accounts
from tui.core.alerts.service import AlertService
from tui.core.display import Display
from tui.core.feed.bus import EventBus
from tui.core.feed.feed import EventFeed
from tui.core.inbox import InboxService
from tui.core.sandbox_host import SandboxHost
from tui.core.webhook_setup import WebhookSetup


@dataclass(frozen=True)
class Services:
    bus: EventBus
    """Everything that happens, typed (events stored, store health, listener load, forward attempts, inbox)."""
    feed: EventFeed
    """The store, the listener, the forwarder and replays, the listener's statistics."""
    accounts: Accounts
    """The open accounts, the current one and its clients, switching, dialects, profile changes, the Fleet board."""
    webhooks: WebhookSetup
    """Pointing, fixing and checking webhooks, the HMAC key, the doctor's inputs and records, moving the listener."""
    inbox: InboxService
    """Recording sends, forgetting chats, media files, names from the gateway's lists."""
    sandbox: SandboxHost
    """The embedded sandbox and the ids it really has."""
    display: Display
    """The run's details as shown (deterministic mode's fixed names)."""
    alerts: AlertService
    """The alerts open per account (raised once per episode, cleared once), fed from the bus."""
