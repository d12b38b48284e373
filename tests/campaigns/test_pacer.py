"""The pacer: a random gap in the configured range between two sends of one account, quiet hours skipped, the daily
cap of first contacts. The clock and the random draw are injected: no sleeps."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from tui.core.campaigns.pacer import AccountPacer, Pace, PaceRefused, QuietHours, parse_pace


def at(hour: int, minute: int = 0) -> float:
    return datetime(2026, 12, 7, hour, minute, tzinfo=UTC).timestamp()


def test_the_first_send_goes_at_once_and_each_next_one_a_drawn_gap_later():
    draws = iter([20.0, 60.0, 33.5])
    asked: list[tuple[float, float]] = []

    def uniform(low: float, high: float) -> float:
        asked.append((low, high))
        return next(draws)

    pacer = AccountPacer(Pace(least=20, most=60), uniform=uniform)
    assert pacer.ready_at(1000.0) == 1000.0
    pacer.spent(1000.0)
    assert pacer.ready_at(1001.0) == 1020.0
    pacer.spent(1020.0)
    assert pacer.ready_at(1020.0) == 1080.0
    pacer.spent(1090.0)  # a slow send: the gap counts from when it went
    assert pacer.ready_at(1090.0) == 1123.5
    assert asked == [(20, 60)] * 3


def test_a_gap_already_waited_out_does_not_hold_the_next_send():
    pacer = AccountPacer(Pace(least=1, most=1), uniform=lambda low, high: low)
    pacer.spent(10.0)
    assert pacer.ready_at(50.0) == 50.0


def test_quiet_hours_move_a_send_to_their_end_in_the_account_zone():
    quiet = QuietHours.parse("21-8", "UTC")
    pacer = AccountPacer(Pace(least=1, most=1, quiet=quiet), uniform=lambda low, high: low)
    assert pacer.ready_at(at(12)) == at(12)
    assert pacer.ready_at(at(22, 30)) == datetime(2026, 12, 8, 8, tzinfo=UTC).timestamp()
    assert pacer.ready_at(at(3)) == at(8)
    assert pacer.ready_at(at(8)) == at(8)


def test_quiet_hours_are_read_in_the_zone_given():
    quiet = QuietHours.parse("22-7", "America/Sao_Paulo")  # UTC-3
    assert quiet.holds(at(2))  # 23:00 there
    assert not quiet.holds(at(12))  # 09:00 there
    assert quiet.ends_after(at(2)) == at(10)


def test_no_quiet_hours_unless_configured():
    assert Pace().quiet is None


def test_the_daily_cap_counts_first_contacts():
    pacer = AccountPacer(Pace(least=1, most=2, daily_cap=3), uniform=lambda low, high: low)
    assert pacer.may_contact_first(2)
    assert not pacer.may_contact_first(3)
    assert AccountPacer(Pace(daily_cap=None), uniform=lambda low, high: low).may_contact_first(10_000)


@pytest.mark.parametrize(("text", "expected"), [("20-60", (20.0, 60.0)), ("0.01-0.05", (0.01, 0.05)), ("5", (5.0, 5.0))])
def test_a_pace_is_a_range_of_seconds(text, expected):
    assert parse_pace(text) == expected


@pytest.mark.parametrize(("text", "words"), [
    ("60-20", "the first number is the shorter gap"), ("a-b", "seconds between sends"), ("-1-3", "seconds between"),
    ("0-0", "above 0"),
])
def test_a_bad_pace_says_what_a_pace_is(text, words):
    with pytest.raises(PaceRefused, match=words):
        parse_pace(text)


@pytest.mark.parametrize(("text", "zone", "words"), [
    ("21", "UTC", "two hours"), ("25-8", "UTC", "0 to 23"), ("21-8", "Mars/Olympus", "no time zone"),
])
def test_bad_quiet_hours_are_named(text, zone, words):
    with pytest.raises(PaceRefused, match=words):
        QuietHours.parse(text, zone)
