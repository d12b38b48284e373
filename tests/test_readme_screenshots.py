"""The README's screenshots are copies of snapshot baselines: they must not drift from what the tests check."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
APP = REPO / "tests/app/__snapshots__/test_snapshots"
SOURCES = {
    "chats-conversations.svg": APP / "test_section[chats].svg",
    "chats-and-events-panel.svg": APP / "test_events_panel_with_valid_invalid_and_unsigned_events.svg",
    "groups.svg": APP / "test_groups_with_a_group_looked_up.svg",
    "event-detail.svg": APP / "test_event_detail.svg",
    "request-log.svg": APP / "test_request_log.svg",
    "events-section.svg": APP / "test_section[events].svg",
    "inline-errors.svg": APP / "test_form_with_inline_errors.svg",
    "settings.svg": REPO / "tests/settings/__snapshots__/test_snapshots/test_settings_section.svg",
}


@pytest.mark.parametrize("asset", sorted(SOURCES))
def test_screenshot_matches_its_snapshot(asset):
    assert (REPO / "assets" / asset).read_bytes() == SOURCES[asset].read_bytes(), (
        f"assets/{asset} is stale: copy {SOURCES[asset].relative_to(REPO)} over it"
    )


def test_readme_shows_every_screenshot():
    readme = (REPO / "README.md").read_text()
    shown = set(re.findall(r"assets/([\w.-]+\.svg)", readme))
    assert shown == set(SOURCES)
