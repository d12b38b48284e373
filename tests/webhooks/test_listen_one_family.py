"""`gateway-tui listen --profile P` with a one-family profile (issue 22): real `listen` processes, real sockets.
A WuzAPI-only profile verifies its session events with its HMAC key; a Z-API-only profile keeps no key (Z-API never
signs), so it listens for Z-API's callbacks without reading any secret, even with no keyring at all."""

from __future__ import annotations

import io
import json

import aiohttp
import pytest

from tests.webhooks.headless import start_headless
from tests.webhooks.test_listen_profile_key import OTHER_KEY, PROFILE_KEY, judged, stop
from tui.local import config
from tui.cli.main import main
from tui.local.paths import profile_events_path
from tui.webhooks.store import EventStore

# Z-API's on-message-received callback as its docs show it (docs/gateways/zapi.md §5.3), unsigned as Z-API sends it.
RECEIVED = json.dumps({
    "type": "ReceivedCallback", "instanceId": "3C01", "messageId": "3EB0ZAPI0001", "phone": "5511999990000",
    "fromMe": False, "momment": 1632228638000, "status": "RECEIVED", "chatName": "Ana", "senderName": "Ana",
    "isGroup": False, "text": {"message": "oi"},
}).encode()


@pytest.fixture(autouse=True)
def no_terminal(monkeypatch):
    monkeypatch.setattr("sys.stdin", io.StringIO(""))


async def test_a_session_only_profile_verifies_with_its_key(monkeypatch):
    monkeypatch.setenv("GATEWAY_TUI_SESSION_TOKEN", "one-session-token-0003")
    monkeypatch.setenv("GATEWAY_TUI_HMAC_KEY", PROFILE_KEY)
    assert main(["--insecure-storage", "profile", "add", "work", "--session-url", "https://wuz.example.com"]) == 0
    monkeypatch.delenv("GATEWAY_TUI_SESSION_TOKEN")
    monkeypatch.delenv("GATEWAY_TUI_HMAC_KEY")
    process, url = await start_headless(None, "--profile", "work", before=("--insecure-storage",))
    statuses, stderr = await judged(process, url)
    assert statuses == [401, 401, 200], stderr
    assert f"session family (session events; signature required): {url}/session" in stderr
    assert "instance family" not in stderr  # the profile has none: no URL to give Z-API
    assert PROFILE_KEY not in stderr and OTHER_KEY not in stderr


async def test_an_instance_only_profile_listens_for_z_api_without_any_keyring():
    config.save_profile(config.Profile(name="z", base_url="https://api.z-api.io", instance_id="3C01"))
    # No keyring and no --insecure-storage: a profile with the session family would be refused here (its key cannot
    # be read); a Z-API-only one has no key to read.
    process, url = await start_headless(
        None, "--profile", "z", extra_env={"PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring"}
    )
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=10)) as http:
        async with http.post(url + "/delivery", data=RECEIVED, headers={"Content-Type": "application/json"}) as answer:
            status = answer.status
    stderr = process.first_line + await stop(process)
    assert status == 200, stderr
    assert "no HMAC key (Z-API does not sign its callbacks)" in stderr
    assert f"instance family (delivery callbacks; unsigned accepted, as Z-API sends): {url}/delivery" in stderr
    assert "session family" not in stderr
    with EventStore(profile_events_path("z")) as store:
        [event] = store.newest(10)
    assert (event.kind, str(event.verdict), event.rejected) == ("ReceivedCallback", "no-key", False)


async def test_a_profile_that_keeps_its_secrets_in_the_private_file_needs_no_flag_to_listen(monkeypatch):
    # Added with --insecure-storage on a machine with no keyring: the profile remembers the 0600 file, as the app,
    # `call` and `locate` find it without the flag; `listen` must too, or it refuses ("cannot read the key").
    monkeypatch.setenv("GATEWAY_TUI_SESSION_TOKEN", "one-session-token-0003")
    monkeypatch.setenv("GATEWAY_TUI_HMAC_KEY", PROFILE_KEY)
    assert main(["--insecure-storage", "profile", "add", "work", "--session-url", "https://wuz.example.com"]) == 0
    monkeypatch.delenv("GATEWAY_TUI_SESSION_TOKEN")
    monkeypatch.delenv("GATEWAY_TUI_HMAC_KEY")
    assert [profile.secrets_file for profile in config.load_profiles()] == [True]
    process, url = await start_headless(
        None, "--profile", "work", extra_env={"PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring"}
    )
    statuses, stderr = await judged(process, url)
    assert statuses == [401, 401, 200], stderr
