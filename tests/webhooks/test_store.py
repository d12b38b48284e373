from __future__ import annotations

import asyncio
import dataclasses
import io
import json
import sqlite3
import threading
from datetime import UTC, datetime

import pytest

from tests.webhooks.conftest import ids, record
from tui.local.paths import DATA_DIR_ENV
from tui.webhooks import store_rows, store_schema, store_writer
from tui.api.signing import Verdict
from tui.webhooks.store import EventStore
from tui.webhooks.store_faults import StoreClosed


def message(text: str, message_id: str = "M1") -> dict:
    return {"type": "Message", "event": {"Info": {"ID": message_id}, "Message": {"conversation": text}}}


async def test_append_returns_the_stored_event(store):
    sent = record(message("hello"), summary="Message from x: hello", message_ids=("M1",))
    event = await store.append(sent)
    assert event.id == 1
    assert (event.path, event.kind, event.summary, event.verdict, event.rejected) == (
        "/hook", "Message", "Message from x: hello", Verdict.VALID, False)
    assert store.get(event.id) == event  # every field survives the round trip


async def test_acknowledged_events_are_committed(store):
    events = await asyncio.gather(*(store.append(record(message(f"m{i}"))) for i in range(50)))
    # An independent connection sees every acknowledged row: it was committed, not just queued.
    with sqlite3.connect(store.path) as other:
        stored_ids = {row[0] for row in other.execute("SELECT id FROM events")}
    assert stored_ids == {event.id for event in events}
    assert len(stored_ids) == 50


async def test_one_commit_of_many_events_with_retries_among_them_gives_each_its_own_id(store, commits):
    # One turn of the loop: one commit of 80 rows, written several rows per INSERT (store.INSERT_ROWS), where each
    # of 25 bodies arrives 3 or 4 times, so a retry often sits in the same statement as its original.
    bodies = [b'{"n":%d}' % (n % 25) for n in range(80)]
    events = await asyncio.gather(*(store.append(record({"n": n % 25}, body=body)) for n, body in enumerate(bodies)))
    assert commits == [80] and 80 > store_rows.INSERT_ROWS
    assert len({event.id for event in events}) == 80
    first_id: dict[bytes, int] = {}
    for event, body in zip(events, bodies, strict=True):
        assert store.get(event.id).body == body  # the id answered is the row that holds this body
        assert event.duplicate_of == first_id.get(body)  # None for an original, else the first one's id
        first_id.setdefault(body, event.id)
    assert store.count() == 25



@pytest.fixture
def commits(monkeypatch) -> list[int]:
    """The number of events in each commit of the writer."""
    sizes: list[int] = []
    original = EventStore._commit

    def observed(self, connection, batch, *rest):
        sizes.append(len(batch))
        return original(self, connection, batch, *rest)

    monkeypatch.setattr(EventStore, "_commit", observed)
    return sizes


@pytest.fixture
def long_gathering(monkeypatch) -> None:
    """A gathering writer that would wait far longer than any test: only what ends a wait by design ends it."""
    monkeypatch.setattr(store_writer, "GATHER_QUIET", 60.0)
    monkeypatch.setattr(store_writer, "GATHER_WINDOW", 60.0)
    monkeypatch.setattr(store_writer, "STREAM_GAP", 60.0)


async def test_a_stream_of_senders_commits_together_across_turns_of_the_loop(store, commits, long_gathering):
    # 4 senders answered together send their next events over several turns of the loop: the writer, holding fewer
    # than the 4 of the previous commit, keeps taking them instead of committing the first one alone.
    await asyncio.gather(*(store.append(record(message(f"m{i}"))) for i in range(4)))
    first = asyncio.ensure_future(store.append(record(message("a"))))
    await asyncio.sleep(0.05)  # several turns: the first is with the writer
    later = [asyncio.ensure_future(store.append(record(message(text)))) for text in ("b", "c")]
    await asyncio.sleep(0.05)
    assert not first.done()  # still gathering (the long window), so not answered before its commit
    await asyncio.to_thread(store.on_writer, lambda _connection: None)  # anything but an append ends the wait
    events = await asyncio.wait_for(asyncio.gather(first, *later), timeout=10)
    assert commits == [4, 3]
    assert ids(events) == [5, 6, 7]


async def test_a_lone_event_is_committed_at_once(store, commits, long_gathering, monkeypatch):
    await store.append(record(message("one sender")))
    # The previous commit held one event, as many as in hand now: nothing to wait for.
    await asyncio.wait_for(store.append(record(message("its next one"))), timeout=10)
    await asyncio.gather(*(store.append(record(message(f"m{i}"))) for i in range(4)))
    # After a quiet moment (no stream) the first event does not wait for the others of the previous commit.
    monkeypatch.setattr(store_writer, "STREAM_GAP", 0.0)
    await asyncio.wait_for(store.append(record(message("after a quiet moment"))), timeout=10)
    assert commits == [1, 1, 4, 1]


async def test_close_ends_a_gathering_wait_and_commits_what_it_holds(store, commits, long_gathering):
    await asyncio.gather(*(store.append(record(message(f"m{i}"))) for i in range(4)))
    pending = asyncio.ensure_future(store.append(record(message("last"))))
    await asyncio.sleep(0.05)  # with the writer, gathering
    await asyncio.wait_for(asyncio.to_thread(store.close), timeout=10)
    event = await asyncio.wait_for(pending, timeout=10)
    assert event.id == 5 and commits == [4, 1]
    with sqlite3.connect(store.path) as other:
        assert other.execute("SELECT count(*) FROM events").fetchone()[0] == 5

async def test_concurrent_appends_share_a_commit(store, monkeypatch):
    batch_sizes: list[int] = []
    original = EventStore._commit
    release = threading.Event()

    def observed(self, connection, batch, *rest):
        # Hold the first commit until every append is queued, as a slow fsync would under load.
        release.wait(timeout=10)
        batch_sizes.append(len(batch))
        original(self, connection, batch, *rest)

    monkeypatch.setattr(EventStore, "_commit", observed)
    pending = [asyncio.ensure_future(store.append(record(message(f"m{i}")))) for i in range(40)]
    await asyncio.sleep(0)  # every append has queued its record
    release.set()
    events = await asyncio.wait_for(asyncio.gather(*pending), timeout=10)
    assert sum(batch_sizes) == 40
    assert len(batch_sizes) <= 2  # the first record alone at most, then all the rest together
    assert sorted(ids(events)) == list(range(1, 41))


async def test_no_answer_before_commit(store, monkeypatch):
    # At the moment the answers are released, another connection must already see the rows: committed.
    visible_when_answered: list[int] = []
    original = store_writer._settle_on_loops

    def checked(batch, results):
        with sqlite3.connect(store.path) as other:
            visible_when_answered.append(other.execute("SELECT count(*) FROM events").fetchone()[0])
        original(batch, results)

    monkeypatch.setattr(store_writer, "_settle_on_loops", checked)
    await store.append(record(message("x")))
    assert visible_when_answered == [1]


async def test_a_bad_record_fails_alone(store, monkeypatch):
    release = threading.Event()
    original = EventStore._commit

    def held(self, connection, batch, *rest):
        release.wait(timeout=10)
        original(self, connection, batch, *rest)

    monkeypatch.setattr(EventStore, "_commit", held)
    good = [record(message(f"good{i}")) for i in range(5)]
    bad = dataclasses.replace(record(message("bad")), received_at=datetime(2026, 1, 1))  # naive: refused
    tasks = [asyncio.ensure_future(store.append(r)) for r in [good[0], good[1], bad, good[2], good[3], good[4]]]
    await asyncio.sleep(0)
    release.set()
    results = await asyncio.gather(*tasks, return_exceptions=True)
    assert isinstance(results[2], ValueError)
    assert [r.payload["event"]["Message"]["conversation"] for i, r in enumerate(results) if i != 2] == [
        "good0", "good1", "good2", "good3", "good4"]
    assert store.count() == 5


async def test_newest_and_keyset_pages(store):
    for i in range(25):
        await store.append(record(message(f"m{i}")))
    assert ids(store.newest(10)) == list(range(25, 15, -1))
    pages, before = [], None
    while True:
        page = store.page_before(before, 10) if before is not None else store.newest(10)
        if not page:
            break
        pages.append(ids(page))
        before = page[-1].id
    assert [len(p) for p in pages] == [10, 10, 5]
    assert sum(pages, []) == list(range(25, 0, -1))
    assert store.newest(0) == []


async def fill_mixed(store):
    rows = [
        record(message("hello world", "A1"), kind="Message", message_ids=("A1",)),
        record({"type": "ReadReceipt"}, kind="ReadReceipt", message_ids=("A1", "A2")),
        record(message("unsigned hello", "A3"), kind="Message", verdict=Verdict.UNSIGNED, rejected=True),
        record({"type": "DeliveryCallback", "messageId": "A2"}, kind="Delivery", message_ids=("A2",)),
        record(None, body=b"\x00\xffgarbage", kind="unknown", verdict=Verdict.NO_KEY, rejected=True),
        record(message("goodbye", "A4"), kind="Message", verdict=Verdict.INVALID),
    ]
    return [await store.append(r) for r in rows]


async def test_filters_and_count(store):
    await fill_mixed(store)
    assert ids(store.newest(10, kind="Message")) == [6, 3, 1]
    assert store.count(kind="Message") == 3
    assert ids(store.newest(10, verdict=Verdict.VALID)) == [4, 2, 1]
    assert ids(store.newest(10, verdict="unsigned")) == [3]
    assert ids(store.newest(10, rejected=True)) == [5, 3]
    assert ids(store.newest(10, rejected=False)) == [6, 4, 2, 1]
    assert ids(store.newest(10, kind="Message", rejected=False)) == [6, 1]
    assert ids(store.page_before(6, 10, kind="Message")) == [3, 1]
    assert store.count() == 6
    assert store.count(kind="nothing") == 0
    assert store.kinds() == ["Delivery", "Message", "ReadReceipt", "unknown"]


async def test_full_text_search(store):
    await fill_mixed(store)
    assert ids(store.newest(10, search="hello")) == [3, 1]
    assert ids(store.newest(10, search="hel")) == [3, 1]  # the last word is a prefix, as you type
    assert ids(store.newest(10, search="hello world")) == [1]
    assert ids(store.newest(10, search="hello", rejected=False)) == [1]
    assert ids(store.page_before(3, 10, search="hello")) == [1]
    assert store.count(search="hello") == 2
    assert store.count(search="hello", kind="Message", verdict="valid") == 1
    assert store.count(search="absent") == 0
    assert ids(store.newest(10, search="   ")) == [6, 5, 4, 3, 2, 1]  # blank search means no search


@pytest.mark.parametrize("query", ['"', "AND", "OR NOT", "a*b", "NEAR(x y)", "col:x", "(", "^", "-x", "'"])
async def test_search_syntax_is_literal(store, query):
    await store.append(record(message("plain")))
    assert store.count(search=query) == 0
    assert store.newest(5, search=query) == []


async def test_search_finds_form_and_escaped_text(store):
    form_payload = {"type": "Message", "event": {"Message": {"conversation": "olá mundo"}}}
    form_body = b"instanceName=x&jsonData=%7B%22type%22%3A%22Message%22%2C%22event%22%3A%7B%22Message%22%3A%7B%22conversation%22%3A%22ol%C3%A1+mundo%22%7D%7D%7D"
    await store.append(record(form_payload, body=form_body))
    escaped_payload = {"type": "Message", "text": "café"}
    await store.append(record(escaped_payload, body=json.dumps(escaped_payload).encode()))  # "caf\u00e9"
    assert ids(store.newest(5, search="olá mundo")) == [1]
    assert ids(store.newest(5, search="café")) == [2]
    assert store.get(1).payload == form_payload
    assert store.get(1).body == form_body
    assert store.get(2).payload == escaped_payload


async def test_find_by_message_id(store):
    await fill_mixed(store)
    assert ids(store.find_by_message_id("A1")) == [1, 2]
    assert ids(store.find_by_message_id("A2")) == [2, 4]
    assert store.find_by_message_id("nope") == []


async def test_export_filtered_jsonl(store, tmp_path):
    await fill_mixed(store)
    out = io.StringIO()
    assert store.export_jsonl(out, kind="Message") == 3
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [line["id"] for line in lines] == [1, 3, 6]  # oldest first, like a log
    assert lines[0]["payload"] == message("hello world", "A1")
    assert lines[1]["verdict"] == "unsigned" and lines[1]["rejected"] is True
    path = tmp_path / "export.jsonl"
    assert store.export_jsonl(path, rejected=True) == 2
    exported = [json.loads(line) for line in path.read_text().splitlines()]
    assert exported[1]["body"] is None
    assert exported[1]["body_base64"] == "AP9nYXJiYWdl"  # the binary body, byte for byte
    assert store.export_jsonl(io.StringIO(), search="absent") == 0


async def test_retention_keeps_the_newest(tmp_path):
    with EventStore(tmp_path / "r.sqlite3", retention=3) as capped:
        for i in range(7):
            await capped.append(record(message(f"m{i}", f"ID{i}"), message_ids=(f"ID{i}",)))
        assert ids(capped.newest(10)) == [7, 6, 5]
        assert capped.count() == 3
        assert capped.count(search="m1") == 0  # the search index forgets deleted rows too
        assert capped.find_by_message_id("ID1") == []
        assert ids(capped.find_by_message_id("ID6")) == [7]
    # Reopening with a smaller cap trims at once; ids keep counting up after deletions.
    with EventStore(tmp_path / "r.sqlite3", retention=1) as smaller:
        assert ids(smaller.newest(10)) == [7]
        assert (await smaller.append(record(message("new")))).id == 8
        assert smaller.count() == 1
    with sqlite3.connect(tmp_path / "r.sqlite3") as raw:
        # Raises "database disk image is malformed" if the deletes left the search index out of step.
        raw.execute("INSERT INTO events_fts(events_fts) VALUES('integrity-check')")


async def test_events_survive_reopening(tmp_path):
    path = tmp_path / "persist.sqlite3"
    with EventStore(path) as first:
        written = await first.append(record(message("kept")))
    with EventStore(path) as second:
        assert second.get(written.id) == written
        assert second.count(search="kept") == 1


def test_default_path_is_in_the_data_dir(monkeypatch, tmp_path):
    monkeypatch.setenv(DATA_DIR_ENV, str(tmp_path / "somewhere"))
    with EventStore() as default:
        assert default.path == tmp_path / "somewhere" / "events.sqlite3"
        assert default.path.exists()
        assert default.path.stat().st_mode & 0o077 == 0  # private: events carry people's messages
        with sqlite3.connect(default.path) as raw:
            assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


async def test_closed_store_refuses_work(tmp_path):
    closed = EventStore(tmp_path / "c.sqlite3").open()
    closed.close()
    with pytest.raises(StoreClosed):
        await closed.append(record(message("late")))
    with pytest.raises(StoreClosed):
        closed.newest(1)


async def test_close_commits_what_was_queued(tmp_path):
    path = tmp_path / "drain.sqlite3"
    opened = EventStore(path).open()
    pending = [asyncio.ensure_future(opened.append(record(message(f"m{i}")))) for i in range(20)]
    await asyncio.sleep(0)
    await asyncio.to_thread(opened.close)
    results = await asyncio.wait_for(asyncio.gather(*pending), timeout=10)
    assert len(results) == 20
    with sqlite3.connect(path) as raw:
        assert raw.execute("SELECT count(*) FROM events").fetchone()[0] == 20


async def test_readers_work_from_many_threads(store):
    for i in range(30):
        await store.append(record(message(f"m{i}")))

    def read() -> tuple[int, list[int]]:
        return store.count(), ids(store.newest(5))

    results = await asyncio.gather(*(asyncio.to_thread(read) for _ in range(16)))
    assert results == [(30, [30, 29, 28, 27, 26])] * 16


async def test_bulk_insert_for_bench(store):
    rows = (record(message(f"bulk {i}", f"B{i}"), message_ids=(f"B{i}",)) for i in range(5000))
    assert store.bulk_insert_for_bench(rows, chunk=1000) == 5000
    assert store.count() == 5000
    assert store.count(search="bulk") == 5000
    assert ids(store.find_by_message_id("B4999")) == [5000]
    appended = await store.append(record(message("after")))
    assert appended.id == 5001


def test_refuses_a_newer_schema(tmp_path):
    path = tmp_path / "future.sqlite3"
    with sqlite3.connect(path) as raw:
        raw.execute(f"PRAGMA user_version={store_schema.SCHEMA_VERSION + 1}")
    with pytest.raises(RuntimeError, match="schema"):
        EventStore(path).open()


def test_retention_must_be_positive(tmp_path):
    with pytest.raises(ValueError):
        EventStore(tmp_path / "x.sqlite3", retention=0)


async def test_received_at_round_trips_in_utc(store):
    moment = datetime(2026, 5, 19, 13, 40, 13, 123456, tzinfo=UTC)
    sent = dataclasses.replace(record(message("t")), received_at=moment)
    event = await store.append(sent)
    assert store.get(event.id).received_at == moment
    assert store.get(event.id).received_at.tzinfo is UTC


def indexed_up_to(store: EventStore) -> int:
    with sqlite3.connect(store.path) as raw:
        return raw.execute("SELECT indexed_up_to FROM search_index_state").fetchone()[0]


async def test_search_index_catches_up_when_idle(store):
    for n in range(30):
        await store.append(record(message(f"idle{n}")))
    deadline = asyncio.get_running_loop().time() + 10
    while indexed_up_to(store) < 30:
        assert asyncio.get_running_loop().time() < deadline, "the idle writer never indexed the new rows"
        await asyncio.sleep(0.01)


async def test_search_covers_rows_the_index_has_not_reached(store, monkeypatch):
    # Hold idle indexing back, as a flood would; a search must still see every stored event.
    monkeypatch.setattr(EventStore, "_index_chunk", lambda self, connection: 0)
    for n in range(5):
        await store.append(record(message(f"trailing{n} word")))
    assert indexed_up_to(store) == 0
    monkeypatch.undo()
    assert await asyncio.to_thread(store.count, search="word") == 5
    assert indexed_up_to(store) == 5


async def test_retention_over_unindexed_rows_keeps_the_index_sound(tmp_path, monkeypatch):
    with EventStore(tmp_path / "capped.sqlite3", retention=3) as capped:
        monkeypatch.setattr(EventStore, "_index_chunk", lambda self, connection: 0)
        for n in range(6):
            await capped.append(record(message(f"m{n}")))
        monkeypatch.undo()
        assert await asyncio.to_thread(capped.count, search="m5") == 1
        assert await asyncio.to_thread(capped.count, search="m0") == 0
        with sqlite3.connect(capped.path) as raw:
            raw.execute("INSERT INTO events_fts(events_fts) VALUES('integrity-check')")


async def test_a_schema_1_store_is_upgraded_with_its_rows_searchable(tmp_path):
    path = tmp_path / "old.sqlite3"
    with sqlite3.connect(path) as raw:  # the schema-1 layout: indexing happened in the insert trigger
        raw.executescript(SCHEMA_1)
        raw.execute(
            "INSERT INTO events (received_us, path, headers, body, has_payload, payload, kind, summary, verdict,"
            " rejected, reason, message_ids) VALUES (1, '/s', '{}', CAST('{\"t\": \"legacy text\"}' AS BLOB),"
            " 1, NULL, 'Message', 's', 'valid', 0, NULL, '[]')"
        )
        raw.execute("PRAGMA user_version=1")
    with EventStore(path) as upgraded:
        assert upgraded.count(search="legacy") == 1
        await upgraded.append(record(message("fresh text")))
        assert upgraded.count(search="fresh") == 1
    with sqlite3.connect(path) as raw:
        assert raw.execute("PRAGMA user_version").fetchone()[0] == store_schema.SCHEMA_VERSION
        raw.execute("INSERT INTO events_fts(events_fts) VALUES('integrity-check')")


SCHEMA_1 = """
CREATE TABLE events (
    id INTEGER PRIMARY KEY AUTOINCREMENT, received_us INTEGER NOT NULL, path TEXT NOT NULL, headers TEXT NOT NULL,
    body BLOB NOT NULL, has_payload INTEGER NOT NULL, payload TEXT, kind TEXT NOT NULL, summary TEXT NOT NULL,
    verdict TEXT NOT NULL, rejected INTEGER NOT NULL, reason TEXT, message_ids TEXT NOT NULL
);
CREATE TABLE event_message_ids (message_id TEXT NOT NULL, event_id INTEGER NOT NULL,
    PRIMARY KEY (message_id, event_id)) WITHOUT ROWID;
CREATE VIEW events_search_text AS SELECT id, coalesce(payload, CAST(body AS TEXT)) AS text FROM events;
CREATE VIRTUAL TABLE events_fts USING fts5(text, content='events_search_text', content_rowid='id');
CREATE TRIGGER events_after_insert AFTER INSERT ON events BEGIN
    INSERT INTO events_fts(rowid, text) VALUES (new.id, coalesce(new.payload, CAST(new.body AS TEXT)));
    INSERT OR IGNORE INTO event_message_ids(message_id, event_id) SELECT value, new.id FROM json_each(new.message_ids);
END;
CREATE TRIGGER events_after_delete AFTER DELETE ON events BEGIN
    INSERT INTO events_fts(events_fts, rowid, text) VALUES ('delete', old.id, coalesce(old.payload, CAST(old.body AS TEXT)));
    DELETE FROM event_message_ids WHERE event_id = old.id AND message_id IN (SELECT value FROM json_each(old.message_ids));
END;
"""


def test_a_stored_event_copies_every_field_of_its_record():
    """`stored` spells the fields out (it runs once per event on the writer thread): none may be left behind."""
    from tui.webhooks.events import _RECORD_FIELDS, stored

    original = record({"type": "Message"}, message_ids=("A", "B"))
    event = stored(original, 7, 3)
    assert (event.id, event.duplicate_of) == (7, 3)
    assert {name: getattr(event, name) for name in _RECORD_FIELDS} == {
        name: getattr(original, name) for name in _RECORD_FIELDS
    }


async def test_a_store_with_the_old_message_id_trigger_drops_it_and_keeps_its_index(tmp_path):
    """Schema 3 as first released indexed message ids in an insert trigger on the hot path; opening drops it, and
    the ids it already indexed (past the search watermark too) and the new ones are all found."""
    path = tmp_path / "old.sqlite3"
    with EventStore(path) as store:
        pass
    with sqlite3.connect(path) as raw:
        raw.execute(
            "CREATE TRIGGER events_after_insert AFTER INSERT ON events BEGIN INSERT OR IGNORE INTO"
            " event_message_ids(message_id, event_id) SELECT value, new.id FROM json_each(new.message_ids); END"
        )
        raw.execute(
            "INSERT INTO events (received_us, path, headers, body, has_payload, payload, kind, summary, verdict,"
            " rejected, reason, message_ids) VALUES (1, '/s', '{}', X'', 0, NULL, 'Message', 's', 'valid', 0, NULL,"
            " '[\"OLD\"]')"
        )
    with EventStore(path) as store:
        await store.append(record({"type": "Message"}, message_ids=("OLD", "NEW")))
        assert ids(store.find_by_message_id("OLD")) == [1, 2]
        assert ids(store.find_by_message_id("NEW")) == [2]
    with sqlite3.connect(path) as raw:
        assert raw.execute("SELECT count(*) FROM sqlite_master WHERE name = 'events_after_insert'").fetchone()[0] == 0
