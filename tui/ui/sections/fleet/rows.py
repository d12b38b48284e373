"""The board's cells: the runtime's fleet rows as text, the filter over every column, the sort orders. No widget
here (the section and the tests use it)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime

from tui.core.runtime import FleetRow

KIND_SHORT = {
    "Message": "msg", "ReceivedCallback": "msg", "ReadReceipt": "read", "MessageStatusCallback": "status",
    "DeliveryCallback": "dlv", "ChatPresence": "typing", "PresenceChatCallback": "typing",
    "Connected": "conn", "ConnectedCallback": "conn", "Disconnected": "disc", "DisconnectedCallback": "disc",
}
"""Event kinds in a few letters, for the compact "last event per kind" column."""


@dataclass(frozen=True)
class BoardColumn:
    key: str
    title: str
    text: Callable[[FleetRow, datetime | None], str]
    order: Callable[[FleetRow], tuple[object, ...]]
    """Sort key, ascending; the numeric columns sort the biggest first (their key is negated)."""


def age_text(at: datetime | None, now: datetime | None) -> str:
    """`4s`, `12m`, `3h`, `2d`; `–` when never; `·` in deterministic mode (no wall clock in snapshots)."""
    if at is None:
        return "–"
    if now is None:
        return "·"
    seconds = max(0, int((now - at).total_seconds()))
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


def kinds_text(row: FleetRow, now: datetime | None) -> str:
    """`msg 4s read 1m`: each kind's last event age, newest first, kinds shortened."""
    newest: dict[str, datetime] = {}
    for kind, at in row.last_by_kind:
        short = KIND_SHORT.get(kind, kind[:6].lower())
        if short not in newest or at > newest[short]:
            newest[short] = at
    ordered = sorted(newest.items(), key=lambda pair: pair[1], reverse=True)
    return " ".join(f"{kind} {age_text(at, now)}" for kind, at in ordered) or "–"


def _connection(row: FleetRow, _now: datetime | None) -> str:
    return "● " + row.connection if row.connected else "○ " + row.connection


def _number_or_dash(value: int | None) -> str:
    return "–" if value is None else str(value)


def natural(name: str) -> tuple[object, ...]:
    """`shop-2` before `shop-10`."""
    import re

    return tuple(int(part) if part.isdigit() else part.casefold() for part in re.split(r"(\d+)", name))


COLUMNS: tuple[BoardColumn, ...] = (
    BoardColumn("name", "Name", lambda row, _: row.profile, lambda row: (natural(row.profile),)),
    BoardColumn("number", "Number", lambda row, _: row.number or "–", lambda row: (row.number or "~", natural(row.profile))),
    BoardColumn("dialects", "Dialects", lambda row, _: row.dialects, lambda row: (row.dialects, natural(row.profile))),
    BoardColumn("connection", "Connection", _connection,
                lambda row: (row.connected is not False, row.connection, natural(row.profile))),  # the broken first
    BoardColumn("health", "Webhooks", lambda row, _: row.health, lambda row: (row.health, natural(row.profile))),
    BoardColumn("unread", "Unread", lambda row, _: _number_or_dash(row.unread),
                lambda row: (-(row.unread or 0), natural(row.profile))),
    BoardColumn("rate", "Ev/min", lambda row, _: str(row.per_minute), lambda row: (-row.per_minute, natural(row.profile))),
    BoardColumn("sends", "Sent today", lambda row, _: str(row.sends_today), lambda row: (-row.sends_today, natural(row.profile))),
    BoardColumn("last", "Last event", kinds_text,
                lambda row: (-(row.last_event_at.timestamp() if row.last_event_at else 0), natural(row.profile))),
)
COLUMN_KEYS = tuple(column.key for column in COLUMNS)


def cells(row: FleetRow, now: datetime | None) -> tuple[str, ...]:
    return tuple(column.text(row, now) for column in COLUMNS)


def matches(row: FleetRow, words: str, now: datetime | None) -> bool:
    """Every word of the filter is in some column's text (case does not count), k9s style."""
    haystack = " ".join(cells(row, now)).casefold()
    return all(word in haystack for word in words.casefold().split())


def arranged(rows: Sequence[FleetRow], *, words: str, sort: str, now: datetime | None) -> list[FleetRow]:
    """The rows the board shows: filtered by `words`, sorted by the column `sort`."""
    column = next(column for column in COLUMNS if column.key == sort)
    return sorted((row for row in rows if matches(row, words, now)), key=column.order)
