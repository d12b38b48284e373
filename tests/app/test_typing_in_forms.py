"""Issue 21, item 5: typing inside a form is never a command. Whatever part of a form has the focus (a field, a
picker, a checkbox, a switch, a button), letters, digits and symbols do nothing there but what the control does
with them; sections switch with alt+1..7 (the footer says so). Outside forms (the conversation list, the events
table) the single keys still act, as the footer says. In the new-message form, Tab goes from the recipient to the
message."""

from __future__ import annotations

import pytest
from textual.widgets import ContentSwitcher, Input

from tests.harness import open_chat_form, running_sandbox_app, screen_text, show_section, wait_until
from tui.ui.keymap import ACTIONS, SECTION_ORDER, typed_character, use_keymap
from tui.ui.main_screen import SECTIONS
from tui.ui.widgets.focus import TypingInForms, in_form

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


# A user keymap that puts every command of the sections on a letter (`z`): on a form control, typing all the same.
EVERY_SECTION_COMMAND_ON_A_LETTER = {action.id: "z" for action in ACTIONS if action.scope in (*SECTION_ORDER, "section")}


@pytest.mark.parametrize("keymap", [{}, EVERY_SECTION_COMMAND_ON_A_LETTER], ids=["defaults", "sections-on-z"])
async def test_on_every_form_control_of_every_section_only_the_controls_own_printable_keys_are_bound(keymap):
    """Whatever form control has the focus, in any section: the printable keys in force (what would act, and what
    the footer shows) are only the ones the control binds itself (space on a checkbox, a picker's open list), never
    one bound around it (1-9, `e`, `?`, a section's letters, a command the user's keymap put on a letter)."""
    async with running_sandbox_app(size=(120, 40)) as pilot:
        app = pilot.app
        screen = app.screen
        use_keymap(keymap)
        app.set_keymap(keymap)
        await wait_until(pilot, lambda: screen.all_sections_mounted, what="every section mounted")
        checked = 0
        wrong: list[str] = []
        for section in SECTIONS:
            await show_section(pilot, section.id)
            body = screen.query_one(f"#{section.id}")
            controls = [widget for widget in body.query("*") if widget.focusable and in_form(widget)]
            for widget in controls:
                screen.set_focus(widget)
                await pilot.pause()
                if app.focused is not widget:
                    continue  # scrolled out of reach or set up later: the ones reached are enough
                own = own_nodes(widget)
                bound_around = sorted(f"{key} ({type(active.node).__name__})"
                                      for key, active in screen.active_bindings.items()
                                      if typed_character(key) is not None and active.node not in own)
                if bound_around:
                    wrong.append(f"{section.id}: on {widget!r}: {bound_around}")
                checked += 1
        use_keymap({})
        assert not wrong, "\n".join(wrong)
        assert checked >= 40, checked  # every section's fields, pickers, switches, buttons


def own_nodes(widget) -> list:
    """The focused control and what it sits in up to the first part that takes typed keys (a field row, a form, a
    section): the keys bound there are the control's own (a picker's open list and the picker)."""
    nodes = []
    for node in widget.ancestors_with_self:
        if isinstance(node, TypingInForms):
            break
        nodes.append(node)
    return nodes
