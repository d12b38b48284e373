"""The Campaigns section (alt+0, issue 34) against a ledger with fixed campaigns: the list with each campaign's
state and sent/total, the chosen one's progress bar, counts and recipients, `p` pausing through the ledger (as a
run in another process sees it), one meaning per key, and the section bar at 80 and 120 columns."""

from __future__ import annotations

from tests.harness import running_sandbox_app, screen_text, wait_until
from tui.core.campaigns.ledger import CampaignState, Ledger, NewCampaign, ledger_path

US = 1_700_000_000_000_000  # a fixed clock: the rate and the ETA come from these settle times


def make_ledger() -> None:
    """`spring`: 10 recipients, 4 settled one second apart (3 sent, 1 failed), 1 in flight, running. `flyer`: ready."""
    with Ledger(ledger_path()) as ledger:
        ledger.create(NewCampaign("spring", "text", "Hi {name}", None, ("shop",), "people.csv",
                                  [(f"55119870000{i:02d}", f"Hi {i}") for i in range(10)]), at_us=US)
        ledger.create(NewCampaign("flyer", "text", "Hello", None, ("shop",), "people.csv",
                                  [("5511987000100", "Hello")]), at_us=US + 1)
        for position in range(4):
            ledger.mark_sending("spring", position, "shop", at_us=US + position * 1_000_000, first_contact=False)
            if position == 2:
                ledger.mark_failed("spring", position, "number not on WhatsApp", at_us=US + position * 1_000_000)
            else:
                ledger.mark_sent("spring", position, f"MSG{position}", at_us=US + position * 1_000_000)
        ledger.mark_sending("spring", 4, "shop", at_us=US + 4_000_000, first_contact=False)
        ledger.set_state("spring", CampaignState.RUNNING, at_us=US)


async def test_the_list_the_progress_and_the_recipients_at_80x24():
    make_ledger()
    async with running_sandbox_app((80, 24)) as pilot:
        await pilot.press("alt+0")
        await wait_until(pilot, lambda: pilot.app.focused is not None and pilot.app.focused.id == "campaign-list",
                         what="the campaign list focused")
        text = screen_text(pilot.app)
        assert "spring" in text and "running" in text and "4/10" in text
        assert "flyer" in text and "ready" in text and "0/1" in text
        # The chosen campaign's counts, the rate over its settle times (3 in 3 s: 60/min) and the ETA (6 left: 6 s).
        assert "spring: 4/10 · 1 failed, 5 queued, 1 sending, 3 sent · 60.0/min · ETA 6s" in text
        assert "5511987000002" in text and "number not on WhatsApp" in text and "MSG0" in text
        bar = pilot.app.screen.query_one("#campaign-progress")
        assert (bar.progress, bar.total) == (4, 10)
        assert "0Campaigns" in text.splitlines()[1]  # the section bar names the section shown
        assert "Pause" in text.splitlines()[-1] and "Resume" not in text and "Start" not in text.splitlines()[-1]


async def test_p_pauses_the_running_campaign_in_the_ledger_and_s_then_resumes():
    make_ledger()
    async with running_sandbox_app((80, 24)) as pilot:
        await pilot.press("alt+0")
        await wait_until(pilot, lambda: "spring" in screen_text(pilot.app), what="the list")
        await pilot.press("p")
        with Ledger(ledger_path()) as ledger:
            spring = ledger.campaign("spring")
            assert spring is not None and spring.state is CampaignState.PAUSED
            assert spring.reason == "paused from the app"
        await wait_until(pilot, lambda: "Resume" in screen_text(pilot.app).splitlines()[-1], what="s: Resume")
        assert "Pause" not in screen_text(pilot.app).splitlines()[-1]


async def test_s_on_a_ready_campaign_asks_first_and_no_sends_nothing():
    make_ledger()
    async with running_sandbox_app((80, 24)) as pilot:
        await pilot.press("alt+0")
        await wait_until(pilot, lambda: "flyer" in screen_text(pilot.app) and pilot.app.focused is not None
                         and pilot.app.focused.id == "campaign-list", what="the list focused")
        await pilot.press("down")  # flyer: ready
        await wait_until(pilot, lambda: "Start" in screen_text(pilot.app).splitlines()[-1], what="s: Start")
        await pilot.press("s")
        await wait_until(pilot, lambda: "Start campaign flyer: 1 messages" in screen_text(pilot.app),
                         what="the confirmation")
        await pilot.press("n")
        await wait_until(pilot, lambda: "Nothing was sent." in screen_text(pilot.app), what="nothing sent")
        with Ledger(ledger_path()) as ledger:
            flyer = ledger.campaign("flyer")
            assert flyer is not None and flyer.state is CampaignState.READY


async def test_the_bar_at_120_columns_shows_the_nine_as_before_and_campaigns_only_when_shown():
    async with running_sandbox_app((120, 40)) as pilot:
        bar = screen_text(pilot.app).splitlines()[1]
        assert bar.startswith("  1 Chats   2 Groups ") and bar.endswith("9 Fleet") and "Campaigns" not in bar
        await pilot.press("alt+0")
        await wait_until(pilot, lambda: "0 Campaigns" in screen_text(pilot.app).splitlines()[1], what="the bar")
        assert "No campaigns yet" in screen_text(pilot.app)


async def test_the_list_widens_its_columns_as_a_campaign_goes_from_ready_to_running():
    with Ledger(ledger_path()) as ledger:
        ledger.create(NewCampaign("solo", "text", "Hi", None, ("shop",), "people.csv",
                                  [(f"55119870001{i:02d}", "Hi") for i in range(10)]), at_us=US)
    async with running_sandbox_app((80, 24)) as pilot:
        await pilot.press("alt+0")
        await wait_until(pilot, lambda: "ready" in screen_text(pilot.app), what="the list")
        with Ledger(ledger_path()) as ledger:  # as a run in another process writes it
            for position in range(3):
                ledger.mark_sending("solo", position, "shop", at_us=US + position * 2_000_000, first_contact=False)
                ledger.mark_sent("solo", position, f"ID{position}", at_us=US + position * 2_000_000)
            ledger.set_state("solo", CampaignState.RUNNING, at_us=US)
        await wait_until(pilot, lambda: "solo: 3/10" in screen_text(pilot.app), what="the next read")
        row = next(line for line in screen_text(pilot.app).splitlines() if line.startswith(" solo "))
        assert "running" in row and "3/10" in row and "30.0/min" in row and "14s" in row
