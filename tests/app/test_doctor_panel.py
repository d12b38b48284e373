"""The webhook doctor in the app (issue 24): Settings' doctor panel against the in-process sandbox (a fault through
`/sandbox/fault`, the finding listed, its fix key, the check after it healthy), the header's health cell following
the checks, and one toast per new finding however often it is found again."""

from __future__ import annotations

import httpx

from tests.harness import wait_ready, wait_until
from tui.ui.app import build_app
from tui.ui.widgets.forms import set_cursor_blink
from tui.ui.sections.settings.doctor import DoctorBlock
from tui.ui.widgets.webhook_health import WebhookHealth
from tui.ui.textual_compat import notifications_of


async def fault(url: str, body: dict) -> None:
    async with httpx.AsyncClient(trust_env=False) as client:
        answer = await client.post(url.rstrip("/") + "/sandbox/fault", json=body)
    assert answer.status_code == 200, answer.text


def toasts(app, words: str) -> int:
    return sum(words in str(note.title) for note in notifications_of(app))


async def test_a_fault_is_found_fixed_with_its_key_and_checked_healthy() -> None:
    set_cursor_blink(False)
    app = build_app(sandbox=True, sandbox_dialects=("spec", "wuzapi"))
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await wait_ready(pilot)
        health = app.screen.query_one(WebhookHealth)
        await wait_until(pilot, lambda: health.health == "healthy", timeout=15.0, what="the first check: healthy")
        assert "hooks" in str(health.render())
        assert app.runtime.sandbox is not None
        await fault(app.runtime.sandbox.url, {"kind": "unsubscribe"})
        await pilot.press("alt+6")
        block = app.screen.query_one(DoctorBlock)
        await pilot.press("f5")
        await wait_until(pilot, lambda: block.report is not None and "event-not-subscribed" in block.report.ids(),
                         timeout=20.0, what="the finding in the panel")
        shown = str(block.query_one("#doctor-findings").render())
        assert "event-not-subscribed" in shown and "fix (ctrl+n): Subscribe Message." in shown
        assert health.health == "failing"
        await wait_until(pilot, lambda: toasts(app, "event-not-subscribed") == 1, what="its toast")
        await pilot.press("f5")  # found again: no second toast
        await wait_until(pilot, lambda: not block.query_one(".block-status").render().plain.startswith("Checking"),
                         timeout=20.0, what="the second check")
        await pilot.press("ctrl+n")
        await wait_until(pilot, lambda: block.report is not None and block.report.healthy, timeout=25.0,
                         what="healthy after the fix")
        assert "Message" in app.runtime.sandbox.state.session_webhook.events
        assert health.health == "healthy"
        assert toasts(app, "event-not-subscribed") == 1


async def test_the_header_checks_by_itself_and_toasts_a_new_finding_once() -> None:
    """No panel: the header's own check (its timer's, or an event's) sees the fault; found again, no toast."""
    set_cursor_blink(False)
    app = build_app(sandbox=True, sandbox_dialects=("spec", "wuzapi"))
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await wait_ready(pilot)
        health = app.screen.query_one(WebhookHealth)
        await wait_until(pilot, lambda: health.health == "healthy", timeout=15.0, what="the first check: healthy")
        assert app.runtime.sandbox is not None
        await fault(app.runtime.sandbox.url, {"kind": "unsubscribe", "events": ["ReadReceipt"]})
        reports: list[object] = []
        app.runtime.webhooks.doctor_record.subscribe(lambda report, _new: reports.append(report))
        for checks in (1, 2):
            health.check()  # what the 60 s timer does
            await wait_until(pilot, lambda: len(reports) == checks, timeout=15.0, what="the check")  # noqa: B023
            assert health.health == "failing"
            assert toasts(app, "event-not-subscribed") == 1
        assert "✗ hooks failing" in str(health.render())  # the compact header at 80 columns
        await fault(app.runtime.sandbox.url, {"kind": "none"})
        health.check()
        await wait_until(pilot, lambda: health.health == "healthy", timeout=15.0, what="healthy again")


async def test_the_palette_opens_the_doctor_and_checks() -> None:
    """Issue 38: a newcomer looks for the doctor in the palette (ctrl+p). "Webhook doctor" opens Settings at the
    doctor panel, its button focused, and runs a check there."""
    from tests.harness import palette

    set_cursor_blink(False)
    app = build_app(sandbox=True, sandbox_dialects=("spec", "wuzapi"))
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await wait_ready(pilot)
        assert app.runtime.sandbox is not None
        await fault(app.runtime.sandbox.url, {"kind": "unsubscribe"})
        await palette(pilot, "Webhook doctor")
        block = app.screen.query_one(DoctorBlock)
        # with the probe: the panel's own check (the header's checks never probe)
        await wait_until(pilot, lambda: block.report is not None and block.report.probe_latency is not None,
                         timeout=20.0, what="the palette's check, in the panel")
        assert "event-not-subscribed" in block.report.ids()
        assert app.screen.focused is not None and app.screen.focused.id == "doctor-check"
        assert block.region.height and "event-not-subscribed" in str(block.query_one("#doctor-findings").render())


def test_the_readme_says_where_the_doctor_is_in_the_app_as_the_app_names_it() -> None:
    """Issue 38: a newcomer looked for the doctor in the README and found nothing about the app. It names the
    section and its key, the palette's entry and the check's key as the app has them."""
    from pathlib import Path

    from tui.ui.keymap import ACTIONS_BY_ID
    from tui.ui.sections.settings.section import SettingsCommand, SettingsSection

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    entry = SettingsSection.OPERATIONS[SettingsCommand.DOCTOR].split(":")[0]
    assert f"Settings (`{ACTIONS_BY_ID['section.settings'].keys.split(',')[0]}`), *{entry}*" in readme
    assert f"`ctrl+p` → *{entry}* opens it and checks" in readme
    assert f"`{ACTIONS_BY_ID['settings.doctor_check'].keys.split(',')[0].upper()}` checks" in readme
