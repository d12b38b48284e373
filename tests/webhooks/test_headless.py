"""`gateway-tui listen` as users and scripts run it: a real process, real signals, JSON lines on stdout."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys

import aiohttp
import pytest

from tests.webhooks.conftest import KEY
from tests.webhooks.headless import start_headless
from tests.webhooks.test_signing import JSON_BODY, JSON_BODY_SIGNATURE
from tui.cli.listen import _is_loopback
from tui.webhooks.store import EventStore

SIGNED = {"Content-Type": "application/json", "x-hmac-signature": JSON_BODY_SIGNATURE}
UNSIGNED = {"Content-Type": "application/json"}


async def post(url: str, body: bytes, headers: dict[str, str]) -> int:
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=10)) as http:
        async with http.post(url + "/hook", data=body, headers=headers) as response:
            return response.status


async def stop(process, sig=signal.SIGINT) -> tuple[bytes, bytes]:
    process.send_signal(sig)
    stdout, stderr = await asyncio.wait_for(process.communicate(), timeout=30)
    return stdout or b"", stderr


async def test_print_json_gives_one_line_per_stored_event(tmp_path):
    process, url = await start_headless(tmp_path / "e.sqlite3", "--print-json", key=KEY, stdout=asyncio.subprocess.PIPE)
    statuses = [
        await post(url, JSON_BODY, SIGNED),
        await post(url, JSON_BODY, UNSIGNED),
        await post(url, b"{broken", SIGNED),
    ]
    async with aiohttp.ClientSession() as http:
        async with http.get(url + "/hook") as response:
            statuses.append(response.status)
    stdout, stderr = await stop(process)
    assert statuses == [200, 401, 401, 405]
    assert process.returncode == 0
    lines = [json.loads(line) for line in stdout.decode().splitlines()]
    assert [(line["id"], line["verdict"], line["rejected"]) for line in lines] == [
        (1, "valid", False), (2, "unsigned", True), (3, "invalid", True)]
    assert lines[0]["kind"] == "Message" and lines[0]["payload"]["event"]["Message"]["conversation"] == "hello"
    assert lines[0]["body"] == JSON_BODY.decode()
    assert "stopped: 3 events stored, 2 rejected" in stderr.decode()
    assert KEY not in stdout.decode() + stderr.decode()


async def test_by_default_one_readable_line_per_event_on_stdout_at_once(tmp_path):
    """Issue 21 item 12: without --print-json, `listen` prints one line per stored event (time, kind, verdict,
    summary) on stdout, each while the listener runs (not held in a buffer until it stops), with what a sender
    wrote made harmless for the terminal (no escape sequences)."""
    import re

    from tui.api.signing import sign

    process, url = await start_headless(tmp_path / "e.sqlite3", key=KEY, stdout=asyncio.subprocess.PIPE)
    try:
        assert await post(url, JSON_BODY, SIGNED) == 200
        first = await asyncio.wait_for(process.stdout.readline(), timeout=10)  # promptly, before the stop
        assert await post(url, JSON_BODY, UNSIGNED) == 401
        hostile = json.dumps({"type": "Message", "event": {"Info": {"ID": "3EB0E5C", "Chat": "1@s.whatsapp.net"},
                              "Message": {"conversation": "red \x1b[31m alert \x07 bell"}}}).encode()
        assert await post(url, hostile, {"Content-Type": "application/json", "x-hmac-signature": sign(KEY, hostile)}) == 200
        assert await post(url, JSON_BODY, SIGNED) == 200  # the same delivery again
    finally:
        stdout, stderr = await stop(process)
    assert process.returncode == 0, stderr
    lines = [first.decode().rstrip("\n"), *stdout.decode().splitlines()]
    assert len(lines) == 4, lines
    pattern = r"(\d\d:\d\d:\d\d) +#(\d+) +(\S+) +(\S+) +(.+)"
    parsed = [re.fullmatch(pattern, line) for line in lines]
    assert all(parsed), lines
    assert [(m[2], m[3], m[4]) for m in parsed] == [
        ("1", "Message", "valid"), ("2", "Message", "rejected"), ("3", "Message", "valid"), ("4", "Message", "valid")]
    assert "hello" in parsed[0][5]
    assert "\x1b" not in stdout.decode() and "\x07" not in stdout.decode() and "alert" in parsed[2][5]
    assert parsed[3][5].startswith("duplicate of #1 · ")
    assert "{" not in stdout.decode()  # lines for people, not the JSON of --print-json


async def test_key_is_not_on_the_command_line(tmp_path):
    process, _url = await start_headless(tmp_path / "e.sqlite3", key=KEY)
    try:
        with open(f"/proc/{process.pid}/cmdline", "rb") as cmdline:
            assert KEY.encode() not in cmdline.read()
    finally:
        await stop(process)


async def test_sigterm_stops_cleanly_and_events_persist(tmp_path):
    db = tmp_path / "e.sqlite3"
    process, url = await start_headless(db)
    assert await post(url, JSON_BODY, UNSIGNED) == 200
    _, stderr = await stop(process, signal.SIGTERM)
    assert process.returncode == 0, stderr
    with EventStore(db) as store:
        assert store.count() == 1
        assert store.newest(1)[0].verdict == "no-key"


async def test_accept_unsigned_stores_with_a_key_set(tmp_path):
    process, url = await start_headless(tmp_path / "e.sqlite3", "--accept-unsigned", key=KEY)
    try:
        assert await post(url, JSON_BODY, UNSIGNED) == 200
        assert await post(url, JSON_BODY, {**UNSIGNED, "x-hmac-signature": "0" * 64}) == 200
    finally:
        await stop(process)


async def test_max_body_flag(tmp_path):
    process, url = await start_headless(tmp_path / "e.sqlite3", "--max-body", "50")
    try:
        assert await post(url, JSON_BODY, UNSIGNED) == 413
        assert await post(url, b'{"type":"Tiny"}', UNSIGNED) == 200
    finally:
        await stop(process)


def test_port_in_use_is_a_clear_error(tmp_path):
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = subprocess.run(
            [sys.executable, "-m", "tui", "listen", "--port", str(port), "--db", str(tmp_path / "e.sqlite3")],
            capture_output=True, text=True, timeout=60,
        )
    assert result.returncode == 1
    assert f"cannot listen on 127.0.0.1:{port}" in result.stderr


@pytest.mark.parametrize(
    ("host", "loopback"),
    [("127.0.0.1", True), ("127.0.0.2", True), ("::1", True), ("[::1]", True), ("localhost", True),
     ("0.0.0.0", False), ("::", False), ("192.168.1.10", False), ("example.org", False)],
)
def test_non_loopback_addresses_are_recognised(host, loopback):
    assert _is_loopback(host) is loopback


def test_webhooks_package_never_imports_textual():
    code = (
        "import sys, tui.webhooks.listener, tui.webhooks.store, tui.webhooks.events, tui.api.signing;"
        "print('textual' in sys.modules)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert result.stdout.strip() == "False"


def test_warns_before_binding_a_non_loopback_address(tmp_path):
    # 192.0.2.1 is TEST-NET-1: never assigned to this machine, so the bind fails after the warning.
    result = subprocess.run(
        [sys.executable, "-m", "tui", "listen", "--host", "192.0.2.1", "--port", "0", "--db", str(tmp_path / "e.sqlite3")],
        capture_output=True, text=True, timeout=60,
    )
    assert "warning: listening on 192.0.2.1, not loopback" in result.stderr
    assert result.returncode == 1


async def test_listen_prints_each_familys_url_and_judges_per_family(tmp_path):
    process, url = await start_headless(tmp_path / "e.sqlite3", key=KEY)
    try:
        lines = [(await asyncio.wait_for(process.stderr.readline(), timeout=30)).decode() for _ in range(3)]
        assert f"{url}/delivery" in lines[0] and "unsigned accepted" in lines[0]
        assert f"{url}/session" in lines[1] and "signature required" in lines[1]
        assert "largest body accepted: 157286400 bytes" in lines[2]
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=10)) as http:
            async with http.post(url + "/delivery", data=b'{"type":"DeliveryCallback","phone":"5544999999999"}', headers=UNSIGNED) as response:
                assert response.status == 200
            async with http.post(url + "/session", data=JSON_BODY, headers=UNSIGNED) as response:
                assert response.status == 401
    finally:
        await stop(process)


async def test_require_signatures_flag_makes_delivery_strict(tmp_path):
    process, url = await start_headless(tmp_path / "e.sqlite3", "--require-signatures", "--max-body", "2M", key=KEY)
    try:
        lines = [(await asyncio.wait_for(process.stderr.readline(), timeout=30)).decode() for _ in range(3)]
        assert "signature required" in lines[0] and "2097152 bytes" in lines[2]
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=10)) as http:
            async with http.post(url + "/delivery", data=JSON_BODY, headers=UNSIGNED) as response:
                assert response.status == 401
            async with http.post(url + "/delivery", data=JSON_BODY, headers=SIGNED) as response:
                assert response.status == 200
    finally:
        await stop(process)
