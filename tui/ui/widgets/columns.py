"""Column widths of a DataTable from the width it has, so narrow terminals (80 columns) keep the columns that
matter (Verdict, Status) and the others give way first.

    COLUMNS = (Column("time", 8), Column("summary", 70, minimum=12, flex=True), Column("verdict", 12))
    widths = fit_columns(table, COLUMNS)   # {"time": 8, "summary": 38, "verdict": 12} at 80 columns

A column with `minimum` below its width may shrink, in `give_way` order (lowest first); the `flex` column also
takes whatever room is left over. Columns without a `minimum` never shrink.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from textual.widgets import DataTable
from textual.widgets.data_table import ColumnKey

SCROLLBAR = 2  # room kept for the vertical scrollbar, shown or not, so widths do not jump when it appears


@dataclass(frozen=True)
class Column:
    key: str
    width: int
    minimum: int | None = None
    give_way: int = 0
    flex: bool = False


def column_widths(available: int, columns: Sequence[Column], *, padding: int = 1) -> dict[str, int]:
    """Each column's width within `available` cells (every column also takes `padding` cells on each side)."""
    widths = {column.key: column.width for column in columns}
    room = available - sum(widths.values()) - 2 * padding * len(columns)
    flexible = next((column for column in columns if column.flex), None)
    if room > 0 and flexible is not None:
        widths[flexible.key] += room
        return widths
    shrinkable = sorted((c for c in columns if c.minimum is not None), key=lambda c: c.give_way)
    for column in shrinkable:
        if room >= 0:
            break
        assert column.minimum is not None
        give = min(widths[column.key] - column.minimum, -room)
        widths[column.key] -= give
        room += give
    return widths


def fit_columns(table: DataTable, columns: Sequence[Column]) -> dict[str, int]:
    """Set the table's column widths for its current width; returns them (by key)."""
    available = table.size.width - SCROLLBAR
    if available <= 0:
        return {column.key: column.width for column in columns}
    widths = column_widths(available, columns, padding=table.cell_padding)
    changed = False
    for key, width in widths.items():
        column = table.columns.get(ColumnKey(key))
        if column is not None and column.width != width:
            column.width = width
            changed = True
    if changed:
        table.refresh(layout=True)
    return widths
