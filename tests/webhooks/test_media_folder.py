"""The media folder's own housekeeping (issue 37, items 4 and 5): a writer killed mid-write leaves a `.part` file that
the next process removes (and counts against the limit while its writer lives); at the limit, keeping one more file
costs no rescan of the folder."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tests import media_files
from tests.webhooks import headless
from tui.webhooks.media import MediaFolder

# A real writer: MediaFolder.keep in a process of its own, whose file handle writes half the bytes, says so, then
# waits on its stdin (forever, for the test: it is killed there).
_STALLED_WRITER = r"""
import os, sys
from pathlib import Path
import tui.webhooks.media as media

real_fdopen = os.fdopen

class Stalled:
    def __init__(self, handle):
        self.handle = handle
    def __enter__(self):
        return self
    def __exit__(self, *exc):
        self.handle.close()
    def write(self, data):
        self.handle.write(data[: len(data) // 2])
        self.handle.flush()
        print("half written", flush=True)
        sys.stdin.read()

media.os.fdopen = lambda fd, mode: Stalled(real_fdopen(fd, mode))
media.MediaFolder(Path(sys.argv[1])).keep(bytes(range(256)) * (int(sys.argv[2]) // 256))
"""


def stalled_writer(folder: Path, size: int) -> subprocess.Popen[str]:
    """A writer process (a session, so a process group, of its own) stopped halfway through writing `size` bytes."""
    writer = subprocess.Popen([sys.executable, "-c", _STALLED_WRITER, str(folder), str(size)], cwd=headless.REPO,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, start_new_session=True)
    assert writer.stdout is not None
    assert writer.stdout.readline() == "half written\n"
    return writer


def parts(folder: Path) -> list[Path]:
    return sorted(folder.glob(".*.part"))


def test_a_writer_killed_mid_write_leaves_a_part_file_the_next_process_removes(tmp_path: Path) -> None:
    folder = tmp_path / "media"
    writer = stalled_writer(folder, 1024 * 1024)
    [part] = parts(folder)
    assert part.stat().st_size == 512 * 1024
    os.killpg(writer.pid, signal.SIGKILL)  # the writer's whole process group, as a kill -9 of the app would
    assert writer.wait() == -signal.SIGKILL
    assert parts(folder) == [part]  # the kill leaves it behind

    keeper = ("import sys\nfrom pathlib import Path\nfrom tui.webhooks.media import MediaFolder\n"
              "MediaFolder(Path(sys.argv[1])).keep(b'another file')\n")
    done = subprocess.run([sys.executable, "-c", keeper, str(folder)], cwd=headless.REPO, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert parts(folder) == []  # its writer is gone: the next process removed it


def test_a_live_writers_part_file_counts_against_the_limit_and_stays(tmp_path: Path) -> None:
    folder_path = tmp_path / "media"
    writer = stalled_writer(folder_path, 8192)  # 4096 bytes written so far
    try:
        folder = MediaFolder(folder_path, limit=6000)
        first = folder.keep(media_files.png(size=(8, 8), color=(1, 0, 0)) + bytes(1000))
        second = folder.keep(media_files.png(size=(8, 8), color=(2, 0, 0)) + bytes(1000))
        # 4096 in the part and two files of ~1.1 KB: past 6000 only with the part counted, so the older file went
        assert not first.path.exists() and second.path.exists()
        assert len(parts(folder_path)) == 1  # its writer is alive: never removed under it
    finally:
        os.killpg(writer.pid, signal.SIGKILL)
        writer.wait()


def test_at_the_limit_keeping_a_file_does_not_rescan_the_folder(tmp_path: Path, monkeypatch) -> None:
    folder = MediaFolder(tmp_path / "media", limit=20 * 1100)
    files = [media_files.png(size=(8, 8), color=(shade, 0, 0)) + bytes(1000) for shade in range(60)]
    kept = [folder.keep(data) for data in files[:20]]
    scans = []
    real_scandir = os.scandir

    def counting_scandir(path):
        scans.append(path)
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", counting_scandir)
    kept += [folder.keep(data) for data in files[20:]]  # 40 more, each past the limit
    assert scans == []
    on_disk = [path for path in (tmp_path / "media").iterdir()]
    assert sum(path.stat().st_size for path in on_disk) <= folder.limit
    assert {path.name for path in on_disk} == {kept_file.path.name for kept_file in kept[-len(on_disk):]}  # newest


def test_a_file_another_process_kept_is_counted_after_it(tmp_path: Path) -> None:
    """Two processes share the folder (the listener, the app fetching a link): each one's count follows the other's
    files, so the folder holds to the limit whoever wrote last."""
    ours, theirs = MediaFolder(tmp_path / "media", limit=5000), MediaFolder(tmp_path / "media", limit=5000)
    files = [media_files.png(size=(8, 8), color=(shade, 0, 0)) + bytes(1000) for shade in range(8)]
    for number, data in enumerate(files):
        (ours if number % 2 else theirs).keep(data)
        assert sum(path.stat().st_size for path in (tmp_path / "media").iterdir()) <= 5000


def test_kept_files_are_private_never_executable_and_unknown_ones_are_bin(tmp_path: Path) -> None:
    folder = MediaFolder(tmp_path / "media")
    stale = folder.where(b"#!/bin/sh\necho unknown to the sniffer\n").path
    stale.parent.mkdir(mode=0o700)
    part = stale.with_name(f".{stale.name}.{os.getpid()}.{threading.get_ident()}.part")  # ours, left executable
    part.write_bytes(b"")
    part.chmod(0o755)
    for data in (b"#!/bin/sh\necho unknown to the sniffer\n", os.urandom(64), media_files.png()):
        kept = folder.keep(data)
        assert kept.path.stat().st_mode & 0o777 == 0o600
    assert stale.suffix == ".bin"
    assert sorted(path.suffix for path in (tmp_path / "media").iterdir() if not path.name.startswith(".")) == [
        ".bin", ".bin", ".png"]


def test_a_file_an_event_needs_or_one_held_for_an_event_is_never_removed_to_hold_the_limit(tmp_path: Path) -> None:
    """An event stored without its inline file's base64 needs the file to rebuild its body (issue 37, item 15): the
    limit removes other files first, and never that one, nor one kept for an event not stored yet."""
    needed: set[str] = set()
    folder = MediaFolder(tmp_path / "media", limit=2500, in_use=needed.__contains__)
    files = [media_files.png(size=(8, 8), color=(shade, 0, 0)) + bytes(1000) for shade in range(6)]
    first = folder.keep(files[0])
    needed.add(first.path.name)  # its event is stored
    held = folder.keep(files[1], hold=True)  # its event is on its way to the store
    for data in files[2:]:
        folder.keep(data)
    assert first.path.exists() and held.path.exists()
    folder.release(held.path.name)  # stored without referring to it (say its body was kept whole)
    folder.keep(media_files.png(size=(8, 8), color=(9, 9, 9)) + bytes(1000))
    assert first.path.exists() and not held.path.exists()


def test_files_events_need_do_not_crowd_out_a_fetched_file(tmp_path: Path) -> None:
    """The limit bounds the files no event needs: a linked file fetched on demand outlives the next inline one even
    when the files events need are past the limit on their own."""
    needed: set[str] = set()
    folder = MediaFolder(tmp_path / "media", limit=2500, in_use=needed.__contains__)
    for shade in range(4):  # 4.4 KB that stored events need
        needed.add(folder.keep(media_files.png(size=(8, 8), color=(shade, 0, 0)) + bytes(1000)).path.name)
    fetched = folder.keep(media_files.png(size=(8, 8), color=(0, 9, 0)) + bytes(1000))
    needed.add(folder.keep(media_files.png(size=(8, 8), color=(0, 0, 9)) + bytes(1000)).path.name)
    assert fetched.path.exists()
    assert all((folder.path / name).exists() for name in needed)


def test_releasing_a_held_file_never_waits_for_a_keep_under_way(tmp_path: Path) -> None:
    """The listener releases a held file on its event loop (the app's UI loop too): that must not wait while another
    thread's keep holds the folder (a rescan of 100,000 files took seconds; here: its check of whether a stored
    event needs a file, blocked until the release has returned)."""
    release_returned = threading.Event()
    checking = threading.Event()

    def in_use(_name: str) -> bool:
        checking.set()
        release_returned.wait(30)  # bounded: the test fails below rather than hanging
        return False

    folder = MediaFolder(tmp_path / "media", limit=1500, in_use=in_use)
    files = [media_files.png(size=(8, 8), color=(shade, 0, 0)) + bytes(1000) for shade in range(3)]
    held = folder.keep(files[0], hold=True)
    folder.keep(files[1])
    keeping = threading.Thread(target=folder.keep, args=(files[2],))  # past the limit: asks in_use under the lock
    keeping.start()
    assert checking.wait(30)
    releasing = threading.Thread(target=lambda: (folder.release(held.path.name), release_returned.set()))
    releasing.start()
    returned = release_returned.wait(10)
    release_returned.set()
    keeping.join(30)
    releasing.join(30)
    assert returned, "release waited for the keep under way"


def test_a_hold_is_undone_when_keeping_its_file_fails(tmp_path: Path, monkeypatch) -> None:
    """A held file is never removed to hold the limit (its event is on its way to the store); when writing it fails,
    there is no event to wait for, and the mark must not outlive the failure (the file, kept later for another
    reason, would never be removed)."""
    folder = MediaFolder(tmp_path / "media", limit=2500)
    files = [media_files.png(size=(8, 8), color=(shade, 0, 0)) + bytes(1000) for shade in range(4)]
    real_write = MediaFolder._write

    def full_disk(self: MediaFolder, path: Path, data: bytes) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(MediaFolder, "_write", full_disk)
    try:
        folder.keep(files[0], hold=True)
    except OSError:
        pass
    else:
        raise AssertionError("the failed write was not reported")
    monkeypatch.setattr(MediaFolder, "_write", real_write)
    first = folder.keep(files[0])  # the same bytes kept later, for no event
    for data in files[1:]:
        folder.keep(data)
    assert not first.path.exists()  # the oldest, held by no one: removed to hold the limit


def test_a_kept_file_is_on_disk_before_keep_returns(tmp_path: Path, monkeypatch) -> None:
    """The store commits an accepted event with synchronous=FULL (it survives a power cut once answered 200), and the
    body it keeps needs the file to be rebuilt: the file's bytes and its name in the folder are flushed to the disk
    before `keep` returns, i.e. before the event is stored and answered."""
    if not Path("/proc/self/fd").is_dir():
        pytest.skip("names an open descriptor's file through /proc")
    synced: list[str] = []
    real_fsync, real_fdatasync = os.fsync, os.fdatasync

    def named(fd: int) -> str:
        return os.readlink(f"/proc/self/fd/{fd}")

    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(named(fd)), real_fsync(fd))[1])
    monkeypatch.setattr(os, "fdatasync", lambda fd: (synced.append(named(fd)), real_fdatasync(fd))[1])
    folder = MediaFolder(tmp_path / "media")
    kept = folder.keep(media_files.png(size=(8, 8), color=(1, 2, 3)) + bytes(1000))
    assert any(name.endswith(".part") for name in synced), "the file's bytes were not flushed before it was named"
    assert synced[-1] == str(folder.path), "the folder's new name was not flushed"
    assert kept.path.exists()
