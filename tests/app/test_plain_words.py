"""Forms say what is wrong in the product's words, under the field: never pydantic's "List should have at most
3 items after validation, not 4" or "Input should be a valid integer, unable to parse string as an integer"."""

from __future__ import annotations

from tests.harness import fill
from tests.harness import open_chat_form, running_sandbox_app, settle, show_section
from tui.ui.widgets.forms import FieldRow


def row_errors(screen) -> dict[str, str]:
    return {row.fields[0]: row.error for row in screen.query(FieldRow) if row.error}


async def test_four_quick_reply_buttons_and_a_count_that_is_not_a_number():
    async with running_sandbox_app() as pilot:
        app = pilot.app
        await show_section(pilot, "chats")
        await open_chat_form(pilot)  # Chats opens on the conversations
        fill(app.screen, {"recipient": "5511999999999", "kind": "buttons"})
        await pilot.pause()
        fill(app.screen, {"buttons-labels": "Yes\nNo\nMaybe\nLater"})
        app.screen.query_one("#send").press()
        await settle(pilot)
        assert row_errors(app.screen)["buttons"] == "takes at most 3 items (4 given)"

        fill(app.screen, {"kind": "poll"})
        await pilot.pause()
        fill(app.screen, {"poll-question": "Lunch?", "poll-options": "Pizza\nSushi", "poll-count": "two"})
        app.screen.query_one("#send").press()
        await settle(pilot)
        errors = row_errors(app.screen)
        assert "must be a whole number" in " ".join(errors.values()), errors
        assert not any("should" in text or "parse" in text for text in errors.values()), errors
        assert list(app.runtime.sandbox.state.sent) == []
