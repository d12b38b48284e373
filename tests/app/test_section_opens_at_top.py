"""Opening a section shows it from its top (title, first block) with its first field focused, and nothing written
while it opens pulls the view elsewhere. Found in CI: Settings opened at 80×24 showed the Dialects block, scrolled
there by the sandbox's dialect note (written through the block's answer line, which brings itself into view) and
by a scroll worked out before the section was laid out."""

from __future__ import annotations

from textual.widgets import Button, Static

from tests.harness import screen_text, settle, wait_ready, wait_until
from tui.ui.app import build_app
from tui.ui.sections.settings.section import SettingsSection
from tui.ui.widgets.forms import set_cursor_blink


async def _open_settings(early: bool) -> None:
    set_cursor_blink(False)
    app = build_app(sandbox=True, deterministic=True)
    async with app.run_test(size=(80, 24)) as pilot:
        if not early:
            await wait_ready(pilot)
        await pilot.press("alt+6")  # early: before the runtime is ready, the section mounted on the way
        await wait_ready(pilot)
        saved = app.screen.query_one("#dialect-apply", Button)
        await wait_until(pilot, lambda: saved.disabled, what="the dialects shown (in the sandbox: fixed, with a note)")
        await settle(pilot)
        section = app.screen.query_one(SettingsSection)
        assert app.screen.focused is not None and app.screen.focused.id == "doctor-check"
        assert section.scroll_y == 0, f"the view left the top: scroll_y={section.scroll_y}"
        shown = screen_text(app)
        assert "Settings" in shown and "Webhook doctor" in shown and "Check webhooks (f5)" in shown, shown
        note = app.screen.query_one("#dialect-note", Static)
        assert "The sandbox speaks what it was started with" in str(note.render())


async def test_settings_opened_at_start_shows_its_top() -> None:
    await _open_settings(early=True)


async def test_settings_opened_later_shows_its_top() -> None:
    await _open_settings(early=False)
