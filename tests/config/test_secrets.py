"""Secret stores: the keyring layout, environment overrides, masking, the opt-in file and the no-keyring message."""

from __future__ import annotations

import stat

import keyring
import pytest
from keyring.backends import fail
from keyring.errors import KeyringLocked

from tui.local.secrets import (
    InsecureFileSecrets,
    KeyringSecrets,
    KeyringUnavailable,
    SecretName,
    mask_secret,
    open_secret_store,
    resolve_secrets,
    secret_sources,
    stored_secret,
)


def test_keyring_layout(memory_keyring):
    store = open_secret_store()
    assert isinstance(store, KeyringSecrets)
    store.set("work", SecretName.CLIENT_TOKEN, "client-secret-value")
    assert memory_keyring.entries == {("gateway-tui", "work:client-token"): "client-secret-value"}
    assert store.get("work", SecretName.CLIENT_TOKEN) == "client-secret-value"
    store.delete("work", SecretName.CLIENT_TOKEN)
    store.delete("work", SecretName.CLIENT_TOKEN)  # deleting what is not there is fine
    assert memory_keyring.entries == {}


def test_environment_overrides_stored_values():
    store = open_secret_store()
    store.set("work", SecretName.SESSION_TOKEN, "stored-session")
    store.set("work", SecretName.CLIENT_TOKEN, "stored-client")
    resolved = resolve_secrets("work", store, {"GATEWAY_TUI_SESSION_TOKEN": "from-env"})
    assert resolved[SecretName.SESSION_TOKEN] == "from-env"
    assert resolved[SecretName.CLIENT_TOKEN] == "stored-client"
    assert resolved[SecretName.HMAC_KEY] is None
    sources = secret_sources("work", store, {"GATEWAY_TUI_SESSION_TOKEN": "from-env"})
    assert sources == {
        SecretName.CLIENT_TOKEN: "stored",
        SecretName.INSTANCE_TOKEN: "not set",
        SecretName.SESSION_TOKEN: "environment",
        SecretName.HMAC_KEY: "not set",
    }


def test_mask_shows_only_the_last_four_characters_of_long_secrets():
    assert mask_secret("abcdefghijklmnopwxyz") == "••••wxyz"
    assert mask_secret("short") == "••••"
    assert mask_secret(None) == "not set"


def test_no_keyring_backend_gives_a_clear_message():
    keyring.set_keyring(fail.Keyring())
    with pytest.raises(KeyringUnavailable) as caught:
        open_secret_store()
    message = str(caught.value)
    assert "No OS keyring" in message and "--insecure-storage" in message and "Secret Service" in message


def test_a_failing_keyring_call_is_reported_not_hidden(monkeypatch):
    store = open_secret_store()
    keyring.set_keyring(fail.Keyring())  # the backend goes away after the store was opened
    with pytest.raises(KeyringUnavailable):
        store.get("work", SecretName.CLIENT_TOKEN)


def test_stored_secret_looks_in_the_keyring_then_the_private_file(memory_keyring):
    """Issue 21 item 12 (`trigger`): a missing keyring is no error, the private file is read when it holds the
    secret, and a keyring that refuses is reported only when the file does not hold it either."""
    assert stored_secret("work", SecretName.HMAC_KEY) is None
    open_secret_store().set("work", SecretName.HMAC_KEY, "from-the-keyring")
    assert stored_secret("work", SecretName.HMAC_KEY) == "from-the-keyring"
    assert stored_secret("work", SecretName.HMAC_KEY, insecure=True) is None
    InsecureFileSecrets().set("file", SecretName.HMAC_KEY, "from-the-file")
    assert stored_secret("file", SecretName.HMAC_KEY) == "from-the-file"
    keyring.set_keyring(fail.Keyring())
    assert stored_secret("work", SecretName.HMAC_KEY) is None
    assert stored_secret("file", SecretName.HMAC_KEY) == "from-the-file"

    class Locked(type(memory_keyring)):
        def get_password(self, service: str, username: str) -> str | None:
            raise KeyringLocked("locked")

    keyring.set_keyring(Locked())
    assert stored_secret("file", SecretName.HMAC_KEY) == "from-the-file"
    with pytest.raises(KeyringUnavailable, match="refused"):
        stored_secret("work", SecretName.HMAC_KEY)


def test_insecure_storage_file_is_private(isolated_dirs):
    store = open_secret_store(insecure=True)
    assert isinstance(store, InsecureFileSecrets)
    store.set("work", SecretName.HMAC_KEY, "k" * 40)
    mode = stat.S_IMODE(store.path.stat().st_mode)
    assert mode == 0o600
    assert store.get("work", SecretName.HMAC_KEY) == "k" * 40
    store.delete("work", SecretName.HMAC_KEY)
    assert store.get("work", SecretName.HMAC_KEY) is None
    assert stat.S_IMODE(store.path.stat().st_mode) == 0o600


def test_secret_store_reprs_show_no_values():
    store = open_secret_store(insecure=True)
    store.set("work", SecretName.CLIENT_TOKEN, "visible-if-leaked")
    assert "visible-if-leaked" not in repr(store)


def test_a_broken_insecure_file_is_named_without_its_content(isolated_dirs):
    store = open_secret_store(insecure=True)
    store.path.parent.mkdir(parents=True, exist_ok=True)
    store.path.write_text('{"work:client-token": "half-written-secret')
    with pytest.raises(KeyringUnavailable) as caught:
        store.get("work", SecretName.CLIENT_TOKEN)
    assert str(store.path) in str(caught.value) and "half-written-secret" not in str(caught.value)


def test_the_file_is_parsed_once_for_many_reads_and_again_when_it_changed(monkeypatch):
    """Opening 1,000 accounts reads 2,000 secrets: each read parsed the whole file again (quadratic, seconds of the
    app's start with the secrets in the file: bench/fleet.py). The file is parsed again only once it changed, here
    by another writer (another process's `profile add`)."""
    import json

    writer = InsecureFileSecrets()
    for number in range(50):
        writer.set(f"p{number}", SecretName.HMAC_KEY, f"key-{number}")
    parses: list[str] = []
    real_loads = json.loads
    monkeypatch.setattr(json, "loads", lambda text, *a, **k: parses.append("x") or real_loads(text, *a, **k))
    reader = InsecureFileSecrets()
    assert [reader.get(f"p{number}", SecretName.HMAC_KEY) for number in range(50)] == [f"key-{n}" for n in range(50)]
    assert len(parses) == 1
    writer.set("p7", SecretName.HMAC_KEY, "changed")
    assert reader.get("p7", SecretName.HMAC_KEY) == "changed"
