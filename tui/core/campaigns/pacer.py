"""How fast one account sends: a bucket of one token, refilled after a gap drawn at random in the configured range
(the jitter: a fixed rhythm is what spam looks like), quiet hours in the account's time zone (off unless
configured), and a daily cap on recipients who never wrote to the account.

The clock and the random draw are the caller's (`AccountPacer(pace, uniform=random.uniform)`), so the pace is
tested without waiting. Times are seconds since the epoch.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

DEFAULT_LEAST = 20.0  # seconds between two sends of one account (issue 34: a random 20-60 s)
DEFAULT_MOST = 60.0
DEFAULT_DAILY_CAP = 60  # first contacts a day per account
PACE_RULE = "seconds between sends, a range such as 20-60 (fractions allowed: 0.05-0.2)"


class PaceRefused(ValueError):
    """A pace, cap or quiet hours that cannot be used; the text says what is expected."""


def parse_pace(text: str) -> tuple[float, float]:
    """`20-60` (a random gap in the range) or `30` (always 30 s): the shortest and longest gap."""
    least_text, _, most_text = text.strip().partition("-")
    try:
        least = float(least_text)
        most = float(most_text) if most_text else least
    except ValueError:
        raise PaceRefused(f"--pace {text!r}: {PACE_RULE}") from None
    if not (math.isfinite(least) and math.isfinite(most)) or least < 0:
        raise PaceRefused(f"--pace {text!r}: {PACE_RULE}")
    if most <= 0:
        raise PaceRefused(f"--pace {text!r}: the longest gap must be above 0 seconds")
    if least > most:
        raise PaceRefused(f"--pace {text!r}: the first number is the shorter gap ({most_text}-{least_text})")
    return least, most


@dataclass(frozen=True)
class QuietHours:
    """Hours when the account sends nothing, in its time zone: `21-8` is from 21:00 to 08:00 the next morning."""

    start_hour: int
    end_hour: int
    zone: tzinfo
    text: str  # as given, to save and show

    @classmethod
    def parse(cls, text: str, zone_name: str) -> QuietHours:
        start_text, dash, end_text = text.strip().partition("-")
        try:
            start, end = int(start_text), int(end_text)
        except ValueError:
            raise PaceRefused(f"--quiet-hours {text!r}: two hours such as 21-8 (from 21:00 to 08:00)") from None
        if not dash or not (0 <= start <= 23 and 0 <= end <= 23) or start == end:
            raise PaceRefused(f"--quiet-hours {text!r}: two different hours from 0 to 23, such as 21-8")
        try:
            zone = ZoneInfo(zone_name)
        except (ZoneInfoNotFoundError, ValueError):
            raise PaceRefused(f"--time-zone {zone_name!r}: no time zone by that name (such as "
                              "America/Sao_Paulo or UTC)") from None
        return cls(start, end, zone, text.strip())

    def holds(self, at: float) -> bool:
        hour = datetime.fromtimestamp(at, self.zone).hour
        if self.start_hour < self.end_hour:
            return self.start_hour <= hour < self.end_hour
        return hour >= self.start_hour or hour < self.end_hour

    def ends_after(self, at: float) -> float:
        """When the quiet hours holding at `at` end (the next `end_hour`:00 in the zone)."""
        local = datetime.fromtimestamp(at, self.zone)
        end = local.replace(hour=self.end_hour, minute=0, second=0, microsecond=0)
        if end <= local:
            end = (local + timedelta(days=1)).replace(hour=self.end_hour, minute=0, second=0, microsecond=0)
        return end.timestamp()


@dataclass(frozen=True)
class Pace:
    least: float = DEFAULT_LEAST
    most: float = DEFAULT_MOST
    daily_cap: int | None = DEFAULT_DAILY_CAP  # None: no cap
    quiet: QuietHours | None = None

    def describe(self) -> str:
        gap = f"{self.least:g} s" if self.least == self.most else f"{self.least:g}-{self.most:g} s"
        cap = "no daily cap" if self.daily_cap is None else f"at most {self.daily_cap} first contacts a day"
        quiet = f", quiet {self.quiet.text}" if self.quiet is not None else ""
        return f"{gap} between sends, {cap}{quiet}"


class AccountPacer:
    """When one account may send next."""

    def __init__(self, pace: Pace, *, uniform: Callable[[float, float], float]) -> None:
        self.pace = pace
        self._uniform = uniform
        self._next_at: float | None = None  # None: no send yet, the first goes at once

    def ready_at(self, now: float) -> float:
        """The earliest time from `now` at which the next send may go."""
        at = now if self._next_at is None else max(now, self._next_at)
        quiet = self.pace.quiet
        if quiet is not None and quiet.holds(at):
            at = quiet.ends_after(at)
        return at

    def spent(self, at: float) -> None:
        """A send went at `at`: the next waits a gap drawn in the range."""
        self._next_at = at + self._uniform(self.pace.least, self.pace.most)

    def may_contact_first(self, first_contacts_today: int) -> bool:
        """Whether a recipient who never wrote to the account may get a message, after `first_contacts_today`."""
        cap = self.pace.daily_cap
        return cap is None or first_contacts_today < cap


def day_start(at: float, zone: tzinfo | None) -> float:
    """Midnight of `at`'s day in `zone` (the machine's zone when None): where a daily cap starts counting."""
    local = datetime.fromtimestamp(at, zone) if zone is not None else datetime.fromtimestamp(at).astimezone()
    return local.replace(hour=0, minute=0, second=0, microsecond=0).timestamp()
