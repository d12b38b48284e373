"""DataTables whose render caches are freed when emptied, without the garbage collector.

Textual's LRUCache keeps its entries on a circular linked list; its `clear()` drops the list whole, so every line,
row and cell the table had rendered becomes cyclic garbage that only a collector pass frees. The events panel
empties its table's caches on every redraw: under a flow of events (500 a second, bench/fleet.py) that was ~20,000
objects a second, promoted through the young generations and walked by a full pass (25-200 ms, a typed key waiting behind it) every ~3 s. Unlinking the entries first lets reference
counting free them at once. Textual is pinned (8.2.8): the caches are its DataTable's own attributes."""

from __future__ import annotations

from typing import Any

from textual.cache import LRUCache
from textual.widgets import DataTable


def unlink_render_caches(table: DataTable[Any]) -> None:
    """Break the links of the table's LRU caches (each entry is `[prev, next, key, value]`) before they are emptied."""
    for cache in (table._row_render_cache, table._cell_render_cache, table._row_renderable_cache,
                  table._line_cache, table._offset_cache, table._ordered_row_cache):
        if isinstance(cache, LRUCache):
            for link in cache._cache.values():
                link.clear()


class FreedCachesTable(DataTable[Any]):
    """A DataTable whose emptied render caches (`clear`, a sort, a resize) are freed at once (see the module)."""

    def _clear_caches(self) -> None:
        unlink_render_caches(self)
        super()._clear_caches()
