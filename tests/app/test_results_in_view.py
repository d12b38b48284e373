"""Every result is seen at 80×24 (issue 21, item 9): a section's result line comes into view with the field the
user is in, or, when both cannot show, is said in a toast too. One mechanism (`tui.ui.widgets.feedback.in_view`)
serves every section: Communities' "Promoted …" and the results of Settings' palette actions were below the
screen's edge, under the events panel."""

from __future__ import annotations

import pytest
from textual.widgets import Input

from tests.harness import fill, open_chat_form, palette, running_sandbox_app, sandbox_app, screen_text, settle, \
    show_section, wait_ready, wait_until
from tui.sandbox.state import LAUNCH_ID, PRODUCT_IDS
from tui.ui.widgets.feedback import ErrorLine
from tui.ui.textual_compat import notifications_of

SMALL = (80, 24)
COMMUNITY = "120363186053925765"
ANA = "5511987654321"


def on_screen(app, text: str) -> bool:
    return text in " ".join(screen_text(app).split())


def toasted(app, text: str) -> bool:
    return any(text in notification.message for notification in notifications_of(app))


def seen(app, line: ErrorLine) -> bool:
    """The line's text is on the screen, or in a toast."""
    text = " ".join(str(line.render()).split())
    return bool(text) and (on_screen(app, text[:40]) or toasted(app, text))


async def promote(pilot) -> ErrorLine:
    app = pilot.app
    await show_section(pilot, "communities")
    await settle(pilot)
    app.screen.query_one("#community-id", Input).value = COMMUNITY
    field = app.screen.query_one("#promote-phones", Input)
    field.value = ANA
    field.focus()
    await pilot.pause()
    await pilot.press("ctrl+s")
    line = app.screen.query_one("#promote-status", ErrorLine)
    await wait_until(pilot, lambda: "Promoted" in str(line.render()), what="the promote answer")
    await settle(pilot)
    return line


async def test_promoted_is_on_screen_at_80x24_with_the_field_the_user_is_in():
    async with running_sandbox_app(size=SMALL) as pilot:
        app = pilot.app
        line = await promote(pilot)
        await wait_until(pilot, lambda: on_screen(app, f"Promoted {ANA} in community"), what="the answer in view")
        assert app.focused is app.screen.query_one("#promote-phones")
        assert app.screen.can_view_entire(app.focused)
        assert not toasted(app, "Promoted")  # scrolled to, not only said
        assert line.has_class("-ok")


def test_snapshot_promoted_at_80x24(snap_compare):
    async def run_before(pilot):
        await wait_ready(pilot)
        await promote(pilot)
        await settle(pilot)

    assert snap_compare(sandbox_app(), terminal_size=SMALL, run_before=run_before)


# Settings' palette entries (those that act at once, and those that focus a field ctrl+s then applies) and the
# block whose line answers.
SETTINGS_ACTIONS = [
    pytest.param("Point webhooks at listener", (), "#session-webhook-form", id="point-webhooks"),
    pytest.param("HMAC signing key status", (), "#hmac-form", id="hmac-status"),
    pytest.param("Connection status", (), "#dialect-form", id="connection-status"),
    pytest.param("Change listener address", ("ctrl+s",), "#listener-form", id="listener-address"),
    pytest.param("Forward events to your app", ("ctrl+s",), "#forward-form", id="forward-to"),
    pytest.param("Set proxy", ("ctrl+s",), "#proxy-form", id="proxy"),
]


@pytest.mark.parametrize(("title", "keys", "block"), SETTINGS_ACTIONS)
async def test_settings_palette_actions_show_their_result_at_80x24(title, keys, block):
    async with running_sandbox_app(size=SMALL) as pilot:
        app = pilot.app
        await show_section(pilot, "settings")
        await settle(pilot)
        line = app.screen.query_one(f"{block} .block-status", ErrorLine)
        line.clear()
        app.screen.query_one("#forward-url", Input).value = "http://127.0.0.1:9/hook"  # what forwarding needs
        await palette(pilot, title)
        await settle(pilot)
        await pilot.press(*keys)
        await wait_until(pilot, lambda: line.has_class("-shown"), what="the answer")
        await settle(pilot)
        await wait_until(pilot, lambda: seen(app, line), what=f"the answer of {title!r} on screen or in a toast")


async def test_a_result_that_cannot_show_with_the_field_is_said_in_a_toast():
    """A screen too short for the field and its answer together: the field stays in view, the answer is toasted."""
    async with running_sandbox_app(size=(80, 14)) as pilot:
        app = pilot.app
        await promote(pilot)
        field = app.screen.query_one("#promote-phones")
        assert app.focused is field
        assert app.screen.can_view_entire(field)
        await wait_until(pilot, lambda: on_screen(app, "Promoted") or toasted(app, f"Promoted {ANA}"),
                         what="the answer on screen or in a toast")


# Each section's answer to its main key at 80×24: (section, values, focused field, key, the answer's selector, what
# it says when done). The answer is on screen, or in a toast when it cannot show with the field.
SECTION_RESULTS = [
    pytest.param("chats", {"recipient": ANA, "text-message": "in view?"}, "text-message", "ctrl+s", "#sent-id .value",
                 "(text to", id="chats-send"),
    pytest.param("chats", {"recipient": ANA}, "chat-action", "ctrl+g", "#chat-action-status", "done for", id="chats-action"),
    pytest.param("groups", {"lookup-id": f"{LAUNCH_ID}-group"}, "lookup-id", "ctrl+s", "#group-status", "Looked up",
                 id="groups-lookup"),
    pytest.param("privacy", {}, "group-add-scope", "ctrl+s", "#privacy-status", "Everyone", id="privacy"),
    pytest.param("catalog", {"product-id": PRODUCT_IDS[0]}, "product-id", "ctrl+s", "#product", PRODUCT_IDS[0],
                 id="catalog"),
]


def rendered(app, selector: str) -> str:
    return " ".join(str(app.screen.query_one(selector).render()).split())


@pytest.mark.parametrize(("section", "values", "focus", "key", "answer", "done"), SECTION_RESULTS)
async def test_each_sections_answer_is_seen_at_80x24(section, values, focus, key, answer, done):
    async with running_sandbox_app(size=SMALL) as pilot:
        app = pilot.app
        if section == "chats":
            await open_chat_form(pilot)
        else:
            await show_section(pilot, section)
        await settle(pilot)
        fill(app.screen, values)
        field = app.screen.query_one(f"#{focus}")
        field.focus()
        await wait_until(pilot, lambda: app.focused is field, what=f"focus on #{focus}")
        await pilot.press(key)
        await wait_until(pilot, lambda: done in rendered(app, answer), what=f"the answer of {key} in {section}")
        await settle(pilot)
        text = rendered(app, answer)[:20]
        await wait_until(pilot, lambda: on_screen(app, text) or toasted(app, text),
                         what=f"{text!r} on screen or in a toast")
        assert app.screen.can_view_entire(app.focused)
