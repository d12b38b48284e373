"""Issue 22: a profile has one family or both. A real account is one gateway: Z-API (the instance family) or WuzAPI
(the session family); either alone is a complete profile, and files written before (both families) load as they
were."""

from __future__ import annotations

import io

import pytest

from tui.local import config
from tui.cli.main import main
from tui.api.dialects import Family, InstanceDialect, SessionDialect
from tui.local.config import ConfigError, InstanceFamily, MissingFamily, Profile, SessionFamily

# A profiles file as gateway-tui wrote it before profiles could have one family: every key, both families.
OLD_FILE = """\
[profiles.work]
base_url = "https://api.example.com"
instance_id = "3C01A1B2C3D4E5F6"
session_url = "https://wuzapi.example.com"
listener_host = "127.0.0.1"
listener_port = 8787
public_url = ""
theme = "textual-dark"
max_body = 157286400
require_signatures = false
instance_dialect = "zapi"
session_dialect = "wuzapi"
"""

SESSION_ONLY_FILE = """\
[profiles.wuz]
session_url = "https://wuzapi.example.com"
session_dialect = "wuzapi"
"""

INSTANCE_ONLY_FILE = """\
[profiles.z]
base_url = "https://api.z-api.io"
instance_id = "3C01"
instance_dialect = "zapi"
"""


def write(text: str) -> None:
    path = config.profiles_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def test_an_old_file_with_both_families_loads_unchanged_and_is_written_back_the_same():
    write(OLD_FILE)
    [work] = config.load_profiles()
    assert work.families == (Family.INSTANCE, Family.SESSION)
    assert work.instance == InstanceFamily("https://api.example.com", "3C01A1B2C3D4E5F6", InstanceDialect.ZAPI)
    assert work.session == SessionFamily("https://wuzapi.example.com", SessionDialect.WUZAPI)
    config.save_profile(work)  # saving it again writes exactly what was there
    assert config.profiles_path().read_text(encoding="utf-8") == OLD_FILE


def test_a_session_only_file_is_a_whole_profile():
    write(SESSION_ONLY_FILE)
    [wuz] = config.load_profiles()
    assert wuz.families == (Family.SESSION,)
    assert wuz.instance is None and wuz.session == SessionFamily("https://wuzapi.example.com", SessionDialect.WUZAPI)
    assert not wuz.has(Family.INSTANCE) and wuz.has(Family.SESSION)


def test_an_instance_only_file_is_a_whole_profile():
    write(INSTANCE_ONLY_FILE)
    [z] = config.load_profiles()
    assert z.families == (Family.INSTANCE,)
    assert z.session is None and z.instance == InstanceFamily("https://api.z-api.io", "3C01", InstanceDialect.ZAPI)


@pytest.mark.parametrize(
    "fields, absent",
    [
        ({"session_url": "https://wuzapi.example.com"}, ["base_url", "instance_id", "instance_dialect"]),
        ({"base_url": "https://api.z-api.io", "instance_id": "3C01"}, ["session_url", "session_dialect"]),
    ],
)
def test_a_one_family_profile_writes_nothing_of_the_other(fields, absent):
    profile = Profile(name="one", **fields)
    config.save_profile(profile)
    written = config.profiles_path().read_text(encoding="utf-8")
    assert not any(f"{key} =" in written for key in absent), written
    assert config.load_profiles() == [profile]


def test_a_dialect_chosen_for_an_absent_family_is_kept():
    profile = Profile(name="one", session_url="https://wuzapi.example.com", instance_dialect="zapi")
    config.save_profile(profile)
    assert config.load_profiles() == [profile]


@pytest.mark.parametrize("blank", [{}, {"base_url": "", "instance_id": " ", "session_url": ""}])
def test_no_family_at_all_is_refused_in_the_products_words(blank):
    with pytest.raises(ValueError) as caught:
        Profile(name="none", **blank)
    text = config.describe_profile_error(caught.value)
    assert "no gateway" in text and "Z-API" in text and "WuzAPI" in text


@pytest.mark.parametrize(
    "fields, missing",
    [
        ({"base_url": "https://api.z-api.io"}, "instance_id"),
        ({"instance_id": "3C01", "session_url": "https://wuzapi.example.com"}, "base_url"),
    ],
)
def test_half_a_family_names_the_missing_field(fields, missing):
    with pytest.raises(ValueError) as caught:
        Profile(name="half", **fields)
    text = config.describe_profile_error(caught.value)
    assert text.startswith(f"{missing}: required for the instance family (Z-API)"), text


def test_half_a_family_in_the_file_is_reported_with_its_table_and_left_alone():
    write('[profiles.half]\ninstance_id = "3C01"\n')
    with pytest.raises(ConfigError) as caught:
        config.load_profiles()
    message = str(caught.value)
    assert "line 1 ([profiles.half])" in message and "base_url: required for the instance family (Z-API)" in message
    assert config.profiles_path().read_text(encoding="utf-8") == '[profiles.half]\ninstance_id = "3C01"\n'


def test_requiring_a_missing_family_names_it_and_its_gateway():
    profile = Profile(name="z", base_url="https://api.z-api.io", instance_id="3C01")
    profile.require(Family.INSTANCE)
    with pytest.raises(MissingFamily) as caught:
        profile.require(Family.SESSION)
    assert str(caught.value) == ("This profile (z) has no session family (WuzAPI); nothing was sent. "
                                 "Add it with `gateway-tui profile add z --session-url URL ...`.")


# --- `gateway-tui profile add|list` without a terminal: the secrets of the profile's families only -----------------

ENV_SECRETS = {
    "GATEWAY_TUI_CLIENT_TOKEN": "fam-client-token-0001",
    "GATEWAY_TUI_INSTANCE_TOKEN": "fam-instance-token-0002",
    "GATEWAY_TUI_SESSION_TOKEN": "fam-session-token-0003",
    "GATEWAY_TUI_HMAC_KEY": "fam-hmac-key-0004-" + "x" * 20,
}
SESSION_ONLY = ["profile", "add", "wuz", "--session-url", "https://wuzapi.example.com", "--session-dialect", "wuzapi"]
INSTANCE_ONLY = ["profile", "add", "z", "--base-url", "https://api.z-api.io", "--instance-id", "3C01",
                 "--instance-dialect", "zapi"]


@pytest.fixture
def no_terminal(monkeypatch):
    monkeypatch.setattr("sys.stdin", io.StringIO(""))


def stored_names(memory_keyring, profile: str) -> set[str]:
    return {user.split(":", 1)[1] for service, user in memory_keyring.entries if user.startswith(f"{profile}:")}


def test_add_a_session_only_profile_stores_only_its_secrets(monkeypatch, memory_keyring, no_terminal, capsys):
    monkeypatch.setenv("GATEWAY_TUI_SESSION_TOKEN", ENV_SECRETS["GATEWAY_TUI_SESSION_TOKEN"])
    monkeypatch.setenv("GATEWAY_TUI_HMAC_KEY", ENV_SECRETS["GATEWAY_TUI_HMAC_KEY"])
    assert main(SESSION_ONLY) == 0, capsys.readouterr().err  # no instance token needed, none asked for
    assert "session family (WuzAPI)" in capsys.readouterr().out
    assert stored_names(memory_keyring, "wuz") == {"session-token", "hmac-key"}
    [wuz] = config.load_profiles()
    assert wuz.families == (Family.SESSION,) and wuz.session == SessionFamily("https://wuzapi.example.com",
                                                                              SessionDialect.WUZAPI)
    monkeypatch.delenv("GATEWAY_TUI_SESSION_TOKEN")
    monkeypatch.delenv("GATEWAY_TUI_HMAC_KEY")
    assert main(["profile", "list"]) == 0
    listing = capsys.readouterr().out
    assert "instance family  none (no Z-API)" in listing
    assert "session family   https://wuzapi.example.com  (WuzAPI, dialect wuzapi)" in listing
    assert "Client-Token" not in listing and "instance token" not in listing  # secrets of a family it lacks
    assert listing.count("set (keyring)") == 2


def test_add_an_instance_only_profile_stores_only_its_secrets(monkeypatch, memory_keyring, no_terminal, capsys):
    for name in ("GATEWAY_TUI_CLIENT_TOKEN", "GATEWAY_TUI_INSTANCE_TOKEN"):
        monkeypatch.setenv(name, ENV_SECRETS[name])
    assert main(INSTANCE_ONLY) == 0, capsys.readouterr().err
    assert stored_names(memory_keyring, "z") == {"client-token", "instance-token"}
    assert [profile.families for profile in config.load_profiles()] == [(Family.INSTANCE,)]
    for name in ("GATEWAY_TUI_CLIENT_TOKEN", "GATEWAY_TUI_INSTANCE_TOKEN"):
        monkeypatch.delenv(name)
    capsys.readouterr()
    assert main(["profile", "list"]) == 0
    listing = capsys.readouterr().out
    assert "instance family  https://api.z-api.io  (instance 3C01; Z-API, dialect zapi)" in listing
    assert "session family   none (no WuzAPI)" in listing and "session token" not in listing


def test_the_missing_secret_named_is_the_familys_own(monkeypatch, memory_keyring, no_terminal, capsys):
    monkeypatch.setenv("GATEWAY_TUI_CLIENT_TOKEN", ENV_SECRETS["GATEWAY_TUI_CLIENT_TOKEN"])
    assert main(INSTANCE_ONLY) == 2
    err = capsys.readouterr().err
    assert "GATEWAY_TUI_INSTANCE_TOKEN" in err and "SESSION" not in err
    assert not config.profiles_path().exists() and memory_keyring.entries == {}


def test_no_gateway_flags_without_a_terminal_is_refused_naming_the_flags(monkeypatch, memory_keyring, no_terminal,
                                                                         capsys):
    for name, value in ENV_SECRETS.items():
        monkeypatch.setenv(name, value)
    assert main(["profile", "add", "none"]) == 2
    err = capsys.readouterr().err
    assert "no gateway given" in err and "--base-url" in err and "--session-url" in err
    assert not config.profiles_path().exists() and memory_keyring.entries == {}


def test_half_a_family_given_as_flags_is_refused(monkeypatch, memory_keyring, no_terminal, capsys):
    for name, value in ENV_SECRETS.items():
        monkeypatch.setenv(name, value)
    assert main(["profile", "add", "half", "--base-url", "https://api.z-api.io"]) == 2
    assert "instance_id: required for the instance family (Z-API)" in capsys.readouterr().err
    assert not config.profiles_path().exists() and memory_keyring.entries == {}


def test_updating_to_one_family_removes_the_other_familys_secrets(monkeypatch, memory_keyring, no_terminal, capsys):
    for name, value in ENV_SECRETS.items():
        monkeypatch.setenv(name, value)
    both = ["profile", "add", "acct", "--base-url", "https://api.z-api.io", "--instance-id", "3C01",
            "--session-url", "https://wuzapi.example.com"]
    assert main(both) == 0
    assert stored_names(memory_keyring, "acct") == {"client-token", "instance-token", "session-token", "hmac-key"}
    for name in ENV_SECRETS:
        monkeypatch.delenv(name)
    capsys.readouterr()
    assert main(["profile", "add", "acct", "--session-url", "https://wuzapi.example.com"]) == 0
    out = capsys.readouterr().out
    assert "kept as stored: session token, HMAC key" in out
    assert "removed: Client-Token, instance token (no instance family (Z-API) now)" in out
    assert stored_names(memory_keyring, "acct") == {"session-token", "hmac-key"}
    assert [profile.families for profile in config.load_profiles()] == [(Family.SESSION,)]
