"""Issue 21, item 5: typing inside a form is never a command. Whatever part of a form has the focus (a field, a
picker, a checkbox, a switch, a button), letters, digits and symbols do nothing there but what the control does
with them; sections switch with alt+1..7 (the footer says so). Outside forms (the conversation list, the events
table) the single keys still act, as the footer says. In the new-message form, Tab goes from the recipient to the
message."""

from __future__ import annotations

import pytest
from textual.widgets import ContentSwitcher, Input

from tests.harness import open_chat_form, running_sandbox_app, screen_text, show_section, wait_until

# What a user types on a control by mistake: section digits, the panel and help letters, and letters the Events
# section binds (older, newest, export, this message, search).
TYPED = ("2", "3", "7", "e", "question_mark", "n", "g", "x", "m", "slash", "k")

CONTROLS = {
    "the kind picker": ("chats", "kind"),
    "the chat-action picker": ("chats", "chat-action"),
    "the Send button": ("chats", "send"),
    "the auto-invite checkbox": ("groups", "add-invite"),
    "the proxy switch": ("settings", "proxy-enable"),
    "the events kind filter": ("events", "events-kind"),
    "the events verdict filter": ("events", "events-verdict"),
}


async def focus_control(pilot, section: str, widget_id: str):
    app = pilot.app
    await show_section(pilot, section)
    if section == "chats":
        await open_chat_form(pilot)
    if widget_id == "add-invite":
        await pilot.press("ctrl+g")  # the Add participants tab
        await wait_until(pilot, lambda: app.screen.query_one("#add-invite").region.height > 0, what="the Add tab")
    widget = app.screen.query_one(f"#{widget_id}")
    app.screen.set_focus(widget)
    await wait_until(pilot, lambda: app.focused is widget, what=f"focus on {widget_id}")
    return widget


@pytest.mark.parametrize("control", sorted(CONTROLS))
async def test_printable_keys_on_a_form_control_are_not_commands(control):
    section, widget_id = CONTROLS[control]
    async with running_sandbox_app(size=(80, 24)) as pilot:
        app = pilot.app
        widget = await focus_control(pilot, section, widget_id)
        screen = app.screen
        fields_before = {field.id: field.value for field in screen.query(Input)}
        for key in TYPED:
            await pilot.press(key)
            await pilot.pause()
            assert app.screen is screen, f"{key} on {control} opened {type(app.screen).__name__}"
            assert screen.query_one("#sections", ContentSwitcher).current == section, f"{key} on {control}"
            assert app.focused is widget, f"{key} on {control} moved the focus to {app.focused!r}"
        assert screen.query_one("#events-panel").display, "e on a form control hid the events panel"
        assert {field.id: field.value for field in screen.query(Input)} == fields_before  # typed into no field
        # The digits do not work here: the footer says what does.
        await wait_until(pilot, lambda: "alt+1…9 Sections" in screen_text(app).splitlines()[-1], what="alt+1…9")
        await pilot.press("alt+2")  # the section keys that cannot be text still work
        await wait_until(pilot, lambda: screen.query_one("#sections", ContentSwitcher).current == "groups",
                         what="alt+2 from a form control")


async def test_tab_goes_from_the_recipient_to_the_message_then_the_optional_parts():
    async with running_sandbox_app(size=(80, 24)) as pilot:
        app = pilot.app
        await open_chat_form(pilot)
        await pilot.press(*"5511999999999", "tab")
        assert getattr(app.focused, "id", None) == "text-message"  # not the kind picker
        await pilot.press("tab")
        assert getattr(app.focused, "id", None) == "send"
        await pilot.press("shift+tab", "shift+tab", "shift+tab")  # back past the recipient: the kind picker
        assert getattr(app.focused, "id", None) == "kind"


async def test_outside_forms_the_single_keys_act_as_the_footer_says():
    async with running_sandbox_app(size=(80, 24)) as pilot:
        app = pilot.app
        screen = app.screen
        await pilot.press("escape")  # from the conversation search to the list
        await wait_until(pilot, lambda: getattr(app.focused, "id", None) == "conversations", what="the list")
        await wait_until(pilot, lambda: " 1…9 Sections" in screen_text(app).splitlines()[-1], what="1…9 in the list")
        await pilot.press("7")
        await wait_until(pilot, lambda: screen.query_one("#sections", ContentSwitcher).current == "events",
                         what="7 from the list")
        assert getattr(app.focused, "id", None) == "events-table"  # Events opens on its table, where letters act
        await wait_until(pilot, lambda: " 1…9 Sections" in screen_text(app).splitlines()[-1], what="1…9 in Events")
        await pilot.press("x")
        await wait_until(pilot, lambda: type(app.screen).__name__ == "ExportScreen", what="x exports from the table")
