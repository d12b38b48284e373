"""A campaign's progress as the app shows it: counts, the rate and the ETA, read from the ledger alone.

The rate is measured from the ledger's own settle times (`done_us`), not from the reader's clock, so it is the same
whether the runner is this process or a `gateway-tui campaign start` beside it, and the same for every reader. Cheap
by design: the app reads this every second while its Campaigns section is shown (one GROUP BY and one bounded
ORDER BY ... LIMIT on an indexed table).
"""

from __future__ import annotations

from dataclasses import dataclass

from tui.core.campaigns.ledger import Campaign, Ledger, RecipientState

RATE_WINDOW = 20
"""The last settled recipients the rate is measured over: recent enough to follow a pause, enough to be steady."""

_LEFT = (RecipientState.QUEUED, RecipientState.SENDING)


@dataclass(frozen=True)
class Progress:
    campaign: Campaign
    counts: dict[RecipientState, int]
    per_minute: float | None  # None: fewer than two settled recipients to measure over
    eta_seconds: float | None

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    @property
    def left(self) -> int:
        return sum(self.counts.get(state, 0) for state in _LEFT)

    @property
    def settled(self) -> int:
        return self.total - self.left


def progress(ledger: Ledger, campaign: Campaign) -> Progress:
    counts = ledger.counts(campaign.name)
    times = ledger.recent_settle_times(campaign.name, RATE_WINDOW)
    per_minute = eta = None
    if len(times) >= 2 and times[0] > times[-1]:
        per_second = (len(times) - 1) / ((times[0] - times[-1]) / 1_000_000)
        per_minute = per_second * 60
        left = sum(counts.get(state, 0) for state in _LEFT)
        eta = left / per_second
    return Progress(campaign, counts, per_minute, eta)


def eta_words(seconds: float | None) -> str:
    """`41m`, `1h05m`, `12s`; `—` when it cannot be told."""
    if seconds is None:
        return "—"
    if seconds >= 3600:
        return f"{seconds // 3600:.0f}h{seconds % 3600 / 60:02.0f}m"
    if seconds >= 60:
        return f"{seconds / 60:.0f}m"
    return f"{seconds:.0f}s"
