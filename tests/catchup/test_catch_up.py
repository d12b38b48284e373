"""Catch-up after downtime (issue 35 item 4): the store's own records of the listener's runs say when it was down;
the messages a gateway's history lists within that gap are stored once (by message id), marked recovered and never
as an event (so never as if signed), the inbox gets one line for them, and a webhook re-delivering one of them
later adds nothing. A gateway that lists no history leaves the gap named. Literal answers of WuzAPI's handler."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

from tui.api.models import ChatHistoryQuery, MessageHistory
from tui.core.catchup import CatchUp, catch_up, listener_started, listener_stopped, recovered_ids
from tui.gateways.history import HistoryLister
from tui.gateways.wuzapi.history import list_since
from tui.webhooks import inbox_sql
from tui.webhooks.inbox_changes import changes_of
from tui.webhooks.store import EventStore

T0 = datetime(2026, 12, 7, 3, 0, tzinfo=UTC)


def us(at: datetime) -> int:
    return int(at.timestamp() * 1_000_000)


def wuzapi_message(message_id: str, at: datetime, text: str) -> dict[str, object]:
    """A row of GET /chat/history as handlers.go's HistoryMessage writes it."""
    return {"id": 1, "user_id": "u1", "chat_jid": "5511988887777@s.whatsapp.net",
            "sender_jid": "5511988887777@s.whatsapp.net", "message_id": message_id,
            "timestamp": at.isoformat().replace("+00:00", "Z"), "message_type": "text", "text_content": text,
            "media_link": ""}


class WuzapiHistory:
    """Answers the two reads of the catch-up as WuzAPI would, from the messages given (newest first)."""

    def __init__(self, rows: list[dict[str, object]]) -> None:
        self.rows = rows
        self.asked: list[dict[str, str]] = []

    async def fetch(self, path: str, query: dict[str, str]) -> object:
        assert path == "/chat/history"
        self.asked.append(query)
        if query["chat_jid"] == "index":
            newest = max(str(row["timestamp"]) for row in self.rows)
            return {"code": 200, "success": True, "data": {"u1": [
                {"chat_jid": "5511988887777@s.whatsapp.net", "last_updated": newest}]}}
        rows = sorted(self.rows, key=lambda row: str(row["timestamp"]), reverse=True)[: int(query["limit"])]
        return json.loads(json.dumps({"code": 200, "success": True, "data": rows}))

    async def read(self, query: ChatHistoryQuery) -> MessageHistory:
        """As the session client reads it: the envelope's `data` as the row's answer."""
        answer = await self.fetch("/chat/history", {"chat_jid": query.chat_jid, "limit": str(query.limit)})
        assert isinstance(answer, dict)
        return MessageHistory.model_validate(answer["data"])

    @property
    def lister(self) -> HistoryLister:
        return HistoryLister("WuzAPI", lambda since: list_since(self.read, since))


def test_the_runs_say_when_the_listener_was_down(tmp_path: Path) -> None:
    with EventStore(tmp_path / "events.sqlite3") as store:
        first, gap = store.write(lambda connection: listener_started(connection, us(T0)))
        assert gap is None  # a first run: nothing to catch up
        store.write(lambda connection: listener_stopped(connection, first, us(T0 + timedelta(minutes=10))))
        _, gap = store.write(lambda connection: listener_started(connection, us(T0 + timedelta(minutes=42))))
        assert gap is not None and (gap.start, gap.end) == (T0 + timedelta(minutes=10), T0 + timedelta(minutes=42))
        assert gap.words(UTC) == "03:10–03:42"


def test_a_run_that_ended_without_saying_so_ended_at_its_newest_record(tmp_path: Path) -> None:
    with EventStore(tmp_path / "events.sqlite3") as store:
        store.write(lambda connection: listener_started(connection, us(T0)))  # then killed: no stop recorded
        _, gap = store.write(lambda connection: listener_started(connection, us(T0 + timedelta(hours=1))))
        assert gap is not None and gap.start == T0 and gap.end == T0 + timedelta(hours=1)


async def test_the_gaps_messages_are_stored_once_marked_recovered_and_a_later_redelivery_adds_nothing(
        tmp_path: Path) -> None:
    start, end = T0 + timedelta(minutes=10), T0 + timedelta(minutes=42)
    inside = [wuzapi_message(f"3EB0{n:04d}", start + timedelta(minutes=n + 1), f"message {n}") for n in range(20)]
    before = wuzapi_message("3EB0BEFORE", start - timedelta(minutes=5), "seen live")
    history = WuzapiHistory([before, *inside])
    with EventStore(tmp_path / "events.sqlite3") as store:
        run, _ = store.write(lambda connection: listener_started(connection, us(T0)))
        store.write(lambda connection: listener_stopped(connection, run, us(start)))
        _, gap = store.write(lambda connection: listener_started(connection, us(end)))
        assert gap is not None
        result = await catch_up(store, "shop", gap, history.lister)
        again = await catch_up(store, "shop", gap, history.lister)
        assert result == CatchUp("shop", gap, 20, None, "WuzAPI") and again.recovered == 0
        assert result.words(UTC) == "20 messages recovered from 03:10–03:42"
        assert history.asked[0]["chat_jid"] == "index"

        def inbox(connection):
            return connection.execute(
                "SELECT message_id, body, event_id FROM chat_messages WHERE account = 'shop' ORDER BY at_us").fetchall()

        rows = store.read(inbox)
        assert [row[0] for row in rows] == [f"3EB0{n:04d}" for n in range(20)]  # not the one seen live, once each
        assert all(event_id is None for *_, event_id in rows)  # no event: nothing recovered passes for signed
        assert store.read(lambda connection: recovered_ids(connection, "shop", "5511988887777")) == {
            f"3EB0{n:04d}" for n in range(20)}
        # WuzAPI re-delivers one of them later (its webhook, literal as docs/gateways/wuzapi.md gives it).
        redelivered = json.loads('{"type":"Message","event":{"Info":{"Chat":"5511988887777@s.whatsapp.net",'
                                 '"Sender":"5511988887777@s.whatsapp.net","IsFromMe":false,"IsGroup":false,'
                                 '"ID":"3EB00007","PushName":"Ana","Timestamp":"2026-12-07T03:18:00Z"},'
                                 '"Message":{"conversation":"message 7"}}}')
        store.write(lambda connection: inbox_sql.apply(connection, changes_of("Message", redelivered),
                                                       us(end + timedelta(minutes=1)), 99, "shop"))
        assert len(store.read(inbox)) == 20
        notes = store.read(lambda connection: connection.execute(
            "SELECT account, recovered, missing FROM catch_up_notes").fetchall())
        assert notes == [("shop", 20, None), ("shop", 0, None)]


async def test_a_gateway_that_lists_no_history_leaves_the_gap_named(tmp_path: Path) -> None:
    start, end = T0 + timedelta(minutes=10), T0 + timedelta(minutes=42)
    from tui.core.catchup import Gap

    async def disabled(since: datetime) -> list:
        # the session client's error for WuzAPI's 501 (handlers.go GetHistory with the user's history at 0)
        from tui.api.errors import UnexpectedStatus

        raise UnexpectedStatus("HTTP 501 Not Implemented for message-history: message history is disabled for this "
                               "user", status=501)

    with EventStore(tmp_path / "events.sqlite3") as store:
        gap = Gap(start, end)
        wuzapi = await catch_up(store, "shop", gap, HistoryLister("WuzAPI", disabled))
        spec = await catch_up(store, "shop", gap, None, gateway="the spec gateway")
        notes = store.read(lambda connection: connection.execute(
            "SELECT gateway, recovered, missing FROM catch_up_notes ORDER BY id").fetchall())
    assert wuzapi.recovered == 0 and "message history is disabled" in (wuzapi.missing or "")
    assert wuzapi.words(UTC).startswith("no history from WuzAPI for 03:10–03:42 (")
    assert spec.words(UTC) == "no history from the spec gateway for 03:10–03:42 (it has no call that lists messages)"
    assert [gateway for gateway, *_ in notes] == ["WuzAPI", "the spec gateway"]
