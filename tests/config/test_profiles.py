"""Profiles on disk: round trip, atomic replace, and broken files reported by line and never overwritten."""

from __future__ import annotations

import pytest

from tui.local import config
from tui.local.config import ConfigError, Profile


def work(**changes) -> Profile:
    fields = dict(name="work", base_url="https://api.example.com", instance_id="3C01", session_url="https://wuz.example.com")
    return Profile(**(fields | changes))


def test_round_trip_keeps_every_field_and_the_other_profiles():
    config.save_profile(work(listener_port=9000, public_url="https://tunnel.example.com", theme="nord"))
    config.save_profile(work(name="home", instance_id="HOME"))
    config.save_profile(work(listener_port=9001))  # replaces "work", keeps "home"
    loaded = {profile.name: profile for profile in config.load_profiles()}
    assert set(loaded) == {"work", "home"}
    assert loaded["work"].listener_port == 9001 and loaded["home"].instance_id == "HOME"
    assert loaded["work"] == work(listener_port=9001)


def test_no_file_means_no_profiles():
    assert config.load_profiles() == []


def test_remove():
    config.save_profile(work())
    assert config.remove_profile("work") is True
    assert config.remove_profile("work") is False
    assert config.load_profiles() == []


def test_broken_toml_names_the_line_and_is_left_untouched():
    config.save_profile(work())
    path = config.profiles_path()
    broken = path.read_text() + "\n[profiles.home]\nbase_url = \n"
    path.write_text(broken)
    bad_line = broken.splitlines().index("base_url = ") + 1
    with pytest.raises(ConfigError, match=rf"line {bad_line}\b") as caught:
        config.load_profiles()
    assert str(path) in str(caught.value)
    with pytest.raises(ConfigError):
        config.save_profile(work(name="other"))
    assert path.read_text() == broken


def test_invalid_value_names_profile_field_and_line():
    path = config.profiles_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        '[profiles.ok]\nbase_url = "https://a.example"\ninstance_id = "1"\nsession_url = "https://b.example"\n\n'
        '[profiles.bad]\nbase_url = "ftp://a.example"\ninstance_id = "1"\nsession_url = "https://b.example"\n'
        "listener_port = 70000\n"
    )
    with pytest.raises(ConfigError) as caught:
        config.load_profiles()
    message = str(caught.value)
    assert "line 6 ([profiles.bad])" in message
    assert "base_url (line 7)" in message and "listener_port (line 10)" in message
    assert "ftp://" not in message  # the rule is named, the value is not echoed


def test_unknown_setting_is_reported():
    path = config.profiles_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text('[profiles.w]\nbase_url = "https://a.example"\ninstance_id = "1"\nsession_url = "https://b.example"\ntoken = "x"\n')
    with pytest.raises(ConfigError, match=r"token \(line 5\): unknown setting"):
        config.load_profiles()


@pytest.mark.parametrize(
    "changes, field",
    [
        ({"name": "sandbox"}, "name"),
        ({"name": "has space"}, "name"),
        ({"base_url": "api.example.com"}, "base_url"),
        ({"session_url": "https://"}, "session_url"),
        ({"listener_port": -1}, "listener_port"),
        ({"public_url": "tunnel"}, "public_url"),
    ],
)
def test_profile_rules(changes, field):
    with pytest.raises(ValueError, match=field):
        work(**changes)


def test_a_name_key_inside_a_table_is_reported_not_a_traceback():
    path = config.profiles_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text('[profiles.w]\nname = "x"\nbase_url = "https://a.example"\ninstance_id = "1"\nsession_url = "https://b.example"\n')
    with pytest.raises(ConfigError, match=r"line 1 \(\[profiles.w\]\): name"):
        config.load_profiles()


def test_save_is_atomic(monkeypatch):
    config.save_profile(work())
    before = config.profiles_path().read_text()

    def crash(*_args):
        raise OSError("disk full")

    monkeypatch.setattr(config.os, "replace", crash)
    with pytest.raises(OSError):
        config.save_profile(work(name="home"))
    assert config.profiles_path().read_text() == before
    assert [path.name for path in config.profiles_path().parent.iterdir()] == ["profiles.toml"]  # no temp left


def test_a_valid_file_is_read_without_looking_for_any_lines(monkeypatch):
    """The line of a profile's table is found only to name it in an error: looked up for every profile, each a scan
    of the whole file, reading 1,000 profiles took seconds of the app's start (bench/fleet.py)."""
    config.save_profile(work())
    config.save_profile(work(name="home"))

    def scanned(text: str, name: str) -> int:
        raise AssertionError(f"the file was scanned for {name!r}'s line")

    monkeypatch.setattr(config, "_line_of_table", scanned)
    assert [profile.name for profile in config.load_profiles()] == ["work", "home"]
