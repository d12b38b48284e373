"""Issue 38, item 17: the header fits its line at 120 and 160 columns whatever its pieces say: when the long forms do
not fit, the short ones are used (the title goes first), so the listener's counts are never cut ("listener
127.0.")."""

from __future__ import annotations

import pytest

from tests.harness import running_sandbox_app, screen_text, settle
from tui.ui.widgets.header import GatewayHeader


def header_line(app) -> str:
    return screen_text(app).splitlines()[0]


@pytest.mark.parametrize("width", [120, 160])
async def test_the_header_keeps_the_listener_counts_whole(width):
    async with running_sandbox_app(size=(width, 40)) as pilot:
        app = pilot.app
        header = app.screen.query_one(GatewayHeader)
        header.show_insecure()  # the keyring was missing: the private file's warning
        # A real pair of gateways says each family's state; the last event's verdict follows the counts.
        header.connection = "instance connected · session not connected"
        app.runtime.feed.stats.last_verdict = "valid"
        header._show_listener()
        await settle(pilot)
        line = header_line(app)
        assert "/min · last ✓" in line, line  # the counts and the verdict, whole
        assert "insecure" in line, line
        assert len(line) <= width


@pytest.mark.parametrize("resized", [False, True], ids=["at the same width", "after a resize"])
async def test_the_long_forms_come_back_when_they_fit_again(resized):
    # A connection word too long for the line (or a warning) shortens the header; once it passes, the long forms
    # return, at the same width too: the header must not stay short for the rest of the session.
    async with running_sandbox_app(size=(120, 40)) as pilot:
        app = pilot.app
        header = app.screen.query_one(GatewayHeader)
        header.connection = "instance connected · session not connected"
        app.runtime.feed.stats.last_verdict = "valid"
        header._show_listener()
        await settle(pilot)
        assert "gateway-tui" not in header_line(app)  # the title went first
        header.connection = "sandbox · connected"
        app.runtime.feed.stats.last_verdict = None
        header._show_listener()
        if resized:
            await pilot.resize_terminal(160, 40)
        await settle(pilot)
        line = header_line(app)
        assert line.startswith(" gateway-tui  profile sandbox") and "listener " in line, line
        assert len(line) <= (160 if resized else 120)


async def test_counts_of_the_same_width_redraw_the_header_without_laying_the_screen_out(monkeypatch):
    # Under load the counts change four times a second; a change that keeps the line's width must not cost a layout
    # of the whole screen (issue 32: the keys waited behind them), while a wider line still gets one.
    from textual.widgets import Static

    async with running_sandbox_app(size=(120, 40)) as pilot:
        app = pilot.app
        header = app.screen.query_one(GatewayHeader)
        piece = header.query_one("#header-listener", Static)
        stats = app.runtime.feed.stats
        stats.received = 1204
        header._show_listener()
        await settle(pilot)
        layouts: list[bool] = []
        original = Static.refresh

        def recording(self, *regions, **options):
            if self is piece:
                layouts.append(bool(options.get("layout")))
            return original(self, *regions, **options)

        monkeypatch.setattr(Static, "refresh", recording)
        stats.received = 1260
        header._show_listener()
        stats.received = 10001
        header._show_listener()
        await settle(pilot)
        assert layouts[:2] == [False, True], layouts
        assert "10001 events" in header_line(app)


async def test_the_webhooks_words_arriving_make_the_header_fit_its_line():
    # The doctor's report comes after the header was drawn: "webhooks: checked once connected" beside the long forms
    # of a real gateway's header took more than 120 columns and cut the listener's counts ("… · 0") until some other
    # piece happened to change. The report's arrival fits the line now.
    from tui.core.doctor import Finding, FindingId, Report, Severity
    from tui.ui.widgets.webhook_health import WebhookHealth

    async with running_sandbox_app(size=(120, 40)) as pilot:
        app = pilot.app
        header = app.screen.query_one(GatewayHeader)
        header.connection = "instance unreachable · session unreachable"
        await settle(pilot)
        header._short = False  # as drawn before the report: the long forms (they fitted then)
        header._show_forms()
        await settle(pilot)
        health = header.query_one(WebhookHealth)
        health._show(Report([Finding(FindingId.NOT_CONNECTED, Severity.ERROR, "not connected", "pair it")]))
        await settle(pilot)
        line = header_line(app)
        assert header._needed() <= 120, line
        assert "/min" in line and len(line.rstrip()) <= 120, line
