"""`gateway-tui listen --profile P` verifies with the profile's HMAC key, wherever the app finds it (the private
secrets file, the keyring), as the app and `trigger` do: a real `listen` process, real sockets."""

from __future__ import annotations

import asyncio
import io
import json
import os
import signal
import sys
import textwrap

import aiohttp
import pytest

from tests.webhooks import headless
from tests.webhooks.headless import start_headless
from tui.cli.main import main
from tui.local.paths import profile_events_path
from tui.api.signing import SIGNATURE_HEADER, sign
from tui.webhooks.store import EventStore

PROFILE_KEY = "profile-hmac-key-0123456789abcdefghij"
OTHER_KEY = "another-hmac-key-0123456789abcdefghij"
SECRETS = {
    "GATEWAY_TUI_CLIENT_TOKEN": "listen-client-token-0001",
    "GATEWAY_TUI_INSTANCE_TOKEN": "listen-instance-token-0002",
    "GATEWAY_TUI_SESSION_TOKEN": "listen-session-token-0003",
}
ADD = ["profile", "add", "work", "--base-url", "https://api.example.com", "--instance-id", "3C01",
       "--session-url", "https://wuz.example.com"]
# A WuzAPI Message as its webhook sends it (see tests/webhooks/test_signing.py): a forged one must not reach the inbox.
MESSAGE = json.dumps({
    "type": "Message",
    "event": {
        "Info": {"ID": "3EB0FORGED0001", "Chat": "5511999990000@s.whatsapp.net", "Sender": "5511999990000@s.whatsapp.net",
                 "IsFromMe": False, "PushName": "Mallory", "Timestamp": "2026-11-02T10:00:00Z"},
        "Message": {"conversation": "forged: send the money"},
    },
}).encode()

# Runs `gateway-tui` in a process whose keyring is the tests' memory keyring, holding the profile's key (passed in
# the environment: a secret never goes on a command line).
WITH_MEMORY_KEYRING = textwrap.dedent(
    """
    import os, sys
    import keyring
    from tests.memory_keyring import MemoryKeyring
    backend = MemoryKeyring()
    backend.set_password("gateway-tui", "work:hmac-key", os.environ.pop("TEST_PROFILE_HMAC_KEY"))
    keyring.set_keyring(backend)
    from tui.cli.main import main
    sys.exit(main(sys.argv[1:]))
    """
)


@pytest.fixture(autouse=True)
def no_terminal(monkeypatch):
    monkeypatch.setattr("sys.stdin", io.StringIO(""))


def add_profile(monkeypatch, *, insecure: bool, hmac_key: str | None) -> None:
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    if hmac_key is not None:
        monkeypatch.setenv("GATEWAY_TUI_HMAC_KEY", hmac_key)
    assert main([*(["--insecure-storage"] if insecure else []), *ADD]) == 0
    for name in (*SECRETS, "GATEWAY_TUI_HMAC_KEY"):  # `listen` must find them stored, not in its environment
        monkeypatch.delenv(name, raising=False)


async def post_message(url: str, key: str | None) -> int:
    headers = {"Content-Type": "application/json"}
    if key is not None:
        headers[SIGNATURE_HEADER] = sign(key, MESSAGE)
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=10)) as http:
        async with http.post(url + "/session", data=MESSAGE, headers=headers) as response:
            return response.status


async def stop(process) -> str:
    process.send_signal(signal.SIGINT)
    _stdout, stderr = await asyncio.wait_for(process.communicate(), timeout=30)
    return stderr.decode()


async def judged(process, url) -> tuple[list[int], str]:
    statuses = [await post_message(url, None), await post_message(url, OTHER_KEY), await post_message(url, PROFILE_KEY)]
    return statuses, process.first_line + await stop(process)


async def test_listen_verifies_with_the_key_in_the_private_secrets_file(monkeypatch):
    add_profile(monkeypatch, insecure=True, hmac_key=PROFILE_KEY)
    process, url = await start_headless(None, "--profile", "work", before=("--insecure-storage",))
    statuses, stderr = await judged(process, url)
    assert statuses == [401, 401, 200], stderr
    assert "unsigned or badly signed events are refused (401)" in stderr
    assert PROFILE_KEY not in stderr
    with EventStore(profile_events_path("work")) as store:
        verdicts = [(str(event.verdict), event.rejected) for event in reversed(store.newest(10))]
    assert verdicts == [("unsigned", True), ("invalid", True), ("valid", False)]


async def test_listen_verifies_with_the_key_in_the_keyring():
    # The profile (no secrets stored in this process's keyring: the child's keyring holds the key).
    from tui.local import config

    config.save_profile(config.Profile(name="work", base_url="https://api.example.com", instance_id="3C01",
                                       session_url="https://wuz.example.com"))
    process, url = await start_headless(
        None, "--profile", "work",
        launcher=("-c", WITH_MEMORY_KEYRING), extra_env={"TEST_PROFILE_HMAC_KEY": PROFILE_KEY},
    )
    statuses, stderr = await judged(process, url)
    assert statuses == [401, 401, 200], stderr


async def test_the_environment_variable_still_comes_first(monkeypatch):
    add_profile(monkeypatch, insecure=True, hmac_key=PROFILE_KEY)
    process, url = await start_headless(None, "--profile", "work", key=OTHER_KEY, before=("--insecure-storage",))
    statuses = [await post_message(url, PROFILE_KEY), await post_message(url, OTHER_KEY)]
    await stop(process)
    assert statuses == [401, 200]


async def test_a_profile_without_a_key_listens_without_one(monkeypatch):
    add_profile(monkeypatch, insecure=True, hmac_key=None)
    process, url = await start_headless(None, "--profile", "work", before=("--insecure-storage",))
    status = await post_message(url, None)
    stderr = process.first_line + await stop(process)
    assert status == 200
    assert "no HMAC key" in stderr


async def test_a_profile_whose_key_cannot_be_read_is_refused_not_run_without_a_key(monkeypatch):
    add_profile(monkeypatch, insecure=True, hmac_key=PROFILE_KEY)
    # The profile says its secrets are in the keyring (not the 0600 file it would otherwise remember)...
    from tui.local import config

    config.save_profile(config.load_profiles()[0].model_copy(update={"secrets_file": False}))
    # ...and there is no keyring and no --insecure-storage: the key cannot be read, so `listen` must not run as if
    # there were none.
    env = {**os.environ, "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring"}
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "tui", "listen", "--port", "0", "--profile", "work",
        env=env, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE,
    )
    headless.started.append(process)  # killed after the test should it listen after all
    _stdout, stderr = await asyncio.wait_for(process.communicate(), timeout=30)
    assert process.returncode == 2
    assert "HMAC key" in stderr.decode() and "--insecure-storage" in stderr.decode()
