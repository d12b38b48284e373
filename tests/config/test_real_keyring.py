"""One round trip through a real Secret Service: gnome-keyring on a private D-Bus session started here."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap

import pytest

pytestmark = [
    pytest.mark.real_keyring,
    pytest.mark.skipif(
        shutil.which("dbus-run-session") is None or shutil.which("gnome-keyring-daemon") is None,
        reason="needs dbus-run-session and gnome-keyring-daemon (.ci/run installs them)",
    ),
]

SECRETS = {
    "GATEWAY_TUI_CLIENT_TOKEN": "real-keyring-client-0001",
    "GATEWAY_TUI_INSTANCE_TOKEN": "real-keyring-instance-0002",
    "GATEWAY_TUI_SESSION_TOKEN": "real-keyring-session-0003",
}

# Runs inside the session: `gateway-tui profile add` through the default (real) backend, then reads the
# entries back through the Secret Service backend explicitly, so a silent fallback cannot pass.
CHECK = textwrap.dedent(
    """
    import sys
    from keyring.backends import SecretService
    from tui.cli import main
    code = main(["profile", "add", "work", "--base-url", "https://api.example.com", "--instance-id", "3C01",
                 "--session-url", "https://wuz.example.com"])
    assert code == 0, code
    backend = SecretService.Keyring()
    for user in ("work:client-token", "work:instance-token", "work:session-token"):
        print(user, backend.get_password("gateway-tui", user))
    from tui.secrets import KeyringSecrets, SecretName, open_secret_store
    store = open_secret_store()
    assert isinstance(store, KeyringSecrets), store
    store.delete("work", SecretName.CLIENT_TOKEN)
    print("after delete", backend.get_password("gateway-tui", "work:client-token"))
    """
)


def test_profile_secrets_round_trip_through_gnome_keyring(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    script = tmp_path / "check.py"
    script.write_text(CHECK)
    env = {key: value for key, value in os.environ.items() if not key.startswith(("DBUS_", "PYTHON_KEYRING"))}
    env.update(SECRETS, HOME=str(home), XDG_RUNTIME_DIR=str(tmp_path), XDG_DATA_HOME=str(home / "data"))
    # The unlock password goes through stdin, never argv.
    shell = 'eval "$(printf "throwaway\\n" | gnome-keyring-daemon --unlock --components=secrets)"; exec "$0" "$1"'
    result = subprocess.run(
        ["dbus-run-session", "--", "sh", "-c", shell, sys.executable, str(script)],
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    lines = result.stdout.splitlines()
    assert "work:client-token real-keyring-client-0001" in lines
    assert "work:instance-token real-keyring-instance-0002" in lines
    assert "work:session-token real-keyring-session-0003" in lines
    assert "after delete None" in lines
