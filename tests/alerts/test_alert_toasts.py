"""In the app (issue 35): one toast per raised alert, none for its clearing, from the stored events the runtime
hands its subscribers (`Runtime.subscribe_events`)."""

from __future__ import annotations

from collections.abc import Callable

from textual.app import App

from tests.alerts.events import WUZAPI_CONNECTED, WUZAPI_DISCONNECTED, Clock, event
from tui.webhooks.events import StoredEvent
from tui.ui.widgets.alert_toasts import AlertToasts
from tui.ui.textual_compat import notifications_of


class Feed:
    """Stands for `Runtime.subscribe_events`: keeps the subscriber, says when it unsubscribed."""

    def __init__(self) -> None:
        self.subscribers: list[Callable[[StoredEvent], None]] = []

    def subscribe(self, callback: Callable[[StoredEvent], None]) -> Callable[[], None]:
        self.subscribers.append(callback)
        return lambda: self.subscribers.remove(callback)

    def publish(self, stored: StoredEvent) -> None:
        for callback in list(self.subscribers):
            callback(stored)


async def test_one_toast_per_raised_alert() -> None:
    clock = Clock()
    feed = Feed()
    app = App()
    async with app.run_test() as pilot:
        toasts = AlertToasts(app, feed.subscribe, clock=clock)
        toasts.start()
        feed.publish(event(WUZAPI_DISCONNECTED, clock()))
        feed.publish(event(WUZAPI_DISCONNECTED, clock.advance(seconds=5)))
        feed.publish(event(WUZAPI_CONNECTED, clock.advance(seconds=5)))
        await pilot.pause()
        notes = notifications_of(app)
        assert [(note.title, note.severity) for note in notes] == [("Alert: shop", "warning")]
        assert "disconnected" in notes[0].message
        assert [alert.state.value for alert in toasts.seen] == ["raised", "cleared"]
        toasts.stop()
        assert feed.subscribers == []
