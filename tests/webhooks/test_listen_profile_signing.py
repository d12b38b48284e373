"""What a profile saved says about signatures holds wherever `listen` receives its events (issue 37): a profile
without the instance family has no unsigned `/delivery` (that exception is for Z-API's callbacks only), and a
profile saved with `--require-signatures` refuses unsigned events under `listen --profile` and `listen --all` as the
flag does. Real `listen` processes, real sockets."""

from __future__ import annotations

import io
import json

import aiohttp
import pytest

from tests.webhooks.headless import start_headless
from tests.webhooks.test_listen_one_family import RECEIVED
from tests.webhooks.test_listen_profile_key import PROFILE_KEY, stop
from tui.cli.main import main
from tui.local.paths import fleet_events_path, profile_events_path
from tui.webhooks.listener import REJECTED_BODY_KEPT
from tui.api.signing import SIGNATURE_HEADER, sign
from tui.webhooks.store import EventStore

WUZ = ["--session-url", "https://wuz.example.com"]
ZAPI = ["--base-url", "https://api.z-api.io", "--instance-id", "3C01"]
TOKENS = {"GATEWAY_TUI_CLIENT_TOKEN": "sig-client-token-0001", "GATEWAY_TUI_INSTANCE_TOKEN": "sig-instance-token-0002",
          "GATEWAY_TUI_SESSION_TOKEN": "sig-session-token-0003"}


@pytest.fixture(autouse=True)
def no_terminal(monkeypatch):
    monkeypatch.setattr("sys.stdin", io.StringIO(""))


def add(monkeypatch, name: str, *flags: str, key: str | None = PROFILE_KEY) -> None:
    for variable, value in TOKENS.items():
        monkeypatch.setenv(variable, value)
    if key is not None:
        monkeypatch.setenv("GATEWAY_TUI_HMAC_KEY", key)
    assert main(["--insecure-storage", "profile", "add", name, *flags]) == 0
    for variable in (*TOKENS, "GATEWAY_TUI_HMAC_KEY"):  # `listen` must find them stored, not in its environment
        monkeypatch.delenv(variable, raising=False)


async def post(url: str, body: bytes, key: str | None = None) -> int:
    headers = {"Content-Type": "application/json"}
    if key is not None:
        headers[SIGNATURE_HEADER] = sign(key, body)
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=30)) as http:
        async with http.post(url, data=body, headers=headers) as response:
            return response.status


def big_callback(size: int) -> bytes:
    """Z-API's on-message-received callback (docs/gateways/zapi.md §5.3), its text padded to `size` bytes in all."""
    head, tail = RECEIVED[:-3], RECEIVED[-3:]  # ...,"text":{"message":"oi"}} -> pad inside the message
    return head + b"x" * (size - len(RECEIVED)) + tail


async def test_a_session_only_profile_has_no_unsigned_delivery_under_listen_profile(monkeypatch):
    add(monkeypatch, "wuz", *WUZ)
    process, url = await start_headless(None, "--profile", "wuz", before=("--insecure-storage",))
    body = big_callback(5 * 1024 * 1024)
    statuses = [await post(url + "/delivery", body), await post(url + "/delivery", RECEIVED, PROFILE_KEY)]
    stderr = process.first_line + await stop(process)
    assert statuses == [401, 200], stderr
    with EventStore(profile_events_path("wuz")) as store:
        unsigned, signed = reversed(store.newest(10))
    assert (unsigned.rejected, unsigned.reason, unsigned.cut_from) == (True, "signature missing", len(body))
    assert len(unsigned.body) <= REJECTED_BODY_KEPT  # not stored whole
    assert not signed.rejected


async def test_a_session_only_profile_has_no_unsigned_delivery_under_listen_all(monkeypatch):
    add(monkeypatch, "wuz", *WUZ)
    add(monkeypatch, "both", *ZAPI, *WUZ)
    process, url = await start_headless(None, "--all", before=("--insecure-storage",))
    statuses = [await post(url + "/a/wuz/delivery", RECEIVED), await post(url + "/a/both/delivery", RECEIVED)]
    stderr = process.first_line + await stop(process)
    assert statuses == [401, 200], stderr  # Z-API's unsigned callbacks still reach a profile that has Z-API
    with EventStore(fleet_events_path()) as store:
        assert [(event.account, event.rejected) for event in reversed(store.newest(10))] == [
            ("wuz", True), ("both", False)]


async def test_a_saved_require_signatures_holds_under_listen_profile(monkeypatch):
    add(monkeypatch, "work", *ZAPI, *WUZ, "--require-signatures")
    process, url = await start_headless(None, "--profile", "work", before=("--insecure-storage",))
    statuses = [await post(url + "/delivery", RECEIVED), await post(url + "/delivery", RECEIVED, PROFILE_KEY)]
    stderr = process.first_line + await stop(process)
    assert statuses == [401, 200], stderr
    assert "refused (401) on every path" in stderr
    assert f"instance family (delivery callbacks; signature required): {url}/delivery" in stderr


async def test_a_saved_require_signatures_holds_under_listen_all(monkeypatch):
    add(monkeypatch, "work", *ZAPI, *WUZ, "--require-signatures")
    add(monkeypatch, "other", *ZAPI, *WUZ)
    process, url = await start_headless(None, "--all", before=("--insecure-storage",))
    statuses = [await post(url + "/a/work/delivery", RECEIVED), await post(url + "/a/other/delivery", RECEIVED)]
    stderr = process.first_line + await stop(process)
    assert statuses == [401, 200], stderr
    assert f"work (HMAC key set): instance family (delivery callbacks; signature required): {url}/a/work/delivery" in stderr


def test_profile_list_shows_the_saved_signature_policy(monkeypatch, capsys):
    add(monkeypatch, "work", *ZAPI, *WUZ, "--require-signatures")
    add(monkeypatch, "other", *ZAPI, *WUZ)
    add(monkeypatch, "wuz", *WUZ)
    capsys.readouterr()
    assert main(["--insecure-storage", "profile", "list"]) == 0
    shown: dict[str, list[str]] = {}
    for line in capsys.readouterr().out.splitlines():  # a profile's name, then its indented lines
        if line.startswith("  "):
            shown[name].append(line.strip())
        else:
            name = line
            shown[name] = []
    assert "signatures       required on every path (/delivery included)" in shown["work"]
    assert "signatures       required, except Z-API's unsigned callbacks on /delivery" in shown["other"]
    assert "signatures       required on every path" in shown["wuz"]
