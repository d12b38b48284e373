"""The app on a sandbox speaking Z-API and WuzAPI, as a user meets it: the header names the dialects, forms state
the dialect's rules (link preview required, delay in seconds), and answers are read in the dialect's terms."""

from __future__ import annotations

from textual.widgets import Input, Static

from tests.harness import fill
from tests.harness import open_chat_form, settle, show_section, wait_ready, wait_until
from tui.ui.app import build_app
from tui.sandbox.state import LAUNCH_ID
from tui.ui.widgets.forms import FieldRow, set_cursor_blink


def real_gateways_app():
    set_cursor_blink(False)
    return build_app(sandbox=True, deterministic=True, sandbox_dialects=("zapi", "wuzapi"))


def label(screen, widget_id: str) -> str:
    row = screen.query_one(f"#{widget_id}").parent
    assert isinstance(row, FieldRow)
    return row.label


async def test_forms_and_header_speak_the_dialect() -> None:
    app = real_gateways_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(pilot)
        screen = pilot.app.screen
        header = str(screen.query_one("#header-profile", Static).render())
        assert "speaks zapi/wuzapi" in header

        await show_section(pilot, "chats")
        await open_chat_form(pilot)  # Chats opens on the conversations
        fill(screen, {"recipient": "5511999999999", "kind": "link"})
        await wait_until(pilot, lambda: label(screen, "link-title") == "Preview title (required by Z-API)",
                         what="the link form's Z-API label")
        fill(screen, {"link-message": "see https://example.com", "link-url": "https://example.com"})
        screen.query_one("#send").press()
        await settle(pilot)
        assert pilot.app.last_sent_id is None  # nothing was sent
        assert "Z-API requires image, title and linkDescription" in (screen.query_one("#link-title").parent.error or "")
        assert list(pilot.app.runtime.sandbox.state.sent) == []

        fill(screen, {"kind": "sticker"})
        await wait_until(pilot, lambda: label(screen, "sticker-delay") == "Delay s, 1-15 (optional, Z-API)",
                         what="the sticker form's Z-API label")
        fill(screen, {"sticker-url": "https://example.com/s.webp", "sticker-delay": "20"})
        screen.query_one("#send").press()
        await settle(pilot)
        assert "1 to 15" in (screen.query_one("#sticker-delay").parent.error or "")
        fill(screen, {"sticker-delay": "3", "recipient": f"{LAUNCH_ID}@g.us"})
        screen.query_one("#send").press()
        await settle(pilot)
        assert pilot.app.last_sent_id, screen.query_one("#chat-status").render()


async def test_zapi_add_participant_says_what_it_knows_and_no_more() -> None:
    app = real_gateways_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(pilot)
        screen = pilot.app.screen
        await show_section(pilot, "groups")
        screen.query_one("GroupsSection").open_operation("add-participant")
        await wait_until(pilot, lambda: pilot.app.focused is screen.query_one("#add-group", Input),
                         what="the add form open, its first field focused")
        fill(screen, {"add-group": f"{LAUNCH_ID}-group", "add-phones": "5511944443333"})
        screen.query_one("#add").press()
        await settle(pilot)
        shown = str(screen.query_one("#add-result", Static).render())
        assert "does not report which numbers were added" in shown
        assert "Added" not in shown


async def test_inbox_names_chats_from_the_gateways_lists() -> None:
    """The saved contact name from Z-API's /contacts reaches the conversations in Chats, and the palette's list
    entry reads the lists again and shows the conversations; no screen of its own."""
    from tests.harness import screen_text, wait_until
    from tui.sandbox.state import DEMO_CONTACTS
    from tui.ui.sections.chats.inbox import InboxView

    ana = DEMO_CONTACTS[0][0]
    app = real_gateways_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(pilot)
        runtime = pilot.app.runtime
        inbox = pilot.app.screen.query_one(InboxView)
        for name in ("Ana Paula (VIP)", "Ana Souza"):
            runtime.sandbox.state.contacts[ana].name = name
            await pilot.press("ctrl+n")  # the form shows; the list entry brings the conversations back
            await wait_until(pilot, lambda: pilot.app.screen.section("chats").view == "compose",
                             what="the form")
            pilot.app.screen.open_operation("chats", "contacts")  # the palette's "List contacts (Z-API)"
            await wait_until(pilot, lambda: pilot.app.screen.section("chats").view == "inbox", what="the inbox")
            await wait_until(pilot, lambda name=name: any(row.title == name for row in inbox.rows),
                             what=f"the name {name} from the contact list")
            await settle(pilot)
            assert name in screen_text(pilot.app)


async def test_a_chat_the_gateway_lists_without_history_shows_in_chats() -> None:
    """A chat on the phone that no stored message knows (Z-API /chats) is listed with the phone's unread count and
    says it has no messages here yet; opening it shows an empty thread, not an error."""
    from tests.harness import screen_text, wait_until
    from tui.sandbox.state import Contact
    from tui.ui.sections.chats.inbox import InboxView

    rita = "5511955551234"
    app = real_gateways_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(pilot)
        state = pilot.app.runtime.sandbox.state
        state.contacts[rita] = Contact(rita, "Rita Gomes")
        state.chat(rita).unread = 3
        pilot.app.screen.open_operation("chats", "chats")  # the palette's "List chats (Z-API)" reads them again
        inbox = pilot.app.screen.query_one(InboxView)
        await wait_until(pilot, lambda: any(row.chat_id == rita for row in inbox.rows), what="Rita's chat")
        await pilot.press("slash", *"Rita")  # listed last (the phone gave no time): found by the search
        await wait_until(pilot, lambda: [row.chat_id for row in inbox.rows] == [rita],
                         what=f"the search, focus {pilot.app.focused}")
        await settle(pilot)
        lines = screen_text(pilot.app).splitlines()
        at = next(i for i, line in enumerate(lines) if "Rita Gomes" in line.split("│")[0])
        assert "no messages here yet" in lines[at + 1] and "(3)" in lines[at + 1]
        assert "No messages yet." in screen_text(pilot.app)  # its thread, opened as the only match
