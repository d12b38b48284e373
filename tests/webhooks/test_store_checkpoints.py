"""Checkpoints run beside the writer, never inside a commit: the WAL still reaches the database file while events
arrive and once they stop, a reader holding an old snapshot only postpones it, and a WAL that a flood keeps from
starting over is finished by the writer between two transactions. The database file alone (SQLite's `immutable`
view, which ignores the WAL) shows what has been checkpointed."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import threading
from pathlib import Path

from tests.webhooks.conftest import record, until
from tui.webhooks import store_writer
from tui.webhooks.store import EventStore

WAIT = 30.0  # generous bound for every condition below; each normally holds within a fraction of a second
BIG = 64 * 1024  # 16 pages of WAL per event: 100 of them are past SQLite's default auto-checkpoint (1,000 pages)


def in_database_file(path: Path) -> int:
    """Events in the database file itself, the WAL ignored: what checkpoints have copied so far (-1 while a
    checkpoint is half-way: the file alone is consistent only between two of them)."""
    view = sqlite3.connect(f"file:{path}?immutable=1", uri=True)
    try:
        return view.execute("SELECT count(*) FROM events").fetchone()[0]
    except sqlite3.OperationalError:  # not even the schema has been checkpointed yet
        return 0
    except sqlite3.DatabaseError:
        return -1
    finally:
        view.close()


def big(seed: int) -> dict:
    return {"type": "Message", "event": {"Message": {"conversation": f"{seed} " + "x" * BIG}}}


async def test_the_writer_never_checkpoints_inside_a_commit(tmp_path, monkeypatch):
    monkeypatch.setattr(store_writer, "CHECKPOINT_INTERVAL", 3600.0)  # the checkpointer waits past this test
    with EventStore(tmp_path / "events.sqlite3") as store:
        setting: list[int] = []
        store.on_writer(lambda connection: setting.append(connection.execute("PRAGMA wal_autocheckpoint").fetchone()[0]))
        assert setting == [0]
        for seed in range(100):
            await store.append(record(big(seed)))
        assert store.count() == 100
        assert in_database_file(store.path) == 0  # 1,600 pages of WAL, none copied by a commit
    assert in_database_file(store.path) == 100  # closing checkpoints everything


async def test_the_wal_reaches_the_database_file_while_events_arrive_and_after(store):
    for seed in range(100):
        await store.append(record(big(seed)))
    await until(lambda: in_database_file(store.path) == 100 and store.checkpoints >= 1, "the checkpointer to copy all")
    await store.append(record(big(100)))  # after a quiet moment: checkpointed again
    await until(lambda: in_database_file(store.path) == 101, "the checkpoint after the last event")


async def test_a_reader_holding_an_old_snapshot_postpones_the_checkpoint_but_no_answer(store, monkeypatch):
    monkeypatch.setattr(store_writer, "CHECKPOINT_INTERVAL", 0.01)
    await store.append(record(big(0)))
    await until(lambda: in_database_file(store.path) == 1 and store.checkpoints >= 1, "the first checkpoint")
    reader = sqlite3.connect(store.path, isolation_level=None, check_same_thread=False)
    try:
        reader.execute("BEGIN")
        assert reader.execute("SELECT count(*) FROM events").fetchone()[0] == 1  # its snapshot: one event
        done = store.checkpoints
        events = await asyncio.wait_for(asyncio.gather(*(store.append(record(big(n))) for n in range(1, 21))), WAIT)
        assert len(events) == 20  # acknowledged (committed to the WAL) while the checkpoint cannot finish
        await asyncio.to_thread(store.on_writer, lambda _connection: None)
        assert in_database_file(store.path) == 1
        assert store.checkpoints == done
    finally:
        reader.execute("COMMIT")
        reader.close()
    await until(lambda: in_database_file(store.path) == 21, "the checkpoint once the reader has gone")


async def test_a_wal_the_checkpointer_cannot_finish_is_finished_by_the_writer(tmp_path, monkeypatch):
    monkeypatch.setattr(store_writer, "CHECKPOINT_INTERVAL", 3600.0)
    with EventStore(tmp_path / "events.sqlite3") as store:
        await store.append(record(big(0)))
        assert in_database_file(store.path) == 0
        # What the checkpointer says when a flood keeps the WAL from starting over (set on the writer, between
        # two transactions, as the checkpointer's flag is read there).
        await asyncio.to_thread(store.on_writer, lambda _connection: setattr(store, "_wal_reset_owed", True))
        assert in_database_file(store.path) == 0
        await store.append(record(big(1)))
        await asyncio.to_thread(store.on_writer, lambda _connection: None)  # after the commit's own upkeep
        assert in_database_file(store.path) == 2
        assert not store._wal_reset_owed


async def test_events_checkpointed_are_the_ones_acknowledged(store, monkeypatch):
    monkeypatch.setattr(store_writer, "CHECKPOINT_INTERVAL", 0.01)
    events = await asyncio.gather(*(store.append(record(big(n))) for n in range(50)))
    await until(lambda: in_database_file(store.path) == 50, "every acknowledged event in the file")
    view = sqlite3.connect(f"file:{store.path}?immutable=1", uri=True)
    try:
        bodies = [json.loads(body) for (body,) in view.execute("SELECT body FROM events ORDER BY id")]
    finally:
        view.close()
    assert [event.id for event in events] == list(range(1, 51))
    assert [body["event"]["Message"]["conversation"].split()[0] for body in bodies] == [str(n) for n in range(50)]


async def test_close_is_not_lost_when_it_lands_between_the_checkpointers_wait_and_its_clear(tmp_path):
    # The interleaving that kept a listener from stopping on SIGTERM (seen under the bench on a busy machine): the
    # checkpointer's pause ends, close() sets "stopping" and wakes it, and only then does the checkpointer clear its
    # wake-up, checkpoint, and wait for a wake-up that never comes, while close() waits for it for ever.
    store = EventStore(tmp_path / "race.sqlite3")
    reached = threading.Event()
    stopping = store._checkpointer_stopping

    class CloseLandsBeforeTheClear(threading.Event):
        def clear(self) -> None:
            if threading.current_thread().name == "event-store-checkpointer" and not reached.is_set():
                reached.set()
                stopping.wait(WAIT)  # close() has begun ...
                self.wait(WAIT)  # ... and has woken the checkpointer: the clear comes after both
            super().clear()

    store._wal_written = CloseLandsBeforeTheClear()
    store.open()
    await store.append(record({"type": "Message", "event": {"Message": {"conversation": "hi"}}}))
    assert await asyncio.to_thread(reached.wait, WAIT), "the checkpointer never paused after the commit"
    closing = threading.Thread(target=store.close, daemon=True)
    closing.start()
    await asyncio.to_thread(closing.join, 5.0)
    assert not closing.is_alive(), "close() hung waiting for the checkpointer"
