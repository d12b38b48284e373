"""What the event store says when it cannot do something: its errors, and its health (whether the last write
worked) with the callback that watches it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path


class StoreClosed(RuntimeError):
    pass


class StoreFailing(RuntimeError):
    """A write failed for a reason outside this program (disk full, a lock held too long, an I/O error). The event
    was not stored; the store keeps running and the next write tries again."""


class StoreLocked(StoreFailing):
    """The store could not be opened: another program holds its lock (an open transaction, a copy tool, a second
    writer). Nothing was written; opening again once it lets go works."""


class StoreUnusable(RuntimeError):
    """The store file cannot be used (damaged, not a database, a newer version's schema). The message names the file
    and what to do; the file is never overwritten or deleted."""


@dataclass(frozen=True, slots=True)
class StoreHealth:
    """Whether the last write worked; `problem` is SQLite's own words (e.g. "database or disk is full")."""

    path: Path
    problem: str | None = None
    appends_failing: bool = False  # False while only work nobody waits for (search indexing) fails

    @property
    def failing(self) -> bool:
        return self.problem is not None

    def __str__(self) -> str:
        if self.problem is None:
            return f"store ok — {self.path}"
        return f"store failing: {self.problem} — {self.path}"


HealthCallback = Callable[[StoreHealth], None]
