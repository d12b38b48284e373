"""`gateway-tui profile …` without a terminal: secrets from the environment, never printed."""

from __future__ import annotations

import io

import keyring
import pytest
from keyring.backends import fail
from keyring.errors import KeyringLocked

from tests.memory_keyring import MemoryKeyring
from tui.local import config
from tui.cli.main import main
from tui.local.secrets import InsecureFileSecrets, SecretName

SECRETS = {
    "GATEWAY_TUI_CLIENT_TOKEN": "cli-client-token-0001",
    "GATEWAY_TUI_INSTANCE_TOKEN": "cli-instance-token-0002",
    "GATEWAY_TUI_SESSION_TOKEN": "cli-session-token-0003",
    "GATEWAY_TUI_HMAC_KEY": "cli-hmac-key-0004-" + "x" * 20,
}
ADD = ["profile", "add", "work", "--base-url", "https://api.example.com", "--instance-id", "3C01",
       "--session-url", "https://wuz.example.com"]


@pytest.fixture(autouse=True)
def no_terminal(monkeypatch):
    monkeypatch.setattr("sys.stdin", io.StringIO(""))


def set_secrets(monkeypatch, values=SECRETS):
    for name, value in values.items():
        monkeypatch.setenv(name, value)


def test_add_list_remove(monkeypatch, memory_keyring, capsys):
    set_secrets(monkeypatch)
    assert main(ADD) == 0
    assert memory_keyring.entries[("gateway-tui", "work:client-token")] == SECRETS["GATEWAY_TUI_CLIENT_TOKEN"]
    assert memory_keyring.entries[("gateway-tui", "work:hmac-key")] == SECRETS["GATEWAY_TUI_HMAC_KEY"]
    assert [profile.name for profile in config.load_profiles()] == ["work"]

    for name in SECRETS:
        monkeypatch.delenv(name)
    assert main(["profile", "list"]) == 0
    listing = capsys.readouterr().out
    assert "work" in listing and "https://api.example.com" in listing
    assert listing.count("set (keyring)") == 4
    assert not any(value in listing for value in SECRETS.values())

    monkeypatch.setenv("GATEWAY_TUI_SESSION_TOKEN", "override")
    main(["profile", "list"])
    assert "from environment" in capsys.readouterr().out

    assert main(["profile", "remove", "work"]) == 0
    assert config.load_profiles() == []
    assert memory_keyring.entries == {}


def test_missing_secret_is_named_and_nothing_is_written(monkeypatch, memory_keyring, capsys):
    set_secrets(monkeypatch, {k: v for k, v in SECRETS.items() if k != "GATEWAY_TUI_SESSION_TOKEN"})
    assert main(ADD) == 2
    assert "GATEWAY_TUI_SESSION_TOKEN" in capsys.readouterr().err
    assert config.load_profiles() == [] and memory_keyring.entries == {}


def test_short_hmac_key_is_refused(monkeypatch, memory_keyring, capsys):
    set_secrets(monkeypatch, SECRETS | {"GATEWAY_TUI_HMAC_KEY": "too-short"})
    assert main(ADD) == 2
    assert "at least 32" in capsys.readouterr().err
    assert memory_keyring.entries == {}


def test_no_keyring_says_what_to_do_and_writes_nothing(monkeypatch, capsys):
    keyring.set_keyring(fail.Keyring())  # and no GATEWAY_TUI_* variables: nowhere for the secrets to come from
    assert main(ADD) == 2
    error = capsys.readouterr().err
    assert "No OS keyring" in error and "--insecure-storage" in error
    assert not config.profiles_path().exists()


def test_insecure_storage_opt_in(monkeypatch, memory_keyring):
    set_secrets(monkeypatch)
    assert main(["--insecure-storage", *ADD]) == 0
    assert memory_keyring.entries == {}
    assert InsecureFileSecrets().get("work", SecretName.SESSION_TOKEN) == SECRETS["GATEWAY_TUI_SESSION_TOKEN"]


def test_updating_a_profile_keeps_stored_secrets(monkeypatch, memory_keyring, capsys):
    set_secrets(monkeypatch)
    assert main(ADD) == 0
    for name in SECRETS:
        monkeypatch.delenv(name)
    assert main([*ADD[:-1], "https://wuz2.example.com"]) == 0
    summary = capsys.readouterr().out
    assert "0 secret(s) stored" in summary and "kept as stored: Client-Token, instance token, session token, HMAC key" in summary
    assert config.load_profiles()[0].session_url == "https://wuz2.example.com"
    assert memory_keyring.entries[("gateway-tui", "work:session-token")] == SECRETS["GATEWAY_TUI_SESSION_TOKEN"]


class FlakyKeyring(MemoryKeyring):
    """Refuses the next write of one entry, like a keyring whose unlock prompt was dismissed."""

    refuse_next: str | None = None

    def set_password(self, service: str, username: str, password: str) -> None:
        if username == self.refuse_next:
            self.refuse_next = None
            raise KeyringLocked("Failed to unlock the collection!")
        super().set_password(service, username, password)


def test_a_keyring_failing_mid_way_leaves_the_old_profile_and_secrets(monkeypatch, capsys):
    backend = FlakyKeyring()
    keyring.set_keyring(backend)
    set_secrets(monkeypatch)
    assert main(ADD) == 0
    before_entries, before_file = dict(backend.entries), config.profiles_path().read_text()

    backend.refuse_next = "work:session-token"  # after client and instance tokens were replaced
    set_secrets(monkeypatch, {name: value + "-new" for name, value in SECRETS.items()})
    assert main([*ADD[:-1], "https://wuz2.example.com"]) == 2
    error = capsys.readouterr().err
    assert "Unlock it" in error and "-new" not in error
    assert backend.entries == before_entries
    assert config.profiles_path().read_text() == before_file


def test_remove_also_clears_the_insecure_file(monkeypatch, memory_keyring):
    set_secrets(monkeypatch)
    assert main(["--insecure-storage", *ADD]) == 0
    assert main(["profile", "remove", "work"]) == 0  # no flag: the file is cleaned all the same
    store = InsecureFileSecrets()
    assert all(store.get("work", name) is None for name in SecretName)


class LockedKeyring(MemoryKeyring):
    """A keyring that is there but refuses every request, like one whose unlock prompt was dismissed."""

    def get_password(self, service: str, username: str) -> str | None:
        raise KeyringLocked("Failed to unlock the collection!")

    def delete_password(self, service: str, username: str) -> None:
        raise KeyringLocked("Failed to unlock the collection!")


def test_remove_with_a_locked_keyring_removes_nothing(monkeypatch, memory_keyring, capsys):
    # its secrets are in the keyring, which refuses: the profile stays, so a later remove finds them
    set_secrets(monkeypatch)
    assert main(ADD) == 0
    keyring.set_keyring(LockedKeyring())
    assert main(["profile", "remove", "work"]) == 2
    error = capsys.readouterr().err
    assert "not removed" in error and "Unlock it" in error
    assert [profile.name for profile in config.load_profiles()] == ["work"]


@pytest.mark.parametrize("keyring_here", [fail.Keyring, LockedKeyring], ids=["no-keyring", "locked-keyring"])
def test_remove_of_a_profile_whose_secrets_are_in_the_file_needs_no_keyring(monkeypatch, capsys, keyring_here):
    keyring.set_keyring(fail.Keyring())
    set_secrets(monkeypatch)
    assert main(["--insecure-storage", *ADD]) == 0
    keyring.set_keyring(keyring_here())
    capsys.readouterr()
    assert main(["profile", "remove", "work"]) == 0, capsys.readouterr().err
    assert "Profile 'work' and its secrets removed" in capsys.readouterr().out
    assert config.load_profiles() == []
    assert all(InsecureFileSecrets().get("work", name) is None for name in SecretName)


def test_remove_of_a_profile_saved_without_a_keyring_succeeds(monkeypatch, capsys):
    # no keyring, the secrets in the environment: `profile add` stored none, so there are none to remove
    keyring.set_keyring(fail.Keyring())
    set_secrets(monkeypatch)
    assert main(ADD) == 0
    assert "no secret was stored" in capsys.readouterr().out
    assert main(["profile", "remove", "work"]) == 0, capsys.readouterr().err
    assert "Profile 'work' removed" in capsys.readouterr().out
    assert config.load_profiles() == []


def test_remove_of_an_unknown_profile_without_a_keyring_says_so(monkeypatch, capsys):
    keyring.set_keyring(fail.Keyring())
    assert main(["profile", "remove", "nobody"]) == 1
    captured = capsys.readouterr()
    assert "No profile named 'nobody'" in captured.out and "keyring" not in captured.err


def test_list_shows_each_familys_dialect(monkeypatch, memory_keyring, capsys):
    set_secrets(monkeypatch)
    assert main([*ADD, "--instance-dialect", "zapi"]) == 0
    capsys.readouterr()
    assert main(["profile", "list"]) == 0
    listing = capsys.readouterr().out
    assert "instance family  https://api.example.com  (instance 3C01; Z-API, dialect zapi)" in listing
    assert "session family   https://wuz.example.com  (dialect spec)" in listing


def test_invalid_profile_is_named_and_nothing_is_asked(monkeypatch, memory_keyring, capsys):
    set_secrets(monkeypatch)
    assert main(["profile", "add", "sandbox", "--base-url", "api.example.com", "--instance-id", "1",
                 "--session-url", "https://wuz.example.com"]) == 2
    error = capsys.readouterr().err
    assert "name:" in error and "reserved" in error and "base_url:" in error
    assert not config.profiles_path().exists() and memory_keyring.entries == {}


def test_a_failed_profile_save_puts_the_secrets_back(monkeypatch, memory_keyring, capsys):
    set_secrets(monkeypatch)
    memory_keyring.entries[("gateway-tui", "work:client-token")] = "the-old-client-token"

    def disk_full(_profile):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(config, "save_profile", disk_full)
    assert main(ADD) == 2
    assert "No space left" in capsys.readouterr().err
    assert memory_keyring.entries == {("gateway-tui", "work:client-token"): "the-old-client-token"}


def test_forward_target_is_saved_and_a_remote_one_needs_the_allowance(monkeypatch, capsys):
    set_secrets(monkeypatch)
    assert main([*ADD, "--forward-to", "http://203.0.113.4:3000/hook"]) == 2
    assert "203.0.113.4 is not this machine" in capsys.readouterr().err
    assert config.load_profiles() == []
    assert main([*ADD, "--forward-to", "http://203.0.113.4:3000/hook", "--forward-allow-remote"]) == 0
    (saved,) = config.load_profiles()
    assert (saved.forward_to, saved.forward_allow_remote) == ("http://203.0.113.4:3000/hook", True)


def test_a_hand_edited_remote_forward_target_is_reported_with_its_line():
    path = config.profiles_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text('[profiles.work]\nbase_url = "https://a.example"\ninstance_id = "i"\n'
                    'session_url = "https://s.example"\nforward_to = "http://example.com/hook"\n')
    with pytest.raises(config.ConfigError, match=r"line 1 \(\[profiles.work\]\).*example.com is not this machine"):
        config.load_profiles()


def test_list_reads_a_profile_saved_in_the_private_file_without_the_flag(monkeypatch, capsys):
    """A profile saved with --insecure-storage remembers its 0600 file (secrets_file = true); with no keyring at all,
    `profile list` still shows its secrets as set there (it said "unknown (no keyring)" before)."""
    keyring.set_keyring(fail.Keyring())
    set_secrets(monkeypatch, {"GATEWAY_TUI_SESSION_TOKEN": SECRETS["GATEWAY_TUI_SESSION_TOKEN"]})
    assert main(["profile", "add", "wuz", "--session-url", "https://wuz.example.com", "--insecure-storage"]) == 0
    monkeypatch.delenv("GATEWAY_TUI_SESSION_TOKEN")
    capsys.readouterr()
    assert main(["profile", "list"]) == 0
    listing = capsys.readouterr().out
    assert "session token    set (0600 file)" in listing
    assert "HMAC key         not set" in listing
    assert "unknown (no keyring)" not in listing and "No OS keyring here" not in listing
    assert SECRETS["GATEWAY_TUI_SESSION_TOKEN"] not in listing


def test_list_names_the_gateway_each_dialect_speaks(monkeypatch, memory_keyring, capsys):
    """Issue 38 item 15: the gateway named is the dialect's, not the family's usual one (Evolution API speaks the
    instance family; the spec dialect is no gateway's)."""
    set_secrets(monkeypatch)
    assert main([*ADD, "--instance-dialect", "evolution", "--session-dialect", "spec"]) == 0
    capsys.readouterr()
    assert main(["profile", "list"]) == 0
    listing = capsys.readouterr().out
    assert "instance family  https://api.example.com  (instance 3C01; Evolution API, dialect evolution)" in listing
    assert "session family   https://wuz.example.com  (dialect spec)" in listing


def test_remove_of_a_profile_whose_secrets_were_never_stored_in_the_keyring_succeeds(memory_keyring, capsys):
    """Issue 38 item 15: a keyring that answers, with none of the profile's secrets in it: nothing to remove there."""
    config.save_profile(config.Profile(name="bare", base_url="https://api.example.com", instance_id="3C01"))
    assert main(["profile", "remove", "bare"]) == 0, capsys.readouterr().err
    assert "Profile 'bare' and its secrets removed" in capsys.readouterr().out
    assert config.load_profiles() == [] and memory_keyring.entries == {}


def test_remove_also_clears_the_webhook_url_secret(monkeypatch, memory_keyring):
    """A Z-API profile's webhook URL secret is made by the listener, the doctor or the app, never typed: it goes with
    the profile all the same (the keyring, and the 0600 file)."""
    from tui.local.secrets import ListenerSecret, delivery_path_secret, open_secret_store

    set_secrets(monkeypatch)
    assert main(ADD) == 0
    delivery_path_secret("work", open_secret_store())
    delivery_path_secret("work", InsecureFileSecrets())
    assert ("gateway-tui", "work:delivery-path-secret") in memory_keyring.entries
    assert main(["profile", "remove", "work"]) == 0
    assert memory_keyring.entries == {}
    assert InsecureFileSecrets().get("work", ListenerSecret.DELIVERY_PATH) is None
