"""One typed publish/subscribe for everything that happens in a run: a topic is a class, a message an instance of it.

    bus = EventBus()
    unsubscribe = bus.subscribe(InboxChanged, lambda changed: redraw(changed.chat_id))
    bus.publish(InboxChanged(chat_id))
    unsubscribe()

Subscribers are called on the publisher's thread (the event loop, for every topic here), in the order they
subscribed; one that raises is logged and the others still run: a broken view must never break the listener's
answer or a send. Imports only the standard library (the app builds the bus before its first frame).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:  # pragma: no cover - imports for type checkers only
    from tui.webhooks.events import StoredEvent
    from tui.webhooks.forwarder import ForwardAttempt

log = logging.getLogger(__name__)

Topic = TypeVar("Topic")


@dataclass(frozen=True)
class EventStored:
    """A webhook event the listener stored (its body left out above the store's list limit). `account`: the open
    account it came for (None when it names none of them)."""

    event: StoredEvent
    account: str | None


@dataclass(frozen=True)
class StoreHealthChanged:
    """The event store started or stopped failing (`EventFeed.store_status` says how)."""


@dataclass(frozen=True)
class ListenerLoadChanged:
    """The listener started or stopped shedding load (`EventFeed.listener_status` says how)."""

    shedding: bool


@dataclass(frozen=True)
class IntakeChanged:
    """Who listens changed: an attached listener stopped or is back, or this run has no listener and says why
    (`EventFeed.intake_address`, `EventFeed.intake_problem`)."""


@dataclass(frozen=True)
class ForwardAttempted:
    """One forward or replay of a stored event to the user's app was tried."""

    attempt: ForwardAttempt


@dataclass(frozen=True)
class InboxChanged:
    """The inbox changed beside the events: one of our own messages recorded or a chat forgotten (`chat_id`), or
    chats named from the gateway's lists ("": any chat)."""

    chat_id: str


class EventBus:
    """Topics by class; a message is delivered to the subscribers of its exact class."""

    def __init__(self) -> None:
        self._subscribers: dict[type, list[Callable[[Any], None]]] = {}

    def subscribe(self, topic: type[Topic], callback: Callable[[Topic], None]) -> Callable[[], None]:
        """Call `callback(message)` for every message of `topic` published from now on; returns the function that
        stops it (safe to call twice)."""
        self._subscribers.setdefault(topic, []).append(callback)

        def unsubscribe() -> None:
            callbacks = self._subscribers.get(topic, [])
            if callback in callbacks:
                callbacks.remove(callback)

        return unsubscribe

    def publish(self, message: object) -> None:
        """Hand `message` to its topic's subscribers (those subscribed when publishing began)."""
        for callback in list(self._subscribers.get(type(message), ())):
            try:
                callback(message)
            except Exception:  # a broken view must not break the publisher
                log.exception("%s subscriber failed", type(message).__name__)
