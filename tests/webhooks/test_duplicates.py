"""A delivery received again (the same body bytes, or the same message ids, kind and summary) is stored, flagged
"duplicate of #N" and counted once; found through an index, never a scan."""

from __future__ import annotations

import json
import queue
import sqlite3

from tests.webhooks.conftest import record
from tests.webhooks.test_signing import JSON_BODY
from tui.webhooks.store import EventStore

JSON = {"Content-Type": "application/json"}


async def post(http, listener, body: bytes):
    async with http.post(listener.url + "/hook", data=body, headers=JSON) as response:
        return response.status, await response.json()


async def test_the_same_body_again_is_stored_flagged_and_counted_once(store, start_listener, http):
    listener = await start_listener()
    first = await post(http, listener, JSON_BODY)
    again = await post(http, listener, JSON_BODY)
    other = await post(http, listener, b'{"type":"Message","event":{"Info":{"ID":"OTHER"}}}')
    assert [first[0], again[0], other[0]] == [200, 200, 200]  # a retry is answered 200: the sender stops resending
    events = {event.id: event for event in store.newest(10)}
    assert events[again[1]["id"]].duplicate_of == first[1]["id"]
    assert events[first[1]["id"]].duplicate_of is None and events[other[1]["id"]].duplicate_of is None
    assert store.count() == 2 and store.count(kind="Message") == 2
    assert (listener.received, listener.duplicates) == (2, 1)
    assert json.loads(events[again[1]["id"]].to_json_line())["duplicate_of"] == first[1]["id"]


async def test_same_message_ids_kind_and_summary_with_other_bytes_is_a_duplicate(store):
    original = await store.append(record({"a": 1}, body=b'{"a":1,"sent":1}', message_ids=("M1",), summary="hi"))
    resent = await store.append(record({"a": 1}, body=b'{"a":1,"sent":2}', message_ids=("M1",), summary="hi"))
    assert resent.duplicate_of == original.id
    assert store.get(resent.id).duplicate_of == original.id


async def test_a_receipts_new_state_is_not_a_duplicate(store):
    delivered = record({"s": 1}, body=b'{"s":"delivered"}', kind="ReadReceipt", message_ids=("M1", "M2"),
                       summary="ReadReceipt delivered by x (2 messages)")
    read = record({"s": 2}, body=b'{"s":"read"}', kind="ReadReceipt", message_ids=("M1", "M2"),
                  summary="ReadReceipt read by x (2 messages)")
    assert (await store.append(delivered)).duplicate_of is None
    assert (await store.append(read)).duplicate_of is None


async def test_rejected_events_are_neither_duplicates_nor_originals(store):
    refused = await store.append(record({"x": 1}, rejected=True))
    accepted = await store.append(record({"x": 1}))
    refused_again = await store.append(record({"x": 1}, rejected=True))
    assert (refused.duplicate_of, accepted.duplicate_of, refused_again.duplicate_of) == (None, None, None)
    assert (await store.append(record({"x": 1}))).duplicate_of == accepted.id


async def test_duplicates_are_found_and_counted_through_indexes(store, monkeypatch):
    await store.append(record({"x": 1}))
    await store.append(record({"x": 1}))
    with sqlite3.connect(store.path) as raw:
        finding = " ".join(row[3] for row in raw.execute(
            "EXPLAIN QUERY PLAN SELECT event_id FROM event_fingerprints WHERE fingerprint = ?", (b"0" * 16,)))
    assert "USING PRIMARY KEY (fingerprint=?)" in finding, finding
    plans: list[str] = []
    original = sqlite3.Connection.execute

    class Explaining(sqlite3.Connection):
        def execute(self, sql, parameters=()):  # type: ignore[override]
            if "duplicate_of IS NOT NULL" in sql:
                plans.append(" ".join(row[3] for row in original(self, "EXPLAIN QUERY PLAN " + sql, parameters)))
            return original(self, sql, parameters)

    # Readers from now on explain each duplicates count before running it.
    monkeypatch.setattr(store, "_connect", lambda timeout=10.0: sqlite3.connect(
        store.path, factory=Explaining, isolation_level=None, check_same_thread=False))
    monkeypatch.setattr(store, "_idle_readers", queue.SimpleQueue())
    assert store.count(kind="Message") == 1
    assert store.count(search="x") == 1
    assert store.count(verdict="valid", rejected=False) == 1
    assert len(plans) == 3
    for plan in plans:
        assert "events_duplicates" in plan and "events_by_kind" not in plan, plan


async def test_a_store_from_before_duplicates_gets_them_in_place(tmp_path):
    path = tmp_path / "old.sqlite3"
    with EventStore(path) as store:
        await store.append(record({"x": 1}))
    with sqlite3.connect(path) as raw:  # as schema 2 left it: no fingerprint, no duplicate_of
        raw.execute("DROP TRIGGER events_after_delete_fingerprint")
        raw.execute("DROP TABLE event_fingerprints")
        raw.execute("DROP INDEX events_duplicates")
        raw.execute("ALTER TABLE events DROP COLUMN fingerprint")
        raw.execute("ALTER TABLE events DROP COLUMN duplicate_of")
    with EventStore(path) as store:
        assert store.get(1).duplicate_of is None
        again = await store.append(record({"x": 1}))
        assert again.duplicate_of is None  # old rows have no fingerprint: never taken for originals
        assert (await store.append(record({"x": 1}))).duplicate_of == again.id
        assert store.count() == 2


async def test_duplicates_are_found_before_and_after_the_idle_indexing_and_across_a_restart(tmp_path, monkeypatch):
    from tui.webhooks import store_writer

    path = tmp_path / "e.sqlite3"
    monkeypatch.setattr(store_writer, "INDEX_IDLE_DELAY", 3600.0)  # nothing indexed: the writer's memory answers
    with EventStore(path) as store:
        first = await store.append(record({"n": 1}))
        assert (await store.append(record({"n": 1}))).duplicate_of == first.id
    with sqlite3.connect(path) as raw:
        assert raw.execute("SELECT count(*) FROM event_fingerprints").fetchone()[0] <= 1
    with EventStore(path) as store:  # reopened: the unindexed rows' fingerprints are read back
        assert (await store.append(record({"n": 1}))).duplicate_of == first.id
        store.newest(1, search="n")  # a search makes the writer index everything: now the table answers
        assert store._recent_fingerprints == {}
        assert (await store.append(record({"n": 1}))).duplicate_of == first.id
        second = await store.append(record({"n": 2}))
        assert second.duplicate_of is None
        assert (await store.append(record({"n": 2}))).duplicate_of == second.id
        assert store.count() == 2


async def test_retention_forgets_the_fingerprints_of_deleted_events(tmp_path):
    with EventStore(tmp_path / "e.sqlite3", retention=2) as store:
        first = await store.append(record({"n": 1}))
        store.newest(1, search="n")  # indexed: its fingerprint is in the table
        await store.append(record({"n": 2}))
        await store.append(record({"n": 3}))  # retention deletes #1 (and its fingerprint)
        assert store.get(first.id) is None
        assert (await store.append(record({"n": 1}))).duplicate_of is None
