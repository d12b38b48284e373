"""One round trip through a real Secret Service: gnome-keyring on a private D-Bus session that this test starts,
with a throwaway HOME. `gateway-tui profile add` (the installed console script) stores the secrets; a separate
Python process reads them back through the Secret Service backend by name, so a silent fallback cannot pass."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = [
    pytest.mark.real_keyring,
    pytest.mark.skipif(
        shutil.which("dbus-run-session") is None or shutil.which("gnome-keyring-daemon") is None,
        reason="needs dbus-run-session and gnome-keyring-daemon (apt-get install gnome-keyring dbus dbus-x11; .ci/run does)",
    ),
]

GATEWAY_TUI = Path(sys.executable).with_name("gateway-tui")
SECRETS = {
    "GATEWAY_TUI_CLIENT_TOKEN": "real-keyring-client-0001",
    "GATEWAY_TUI_INSTANCE_TOKEN": "real-keyring-instance-0002",
    "GATEWAY_TUI_SESSION_TOKEN": "real-keyring-session-0003",
    "GATEWAY_TUI_HMAC_KEY": "real-keyring-hmac-0004-0123456789abcdef",
}

READ_BACK = textwrap.dedent(
    """
    import keyring
    from keyring.backends import SecretService
    print("default backend", type(keyring.get_keyring()).__module__)
    backend = SecretService.Keyring()
    for user in ("work:client-token", "work:instance-token", "work:session-token", "work:hmac-key"):
        print(user, backend.get_password("gateway-tui", user))
    """
)

# Runs inside the private session: unlock a fresh login keyring (password on stdin, never argv), add the
# profile with secrets from the environment, read them back, remove the profile, read again.
SESSION = """
eval "$(printf 'throwaway\\n' | gnome-keyring-daemon --unlock --components=secrets)"
"$GATEWAY_TUI" profile add work --base-url https://api.example.com --instance-id 3C01 \
    --session-url https://wuz.example.com </dev/null || exit 10
"$PYTHON" "$READ_BACK"
echo "--- list"
env -u GATEWAY_TUI_CLIENT_TOKEN -u GATEWAY_TUI_INSTANCE_TOKEN -u GATEWAY_TUI_SESSION_TOKEN \
    -u GATEWAY_TUI_HMAC_KEY "$GATEWAY_TUI" profile list || exit 11
"$GATEWAY_TUI" profile remove work || exit 12
echo "--- after remove"
"$PYTHON" "$READ_BACK"
"""


def test_profile_secrets_round_trip_through_gnome_keyring(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    read_back = tmp_path / "read_back.py"
    read_back.write_text(READ_BACK)
    env = {key: value for key, value in os.environ.items() if not key.startswith(("DBUS_", "PYTHON_KEYRING"))}
    env.update(
        SECRETS,
        HOME=str(home),
        XDG_RUNTIME_DIR=str(tmp_path),
        XDG_DATA_HOME=str(home / "data"),
        GATEWAY_TUI=str(GATEWAY_TUI),
        PYTHON=sys.executable,
        READ_BACK=str(read_back),
    )
    result = subprocess.run(
        ["dbus-run-session", "--", "sh", "-c", SESSION],
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=90,
    )
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    before, rest = result.stdout.split("--- list")
    listing, after = rest.split("--- after remove")
    assert "default backend keyring.backends.SecretService" in before
    for user, variable in (("client-token", "GATEWAY_TUI_CLIENT_TOKEN"), ("instance-token", "GATEWAY_TUI_INSTANCE_TOKEN"),
                           ("session-token", "GATEWAY_TUI_SESSION_TOKEN"), ("hmac-key", "GATEWAY_TUI_HMAC_KEY")):
        assert f"work:{user} {SECRETS[variable]}" in before.splitlines()
        assert f"work:{user} None" in after.splitlines()
    assert listing.count("set (keyring)") == 4, listing
    assert not any(value in listing for value in SECRETS.values())
