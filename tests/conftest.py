"""Fixtures every test gets: private config/data dirs and an in-memory keyring, so no test touches the user's; and
the markers of the fast inner loop, given by what a test does rather than remembered by whoever writes it:

- `app`: starts the Textual app or another Textual app (`run_test`, `tests/harness.py`'s `running_sandbox_app`,
  `snap_compare`);
- `tmux`: drives the real app in a real terminal (tmux);
- `process`: starts another program (`subprocess`, asyncio's subprocesses: the CLI, `sandbox`, `listen`);
- `slow` (written on the test): seconds of work or waiting on purpose (a 22 MB body, an expiry); a quick-loop test
  that takes over QUICK_AT_MOST seconds is named at the end of the run, to be marked.

`uv run pytest -m "not app and not tmux and not process"` is the quick loop (README, Development)."""

from __future__ import annotations

import inspect
import signal
import sys
from collections.abc import Callable, Iterator
from types import CodeType, ModuleType

import keyring
import pytest

from tests.memory_keyring import MemoryKeyring
from tui.local.paths import CONFIG_DIR_ENV, DATA_DIR_ENV

# A test run started in the background by a shell script (`.ci/run &`, some CI runners) ignores SIGINT, and every
# program the tests start would inherit that: `listen` and `sandbox`, stopped with ctrl+c (SIGINT) as a person
# stops them in a terminal, would run on until the test's deadline. A handler, unlike "ignore", is not inherited
# across exec, so the programs start with SIGINT's default, as in a terminal.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(autouse=True)
def isolated_dirs(tmp_path, monkeypatch):
    config = tmp_path / "config"
    data = tmp_path / "data"
    monkeypatch.setenv(CONFIG_DIR_ENV, str(config))
    monkeypatch.setenv(DATA_DIR_ENV, str(data))
    for name in (
        "GATEWAY_TUI_CLIENT_TOKEN",
        "GATEWAY_TUI_INSTANCE_TOKEN",
        "GATEWAY_TUI_SESSION_TOKEN",
        "GATEWAY_TUI_HMAC_KEY",
        "GATEWAY_TUI_ADMIN_TOKEN",
        "GATEWAY_TUI_PARTNER_TOKEN",
    ):
        monkeypatch.delenv(name, raising=False)
    return config, data


@pytest.fixture(autouse=True)
def memory_keyring():
    previous = keyring.get_keyring()
    backend = MemoryKeyring()
    keyring.set_keyring(backend)
    yield backend
    keyring.set_keyring(previous)


# -- markers --------------------------------------------------------------------------------------------------------

STARTS_AN_APP = frozenset({"run_test", "running_sandbox_app", "sandbox_app", "snap_compare", "run_async", "Pilot"})
STARTS_A_PROCESS = frozenset({"subprocess", "create_subprocess_exec", "create_subprocess_shell", "Popen",
                              "SandboxProcess", "prepare_app"})  # prepare_app: the command line's, with its sandbox


QUICK_AT_MOST = 2.0
"""Seconds a test of the quick loop may take before the run's summary names it (mark it `slow`, or make it quick)."""
_QUICK = ("app", "tmux", "process", "slow")
_slow_quick: list[tuple[float, str]] = []


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.duration > QUICK_AT_MOST and not any(name in report.keywords for name in _QUICK):
        _slow_quick.append((report.duration, f"{report.nodeid} ({report.when})"))


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if _slow_quick:
        terminalreporter.section(f"quick-loop tests over {QUICK_AT_MOST:g} s: mark them slow (tests/conftest.py)")
        for duration, nodeid in sorted(_slow_quick, reverse=True):
            terminalreporter.write_line(f"{duration:6.2f} s  {nodeid}")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if not isinstance(item, pytest.Function):
            continue
        names, strings = _what_it_calls(item)
        if names & STARTS_AN_APP or "snap_compare" in item.fixturenames:
            item.add_marker(pytest.mark.app)
        if "tmux" in strings or item.module.__name__.rsplit(".", 1)[-1].startswith("test_tmux"):
            item.add_marker(pytest.mark.tmux)
        if names & STARTS_A_PROCESS:
            item.add_marker(pytest.mark.process)


def _what_it_calls(item: pytest.Function) -> tuple[set[str], set[str]]:
    """The names and string constants in the test's code, its fixtures' and the code of the tests package they call
    (helpers, classes), followed through."""
    functions: list[Callable[..., object]] = [item.function]
    for definitions in item._fixtureinfo.name2fixturedefs.values():
        functions.extend(definition.func for definition in definitions)
    names: set[str] = set()
    strings: set[str] = set()
    seen: set[CodeType] = set()
    while functions:
        function = inspect.unwrap(functions.pop())
        code = getattr(function, "__code__", None)
        if code is None or code in seen:
            continue
        scope = getattr(function, "__globals__", {})
        for inner in _codes(code):
            seen.add(inner)
            names.update(inner.co_names)
            strings.update(const for const in inner.co_consts if isinstance(const, str))
            # What it names, in its module or in a module of the tests package it uses (`headless.start_headless`,
            # `from tests.sandbox.test_fleet import start` inside the test).
            modules = [module for name in inner.co_names
                       if isinstance(module := scope.get(name, sys.modules.get(name)), ModuleType)
                       and module.__name__.startswith("tests")]
            for name in inner.co_names:
                functions.extend(_ours(scope.get(name)))
                for module in modules:
                    functions.extend(_ours(getattr(module, name, None)))
    return names, strings


def _codes(code: CodeType) -> Iterator[CodeType]:
    yield code
    for const in code.co_consts:
        if isinstance(const, CodeType):
            yield from _codes(const)


def _ours(value: object) -> list[Callable[..., object]]:
    """A function or class of the tests package (what a test calls to do its work), as the functions to follow."""
    if not str(getattr(value, "__module__", "")).startswith("tests"):
        return []
    if inspect.isclass(value):
        return [member for member in vars(value).values() if inspect.isfunction(member)]
    return [value] if callable(value) else []
