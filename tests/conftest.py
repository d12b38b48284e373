"""Fixtures every test gets: private config/data dirs and an in-memory keyring, so no test touches the user's."""

from __future__ import annotations

import signal

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
