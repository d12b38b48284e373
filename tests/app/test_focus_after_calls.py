"""Focus and footer after every call, in every section: the call is made from the keyboard (the section's key with
the focus in the form), and afterwards the focus is where it was, the footer still shows the section's keys, a
digit typed goes into the focused field (no section switch) and the section's own key still acts.

Also: sections open on their first field, calls that fail or are cancelled give the focus back too."""

from __future__ import annotations

import asyncio

import pytest
from textual.widgets import ContentSwitcher, Input, TextArea

from tests.harness import fill, open_chat_form, running_sandbox_app, screen_text, settle, wait_until
from tui.ui.keymap import ACTIONS, shown_key
from tui.sandbox.state import COMMUNITY_ID, LAUNCH_ID, PRODUCT_IDS

RECIPIENT = "5511999999999"

FIRST_FIELD = {
    "chats": "inbox-search", "groups": "lookup-id", "communities": "community-id", "privacy": "group-add-scope",
    "catalog": "product-id", "events": "events-table",
}
SECTION_KEYS = {"chats": "1", "groups": "2", "communities": "3", "privacy": "4", "catalog": "5", "settings": "6",
                "events": "7"}


def footer_words(section: str, app) -> list[str]:
    """What the footer must show in this section: its own keys shown in the footer (from the keys table), except
    those the section offers only when they apply (Browse on the Media kind, a doctor fix while its finding is
    listed): the section's check_action says False for them now."""
    active = {shown.binding.action for shown in app.screen.active_bindings.values()}
    return [action.description for action in ACTIONS
            if action.scope == section and action.show and action.action in active]


async def call_and_check(pilot, section: str, focus_id: str, key: str, done, *, answer: str | None = None,
                         values: dict[str, str] | None = None) -> None:
    """Focus `focus_id`, press `key` (and `answer` in a confirmation), wait for `done()`, then check the focus,
    the footer, that a digit does not switch sections, and that the section's keys still reach it."""
    app = pilot.app
    screen = app.screen
    if values:
        fill(screen, values)
    widget = screen.query_one(f"#{focus_id}")
    widget.focus()
    await wait_until(pilot, lambda: app.focused is widget, what=f"focus on {focus_id}")
    await pilot.press(key)
    if answer is not None:
        await wait_until(pilot, lambda: type(app.screen).__name__ == "ConfirmScreen", what="the confirmation")
        await pilot.press(answer)
    await wait_until(pilot, done, what=f"{key} in {section} to finish")
    await settle(pilot)
    assert app.focused is widget, f"after {key} in {section} the focus is on {app.focused!r}, not #{focus_id}"
    footer = screen_text(app).splitlines()[-1]
    for word in footer_words(section, app):
        assert word in footer, f"footer after {key} in {section} lacks {word!r}: {footer!r}"
    switcher = screen.query_one("#sections", ContentSwitcher)
    if isinstance(widget, (Input, TextArea)):
        before = widget.value if isinstance(widget, Input) else widget.text
        await pilot.press("3")
        await pilot.pause()
        after = widget.value if isinstance(widget, Input) else widget.text
        assert switcher.current == section and after != before, "a digit typed after the call left the field"
        await pilot.press("backspace")
    assert switcher.current == section


def status_text(app, selector: str) -> str:
    return str(app.screen.query_one(selector).render())


async def test_every_section_opens_on_its_first_field():
    async with running_sandbox_app() as pilot:
        app = pilot.app
        assert getattr(app.focused, "id", None) == "inbox-search"  # Chats opens on the conversations' search
        for section, key in SECTION_KEYS.items():
            await pilot.press(f"alt+{key}")
            expected = FIRST_FIELD.get(section)
            if expected is None:  # Settings: its first control, whatever it is, inside the section
                await wait_until(pilot, lambda section=section: app.focused is not None
                                 and app.screen.query_one(f"#{section}") in app.focused.ancestors, what=section)
            else:
                await wait_until(pilot, lambda expected=expected: getattr(app.focused, "id", None) == expected,
                                 what=f"{section} opening on #{expected}")


async def test_chats_focus_and_footer_after_each_call():
    async with running_sandbox_app() as pilot:
        app = pilot.app
        await open_chat_form(pilot)  # Chats opens on the conversations
        assert getattr(app.focused, "id", None) == "recipient"  # the form, not its kind picker
        sent = app.last_sent_id
        await call_and_check(pilot, "chats", "text-message", "ctrl+s", lambda: app.last_sent_id != sent,
                             values={"recipient": RECIPIENT, "text-message": "focus test"})
        await call_and_check(pilot, "chats", "chat-action", "ctrl+g",
                             lambda: "done for" in status_text(app, "#chat-action-status"))
        # Enter in a single-line field moves on; it never sends
        app.screen.query_one("#kind").value = "link"
        await pilot.pause()
        fill(app.screen, {"link-message": "see", "link-url": "https://example.com"})
        sent = app.last_sent_id
        app.screen.query_one("#link-url").focus()
        await pilot.press("enter")
        await wait_until(pilot, lambda: getattr(app.focused, "id", None) == "link-title", what="Enter to move on")
        await settle(pilot)
        assert app.last_sent_id == sent
        await call_and_check(pilot, "chats", "link-title", "ctrl+s", lambda: app.last_sent_id != sent)


async def test_groups_focus_and_footer_after_each_call():
    async with running_sandbox_app() as pilot:
        app = pilot.app
        await pilot.press("alt+2")
        await wait_until(pilot, lambda: getattr(app.focused, "id", None) == "lookup-id", what="Groups")
        await call_and_check(pilot, "groups", "lookup-id", "ctrl+s",
                             lambda: "Looked up" in status_text(app, "#group-status"),
                             values={"lookup-id": f"{LAUNCH_ID}-group"})
        await call_and_check(pilot, "groups", "lookup-id", "ctrl+s",  # not found: an error, focus back
                             lambda: "Looked up" not in status_text(app, "#group-status")
                             and bool(status_text(app, "#group-status").strip()),
                             values={"lookup-id": "120363000000000001-group"})
        await pilot.press("ctrl+n")
        await wait_until(pilot, lambda: getattr(app.focused, "id", None) == "create-name", what="Create tab")
        await call_and_check(pilot, "groups", "create-participants", "ctrl+s",
                             lambda: "Created group" in status_text(app, "#group-status"),
                             values={"create-name": "Focus crew", "create-participants": "5511955554444"})
        created = app.screen.query_one("#created-jid").value
        # the group just created is the group of Add participants and Rename (and of the look-up)
        for widget_id in ("add-group", "rename-group", "lookup-id"):
            assert app.screen.query_one(f"#{widget_id}", Input).value == created
        await pilot.press("ctrl+g")
        await wait_until(pilot, lambda: getattr(app.focused, "id", None) == "add-group", what="Add tab")
        await call_and_check(pilot, "groups", "add-phones", "ctrl+s",
                             lambda: "5511955553333" in str(app.screen.query_one("#add-result").render()),
                             values={"add-phones": "5511955553333"})
        await pilot.press("ctrl+r")
        await wait_until(pilot, lambda: getattr(app.focused, "id", None) == "rename-group", what="Rename tab")
        await call_and_check(pilot, "groups", "rename-name", "ctrl+s",
                             lambda: "Renamed" in status_text(app, "#group-status"),
                             values={"rename-name": "Focus crew renamed"})
        group = app.runtime.sandbox.state.groups[created.split("@")[0]]
        assert group.name == "Focus crew renamed"


async def test_communities_privacy_catalog_focus_and_footer_after_each_call():
    async with running_sandbox_app() as pilot:
        app = pilot.app
        await pilot.press("alt+3")
        await wait_until(pilot, lambda: getattr(app.focused, "id", None) == "community-id", what="Communities")
        await call_and_check(pilot, "communities", "promote-phones", "ctrl+s",
                             lambda: "Promoted" in status_text(app, "#promote-status"),
                             values={"community-id": COMMUNITY_ID, "promote-phones": "5511987654321"})
        await call_and_check(pilot, "communities", "reset-groups", "ctrl+n",
                             lambda: "New invite link" in status_text(app, "#reset-status"), answer="y")
        await pilot.press("alt+4")
        await wait_until(pilot, lambda: getattr(app.focused, "id", None) == "group-add-scope", what="Privacy")
        await call_and_check(pilot, "privacy", "group-add-scope", "ctrl+s",
                             lambda: "Everyone" in str(app.screen.query_one("#group-add-applied").render()))
        await pilot.press("alt+5")
        await wait_until(pilot, lambda: getattr(app.focused, "id", None) == "product-id", what="Catalog")
        await call_and_check(pilot, "catalog", "product-id", "ctrl+s",
                             lambda: PRODUCT_IDS[0] in str(app.screen.query_one("#product").render()),
                             values={"product-id": PRODUCT_IDS[0]})


async def test_settings_focus_and_footer_after_each_call():
    async with running_sandbox_app() as pilot:
        app = pilot.app
        await pilot.press("alt+6")
        await settle(pilot)

        def block_status(block: str) -> str:
            return str(app.screen.query_one(f"#{block} .block-status").render())

        await call_and_check(pilot, "settings", "description", "ctrl+s",
                             lambda: "Profile description set" in block_status("description-form"),
                             values={"description": "Open 9-18h"})
        await call_and_check(pilot, "settings", "hmac-status", "enter",
                             lambda: "Gateway:" in block_status("hmac-form"))
        await call_and_check(pilot, "settings", "proxy-url", "ctrl+s",
                             lambda: bool(block_status("proxy-form").strip()))


async def test_a_cancelled_call_gives_the_focus_back():
    async with running_sandbox_app() as pilot:
        app = pilot.app
        started = asyncio.Event()

        async def hang(*args, **kwargs):
            started.set()
            await asyncio.Event().wait()

        app.runtime.instance.request = hang  # the gateway never answers
        await open_chat_form(pilot)  # Chats opens on the conversations
        fill(app.screen, {"recipient": RECIPIENT, "text-message": "never answered"})
        message = app.screen.query_one("#text-message")
        message.focus()
        await pilot.press("ctrl+s")
        await wait_until(pilot, started.is_set, what="the call to start")
        await pilot.press("escape")  # cancels the running call
        await wait_until(pilot, lambda: "cancelled" in status_text(app, "#chat-status"), what="cancelled")
        await settle(pilot)
        assert app.focused is message


@pytest.mark.parametrize("key", ["ctrl+s", "ctrl+g", "ctrl+o"])
def test_chats_keys_say_what_they_do(key):
    """The footer's words and the buttons' keys come from one row each."""
    chats = {action.keys: action for action in ACTIONS if action.scope == "chats"}
    assert key in chats and shown_key(chats[key].id) == key
