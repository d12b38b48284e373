"""The shell as a keyboard user meets it: number keys, the panel toggle, help, the palette, the event detail,
the Events section's filters, search, paging and export, and the request log's copy-as-curl."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from textual.widgets import ContentSwitcher, DataTable, Input, Select

from tests.harness import palette, running_sandbox_app, screen_text, settle, show_section, wait_until
from tui.api.models import SendText
from tui.local.paths import data_dir
from tui.core.runtime import DETERMINISTIC_HMAC_KEY, DETERMINISTIC_TOKENS
from tui.ui.sections.events import PAGE_SIZE, EventsSection
from tui.webhooks.events import EventRecord
from tui.api.signing import Verdict
from tui.ui.widgets.events_panel import EventsPanel

HELLO = SendText(phone="5511999999999", message="shell test")


async def test_section_keys_work_while_typing_and_digits_never_leave_a_field():
    async with running_sandbox_app() as pilot:
        app = pilot.app
        switcher = app.screen.query_one("#sections", ContentSwitcher)
        recipient = app.screen.query_one("#inbox-search", Input)  # Chats' first field: the conversation search
        assert app.focused is recipient  # the first section opened on its first field
        await pilot.press("5", "e", "2", "question_mark")  # typed into the field: no section switch, no panel
        assert switcher.current == "chats" and recipient.value == "5e2?" and app.screen.query_one(EventsPanel).display
        for key, section in zip("2345671", ["groups", "communities", "privacy", "catalog", "settings", "events", "chats"],
                                strict=True):
            await pilot.press(f"alt+{key}")  # works with the focus in a field
            await wait_until(pilot, lambda section=section: switcher.current == section, what=f"alt+{key}")
        assert app.focused is recipient and recipient.value == "5e2?"
        await pilot.press("escape", "2")  # Escape leaves the field for its section: then digits switch
        await wait_until(pilot, lambda: switcher.current == "groups", what="2 after escape")
        await wait_until(pilot, lambda: getattr(app.focused, "id", None) == "lookup-id", what="Groups' first field")


async def test_mouse_click_on_the_section_bar():
    async with running_sandbox_app() as pilot:
        text = screen_text(pilot.app).splitlines()[1]
        column = text.index("5 Catalog") + 2
        await pilot.click(offset=(column, 1))
        await pilot.pause()
        assert pilot.app.screen.query_one("#sections", ContentSwitcher).current == "catalog"


async def test_f9_toggles_the_panel_on_every_section_and_e_does_outside_fields():
    async with running_sandbox_app() as pilot:
        panel = pilot.app.screen.query_one(EventsPanel)
        for key in "1234567":
            await pilot.press(f"alt+{key}")
            await pilot.pause()
            assert panel.display
            await pilot.press("f9")
            assert not panel.display
            await pilot.press("f9")
            assert panel.display
        pilot.app.screen.query_one(EventsSection).focus()  # not a text field: the letter works
        await pilot.press("e")
        assert not panel.display


async def test_help_is_for_the_current_section():
    async with running_sandbox_app() as pilot:
        await pilot.press("alt+2", "f1")
        await wait_until(pilot, lambda: type(pilot.app.screen).__name__ == "HelpScreen", what="help")
        assert "Groups" in screen_text(pilot.app) and "participants" in screen_text(pilot.app)
        await pilot.press("f1")  # the same key closes it
        await wait_until(pilot, lambda: type(pilot.app.screen).__name__ == "MainScreen", what="help closed")
        await pilot.press("alt+5", "escape", "question_mark")
        await wait_until(pilot, lambda: type(pilot.app.screen).__name__ == "HelpScreen", what="help by ?")
        assert "Catalog" in screen_text(pilot.app)


async def test_palette_lists_every_operation_and_opens_it():
    async with running_sandbox_app() as pilot:
        app = pilot.app
        await pilot.press("ctrl+p")
        await pilot.pause()
        for title in ("Send poll", "Rename group", "Reset community invite link", "Set HMAC key", "Set proxy"):
            palette_input = app.screen.query_one(Input)
            palette_input.value = title
            await wait_until(pilot, lambda title=title: title in screen_text(app), what=f"palette hit {title!r}")
        await pilot.press("escape")
        await palette(pilot, "Rename a group")
        await settle(pilot)
        assert app.screen.query_one("#sections", ContentSwitcher).current == "groups"
        assert app.screen.query_one("#group-tabs").active == "tab-rename"


async def test_enter_on_a_panel_event_opens_its_detail():
    async with running_sandbox_app() as pilot:
        app = pilot.app
        await app.runtime.instance.send_text(HELLO)
        await settle(pilot)
        table = app.screen.query_one("#events-panel-table", DataTable)
        # Delivery, ReadReceipt, ChatPresence and the contact's answer (a Message): the sandbox replies to a text
        assert table.row_count == 4
        table.focus()
        await pilot.press("down")  # past the answer (a long whatsmeow Message) to the ChatPresence, whose detail fits
        await pilot.press("enter")
        await pilot.pause()
        shown = screen_text(app)
        assert "Headers" in shown and "x-hmac-signature" in shown and "valid" in shown and '"type":' in shown


def many(count: int) -> list[EventRecord]:
    records = []
    for n in range(count):
        kind = ("Message", "ReadReceipt")[n % 2]
        body = json.dumps({"type": kind, "event": {"Info": {"ID": f"ID{n}"}, "text": f"needle{n}" if n % 50 == 0 else "hay"}})
        records.append(EventRecord(received_at=datetime(2025, 1, 1, tzinfo=UTC), path="/session", headers={},
                                   body=body.encode(), payload=json.loads(body), kind=kind, summary=f"{kind} {n}",
                                   verdict=Verdict.VALID if n % 3 else Verdict.UNSIGNED))
    return records


async def test_events_section_filters_search_paging_and_export():
    async with running_sandbox_app() as pilot:
        app = pilot.app
        app.runtime.store.bulk_insert_for_bench(many(350))
        await show_section(pilot, "events")
        section = app.screen.query_one(EventsSection)
        section.reload()
        await settle(pilot)
        assert section.total == 350 and len(section.rows) == PAGE_SIZE and section.rows[0].id == 350

        await pilot.press("right_square_bracket")
        await settle(pilot)
        assert section.rows[0].id == 350 - PAGE_SIZE
        await pilot.press("left_square_bracket")
        await settle(pilot)
        assert section.rows[0].id == 350

        app.screen.query_one("#events-kind", Select).value = "ReadReceipt"
        await settle(pilot)
        assert section.total == 175 and {row.kind for row in section.rows} == {"ReadReceipt"}
        app.screen.query_one("#events-verdict", Select).value = str(Verdict.UNSIGNED)
        await settle(pilot)
        assert {(row.kind, str(row.verdict)) for row in section.rows} == {("ReadReceipt", str(Verdict.UNSIGNED))}

        app.screen.query_one("#events-kind", Select).value = Select.NULL
        app.screen.query_one("#events-verdict", Select).value = Select.NULL
        app.screen.query_one("#events-search", Input).value = "needle"
        await wait_until(pilot, lambda: section.total == 7, what="the search (it waits for typing to pause)")
        await settle(pilot)
        assert section.total == 7 and all("needle" in row.body.decode() for row in section.rows)

        section.focus()
        await pilot.press("x")
        await pilot.pause()
        target = data_dir() / "needles.jsonl"
        app.screen.query_one("#export-path", Input).value = str(target)
        await pilot.press("enter")
        await settle(pilot)
        lines = target.read_text().splitlines()
        assert len(lines) == 7 and all("needle" in line for line in lines)


async def test_request_log_and_curl_carry_no_secret():
    async with running_sandbox_app() as pilot:
        app = pilot.app
        await app.runtime.instance.send_text(HELLO)
        await settle(pilot)
        await pilot.press("f2")
        await wait_until(pilot, lambda: type(app.screen).__name__ == "RequestLogScreen" and bool(app.screen.query(
            "#requests-table")), what="the request log")
        await pilot.press("c")
        await wait_until(pilot, lambda: "as curl: curl" in screen_text(app), what="the curl shown")
        shown = screen_text(app)
        assert "$GATEWAY_TUI_" in shown
        for secret in [*DETERMINISTIC_TOKENS.values(), DETERMINISTIC_HMAC_KEY]:
            assert secret not in shown
        for exchange in app.runtime.request_log:
            curl = exchange.as_curl()
            assert not any(secret in curl for secret in [*DETERMINISTIC_TOKENS.values(), DETERMINISTIC_HMAC_KEY])


async def test_palette_operation_in_a_long_section_acts_and_is_in_view():
    async with running_sandbox_app() as pilot:
        app = pilot.app
        before = app.runtime.sandbox.state.hmac_key
        await palette(pilot, "Generate HMAC key")  # choosing it asks, then generates a key: no other step
        await wait_until(pilot, lambda: type(app.screen).__name__ == "ConfirmScreen", what="the question")
        await pilot.press("y")
        await wait_until(pilot, lambda: app.runtime.sandbox.state.hmac_key != before, what="a new key")
        await settle(pilot)
        assert app.runtime.sandbox.state.hmac_key != before
        assert "A new random key" in screen_text(app) and "Generate" in screen_text(app), screen_text(app)  # in view
        assert getattr(app.focused, "id", None) == "hmac-generate"  # the focus is back on its button
