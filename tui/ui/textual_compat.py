"""Every use of a private Textual name, in one place.

Textual is pinned to one exact version (pyproject.toml). What the app needs and Textual offers no public API for is
reached here only, one named function or class per need, each saying why it is needed and what public API is
missing; tests/ui/test_textual_compat.py has a test per shim that fails when Textual changes what the shim relies
on, and another that no private Textual name appears anywhere else in tui/ or tests/.

At import the installed Textual is checked against the pin: a different version stops the app with both versions
named, so that an upgrade is a deliberate act that re-checks every shim below (and the snapshots).

Upgrading Textual: move the pin, run tests/ui/test_textual_compat.py, fix or drop each shim that fails, then run the
snapshot and key tests (tests/app/test_snapshots.py, test_keys.py, test_typing_in_forms.py, test_tmux.py).
"""

from __future__ import annotations

import re
import types
from collections.abc import Awaitable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

import textual
from textual import events
from textual.app import App
from textual.cache import LRUCache
from textual.geometry import Size
from textual.reactive import Reactive
from textual.scroll_view import ScrollView
from textual.widgets import DataTable, Input

if TYPE_CHECKING:
    from textual.driver import Driver
    from textual.notifications import Notification

__all__ = [
    "FinishBeforeShutdown",
    "FooterKey",
    "FreedCachesTable",
    "TextualVersionMismatch",
    "alt_digits_driver",
    "check_textual_version",
    "character_key_name",
    "clear_render_caches",
    "follow_virtual_size",
    "inputs_lay_out_only_when_their_size_follows_their_text",
    "installed_textual_version",
    "notifications_of",
    "pinned_textual_version",
    "virtual_size_without_layout",
    "write_to_terminal",
]

_PROJECT = "gateway-tui"
_PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"
_PIN = re.compile(r"^textual\s*==\s*([^\s;,]+)")
_OUR_NAME = re.compile(rf'^name = "{_PROJECT}"$', re.MULTILINE)
_DEPENDENCY = re.compile(r'^\s*"([^"]+)",?\s*(?:#.*)?$', re.MULTILINE)


# -- the version check ---------------------------------------------------------------------------------------------

class TextualVersionMismatch(RuntimeError):
    """The installed Textual is not the version the shims of this module were checked against."""


def pinned_textual_version() -> str:
    """The Textual version pyproject.toml pins (`"textual==8.2.8",` in `[project] dependencies`); from the installed
    package's metadata when run from a wheel, which has no pyproject.toml beside it. Read with a pattern, not a TOML
    parser: this runs at every start."""
    text = _PYPROJECT.read_text(encoding="utf-8") if _PYPROJECT.is_file() else ""
    if _OUR_NAME.search(text):
        dependencies = [match.group(1) for match in _DEPENDENCY.finditer(text)]
    else:
        from importlib.metadata import PackageNotFoundError, requires

        try:
            dependencies = requires(_PROJECT) or []
        except PackageNotFoundError:
            dependencies = []
    for dependency in dependencies:
        if match := _PIN.match(dependency.strip()):
            return match.group(1)
    raise TextualVersionMismatch(f"{_PROJECT} pins no exact Textual version (\"textual==X.Y.Z\" in pyproject.toml): "
                                 "the shims in tui/ui/textual_compat.py are checked against one version only")


def installed_textual_version() -> str:
    """The installed Textual's version, from its `textual-X.Y.Z.dist-info` beside the package: what
    importlib.metadata would find, without importing it at every start (~10 ms); through it when not found so."""
    found = [path.name.removeprefix("textual-").removesuffix(".dist-info")
             for path in Path(textual.__file__).resolve().parent.parent.glob("textual-*.dist-info")]
    if len(found) == 1:
        return found[0]
    from importlib.metadata import version

    return version("textual")


def check_textual_version(installed: str, pinned: str) -> None:
    """Stop when the installed Textual is not the pinned one: every shim below relies on that version's insides."""
    if installed != pinned:
        raise TextualVersionMismatch(
            f"{_PROJECT} needs Textual {pinned} (pinned in pyproject.toml) but Textual {installed} is installed. "
            f"Run `uv sync` to install {pinned}; to move to {installed}, re-check every shim in "
            "tui/ui/textual_compat.py (tests/ui/test_textual_compat.py) and then move the pin.")


check_textual_version(installed_textual_version(), pinned_textual_version())


# -- the footer's keys ---------------------------------------------------------------------------------------------

def _footer_key_class() -> type[Any]:
    """Textual's Footer draws each key as a `FooterKey`, which `textual.widgets` does not export (it lives in the
    private `textual.widgets._footer`). The app's footer (tui.ui.widgets.footer) builds its own row of them to fit
    80 columns, and tests query them."""
    from textual.widgets._footer import FooterKey

    return FooterKey


if TYPE_CHECKING:
    from textual.widgets._footer import FooterKey
else:
    FooterKey = _footer_key_class()


# -- notifications -------------------------------------------------------------------------------------------------

def notifications_of(app: App[Any]) -> list[Notification]:
    """The notifications (toasts) the app shows now, oldest first. Textual keeps them in `App._notifications` and has
    no public way to read them back (`notify` adds, `clear_notifications` empties); the tests read them to check what
    the user was told."""
    return list(app._notifications)


# -- DataTable render caches ---------------------------------------------------------------------------------------

_RENDER_CACHES = ("_row_render_cache", "_cell_render_cache", "_row_renderable_cache", "_line_cache", "_offset_cache",
                  "_ordered_row_cache")
"""The DataTable's LRU caches of rendered rows, cells and lines (Textual 8.2.8), emptied by its `_clear_caches`."""


def unlink_render_caches(table: DataTable[Any]) -> None:
    """Break the links of the table's LRU caches before they are emptied.

    Textual's LRUCache keeps its entries on a circular linked list (each entry `[prev, next, key, value]`); its
    `clear()` drops the list whole, so every line, row and cell the table had rendered becomes cyclic garbage that
    only a collector pass frees. Under a flow of events (500 a second, bench/fleet.py) that was ~20,000 objects a
    second, walked by a full pass (25-200 ms, a typed key waiting behind it) every ~3 s; unlinked first, reference
    counting frees them at once. Textual has no public handle on these caches (`DataTable` attributes, `LRUCache._cache`)."""
    for name in _RENDER_CACHES:
        cache = getattr(table, name)
        if isinstance(cache, LRUCache):
            for link in cache._cache.values():
                link.clear()


def clear_render_caches(table: DataTable[Any]) -> None:
    """Empty the table's render caches now (through `FreedCachesTable`, freed at once). After `DataTable.sort()` the
    caches are keyed on an update count that will not come back, and nothing public empties them without also
    dropping the rows (`clear()`) or restyling the table (`notify_style_update()`, which leaves the offset and
    row-order caches)."""
    table._clear_caches()


def virtual_size_without_layout() -> Reactive[Size]:
    """For a scrolling widget's class body, `virtual_size = virtual_size_without_layout()` with a watcher that calls
    `follow_virtual_size`: its content growing or shrinking (its virtual size) lays the screen out only when its own
    size follows it (`height: auto`). Textual's `virtual_size` reactive lays the whole screen out at each change, for
    the scrollbars' sake, though a list of fixed height keeps its place whatever its rows. The events panel and the
    chat list grow by a row at each redraw under a flow of events: a full layout of a busy main screen each, 23-40
    ms, a typed key waiting behind it (bench/fleet.py). Textual has no public way to change a widget's virtual size
    without a layout."""
    return Reactive(Size(0, 0), layout=False)


def follow_virtual_size(widget: ScrollView, size: Size) -> None:
    """The watcher's work: a layout when the widget's size follows its content, else its scrollbars set to the new
    size (`_scroll_update`, what Textual runs after a layout; a scrollbar appearing or going still lays out, by
    that reactive's own) and a repaint."""
    if widget.styles.auto_dimensions:
        widget.refresh(layout=True)
    elif widget.is_mounted:
        widget._scroll_update(size)
        widget.refresh()


class FreedCachesTable(DataTable[Any]):
    """A DataTable whose emptied render caches (`clear`, a sort, a resize) are freed at once (`unlink_render_caches`).
    Textual empties them in the private `DataTable._clear_caches`, which has no public hook.

    And whose `remove_row` does not lay the whole screen out when the table's size is not its content's: Textual's
    asks for a layout of the screen at each removal (`refresh(layout=True)`), though a table of fixed height (the
    events panel's, `1fr`) keeps its size whatever its rows; the virtual size, which does follow them, is measured
    on the table's next idle and sets the scrollbars (`virtual_size_without_layout`). The events panel removes its
    oldest rows at every redraw under a flow of events: a full layout of a busy main screen, 27-40 ms, a few times
    a second, a typed key waiting behind each (bench/fleet.py)."""

    _removing_row = False
    virtual_size = virtual_size_without_layout()

    def watch_virtual_size(self, size: Size) -> None:
        follow_virtual_size(self, size)

    def _clear_caches(self) -> None:
        unlink_render_caches(self)
        super()._clear_caches()

    def remove_row(self, row_key: Any) -> None:
        self._removing_row = not self.styles.auto_dimensions
        try:
            super().remove_row(row_key)
        finally:
            self._removing_row = False

    def refresh(self, *regions: Any, repaint: bool = True, layout: bool = False, recompose: bool = False) -> Self:
        return super().refresh(*regions, repaint=repaint, layout=layout and not self._removing_row,
                               recompose=recompose)


# -- typing ---------------------------------------------------------------------------------------------------------

def inputs_lay_out_only_when_their_size_follows_their_text() -> None:
    """Textual's Input sets its virtual size (its text's width) at each change of its value, and `virtual_size` is
    a reactive that lays the whole screen out: a full layout at every typed key (~5 ms on a quiet main screen, 27-40
    ms on a busy one at 120×40 under a flow of events: bench/fleet.py), twice when the next layout sets it back to
    the field's own size. An Input's size follows its text only when its width or height is auto, which
    `Input._watch_value` lays out by itself; otherwise the virtual size only bounds its horizontal scroll, read
    when the cursor moves. So Input's `virtual_size` is declared again without `layout=True` (a repaint).
    Textual offers no public way to set a widget's virtual size without a layout. Idempotent; run at import."""
    if not Input.__dict__.get("virtual_size"):
        descriptor: Reactive[Size] = Reactive(Size(0, 0), layout=False)
        descriptor.__set_name__(Input, "virtual_size")
        type.__setattr__(Input, "virtual_size", descriptor)  # the class's own, over Widget's (a descriptor, not a Size)


inputs_lay_out_only_when_their_size_follows_their_text()


# -- shutdown ------------------------------------------------------------------------------------------------------

class FinishBeforeShutdown(App[Any]):
    """An app that finishes its own work (`before_shutdown`) before Textual closes its widgets.

    Textual's test harness (`App.run_test`) and `App.run_async` shut an app down through the private
    `App._shutdown`, not through `App.exit()`, and nothing public runs before `_shutdown` closes every screen: no
    event, no hook. The app waits there for a section still being mounted (tui.ui.app.GatewayApp)."""

    def before_shutdown(self) -> Awaitable[None]:
        """Awaited before Textual closes the widgets. Override it."""
        return _done()

    async def _shutdown(self) -> None:
        await self.before_shutdown()
        await super()._shutdown()


async def _done() -> None:
    return None


# -- alt+digit in real terminals -----------------------------------------------------------------------------------

_ALT_DIGITS = frozenset(f"\x1b{digit}" for digit in "0123456789")


def _alt_digits_parser() -> type[Any]:
    """Textual's escape-sequence parser, reading ESC+digit as alt+digit.

    xterm, GNOME Terminal, iTerm2 with "Esc+" and tmux at its default settings send ESC+digit for alt+1..9. Textual's
    table of sequences (`textual._ansi_sequences.ANSI_SEQUENCES_KEYS`) maps them to the characters macOS's Option key
    types (`\\x1b2` -> "™", for WezTerm on macOS), so alt+2 would type "™" into the focused field instead of switching
    sections. This parser gives those ten sequences the parser's ordinary ESC-prefix reading (alt+digit) and leaves
    the table, shared by every app in the process, as it is. Textual has no public way to change how a sequence is
    read; the parser (`textual._xterm_parser.XTermParser`) and its `_sequence_to_key_events` are private."""
    from textual._xterm_parser import XTermParser

    class AltDigitsParser(XTermParser):
        def _sequence_to_key_events(self, sequence: str, alt: bool = False) -> Iterable[events.Key]:
            if sequence in _ALT_DIGITS:
                return super()._sequence_to_key_events(sequence[1], alt=True)
            return super()._sequence_to_key_events(sequence, alt)

    return AltDigitsParser


def alt_digits_driver(driver_class: type[Driver]) -> type[Driver]:
    """The driver to run the app with: Textual's Linux/macOS terminal driver reading its input with the alt-digits
    parser (`_alt_digits_parser`); any other driver (Windows, a headless test, one chosen by TEXTUAL_DRIVER) as is.

    The driver builds its parser inside `LinuxDriver.run_input_thread` from the module's global `XTermParser`, with no
    way to pass another. Its input loop is run unchanged here with the name bound to the alt-digits parser in a copy
    of the module's globals, for this driver only: Textual's module, and every other app's driver, stay as they are."""
    from textual.drivers import linux_driver

    if driver_class is not linux_driver.LinuxDriver:
        return driver_class
    original = linux_driver.LinuxDriver.run_input_thread
    run_input_thread = types.FunctionType(original.__code__, {**original.__globals__,
                                                               "XTermParser": _alt_digits_parser()},
                                          original.__name__, original.__defaults__, original.__closure__)
    return type("AltDigitsDriver", (linux_driver.LinuxDriver,), {
        "__doc__": "Textual's LinuxDriver, reading ESC+digit as alt+digit (tui.ui.textual_compat.alt_digits_driver).",
        "run_input_thread": run_input_thread,
    })


# -- key names -----------------------------------------------------------------------------------------------------

def character_key_name(character: str) -> str:
    """Textual's key name for a printable character (`/` -> "slash", `?` -> "question_mark", `a` -> "a"): what a
    binding and a keymap call it. Textual's `textual.keys._character_to_key` is private; the public
    `key_to_character` goes the other way and misses some (`slash`)."""
    from textual.keys import _character_to_key

    return _character_to_key(character)


# -- writing to the terminal ---------------------------------------------------------------------------------------

def write_to_terminal(app: App[Any], text: str) -> None:
    """Write an escape sequence of our own to the terminal (a desktop notification's OSC 9/99/777): Textual writes
    its bell and clipboard sequences through the driver (`App.bell`, `App.copy_to_clipboard`) and has no public way
    to write another. Nothing when headless (tests) or before the driver exists, as `App.bell`."""
    driver = app._driver
    if not app.is_headless and driver is not None:
        driver.write(text)
