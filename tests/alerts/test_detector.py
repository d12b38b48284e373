"""The alert detector (issue 35, item 2): each kind raised once per episode and cleared once, flapping one alert
and not N, on a clock the test moves (no sleeps)."""

from __future__ import annotations

import json
from datetime import timedelta

from tests.alerts.events import (
    WUZAPI_CONNECTED,
    WUZAPI_DISCONNECTED,
    WUZAPI_LOGGED_OUT,
    WUZAPI_MESSAGE,
    WUZAPI_READ,
    ZAPI_CONNECTED,
    ZAPI_DISCONNECTED,
    Clock,
    event,
)
from tui.core.alerts import Alert
from tui.core.alerts.detector import AlertDetector
from tui.api.signing import Verdict


def detector(clock: Clock, **options) -> tuple[AlertDetector, list[Alert]]:
    """A detector that tells a disconnect at once, unless a test gives it the product's grace (DOWN_GRACE)."""
    alerts: list[Alert] = []
    options.setdefault("down_grace", timedelta(0))
    return AlertDetector(alerts.append, clock=clock, **options), alerts


def pairs(alerts: list[Alert]) -> list[tuple[str, str]]:
    return [(alert.kind.value, alert.state.value) for alert in alerts]


def test_the_alert_is_the_issues_json_object() -> None:
    clock = Clock()
    engine, alerts = detector(clock)
    engine.observe(event(WUZAPI_DISCONNECTED, clock()))
    (alert,) = alerts
    document = json.loads(alert.to_json_line())
    assert set(document) == {"account", "family", "kind", "state", "at", "detail"}
    assert document["account"] == "shop" and document["family"] == "session"
    assert document["kind"] == "disconnected" and document["state"] == "raised"
    assert document["at"] == "2026-11-27T09:00:00+00:00"
    assert isinstance(document["detail"], str) and document["detail"]


def test_disconnected_is_raised_once_and_cleared_once_wuzapi() -> None:
    clock = Clock()
    engine, alerts = detector(clock)
    engine.observe(event(WUZAPI_CONNECTED, clock()))
    assert alerts == []  # connected from the start: nothing to say
    engine.observe(event(WUZAPI_DISCONNECTED, clock.advance(minutes=1)))
    engine.observe(event(WUZAPI_DISCONNECTED, clock.advance(seconds=5)))  # the same episode, said again
    engine.observe(event(WUZAPI_CONNECTED, clock.advance(minutes=1)))
    engine.observe(event(WUZAPI_CONNECTED, clock.advance(seconds=5)))
    assert pairs(alerts) == [("disconnected", "raised"), ("disconnected", "cleared")]
    assert engine.open_alerts() == []


def test_disconnected_zapi_callbacks() -> None:
    clock = Clock()
    engine, alerts = detector(clock)
    engine.observe(event(ZAPI_DISCONNECTED, clock(), path="/delivery"))
    engine.observe(event(ZAPI_CONNECTED, clock.advance(minutes=2), path="/delivery"))
    assert pairs(alerts) == [("disconnected", "raised"), ("disconnected", "cleared")]
    assert {alert.family for alert in alerts} == {"instance"}


def test_each_account_and_family_has_its_own_episode() -> None:
    clock = Clock()
    engine, alerts = detector(clock)
    engine.observe(event(WUZAPI_DISCONNECTED, clock(), account="shop"))
    engine.observe(event(WUZAPI_DISCONNECTED, clock(), account="support"))
    engine.observe(event(ZAPI_DISCONNECTED, clock(), account="shop", path="/delivery"))
    assert [(a.account, a.family) for a in alerts] == [("shop", "session"), ("support", "session"), ("shop", "instance")]


def test_logged_out_is_its_own_alert_cleared_when_paired_again() -> None:
    clock = Clock()
    engine, alerts = detector(clock)
    engine.observe(event(WUZAPI_LOGGED_OUT, clock()))
    engine.observe(event(WUZAPI_LOGGED_OUT, clock.advance(seconds=1)))
    engine.observe(event(WUZAPI_CONNECTED, clock.advance(minutes=3)))
    assert pairs(alerts) == [("logged-out", "raised"), ("logged-out", "cleared")]


def test_a_rejected_event_changes_no_state() -> None:
    clock = Clock()
    engine, alerts = detector(clock)
    engine.observe(event(WUZAPI_DISCONNECTED, clock(), rejected=True, verdict=Verdict.INVALID,
                         reason="signature invalid"))
    assert pairs(alerts) == [("rejected", "raised")]  # a forged "Disconnected" is not believed


def test_wuzapi_connection_events_stored_as_duplicates_still_count() -> None:
    """WuzAPI's Connected and Disconnected carry an empty struct: each one's body is the same bytes as the one
    before, so the store marks it a duplicate of the first. It is still a change of state."""
    clock = Clock()
    engine, alerts = detector(clock)
    first_down = event(WUZAPI_DISCONNECTED, clock())
    first_up = event(WUZAPI_CONNECTED, clock.advance(seconds=5))
    engine.observe(first_down)
    engine.observe(first_up)
    engine.observe(event(WUZAPI_DISCONNECTED, clock.advance(minutes=10), duplicate_of=first_down.id))
    engine.observe(event(WUZAPI_CONNECTED, clock.advance(minutes=1), duplicate_of=first_up.id))
    assert pairs(alerts) == [("disconnected", "raised"), ("disconnected", "cleared")] * 2


def test_flapping_is_one_alert_not_n_and_clears_when_stable() -> None:
    clock = Clock()
    engine, alerts = detector(clock, flap_changes=3, flap_window=timedelta(minutes=5))
    engine.observe(event(WUZAPI_CONNECTED, clock()))
    for _ in range(14):  # 28 webhooks flapping between states (Evolution API #693)
        engine.observe(event(WUZAPI_DISCONNECTED, clock.advance(seconds=5)))
        engine.observe(event(WUZAPI_CONNECTED, clock.advance(seconds=5)))
    flapping = [alert for alert in alerts if alert.kind.value == "flapping"]
    assert pairs(flapping) == [("flapping", "raised")]
    # Before the third change it was an ordinary disconnect (raised, cleared); after it, nothing more per change.
    assert pairs(alerts) == [("disconnected", "raised"), ("disconnected", "cleared"), ("flapping", "raised")]
    clock.advance(minutes=4)
    engine.tick()
    assert len(alerts) == 3  # not yet stable for the whole window
    clock.advance(minutes=1, seconds=1)
    engine.tick()
    engine.tick()
    assert pairs(alerts)[3:] == [("flapping", "cleared")]
    assert engine.open_alerts() == []


def test_flapping_that_settles_disconnected_leaves_one_disconnected_alert() -> None:
    clock = Clock()
    engine, alerts = detector(clock, flap_changes=3, flap_window=timedelta(minutes=5))
    for _ in range(3):
        engine.observe(event(WUZAPI_DISCONNECTED, clock.advance(seconds=5)))
        engine.observe(event(WUZAPI_CONNECTED, clock.advance(seconds=5)))
    engine.observe(event(WUZAPI_DISCONNECTED, clock.advance(seconds=5)))
    clock.advance(minutes=6)
    engine.tick()
    assert pairs(alerts) == [("disconnected", "raised"), ("disconnected", "cleared"), ("flapping", "raised"),
                             ("flapping", "cleared"), ("disconnected", "raised")]
    engine.observe(event(WUZAPI_CONNECTED, clock.advance(minutes=1)))
    assert pairs(alerts)[-1] == ("disconnected", "cleared")


def test_link_changes_told_directly_count_as_events_do() -> None:
    """The app learns the state from its status reads too (tui.core.watch), not only from webhooks."""
    clock = Clock()
    engine, alerts = detector(clock)
    engine.link_changed("shop", "instance", connected=False)
    engine.link_changed("shop", "instance", connected=True)
    assert pairs(alerts) == [("disconnected", "raised"), ("disconnected", "cleared")]


def test_kind_quiet_uses_the_doctors_rule_raised_once_cleared_when_it_arrives() -> None:
    clock = Clock()
    engine, alerts = detector(clock)
    start = clock()
    for minutes in (0, 1, 2):
        engine.observe(event(WUZAPI_MESSAGE, start + timedelta(minutes=minutes)))
    for minutes in range(3, 70):
        clock.now = start + timedelta(minutes=minutes)
        engine.observe(event(WUZAPI_READ, clock()))
        engine.tick()
    # The usual gap is a minute: quiet past 15 minutes (the doctor's minimum), once.
    assert pairs(alerts) == [("kind-quiet", "raised")]
    assert alerts[0].detail.startswith("Message quiet for 16 min while ReadReceipt still arrives")
    engine.observe(event(WUZAPI_MESSAGE, clock.advance(minutes=1)))
    engine.tick()
    assert pairs(alerts) == [("kind-quiet", "raised"), ("kind-quiet", "cleared")]


def test_rejected_is_one_episode_until_an_event_is_accepted_again() -> None:
    clock = Clock()
    engine, alerts = detector(clock)
    for _ in range(5):
        engine.observe(event(WUZAPI_MESSAGE, clock.advance(seconds=1), rejected=True, verdict=Verdict.INVALID,
                             reason="signature invalid"))
    engine.observe(event(WUZAPI_MESSAGE, clock.advance(seconds=1)))
    assert pairs(alerts) == [("rejected", "raised"), ("rejected", "cleared")]
    assert "signature invalid" in alerts[0].detail and "5" in alerts[1].detail


def test_campaign_paused_raised_once_cleared_on_resume() -> None:
    clock = Clock()
    engine, alerts = detector(clock)
    engine.campaign_paused("shop", "the gateway answered 403 (banned?)")
    engine.campaign_paused("shop", "the gateway answered 403 (banned?)")
    engine.campaign_resumed("shop")
    engine.campaign_resumed("shop")
    assert pairs(alerts) == [("campaign-paused", "raised"), ("campaign-paused", "cleared")]
    assert alerts[0].detail == "the gateway answered 403 (banned?)" and alerts[0].family is None


def test_code_expiring_warns_before_the_end_and_clears_once() -> None:
    clock = Clock()
    engine, alerts = detector(clock, code_warning=timedelta(seconds=30))
    engine.code_shown("shop", "session", "phone code", expires_at=clock() + timedelta(seconds=160))
    clock.advance(seconds=120)
    engine.tick()
    assert alerts == []
    clock.advance(seconds=15)  # 25 s left
    engine.tick()
    engine.tick()
    assert pairs(alerts) == [("code-expiring", "raised")]
    assert "25 s" in alerts[0].detail and "phone code" in alerts[0].detail
    clock.advance(seconds=30)
    engine.tick()
    engine.tick()
    assert pairs(alerts) == [("code-expiring", "raised"), ("code-expiring", "cleared")]
    assert "expired" in alerts[1].detail


def test_code_answered_in_time_clears_or_never_raises() -> None:
    clock = Clock()
    engine, alerts = detector(clock, code_warning=timedelta(seconds=5))
    engine.code_shown("shop", "instance", "QR code", expires_at=clock() + timedelta(seconds=20))
    clock.advance(seconds=16)
    engine.tick()
    engine.code_gone("shop", "instance", "paired")
    engine.code_shown("shop", "instance", "QR code", expires_at=clock() + timedelta(seconds=20))
    engine.code_gone("shop", "instance", "paired")
    clock.advance(seconds=30)
    engine.tick()
    assert pairs(alerts) == [("code-expiring", "raised"), ("code-expiring", "cleared")]
    assert "paired" in alerts[1].detail


def test_no_secret_reaches_an_alert() -> None:
    clock = Clock()
    engine, alerts = detector(clock)
    engine.observe(event(WUZAPI_MESSAGE, clock(), path="/session?token=SECRET-TOKEN", rejected=True,
                         verdict=Verdict.INVALID, reason="unknown path /instances/x/token/SECRET-TOKEN/send"))
    assert alerts and "SECRET-TOKEN" not in alerts[0].to_json_line()


def test_remembered_events_teach_the_usual_gaps_and_raise_nothing() -> None:
    """What the store held before `listen` started: a quiet kind is noticed without three new arrivals first."""
    clock = Clock()
    engine, alerts = detector(clock)
    start = clock()
    for minutes in (0, 1, 2):
        engine.remember(event(WUZAPI_MESSAGE, start + timedelta(minutes=minutes)))
    engine.remember(event(WUZAPI_DISCONNECTED, start + timedelta(minutes=3)))
    assert alerts == []  # an old disconnect is history, not an alert
    clock.now = start + timedelta(minutes=20)
    engine.observe(event(WUZAPI_READ, clock()))
    engine.tick()
    assert pairs(alerts) == [("kind-quiet", "raised")]


def test_connection_events_are_never_a_quiet_kind() -> None:
    """They come from changes, not traffic: a flap's quick Disconnected/Connected are no usual gap to miss."""
    clock = Clock()
    engine, alerts = detector(clock)
    for _ in range(3):
        engine.observe(event(WUZAPI_DISCONNECTED, clock.advance(seconds=5)))
        engine.observe(event(WUZAPI_CONNECTED, clock.advance(seconds=5)))
    for _ in range(30):
        engine.observe(event(WUZAPI_MESSAGE, clock.advance(minutes=1)))
        engine.tick()
    assert "kind-quiet" not in {alert.kind.value for alert in alerts}


# -- the product's grace: a disconnect is told once it lasted DOWN_GRACE (issue 35: a flap is one alert) ----------


def test_a_flap_is_one_raised_alert_in_all_with_the_products_grace() -> None:
    from tui.core.alerts.detector import DOWN_GRACE

    clock = Clock()
    engine, alerts = detector(clock, down_grace=DOWN_GRACE)
    engine.observe(event(WUZAPI_CONNECTED, clock()))
    for _ in range(5):  # the sandbox's flapping fault: changes a fraction of a second apart
        engine.observe(event(WUZAPI_DISCONNECTED, clock.advance(seconds=0.05)))
        engine.tick()
        engine.observe(event(WUZAPI_CONNECTED, clock.advance(seconds=0.05)))
        engine.tick()
    clock.advance(seconds=30)
    engine.tick()
    assert pairs(alerts) == [("flapping", "raised")]


def test_a_disconnect_is_told_once_it_lasted_the_grace_and_a_blip_not_at_all() -> None:
    from tui.core.alerts.detector import DOWN_GRACE

    clock = Clock()
    engine, alerts = detector(clock, down_grace=DOWN_GRACE)
    engine.observe(event(WUZAPI_DISCONNECTED, clock()))
    engine.observe(event(WUZAPI_CONNECTED, clock.advance(seconds=3)))  # a blip
    clock.advance(minutes=1)
    engine.tick()
    assert alerts == []
    engine.observe(event(WUZAPI_DISCONNECTED, clock.advance(minutes=10)))
    engine.tick()
    assert alerts == []  # not yet: within the grace
    clock.advance(seconds=DOWN_GRACE.total_seconds())
    engine.tick()
    engine.tick()
    assert pairs(alerts) == [("disconnected", "raised")]
    assert "the gateway sent Disconnected" in alerts[0].detail
    engine.observe(event(WUZAPI_CONNECTED, clock.advance(minutes=1)))
    assert pairs(alerts) == [("disconnected", "raised"), ("disconnected", "cleared")]


def test_a_logout_is_told_at_once_whatever_the_grace() -> None:
    from tui.core.alerts.detector import DOWN_GRACE

    clock = Clock()
    engine, alerts = detector(clock, down_grace=DOWN_GRACE)
    engine.observe(event(WUZAPI_LOGGED_OUT, clock()))
    assert pairs(alerts) == [("logged-out", "raised")]
