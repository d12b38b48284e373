"""Privacy and damage: store files 0600 (existing ones too), exports 0600 and strict JSON, a damaged store refused
with a message that names the file, and never touched."""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
import os
import sqlite3
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from tests.webhooks.conftest import record
from tui.webhooks.events import strict_json
from tui.webhooks.store import EventStore
from tui.webhooks.store_faults import StoreUnusable


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tui", *args], capture_output=True, text=True, timeout=60)


async def test_store_and_its_wal_and_shm_are_made_private_existing_ones_too(tmp_path):
    path = tmp_path / "events.sqlite3"
    with EventStore(path) as store:
        await store.append(record({"type": "Message"}))
    # Another program keeps the store open, so its -wal and -shm files exist; all three are world-readable, as an
    # older version (or a copy) left them.
    other = sqlite3.connect(path)
    try:
        other.execute("SELECT count(*) FROM events").fetchone()
        names = (path, Path(f"{path}-wal"), Path(f"{path}-shm"))
        for name in names:
            os.chmod(name, 0o644)
        with EventStore(path) as store:
            assert [mode(name) for name in names] == [0o600, 0o600, 0o600]
            await store.append(record({"type": "Message"}))
    finally:
        other.close()


def filled_store(path: Path, events: int = 300) -> None:
    async def fill() -> None:
        with EventStore(path) as store:
            for i in range(events):
                await store.append(record({"type": "Message", "text": f"message {i} " + "x" * 500}))

    asyncio.run(fill())


def damage(path: Path) -> None:
    """Garbage over pages in the middle of a real store (the header and the first pages stay intact)."""
    size = path.stat().st_size
    page = 4096
    assert size > 20 * page
    with open(path, "r+b") as raw:
        for number in range(8, 14):
            raw.seek(number * page)
            raw.write(os.urandom(page // 2) + b"\xff" * (page // 2))


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_damaged_store_is_refused_at_open_named_and_left_untouched(tmp_path):
    path = tmp_path / "events.sqlite3"
    filled_store(path)
    damage(path)
    before = digest(path)
    with pytest.raises(StoreUnusable) as refused:
        EventStore(path).open()
    message = str(refused.value)
    assert str(path) in message and "damaged" in message and "Move it away" in message
    assert "never overwrites or deletes" in message
    assert digest(path) == before  # nothing written, nothing deleted
    assert sorted(p.name for p in tmp_path.iterdir()) == ["events.sqlite3"]


def test_a_file_that_is_not_a_database_is_refused_too(tmp_path):
    path = tmp_path / "events.sqlite3"
    path.write_bytes(os.urandom(8192))
    before = digest(path)
    with pytest.raises(StoreUnusable, match="not an event store"):
        EventStore(path).open()
    assert digest(path) == before


def test_listen_and_events_name_the_damaged_file_without_a_traceback(tmp_path):
    path = tmp_path / "events.sqlite3"
    filled_store(path)
    damage(path)
    before = digest(path)
    listen = cli("listen", "--port", "0", "--db", str(path))
    listed = cli("events", "list", "--db", str(path))
    for result in (listen, listed):
        assert result.returncode == 1
        assert str(path) in result.stderr and "Move it away" in result.stderr
        assert "Traceback" not in result.stderr
    assert digest(path) == before


async def test_exports_are_private_and_strict_json(tmp_path):
    path = tmp_path / "events.sqlite3"
    body = b'{"type":"Message","score":NaN,"limits":[Infinity,-Infinity,1.5]}'
    payload = json.loads(body)  # Python reads NaN/Infinity, as the listener does
    with EventStore(path) as store:
        await store.append(record(payload, body=body))
    exported = tmp_path / "out.jsonl"
    with EventStore(path) as store:
        assert store.export_jsonl(exported) == 1
    assert mode(exported) == 0o600
    line = json.loads(exported.read_text(), parse_constant=lambda name: pytest.fail(f"not strict JSON: {name}"))
    assert line["payload"] == {"type": "Message", "score": "NaN", "limits": ["Infinity", "-Infinity", 1.5]}
    assert line["body"] == body.decode()  # the received bytes, exactly, as a string

    by_cli = tmp_path / "cli.jsonl"
    by_cli.write_text("old content\n")
    os.chmod(by_cli, 0o644)
    result = cli("events", "export", "--db", str(path), "--output", str(by_cli))
    assert result.returncode == 0, result.stderr
    assert mode(by_cli) == 0o600
    assert json.loads(by_cli.read_text(), parse_constant=lambda name: pytest.fail(name))["id"] == 1
    for command in (["events", "list", "--json"], ["events", "show", "1", "--json"]):
        shown = cli(*command, "--db", str(path))
        assert shown.returncode == 0, shown.stderr
        json.loads(shown.stdout, parse_constant=lambda name: pytest.fail(f"not strict JSON: {name}"))


def test_strict_json_keeps_finite_numbers_and_text():
    assert strict_json({"a": 1.5, "b": [math.nan, math.inf, -math.inf], "c": "NaN"}) == (
        '{"a": 1.5, "b": ["NaN", "Infinity", "-Infinity"], "c": "NaN"}'
    )
    assert strict_json({"t": "ação"}) == '{"t": "ação"}'


async def test_a_big_store_is_checked_after_opening_and_stops_taking_events_when_damaged(tmp_path, monkeypatch):
    from tui.webhooks import store as store_module

    path = tmp_path / "events.sqlite3"
    await asyncio.to_thread(filled_store, path)
    damage(path)
    before = digest(path)
    monkeypatch.setattr(store_module, "QUICK_CHECK_AT_OPEN_LIMIT", 0)  # as for a store of a million events
    store = EventStore(path)
    try:
        store.open()
    except StoreUnusable:
        return  # the damage was met while opening: refused at once, also fine
    try:
        deadline = asyncio.get_running_loop().time() + 30
        while not store.health.failing:
            assert asyncio.get_running_loop().time() < deadline, "the background check never reported"
            await asyncio.sleep(0.01)
        assert store.health.appends_failing and "damaged" in store.health.problem and str(path) in str(store.health)
        with pytest.raises(StoreUnusable, match="Move it away"):
            await store.append(record({"type": "Message"}))
    finally:
        store.close()
    assert digest(path) == before
