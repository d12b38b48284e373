"""The board's table: one row per account. The keys (space, `/`, `s`, the bulk actions) are the section's; Enter
is the table's own row selection, which the section takes as "make current". The table keeps its cursor and scroll when the rows are refreshed (`show`)."""

from __future__ import annotations

from collections.abc import Sequence

from textual.widgets import DataTable



class FleetTable(DataTable[str]):

    def __init__(self, **kwargs: object) -> None:
        super().__init__(cursor_type="row", zebra_stripes=True, **kwargs)  # type: ignore[arg-type]
        self._shown: list[tuple[str, tuple[str, ...]]] = []

    @property
    def cursor_name(self) -> str | None:
        """The account under the cursor (None on an empty board)."""
        if not self._shown or not 0 <= self.cursor_row < len(self._shown):
            return None
        return self._shown[self.cursor_row][0]

    def show(self, rows: Sequence[tuple[str, tuple[str, ...]]]) -> None:
        """(name, cells) per row, in order. Only cells that changed are written when the same accounts show in the
        same order; otherwise the rows are replaced and the cursor stays on its account (or its place)."""
        rows = list(rows)
        if [name for name, _ in rows] == [name for name, _ in self._shown]:
            for (name, new), (_, old) in zip(rows, self._shown, strict=True):
                for index, (cell, before) in enumerate(zip(new, old, strict=True)):
                    if cell != before:
                        self.update_cell(name, self._column_keys[index], cell)
            self._shown = rows
            return
        keep = self.cursor_name
        place = self.cursor_row
        self.clear()
        for name, row_cells in rows:
            self.add_row(*row_cells, key=name)
        self._shown = rows
        names = [name for name, _ in rows]
        target = names.index(keep) if keep in names else min(place, len(rows) - 1)
        if rows:
            self.move_cursor(row=max(0, target), animate=False, scroll=False)

    @property
    def _column_keys(self) -> list[str]:
        return [str(key.value) for key in self.columns]
