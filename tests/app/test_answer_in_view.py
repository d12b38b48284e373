"""After a call its answer is in view, and so is the button the focus went back to: at 80×24 the Settings HMAC block
moves up when the warning above it hides. Every section's answer line does this (tui.ui.widgets.feedback.in_view, tested
for the others in test_results_in_view.py), keeping the focused field in view too."""

from __future__ import annotations

from tests.harness import running_sandbox_app, screen_text, settle, show_section, wait_until


def shown(app, selector: str) -> bool:
    """The widget's text is on the screen (not scrolled away)."""
    text = str(app.screen.query_one(selector).render()).strip()
    return bool(text) and text[:40] in " ".join(screen_text(app).split())


async def test_the_hmac_answer_and_its_button_are_in_view_after_the_call():
    async with running_sandbox_app(size=(80, 24)) as pilot:
        app = pilot.app
        await show_section(pilot, "settings")
        app.runtime.sandbox.state.hmac_key = None  # the gateway lost the key: a warning shows above the block
        app.screen.query_one("#hmac-status").press()
        await settle(pilot)
        await wait_until(pilot, lambda: app.screen.query_one("#hmac-warning").has_class("-shown"), what="the warning")
        button = app.screen.query_one("#hmac-generate")
        button.focus()
        await pilot.press("enter")
        await wait_until(pilot, lambda: type(app.screen).__name__ == "ConfirmScreen", what="the question")
        await pilot.press("y")  # Generate replaces the key: it asks first
        await wait_until(pilot, lambda: "is set on the gateway" in str(
            app.screen.query_one("#hmac-form .block-status").render()), what="the answer")
        await settle(pilot)
        # The answer comes into view after the refresh that hides the warning: on a busy machine, a frame later.
        await wait_until(pilot, lambda: shown(app, "#hmac-form .block-status"), what="the answer in view")
        assert app.focused is button
        assert shown(app, "#hmac-form .block-status")



async def test_the_hmac_answer_stays_in_view_when_a_warning_appears_above_it_later():
    """A health check that ends after the call shows its warning at the top of Settings and pushes everything down:
    the answer the user is reading stays in view (until they move the focus)."""
    async with running_sandbox_app(size=(80, 24)) as pilot:
        app = pilot.app
        await show_section(pilot, "settings")
        button = app.screen.query_one("#hmac-generate")
        button.focus()
        await pilot.press("enter")
        await wait_until(pilot, lambda: type(app.screen).__name__ == "ConfirmScreen", what="the question")
        await pilot.press("y")  # Generate replaces the key: it asks first
        await wait_until(pilot, lambda: "is set on the gateway" in str(
            app.screen.query_one("#hmac-form .block-status").render()), what="the answer")
        await wait_until(pilot, lambda: shown(app, "#hmac-form .block-status"), what="the answer in view")
        settings = app.screen.query_one("SettingsSection")
        settings._set_warning("#webhook-warning", "The webhooks still point at an old address. " * 6)
        await settle(pilot)
        await wait_until(pilot, lambda: shown(app, "#hmac-form .block-status"), what="the answer back in view")
        assert app.focused is button
