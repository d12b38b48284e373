"""In the app (issue 35): one toast per raised alert, none for its clearing, from the stored events on the event bus;
the signal the preferences choose (the bell, a desktop notification where the terminal has one, none); campaigns
paused on their own and pairing codes about to expire become alerts."""

from __future__ import annotations

from datetime import timedelta

import pytest
from textual.app import App

from tests.alerts.events import WUZAPI_CONNECTED, WUZAPI_DISCONNECTED, Clock, event
from tui.core.alerts import AlertKind, AlertState
from tui.core.alerts.service import AlertChanged, AlertService, PairingCodeGone, PairingCodeShown
from tui.core.campaigns.ledger import Campaign, CampaignState
from tui.core.feed.bus import EventBus, EventStored
from tui.local import preferences
from tui.ui.textual_compat import notifications_of
from tui.ui.widgets.alert_toasts import AlertToasts, desktop_notification


def stored(body: str, clock: Clock) -> EventStored:
    return EventStored(event(body, clock()), "shop")


async def test_one_toast_per_raised_alert_and_one_bell() -> None:
    clock = Clock()
    bus = EventBus()
    app = App()
    bells: list[int] = []
    app.bell = lambda: bells.append(1)  # type: ignore[method-assign]
    async with app.run_test(notifications=True) as pilot:
        toasts = AlertToasts(app, AlertService(bus, clock=clock, down_grace=timedelta(0)))
        toasts.start()
        bus.publish(stored(WUZAPI_DISCONNECTED, clock))
        clock.advance(seconds=5)
        bus.publish(stored(WUZAPI_DISCONNECTED, clock))
        clock.advance(seconds=5)
        bus.publish(stored(WUZAPI_CONNECTED, clock))
        await pilot.pause()
        notes = notifications_of(app)
        assert [(note.title, note.severity) for note in notes] == [("Alert: shop", "warning")]
        assert "disconnected" in notes[0].message
        assert [alert.state.value for alert in toasts.seen] == ["raised", "cleared"]
        assert bells == [1]
        toasts.stop()
        bus.publish(stored(WUZAPI_DISCONNECTED, clock))
        assert len(toasts.seen) == 2  # stopped: no longer subscribed


async def test_the_current_accounts_drop_is_the_headers_toast_not_a_second_one() -> None:
    clock = Clock()
    bus = EventBus()
    app = App()
    async with app.run_test(notifications=True) as pilot:
        toasts = AlertToasts(app, AlertService(bus, clock=clock, down_grace=timedelta(0)), current=lambda: "shop")
        toasts.start()
        bus.publish(stored(WUZAPI_DISCONNECTED, clock))
        await pilot.pause()
        assert notifications_of(app) == []
        assert [alert.kind for alert in toasts.seen] == [AlertKind.DISCONNECTED]
        toasts.stop()


@pytest.mark.parametrize("signal", ["none", "desktop"])
async def test_no_bell_when_the_preference_says_none_or_a_desktop_notification_goes_instead(signal: str) -> None:
    clock = Clock()
    bus = EventBus()
    app = App()
    bells: list[int] = []
    app.bell = lambda: bells.append(1)  # type: ignore[method-assign]
    async with app.run_test(notifications=True) as pilot:
        toasts = AlertToasts(app, AlertService(bus, clock=clock, down_grace=timedelta(0)), signal=signal, environ={"TERM_PROGRAM": "WezTerm"})
        toasts.start()
        bus.publish(stored(WUZAPI_DISCONNECTED, clock))
        await pilot.pause()
        assert len(notifications_of(app)) == 1 and bells == []
        toasts.stop()


def test_desktop_notifications_only_where_the_terminal_shows_them() -> None:
    assert desktop_notification({"TERM_PROGRAM": "iTerm.app"}, "Alert: shop", "x") == "\x1b]9;Alert: shop: x\x07"
    assert desktop_notification({"TERM": "xterm-kitty"}, "A", "b") == "\x1b]99;;A: b\x1b\\"
    assert desktop_notification({"TERM": "foot"}, "A;1", "b") == "\x1b]777;notify;A,1;b\x07"
    assert desktop_notification({"TERM": "xterm-256color"}, "A", "b") is None
    assert desktop_notification({"TERM_PROGRAM": "WezTerm", "TMUX": "/tmp/t,1,0"}, "A", "b") is None
    # What the gateway said cannot end the sequence early.
    assert desktop_notification({"TERM_PROGRAM": "WezTerm"}, "A", "x\x07\x1b]52;c;evil") == "\x1b]9;A: x  ]52;c;evil\x07"


def test_the_alert_signal_preference(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(preferences, "config_dir", lambda: tmp_path)
    assert preferences.load_alert_signal() == "bell"
    (tmp_path / "preferences.toml").write_text('alert_signal = "desktop"\n')
    assert preferences.load_alert_signal() == "desktop"
    (tmp_path / "preferences.toml").write_text('alert_signal = "siren"\n')
    with pytest.raises(preferences.PreferencesError, match="alert_signal must be one of bell, desktop, none"):
        preferences.load_alert_signal()


def campaign(state: CampaignState, reason: str | None, name: str = "promo") -> Campaign:
    return Campaign(name, 0, "text", "hi", None, ("shop", "store"), "r.csv", {}, state, reason, 0)


def test_a_campaign_paused_on_its_own_raises_for_each_account_and_clears_when_it_runs_again() -> None:
    bus = EventBus()
    seen = []
    bus.subscribe(AlertChanged, lambda changed: seen.append(changed.alert))
    alerts = AlertService(bus, clock=Clock(), down_grace=timedelta(0))
    alerts.look_at_campaigns([campaign(CampaignState.PAUSED, "paused from the app")])
    assert seen == []  # the operator's pause
    paused = campaign(CampaignState.PAUSED, "5 sends failed in a row, the last: 403")
    alerts.look_at_campaigns([paused])
    alerts.look_at_campaigns([paused])
    assert [(a.account, a.kind, a.state) for a in seen] == [
        ("shop", AlertKind.CAMPAIGN_PAUSED, AlertState.RAISED), ("store", AlertKind.CAMPAIGN_PAUSED, AlertState.RAISED)]
    assert "5 sends failed in a row" in seen[0].detail
    alerts.look_at_campaigns([campaign(CampaignState.RUNNING, None)])
    assert [a.state for a in seen[2:]] == [AlertState.CLEARED, AlertState.CLEARED]


def test_a_pairing_code_on_show_raises_code_expiring_before_it_expires() -> None:
    clock = Clock()
    bus = EventBus()
    alerts = AlertService(bus, clock=clock, down_grace=timedelta(0))
    alerts.start()
    bus.publish(PairingCodeShown("shop", "session", "QR code", expires_at=clock() + timedelta(seconds=60)))
    alerts.tick()
    assert alerts.open_alerts() == []
    clock.advance(seconds=40)
    alerts.tick()
    assert [alert.kind for alert in alerts.open_alerts("shop")] == [AlertKind.CODE_EXPIRING]
    bus.publish(PairingCodeGone("shop", "session", "paired"))
    assert alerts.open_alerts() == []
    alerts.stop()
