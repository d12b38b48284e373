"""`events list|show|export` read a store they cannot write (issue 37, item 13): a store on a read-only mount, e.g.
a backup or another machine's disk mounted read-only, is opened read-only (SQLite's mode=ro, else immutable=1) when
it cannot be opened as usual, nothing beside it is written, and what could not be read is said.

Tests run as root, which ignores file modes (chmod a-w) and, for reading, `chattr +i`: neither makes a directory
unwritable for it. A read-only bind mount does, for root too. Each command runs in a private mount namespace
(`unshare -m`) where the store's directory is bind-mounted read-only over itself; nothing outside that process sees
the mount. Where namespaces or mounts are not allowed (an unprivileged container), the tests are skipped, saying so.
"""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.webhooks.conftest import record
from tui.webhooks.store import EventStore

MESSAGE = {"type": "Message", "event": {"Info": {"ID": "3EB0RO"}, "Message": {"conversation": "read me only"}}}
RUN_LIMIT = 60


def _can_mount_read_only(tmp_path: Path) -> str | None:
    """None when a read-only bind mount works here; else why not."""
    if shutil.which("unshare") is None or shutil.which("mount") is None:
        return "no unshare or mount command"
    probe = tmp_path / "probe"
    probe.mkdir()
    script = (f"mount --bind {probe} {probe} && mount -o remount,bind,ro {probe} && "
              f"! touch {probe}/written 2>/dev/null")
    done = subprocess.run(["unshare", "-m", "sh", "-c", script], capture_output=True, timeout=RUN_LIMIT)
    return None if done.returncode == 0 else f"no read-only bind mount here: {done.stderr.decode().strip()}"


def gateway_tui_on_read_only(directory: Path, *args: str) -> tuple[int, str, str]:
    """`gateway-tui ARGS` with `directory` mounted read-only (for that process only)."""
    command = " ".join(shlex.quote(part) for part in (sys.executable, "-m", "tui", *args))
    script = (f"mount --bind {shlex.quote(str(directory))} {shlex.quote(str(directory))} && "
              f"mount -o remount,bind,ro {shlex.quote(str(directory))} && exec {command}")
    done = subprocess.run(["unshare", "-m", "sh", "-c", script], capture_output=True, timeout=RUN_LIMIT)
    return done.returncode, done.stdout.decode(), done.stderr.decode()


@pytest.fixture
def read_only_store(tmp_path: Path) -> Path:
    reason = _can_mount_read_only(tmp_path)
    if reason is not None:
        pytest.skip(reason)
    directory = tmp_path / "mounted"
    directory.mkdir()
    path = directory / "events.sqlite3"

    async def fill() -> None:
        with EventStore(path) as store:
            await store.append(record(MESSAGE, kind="Message", summary="Message: read me only"))

    asyncio.run(fill())
    return path


def _files(directory: Path) -> dict[str, bytes]:
    return {entry.name: entry.read_bytes() for entry in sorted(directory.iterdir())}


def test_events_list_reads_a_store_on_a_read_only_mount(read_only_store: Path) -> None:
    before = _files(read_only_store.parent)
    code, out, err = gateway_tui_on_read_only(read_only_store.parent, "events", "list", "--db", str(read_only_store),
                                              "--json")
    assert (code, err) == (0, ""), err
    [event] = json.loads(out)
    assert (event["id"], event["payload"]) == (1, MESSAGE)
    assert _files(read_only_store.parent) == before


def test_a_search_says_it_finds_only_what_the_index_held(read_only_store: Path) -> None:
    code, out, err = gateway_tui_on_read_only(read_only_store.parent, "events", "list", "--db", str(read_only_store),
                                              "--search", "read")
    assert (code, out) == (0, "")
    # The store was closed before its idle indexing reached the event: the index is behind, and says so.
    assert err.splitlines() == [f"gateway-tui events: {read_only_store} cannot be written: --search finds only the "
                                "events its search index held already", "no events match"]


def test_events_show_and_export_read_it_too(read_only_store: Path) -> None:
    code, out, err = gateway_tui_on_read_only(read_only_store.parent, "events", "show", "1", "--db",
                                              str(read_only_store))
    assert (code, err) == (0, ""), err
    assert "read me only" in out
    code, out, err = gateway_tui_on_read_only(read_only_store.parent, "events", "export", "--db",
                                              str(read_only_store))
    assert (code, err) == (0, ""), err
    assert json.loads(out)["payload"] == MESSAGE


def test_events_kept_only_in_the_wal_are_said_to_be_left_out(read_only_store: Path, tmp_path: Path) -> None:
    """A store copied while its writer ran: the newest events are in its -wal file, which SQLite cannot use
    without writing its -shm index beside it. The store file alone is read, and the command says so."""
    directory = read_only_store.parent
    script = (
        "import asyncio, os, sys\n"
        "from tests.webhooks.conftest import record\n"
        "from tui.webhooks.store import EventStore\n"
        "store = EventStore(sys.argv[1]).open()\n"
        "asyncio.run(store.append(record({'type': 'Message'}, kind='Message', summary='only in the wal')))\n"
        "store._checkpointer_stopping.set()\n"
        "os._exit(0)  # no close: the -wal file keeps the event, as after a crash or a copy taken while running\n"
    )
    subprocess.run([sys.executable, "-c", script, str(read_only_store)], check=True, timeout=RUN_LIMIT,
                   cwd=Path(__file__).parents[2])
    assert Path(f"{read_only_store}-wal").stat().st_size > 0
    os.remove(f"{read_only_store}-shm")  # as a copy of the store and its -wal, without the index of a live writer
    code, out, err = gateway_tui_on_read_only(directory, "events", "list", "--db", str(read_only_store), "--json")
    assert code == 0, err
    assert [event["id"] for event in json.loads(out)] == [1]
    assert err == (f"gateway-tui events: {read_only_store} is read-only and its -wal file cannot be read without "
                   "writing beside it: shown as the store file alone, without the newest events kept only in the "
                   "-wal file\n")


def test_a_store_from_before_the_media_columns_read_only_is_named_older_not_a_crash(tmp_path):
    """Schema 3 gained columns in place (the media kept once): a store written before them, where it cannot be
    brought up to date, is said to be an older version's at the open, instead of `no such column` at the first read
    (found in review)."""
    import sqlite3

    import pytest

    from tui.webhooks.store import EventStore
    from tui.webhooks.store_faults import StoreUnusable

    path = tmp_path / "events.sqlite3"
    with EventStore(path):
        pass
    connection = sqlite3.connect(path)
    connection.execute("DROP INDEX IF EXISTS events_by_media_file")
    connection.execute("ALTER TABLE events DROP COLUMN media_span")
    connection.execute("ALTER TABLE events DROP COLUMN media_file")
    connection.commit()
    connection.close()
    with pytest.raises(StoreUnusable, match="older version of gateway-tui"):
        EventStore(path, read_only=True).open()
