"""Conventions of the field: `--version`, `gateway-tui locate` (config file, data dir, event store of the
profile or the sandbox), and global flags accepted before or after the subcommand."""

from __future__ import annotations

import json
from importlib.metadata import version

import keyring
import pytest
from keyring.backends import fail

from tui.local import config
from tui.cli.main import main


def test_version(capsys) -> None:
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out == f"gateway-tui {version('gateway-tui')}\n"


def test_locate_names_the_config_file_data_dir_and_event_store(isolated_dirs, capsys) -> None:
    config_dir, data_dir = isolated_dirs
    config.save_profile(config.Profile(name="work", base_url="https://api.example.com", instance_id="1",
                                       session_url="https://wuz.example.com"))
    assert main(["locate"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines == [
        f"config file   {config_dir / 'profiles.toml'} (exists)",
        f"preferences   {config_dir / 'preferences.toml'} (not created yet)",
        f"data dir      {data_dir}",
        f"event store   {data_dir / 'events-work.sqlite3'} (profile work; not created yet)",
        "secrets       OS keyring, service gateway-tui",
    ]


def test_locate_the_sandbox_and_as_json_with_flags_before_or_after(isolated_dirs, capsys) -> None:
    _, data_dir = isolated_dirs
    for argv in (["--sandbox", "locate", "--json"], ["locate", "--sandbox", "--json"]):
        assert main(argv) == 0
        found = json.loads(capsys.readouterr().out)
        assert found["event_store"] == str(data_dir / "events-sandbox.sqlite3")
        assert found["profile"] == "sandbox"


def test_locate_an_unknown_profile_is_refused_plainly(capsys) -> None:
    assert main(["locate", "--profile", "nope"]) == 2
    assert "no profile named 'nope'" in capsys.readouterr().err


def test_insecure_storage_before_or_after_the_subcommand(isolated_dirs, capsys) -> None:
    keyring.set_keyring(fail.Keyring())
    config_dir, _ = isolated_dirs
    for argv in (["profile", "list", "--insecure-storage"], ["--insecure-storage", "profile", "list"]):
        assert main(argv) == 0
        assert "No profiles yet" in capsys.readouterr().out
    assert main(["locate", "--insecure-storage"]) == 0
    assert f"secrets       {config_dir / 'secrets-insecure.json'}" in capsys.readouterr().out
    for argv in (["events", "list", "--profile", "x"], ["--profile", "x", "events", "list"]):
        assert main(argv) == 2
        assert "no profile named 'x'" in capsys.readouterr().err
