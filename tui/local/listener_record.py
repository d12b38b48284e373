"""Which listener serves a profile now: the app and `gateway-tui listen` each write `listeners/<profile>.json` in
the data dir ({pid, host, port, store, account_paths, all_profiles, who}) while they listen and remove it on exit;
the doctor reads it: where the listener is, which store it writes (`listen --all` writes one store for every
profile), and whether it serves the profile on its own `/a/<profile>/` paths (several accounts on one listener)
rather than the old ones. A record whose process is gone (a crash, a kill -9) is stale: `running` ignores it and
removes it. An app starting looks here for a listener it can attach to (`attachable`): another process's, alive and
answering on its port."""

from __future__ import annotations

import contextlib
import json
import os
import socket
from dataclasses import dataclass
from pathlib import Path

from tui.local.paths import data_dir
from tui.api.addresses import http_base


@dataclass(frozen=True)
class ListenerRecord:
    pid: int
    host: str
    port: int
    store: Path | None = None  # the event store it writes; None in a record of an older version
    account_paths: bool = False  # the profile's events must go to `/a/<profile>/`: the old paths are not served
    all_profiles: bool = False  # `listen --all`: every profile in one store, each event naming its account
    who: str = "app"  # "listen" (the command) or "app": said in the app's header and Settings
    forwarding: str | None = None  # where it forwards events (as shown: no user:password, no query); None: nowhere

    @property
    def url(self) -> str:
        return http_base(self.host, self.port)

    def describe(self) -> str:
        """How Settings names it: "`listen`, pid 4242, on :8787, store /…/events-box.sqlite3"."""
        where = f":{self.port}" if self.host in LOOPBACK_HOSTS else f"{self.host}:{self.port}"
        store = f", store {self.store}" if self.store is not None else ""
        forwarding = f", forwarding to {self.forwarding}" if self.forwarding else ""
        return f"`{self.who}`{' --all' if self.all_profiles else ''}, pid {self.pid}, on {where}{store}{forwarding}"


LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1", "0.0.0.0", "::")
ANSWER_TIMEOUT = 0.5
"""Seconds a listener's port gets to accept a connection before it counts as not answering."""


def record_path(profile: str) -> Path:
    return data_dir() / "listeners" / f"{profile}.json"


def write_record(profile: str, host: str, port: int, *, store: Path, account_paths: bool, all_profiles: bool = False,
                 who: str = "app", forwarding: str | None = None) -> Path:
    path = record_path(profile)
    path.parent.mkdir(parents=True, exist_ok=True)
    # Written whole under another name, then renamed: an app looking for a listener never reads half a record.
    partial = path.with_name(f".{path.name}.{os.getpid()}")
    partial.write_text(json.dumps({"pid": os.getpid(), "host": host, "port": port, "store": str(store),
                                   "account_paths": account_paths, "all_profiles": all_profiles, "who": who,
                                   "forwarding": forwarding}))
    partial.replace(path)
    return path


def remove_record(profile: str) -> None:
    path = record_path(profile)
    with contextlib.suppress(OSError, ValueError):
        if json.loads(path.read_text()).get("pid") == os.getpid():  # only our own record
            path.unlink()


def running(profile: str) -> ListenerRecord | None:
    """The profile's listener when its process still runs; a stale record is removed."""
    return _read(record_path(profile))


def serving_all_path(pid: int | None = None) -> Path:
    """The record a `listen --all` writes for itself, beside its profiles' (a profile name never starts with a
    dot): the profiles it serves may change, even to none, and `profile add` must still find it."""
    return data_dir() / "listeners" / f".all.{os.getpid() if pid is None else pid}.json"


def write_serving_all(host: str, port: int, *, store: Path) -> Path:
    path = serving_all_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"pid": os.getpid(), "host": host, "port": port, "store": str(store),
                                "account_paths": True, "all_profiles": True, "who": "listen"}))
    return path


def remove_serving_all() -> None:
    with contextlib.suppress(OSError):
        serving_all_path().unlink()


def serving_all() -> list[ListenerRecord]:
    """Each running `listen --all`, to be told when the profiles change (a stale record is removed)."""
    folder = data_dir() / "listeners"
    found = [_read(path) for path in sorted(folder.glob(".all.*.json"))] if folder.is_dir() else []
    return [record for record in found if record is not None]


def _read(path: Path) -> ListenerRecord | None:
    try:
        data = json.loads(path.read_text())
        store = data.get("store")
        record = ListenerRecord(int(data["pid"]), str(data["host"]), int(data["port"]),
                                Path(store) if isinstance(store, str) and store else None,
                                data.get("account_paths") is True, data.get("all_profiles") is True,
                                "listen" if data.get("who") == "listen" else "app",
                                forwarding if isinstance(forwarding := data.get("forwarding"), str) else None)
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if not _alive(record.pid):
        with contextlib.suppress(OSError):
            path.unlink()
        return None
    return record


def every_running() -> list[ListenerRecord]:
    """Every listener record whose process still runs (stale ones removed), one per record file."""
    folder = data_dir() / "listeners"
    # Not `.all.<pid>.json` (a `listen --all`'s own, serving_all) nor a record being written: profiles only.
    names = sorted(path.stem for path in folder.glob("[!.]*.json")) if folder.is_dir() else []
    return [record for name in names if (record := running(name)) is not None]


def attachable(profile: str) -> ListenerRecord | None:
    """A listener serving `profile` (another process's, or another run's in this one), alive and answering on its
    port, with the store it writes: what an app starting attaches to instead of binding a port of its own (blocking:
    call from a thread). A run's records are written once it listens and removed when it stops."""
    record = running(profile)
    if record is None or record.store is None:
        return None
    return record if answering(record) else None


def answering(record: ListenerRecord, timeout: float = ANSWER_TIMEOUT) -> bool:
    """Whether something accepts connections on the record's port (a listener that is starting or stopping may be
    alive without answering)."""
    host = "127.0.0.1" if record.host in ("0.0.0.0", "") else "::1" if record.host == "::" else record.host
    try:
        with socket.create_connection((host.strip("[]"), record.port), timeout=timeout):
            return True
    except OSError:
        return False


def alive(record: ListenerRecord) -> bool:
    """Whether the record's process still runs (no connection made: cheap enough to ask twice a second)."""
    return _alive(record.pid)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
