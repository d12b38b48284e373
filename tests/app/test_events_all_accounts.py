"""Issue 38, item 10 (several accounts): Events with `a` shows every *open* account's events, each with its account
in an Account column; an account that is not open here (another app's, or `listen --all`'s, in the same store) is
left out. `a` again: only the current account's, and the column goes."""

from __future__ import annotations

from datetime import UTC, datetime

from textual.widgets import DataTable

from tests.fleet.test_sandbox_accounts import sandbox_accounts_app
from tests.harness import show_section, wait_until
from tui.webhooks.events import EventRecord
from tui.api.signing import Verdict


def _record(account: str | None, summary: str) -> EventRecord:
    return EventRecord(received_at=datetime(2026, 12, 7, tzinfo=UTC), path=f"/a/{account}/session", headers={},
                       body=b"{}", payload={}, kind="Presence", summary=summary, verdict=Verdict.VALID,
                       account=account)


def _rows(table: DataTable) -> list[list[str]]:
    return [[str(cell) for cell in table.get_row_at(index)] for index in range(table.row_count)]


async def test_all_accounts_shows_the_open_accounts_events_with_their_account():
    async with sandbox_accounts_app(3) as pilot:
        app = pilot.app
        store = app.runtime.store
        assert store is not None
        for account, summary in (("sandbox-01", "first's"), ("sandbox-02", "second's"),
                                 ("closed-elsewhere", "not open here")):
            await store.append(_record(account, summary))
        await show_section(pilot, "events")
        section = app.screen.query_one("EventsSection")
        table = section.query_one("#events-table", DataTable)
        await wait_until(pilot, lambda: any("first's" in " ".join(row) for row in _rows(table)),
                         what="the current account's events")
        assert [str(column.label) for column in table.ordered_columns] == [
            "#", "Received", "Kind", "Summary", "Verdict"]
        assert not any("second's" in " ".join(row) for row in _rows(table))
        table.focus()
        await pilot.press("a")
        await wait_until(pilot, lambda: any("second's" in " ".join(row) for row in _rows(table)),
                         what="every open account's events")
        assert [str(column.label) for column in table.ordered_columns] == [
            "#", "Account", "Received", "Kind", "Summary", "Verdict"]
        rows = _rows(table)
        accounts = {summary: row[1] for row in rows for summary in ("first's", "second's", "not open here")
                    if summary in row[4]}
        assert accounts == {"first's": "sandbox-01", "second's": "sandbox-02"}, rows
        await pilot.press("a")
        await wait_until(pilot, lambda: not any("second's" in " ".join(row) for row in _rows(table)),
                         what="only the current account's again")
        assert [str(column.label) for column in table.ordered_columns] == [
            "#", "Received", "Kind", "Summary", "Verdict"]
