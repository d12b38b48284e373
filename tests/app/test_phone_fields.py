"""Issue 21 item 11: a phone pasted as people write it ("+55 (11) 98765-4321") becomes the digits the gateways take,
with a note under the field saying so, in every phone field (one rule: tui.api.models.normalized_phone, applied
by the form rows of fields with a phone validator)."""

from __future__ import annotations

import pytest
from textual import events
from textual.widgets import Input

from tests.harness import open_chat_form, running_sandbox_app, settle, show_section, wait_until
from tui.api.models import normalized_phone
from tui.ui.widgets.forms import FieldRow, PhoneListValidator

PASTED = "+55 (11) 98765-4321"


@pytest.mark.parametrize(("written", "digits"), [
    (PASTED, "5511987654321"), ("+1 415-555-0123", "14155550123"), ("55 11 99999.9999", "5511999999999"),
    ("5511987654321", None), ("+55 11 9999", None), ("120363019502650977@g.us", None), ("55 11 abc 99999", None),
])
def test_normalized_phone(written, digits):
    assert normalized_phone(written) == digits


def test_a_list_of_written_numbers():
    assert PhoneListValidator().normalised("+55 (11) 98765-4321, +55 21 99999-0000") == "5511987654321, 5521999990000"
    assert PhoneListValidator().normalised("5511987654321 5521999990000") is None
    assert PhoneListValidator().validate("+55 (11) 98765-4321; +55 21 99999-0000").is_valid


def note_of(row: FieldRow) -> str:
    note = row.query_one(".field-note")
    return str(note.render()) if note.display else ""


async def test_a_pasted_number_in_the_recipient_becomes_digits_with_a_note_and_is_sent():
    async with running_sandbox_app() as pilot:
        app = pilot.app
        await show_section(pilot, "chats")
        await open_chat_form(pilot)
        recipient = app.screen.query_one("#recipient", Input)
        recipient.post_message(events.Paste(PASTED))
        await wait_until(pilot, lambda: recipient.value == "5511987654321", what="the digits")
        row = next(row for row in app.screen.query(FieldRow) if row.control is recipient)
        await wait_until(pilot, lambda: "Written as 5511987654321" in note_of(row), what="the note")
        assert row.error is None
        assert PASTED in note_of(row)
        await pilot.press("tab")  # on to the message (the kind picker comes after it)
        app.screen.query_one("#text-message").load_text("hello")
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert [sent.recipient for sent in app.runtime.sandbox.state.sent] == ["5511987654321"]
        recipient.value = "5511987654320"  # edited by hand: the note no longer holds
        await wait_until(pilot, lambda: note_of(row) == "", what="the note gone")


async def test_a_pasted_list_in_communities_becomes_digits():
    async with running_sandbox_app() as pilot:
        app = pilot.app
        await show_section(pilot, "communities")
        phones = app.screen.query_one("#promote-phones", Input)
        phones.focus()
        phones.post_message(events.Paste("+55 (11) 98765-4321, +55 21 99999-0000"))
        await wait_until(pilot, lambda: phones.value == "5511987654321, 5521999990000", what="the digits")
        row = next(row for row in app.screen.query(FieldRow) if row.control is phones)
        await wait_until(pilot, lambda: "Written as" in note_of(row), what="the note")
        assert row.error is None
