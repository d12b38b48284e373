"""Who wrote, in the events panel: an event from a LID shown before its phone number was known says "unknown number
(lid …)"; once a later event (or the gateway's look-up) teaches the number, the panel's older line shows it too, as
`listen`'s lines and `events list` do (issue 35 item 1)."""

from __future__ import annotations

import httpx
from textual.widgets import DataTable

from tests.harness import running_sandbox_app, settle, wait_until

NEW_NUMBER = "5521955554444"  # on WhatsApp, in no seeded chat, no contact name


async def write_from_lid(app, text: str, *, alt: bool) -> str:
    async with httpx.AsyncClient(trust_env=False) as client:
        answer = await client.post(app.runtime.sandbox.url + "/sandbox/incoming",
                                   json={"from": NEW_NUMBER, "text": text, "alt": alt})
    assert answer.status_code == 200, answer.text
    return answer.json()["lid"]


def summaries(app) -> list[str]:
    table = app.screen.query_one("#events-panel-table", DataTable)
    return [str(table.get_row_at(index)[2]) for index in range(table.row_count)]


def line_of(app, text: str) -> str:
    return next((line for line in summaries(app) if text in line), "")


async def test_a_line_shown_before_the_number_was_known_shows_it_once_learned():
    async with running_sandbox_app(size=(160, 30)) as pilot:  # wide: the whole summary in its cell
        app = pilot.app
        lid = await write_from_lid(app, "first, number unknown", alt=False)
        await wait_until(pilot, lambda: "unknown number" in line_of(app, "number unknown"), what="the LID's line")
        assert lid in line_of(app, "number unknown")

        await write_from_lid(app, "second, with the number", alt=True)
        await wait_until(pilot, lambda: line_of(app, "with the number") != "", what="the second line")
        await settle(pilot)
        await wait_until(pilot, lambda: f"+{NEW_NUMBER}" in line_of(app, "number unknown"),
                         what="the first line with the number learned since")
        assert "unknown number" not in line_of(app, "number unknown")
