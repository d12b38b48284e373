"""Each shim of tui/ui/textual_compat.py still finds in Textual what it relies on (a private name, its type, what it
does), so a Textual upgrade fails here, by name, before anything else breaks; and no private Textual name is used
anywhere else in tui/ or tests/."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
import textual
from textual.app import App, ComposeResult
from textual.cache import LRUCache
from textual.drivers.headless_driver import HeadlessDriver
from textual.drivers.linux_driver import LinuxDriver
from textual.widgets import DataTable, Footer, Input

from tui.ui import textual_compat
from tui.ui.textual_compat import (
    FinishBeforeShutdown,
    FooterKey,
    FreedCachesTable,
    TextualVersionMismatch,
    alt_digits_driver,
    character_key_name,
    check_textual_version,
    clear_render_caches,
    installed_textual_version,
    notifications_of,
    pinned_textual_version,
    write_to_terminal,
)

REPO = Path(__file__).resolve().parents[2]
COMPAT = REPO / "tui" / "ui" / "textual_compat.py"
THIS = Path(__file__).resolve()


# -- the version check ---------------------------------------------------------------------------------------------

def test_the_pin_is_read_from_pyproject_and_is_the_installed_textual():
    dependencies = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["dependencies"]
    assert f"textual=={pinned_textual_version()}" in dependencies
    assert textual.__version__ == pinned_textual_version()
    assert installed_textual_version() == textual.__version__  # read from the dist-info, as importlib.metadata does


def test_another_textual_stops_the_app_naming_both_versions():
    with pytest.raises(TextualVersionMismatch, match=r"Textual 8\.2\.8 .*Textual 9\.0\.0 is installed"):
        check_textual_version("9.0.0", "8.2.8")
    check_textual_version("8.2.8", "8.2.8")  # the same version passes


# -- FooterKey -----------------------------------------------------------------------------------------------------

class _FooterApp(App[None]):
    BINDINGS = [("ctrl+s", "bell", "Send")]

    def compose(self) -> ComposeResult:
        yield Footer()


async def test_footer_key_is_what_textuals_footer_draws_each_key_with():
    app = _FooterApp()
    async with app.run_test(size=(40, 5)) as pilot:
        await pilot.pause()
        keys = list(app.query(FooterKey))
        assert [key.description for key in keys if key.key == "ctrl+s"] == ["Send"]


# -- notifications -------------------------------------------------------------------------------------------------

async def test_notifications_of_reads_back_what_notify_showed():
    app = _FooterApp()
    async with app.run_test(size=(40, 5), notifications=True) as pilot:
        assert notifications_of(app) == []
        app.notify("first")
        app.notify("second", title="Two")
        await pilot.pause()
        assert [(note.message, note.title) for note in notifications_of(app)] == [("first", ""), ("second", "Two")]
        app.clear_notifications()
        assert notifications_of(app) == []


# -- writing to the terminal --------------------------------------------------------------------------------------

def test_textual_writes_its_own_sequences_through_the_apps_driver_as_write_to_terminal_does():
    import inspect

    assert "self._driver.write(" in inspect.getsource(App.bell)
    assert callable(HeadlessDriver.write)


async def test_write_to_terminal_writes_nothing_when_headless():
    app = _FooterApp()
    async with app.run_test(size=(40, 5)):
        assert app.is_headless
        write_to_terminal(app, "\x1b]9;hello\x07")  # no driver output to fail on: nothing is written


# -- DataTable render caches ---------------------------------------------------------------------------------------

class _TableApp(App[None]):
    def compose(self) -> ComposeResult:
        yield FreedCachesTable()

    def on_mount(self) -> None:
        table = self.query_one(FreedCachesTable)
        table.add_columns("id", "text")
        for row in range(30):
            table.add_row(row, f"row {row}")


async def test_the_render_caches_are_lru_caches_of_linked_entries_and_are_freed_when_cleared():
    app = _TableApp()
    async with app.run_test(size=(40, 12)) as pilot:
        await pilot.pause()
        table = app.query_one(FreedCachesTable)
        caches = {name: getattr(table, name) for name in textual_compat._RENDER_CACHES}
        assert all(isinstance(cache, LRUCache) for cache in caches.values()), caches
        filled = {name: cache for name, cache in caches.items() if len(cache)}
        assert filled, "drawing the table filled none of the render caches"
        links = [link for cache in filled.values() for link in cache._cache.values()]
        assert all(isinstance(link, list) and len(link) == 4 for link in links)  # [prev, next, key, value]
        clear_render_caches(table)
        assert all(len(cache) == 0 for cache in caches.values())
        assert all(link == [] for link in links), "emptied without unlinking: left to the garbage collector"


def test_freed_caches_table_overrides_the_method_datatable_empties_its_caches_with():
    assert "_clear_caches" in vars(DataTable) and callable(vars(DataTable)["_clear_caches"])
    assert FreedCachesTable._clear_caches is not DataTable._clear_caches


class _RowsApp(App[None]):
    """Two tables of 30 rows: one of fixed height (as the events panel's), one of Textual's default (auto)."""

    CSS = "#fixed { height: 8; } #auto { max-height: 100%; }"

    def compose(self) -> ComposeResult:
        yield FreedCachesTable(id="fixed")
        yield FreedCachesTable(id="auto")

    def on_mount(self) -> None:
        for table in self.query(FreedCachesTable):
            table.add_columns("id", "text")
            for row in range(30):
                table.add_row(row, f"row {row}", key=str(row))


def _layouts(app: App[None]) -> list[object]:
    """The screen's layouts from now on, as Textual publishes them."""
    seen: list[object] = []
    app.screen.screen_layout_refresh_signal.subscribe(app.screen, seen.append)
    return seen


async def test_removing_a_row_lays_out_only_a_table_whose_height_follows_its_rows():
    app = _RowsApp()
    async with app.run_test(size=(40, 40)) as pilot:
        await pilot.pause()
        fixed, auto = app.query_one("#fixed", FreedCachesTable), app.query_one("#auto", FreedCachesTable)
        layouts = _layouts(app)
        fixed.add_row(30, "row 30", key="30")  # the panel's way: one row in, the oldest out, the size unchanged
        fixed.remove_row("0")
        await pilot.pause()
        assert layouts == [] and fixed.row_count == 30 and fixed.virtual_size.height == 31  # and its header
        fixed.remove_row("1")  # one fewer: the virtual size changed, the scrollbar follows it without a layout
        await pilot.pause()
        assert layouts == [] and fixed.virtual_size.height == 30
        assert fixed.show_vertical_scrollbar and fixed.vertical_scrollbar.window_virtual_size == 30
        for row in range(2, 26):  # down to 5 rows and the header in a table 8 high: the scrollbar goes, laid out
            fixed.remove_row(str(row))
        await pilot.pause()
        assert layouts and not fixed.show_vertical_scrollbar and fixed.virtual_size.height == 6
        layouts.clear()
        auto.remove_row("0")
        await pilot.pause()
        assert layouts and auto.size.height == 30  # its height is its rows': laid out as Textual does


class _FieldsApp(App[None]):
    CSS = "#fixed { width: 14; } #auto { width: auto; }"

    def compose(self) -> ComposeResult:
        yield Input(id="fixed")
        yield Input(id="auto")


async def test_a_typed_key_lays_the_screen_out_only_for_a_field_whose_size_follows_its_text():
    app = _FieldsApp()
    async with app.run_test(size=(60, 8)) as pilot:
        await pilot.pause()
        fixed = app.query_one("#fixed", Input)
        fixed.focus()
        await pilot.pause()
        layouts = _layouts(app)
        text = "abcdefghijklmnopqrstuvwxyz0123"
        for character in text:
            await pilot.press(character)
        await pilot.pause()
        assert layouts == [], "a key laid the whole screen out"
        assert fixed.value == text and fixed.cursor_position == len(text)
        shown = app.screen.get_widget_at(*fixed.content_region.offset)[0] is fixed
        assert shown and fixed.scroll_x == len(text) + 1 - fixed.content_region.width  # the end, and the cursor, in view
        auto = app.query_one("#auto", Input)
        auto.focus()
        width = auto.size.width
        for character in text:
            await pilot.press(character)
        await pilot.pause()
        assert layouts and auto.size.width > width  # an auto-width field grows with its text, as Textual lays it out


def test_input_declares_its_own_virtual_size_and_widget_lays_out_on_it():
    from textual.widget import Widget

    assert Widget.__dict__["virtual_size"]._layout is True  # what the shim undoes for Input alone
    assert Input.__dict__["virtual_size"]._layout is False


# -- shutdown ------------------------------------------------------------------------------------------------------

class _WaitsApp(FinishBeforeShutdown):
    mounted_at_shutdown: bool | None = None

    def compose(self) -> ComposeResult:
        yield Input(id="field")

    async def before_shutdown(self) -> None:
        self.mounted_at_shutdown = self.query_one("#field", Input).is_mounted


async def test_before_shutdown_runs_while_the_widgets_are_still_mounted():
    app = _WaitsApp()
    async with app.run_test(size=(40, 5)) as pilot:
        await pilot.pause()
    assert app.mounted_at_shutdown is True  # the test harness shuts the app down through App._shutdown


def test_the_shutdown_textual_runs_is_a_coroutine_method_of_app():
    import inspect

    assert inspect.iscoroutinefunction(vars(App)["_shutdown"])


# -- alt+digit -----------------------------------------------------------------------------------------------------

def _keys(parser_class: type, data: str) -> list[tuple[str, str | None]]:
    parser = parser_class()
    return [(event.key, event.character) for event in [*parser.feed(data), *parser.feed("")]]


def test_the_driver_reads_esc_digit_as_alt_digit_and_leaves_textuals_table_alone():
    from textual._xterm_parser import XTermParser

    driver = alt_digits_driver(LinuxDriver)
    parser = driver.run_input_thread.__globals__["XTermParser"]
    assert issubclass(parser, XTermParser) and parser is not XTermParser
    assert _keys(parser, "\x1b2") == [("alt+2", "2")]
    assert _keys(parser, "\x1b9") == [("alt+9", "9")]
    assert _keys(parser, "a\x1b[A") == [("a", "a"), ("up", None)]  # everything else as Textual reads it
    assert _keys(XTermParser, "\x1b2") == [("trade_mark_sign", "™")]  # Textual's own parser: untouched


def test_the_linux_driver_builds_its_parser_from_the_module_global_the_shim_rebinds():
    assert "XTermParser" in LinuxDriver.run_input_thread.__code__.co_names
    assert issubclass(alt_digits_driver(LinuxDriver), LinuxDriver)
    assert alt_digits_driver(HeadlessDriver) is HeadlessDriver  # tests and other drivers as they are


def test_character_key_name_is_textuals_name_for_a_typed_character():
    assert [character_key_name(character) for character in "/?a1 ]"] == [
        "slash", "question_mark", "a", "1", "space", "right_square_bracket"]


# -- nowhere else --------------------------------------------------------------------------------------------------

PRIVATE_TEXTUAL = re.compile(
    r"textual(?:\.\w+)*\._\w+"  # a private module: textual.widgets._footer, textual._ansi_sequences
    r"|from\s+textual(?:\.\w+)*\s+import\s+(?:\([^)]*)?\b_\w+"  # from textual.keys import _character_to_key
    r"|\b_binding_chain\b|\b_clear_caches\b|\b_ansi_sequences\b|\b_character_to_key\b"
    r"|\b_shutdown\b|\._value\b|def _value\(self|\._notifications\b|\._driver\b"
)


def private_textual_uses(root: Path) -> list[str]:
    """`path:line: text` of every use of a private Textual name in root's tui/ and tests/, the shims' module and
    their tests (which must name what they check) excepted."""
    allowed = {root / "tui" / "ui" / "textual_compat.py", root / "tests" / "ui" / "test_textual_compat.py"}
    found = []
    for path in sorted([*(root / "tui").rglob("*.py"), *(root / "tests").rglob("*.py")]):
        if path in allowed:
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if PRIVATE_TEXTUAL.search(line):
                found.append(f"{path.relative_to(root)}:{number}: {line.strip()}")
    return found


def test_private_textual_names_appear_only_in_the_compat_module():
    assert private_textual_uses(REPO) == []


def test_the_search_finds_each_kind_of_private_use(tmp_path):
    uses = [
        "from textual.widgets._footer import FooterKey",
        "from textual import _ansi_sequences",
        "from textual.keys import Keys, _character_to_key",
        "chain = super()._binding_chain",
        "self._clear_caches()",
        "await super()._shutdown()",
        "return super()._value",
        "for note in app._notifications:",
        "app._driver.write(text)",
    ]
    (tmp_path / "tui").mkdir()
    (tmp_path / "tests").mkdir()
    (tmp_path / "tui" / "uses.py").write_text("\n".join(uses) + "\nclear_notifications()\n_value(True)\n")
    assert len(private_textual_uses(tmp_path)) == len(uses)
