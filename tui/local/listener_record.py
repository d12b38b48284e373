"""Which listener serves a profile now: the app and `gateway-tui listen` each write `listeners/<profile>.json` in
the data dir ({pid, host, port, store, account_paths}) while they listen and remove it on exit; the doctor reads it:
where the listener is, which store it writes (`listen --all` writes one store for every profile), and whether it
serves the profile on its own `/a/<profile>/` paths (several accounts on one listener) rather than the old ones. A
record whose process is gone (a crash, a kill -9) is stale: `running` ignores it and removes it."""

from __future__ import annotations

import contextlib
import json
import os
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
    serves_all: bool = False  # `listen --all`: it serves every profile, and follows `profile add/remove` (SIGHUP)

    @property
    def url(self) -> str:
        return http_base(self.host, self.port)


def record_path(profile: str) -> Path:
    return data_dir() / "listeners" / f"{profile}.json"


def write_record(profile: str, host: str, port: int, *, store: Path, account_paths: bool,
                 serves_all: bool = False) -> Path:
    path = record_path(profile)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"pid": os.getpid(), "host": host, "port": port, "store": str(store),
                                "account_paths": account_paths, "serves_all": serves_all}))
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
                                "account_paths": True, "serves_all": True}))
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
                                data.get("account_paths") is True, data.get("serves_all") is True)
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if not _alive(record.pid):
        with contextlib.suppress(OSError):
            path.unlink()
        return None
    return record


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
