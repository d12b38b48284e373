"""The verdict badge fits its column in the events panel and the Events section, so a rejected event's ⛔ is
always seen: a rejected unsigned session event must not read like an accepted unsigned Z-API callback."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from tui.ui.widgets.events_panel import BADGE_WIDTH, verdict_badge


@pytest.mark.parametrize("verdict", ["valid", "invalid", "unsigned", "no-key"])
@pytest.mark.parametrize("rejected", [False, True])
def test_badge_fits_and_flags_rejection(verdict: str, rejected: bool) -> None:
    badge = verdict_badge(SimpleNamespace(verdict=verdict, rejected=rejected))
    assert badge.cell_len <= BADGE_WIDTH, f"{badge.plain!r} is cut off in a {BADGE_WIDTH}-cell column"
    assert ("⛔" in badge.plain or badge.plain == "✗ rejected") is rejected
    assert not (rejected and "✓" in badge.plain)


def test_rejected_and_accepted_unsigned_differ() -> None:
    accepted = verdict_badge(SimpleNamespace(verdict="unsigned", rejected=False)).plain
    rejected = verdict_badge(SimpleNamespace(verdict="unsigned", rejected=True)).plain
    assert (accepted, rejected) == ("– unsigned", "⛔ unsigned")
