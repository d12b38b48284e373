"""Issue 21, item 6: the events panel follows the newest event unless the user moved in it; then its title counts
what arrived ("▲ N new") and `g` jumps to the newest. A resize or a rejected event does not stop it following.
Escape leaves the panel for where the user was (and it follows again); the footer says what `f` does now."""

from __future__ import annotations

import json

import httpx
from textual.widgets import DataTable

from tests.harness import running_sandbox_app, screen_text, settle, wait_until


async def post(app, body: bytes) -> int:
    async with httpx.AsyncClient() as client:
        answer = await client.post(app.runtime.listener.url + "/delivery", content=body,
                                   headers={"content-type": "application/json"})
        return answer.status_code


def delivery(message_id: str) -> bytes:
    # Z-API's DeliveryCallback, as its webhook documentation shows it (unsigned: accepted below /delivery).
    return json.dumps({"type": "DeliveryCallback", "phone": "5511999999999", "messageId": message_id,
                       "instanceId": "3C01A1B2C3D4E5F6", "momment": 1732700000000, "isGroup": False}).encode()


def panel_lines(app) -> list[str]:
    lines = screen_text(app).splitlines()
    start = next(index for index, line in enumerate(lines) if line.lstrip().startswith("Events"))
    return lines[start:-1]


def top_summary(app) -> str:
    table = app.screen.query_one("#events-panel-table", DataTable)
    return str(table.get_row_at(0)[2])


async def test_new_events_show_until_the_user_moves_then_a_marker_counts_them_and_g_jumps():
    async with running_sandbox_app(size=(80, 24)) as pilot:
        app = pilot.app
        table = app.screen.query_one("#events-panel-table", DataTable)
        for index in range(12):
            assert await post(app, delivery(f"OLD{index:02}")) == 200
        await settle(pilot)
        await wait_until(pilot, lambda: "OLD11" in "\n".join(panel_lines(app)) or table.row_count >= 12,
                         what="the first events")

        await pilot.resize_terminal(100, 30)  # a resize, then a rejected event: still following
        await settle(pilot)
        assert await post(app, b"{not json") == 400
        await settle(pilot)
        await wait_until(pilot, lambda: "unparseable body" in panel_lines(app)[1], what="the rejected event on top")
        await pilot.resize_terminal(80, 24)
        await settle(pilot)
        assert await post(app, delivery("AFTERRESIZE")) == 200
        await settle(pilot)
        await wait_until(pilot, lambda: table.row_count == 14 and "Delivery" in panel_lines(app)[1],
                         what="the newest event on top after a resize")
        assert "newest first" in panel_lines(app)[0] and "new ·" not in panel_lines(app)[0]

        table.focus()
        await pilot.press("down", "down", "down", "down", "down", "down")  # the user moves down the panel
        held = table.get_row_at(table.cursor_row)
        for index in range(3):
            assert await post(app, delivery(f"NEW{index}")) == 200
        await settle(pilot)
        await wait_until(pilot, lambda: "▲ 3 new" in panel_lines(app)[0], what="the marker")
        assert table.get_row_at(table.cursor_row) == held  # what the user looks at stays under the cursor
        footer = screen_text(app).splitlines()[-1]
        assert "g Newest" in footer and "f Only this message" in footer

        await pilot.press("g")
        await wait_until(pilot, lambda: table.cursor_row == 0 and "newest first" in panel_lines(app)[0],
                         what="g to the newest")
        assert "new ·" not in panel_lines(app)[0] and table.scroll_y == 0
        assert await post(app, delivery("FOLLOWED")) == 200
        await settle(pilot)
        await wait_until(pilot, lambda: table.row_count == 18 and table.cursor_row == 0, what="following again")
        assert "new ·" not in panel_lines(app)[0]


async def test_escape_leaves_the_panel_and_f_says_what_it_does():
    async with running_sandbox_app(size=(80, 24)) as pilot:
        app = pilot.app
        assert await post(app, delivery("ONE")) == 200
        await settle(pilot)
        search = app.focused
        assert getattr(search, "id", None) == "inbox-search"
        table = app.screen.query_one("#events-panel-table", DataTable)
        table.focus()
        await wait_until(pilot, lambda: "f Only this message" in screen_text(app).splitlines()[-1],
                         what="f's meaning in the footer")
        assert "esc Leave panel" in screen_text(app).splitlines()[-1]
        await pilot.press("f")  # only the events of that message
        await wait_until(pilot, lambda: "f All events" in screen_text(app).splitlines()[-1], what="f's new meaning")
        assert "f all events" in panel_lines(app)[0]
        await pilot.press("f")
        await wait_until(pilot, lambda: "f Only this message" in screen_text(app).splitlines()[-1], what="f again")
        await pilot.press("down")
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.focused is search, what="the focus back where it was")
        assert table.cursor_row == 0 and "newest first" in panel_lines(app)[0]
