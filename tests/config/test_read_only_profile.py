"""Issue 26: a profile can be read-only. The flag is written only when true, so files written before it load and
are written back byte for byte; `profile add NAME --read-only` / `--no-read-only` changes only the flag."""

from __future__ import annotations

import io

import pytest

from tests.config.test_profile_families import OLD_FILE, write
from tui.local import config
from tui.cli.main import main

SECRETS = {
    "GATEWAY_TUI_CLIENT_TOKEN": "ro-client-token-0001",
    "GATEWAY_TUI_INSTANCE_TOKEN": "ro-instance-token-0002",
    "GATEWAY_TUI_SESSION_TOKEN": "ro-session-token-0003",
}


@pytest.fixture(autouse=True)
def no_terminal(monkeypatch):
    monkeypatch.setattr("sys.stdin", io.StringIO(""))


def text() -> str:
    return config.profiles_path().read_text(encoding="utf-8")


def test_an_old_file_is_writable_and_written_back_the_same():
    write(OLD_FILE)
    [work] = config.load_profiles()
    assert work.read_only is False
    config.save_profile(work)
    assert text() == OLD_FILE


def test_the_flag_is_written_only_when_true_and_read_back():
    write(OLD_FILE)
    [work] = config.load_profiles()
    config.save_profile(work.model_copy(update={"read_only": True}))
    assert text() == OLD_FILE + "read_only = true\n"
    [again] = config.load_profiles()
    assert again.read_only is True
    config.save_profile(again.model_copy(update={"read_only": False}))
    assert text() == OLD_FILE


def test_profile_add_read_only_changes_only_the_flag(memory_keyring, capsys):
    write(OLD_FILE)
    assert main(["profile", "add", "work", "--read-only"]) == 0
    assert text() == OLD_FILE + "read_only = true\n"
    assert "read-only" in capsys.readouterr().out
    assert memory_keyring.entries == {}  # no secret asked for, none stored or removed
    assert main(["profile", "add", "work", "--no-read-only"]) == 0
    assert text() == OLD_FILE
    assert "writable" in capsys.readouterr().out


def test_a_new_profile_can_start_read_only_and_a_full_update_keeps_the_flag(monkeypatch, memory_keyring):
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    add = ["profile", "add", "ops-view", "--base-url", "https://api.example.com", "--instance-id", "3C01"]
    assert main([*add, "--read-only"]) == 0
    assert [p.read_only for p in config.load_profiles()] == [True]
    assert main([*add, "--listener-port", "9000"]) == 0  # updated without the flag: still read-only
    [profile] = config.load_profiles()
    assert (profile.read_only, profile.listener_port) == (True, 9000)


def test_the_flag_alone_on_an_unknown_profile_saves_nothing(capsys):
    assert main(["profile", "add", "nobody", "--read-only"]) == 2
    assert "no gateway given" in capsys.readouterr().err
    assert not config.profiles_path().exists()


def test_profile_list_shows_it(memory_keyring, capsys):
    write(OLD_FILE + "read_only = true\n")
    assert main(["profile", "list"]) == 0
    listing = capsys.readouterr().out
    assert "  access           read-only (`gateway-tui profile add work --no-read-only` makes it writable)" in listing
    write(OLD_FILE)
    assert main(["profile", "list"]) == 0
    assert "  access           writable" in capsys.readouterr().out
