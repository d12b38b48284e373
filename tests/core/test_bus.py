"""The event bus: one typed publish/subscribe instead of a hand-made `subscribe_*` method per thing that happens."""

from __future__ import annotations

from dataclasses import dataclass

from tui.core.feed.bus import EventBus, InboxChanged, StoreHealthChanged


@dataclass(frozen=True)
class Other:
    value: int


def test_a_subscriber_gets_the_messages_of_its_topic_only() -> None:
    bus = EventBus()
    chats: list[str] = []
    health: list[StoreHealthChanged] = []
    bus.subscribe(InboxChanged, lambda message: chats.append(message.chat_id))
    bus.subscribe(StoreHealthChanged, health.append)
    bus.publish(InboxChanged("551199@s.whatsapp.net"))
    bus.publish(Other(3))  # nobody listens: nothing happens
    assert chats == ["551199@s.whatsapp.net"]
    assert health == []


def test_unsubscribe_stops_the_messages_and_may_be_called_twice() -> None:
    bus = EventBus()
    seen: list[str] = []
    unsubscribe = bus.subscribe(InboxChanged, lambda message: seen.append(message.chat_id))
    bus.publish(InboxChanged("a"))
    unsubscribe()
    unsubscribe()
    bus.publish(InboxChanged("b"))
    assert seen == ["a"]


def test_a_failing_subscriber_never_stops_the_others_nor_the_publisher() -> None:
    bus = EventBus()
    seen: list[str] = []
    bus.subscribe(InboxChanged, lambda _message: 1 / 0)
    bus.subscribe(InboxChanged, lambda message: seen.append(message.chat_id))
    bus.publish(InboxChanged("a"))
    assert seen == ["a"]


def test_subscribers_run_in_the_order_they_subscribed() -> None:
    bus = EventBus()
    order: list[int] = []
    bus.subscribe(InboxChanged, lambda _message: order.append(1))
    bus.subscribe(InboxChanged, lambda _message: order.append(2))
    bus.publish(InboxChanged(""))
    assert order == [1, 2]


def test_a_subscriber_that_unsubscribes_while_called_does_not_skip_the_next() -> None:
    bus = EventBus()
    seen: list[int] = []
    unsubscribe_first = bus.subscribe(InboxChanged, lambda _message: (seen.append(1), unsubscribe_first()))
    bus.subscribe(InboxChanged, lambda _message: seen.append(2))
    bus.publish(InboxChanged(""))
    bus.publish(InboxChanged(""))
    assert seen == [1, 2, 2]
