"""`listen --all` as a long-running service (issue 32, item 5): `profile add`, `profile remove` and `fleet import`
make a running `listen --all` serve the changed profiles (they send it SIGHUP), without a restart and without
dropping a request; `--print-unit` prints a systemd user unit for it. Real processes, real sockets."""

from __future__ import annotations

import asyncio
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import time

import aiohttp
import pytest

from tests.webhooks.headless import start_headless
from tests.webhooks.test_listen_profile_key import stop
from tests.webhooks.test_listen_profile_signing import WUZ, add
from tui.api.signing import SIGNATURE_HEADER, sign
from tui.cli.main import main
from tui.local.listener_record import running, serving_all

KEYS = {"alpha": "alpha-hmac-key-0123456789abcdefghijk", "beta": "beta-hmac-key-0123456789abcdefghijkl",
        "gamma": "gamma-hmac-key-0123456789abcdefghijk"}
SENDS = 400  # each sender's bound, beside the time bound
BOUND = 60.0


@pytest.fixture(autouse=True)
def no_terminal(monkeypatch):
    monkeypatch.setattr("sys.stdin", io.StringIO(""))


def message(index: int) -> bytes:
    """A WuzAPI json-mode `Message` event (docs/gateways/wuzapi.md §4.3)."""
    return json.dumps({"type": "Message", "event": {
        "Info": {"Chat": "5511999990000@s.whatsapp.net", "Sender": "5511999990000@s.whatsapp.net",
                 "IsFromMe": False, "IsGroup": False, "ID": f"3EB0SERVICE{index:05d}", "PushName": "Ana",
                 "Timestamp": "2026-12-07T10:00:00Z"},
        "Message": {"conversation": f"oi {index}"}}}).encode()


async def post(http: aiohttp.ClientSession, url: str, key: str, index: int) -> int:
    body = message(index)
    async with http.post(url, data=body, headers={"Content-Type": "application/json",
                                                  SIGNATURE_HEADER: sign(key, body)}) as response:
        return response.status


async def until(check, what: str) -> None:
    deadline = time.monotonic() + BOUND
    while not await check():
        assert time.monotonic() < deadline, f"not within {BOUND:.0f} s: {what}"
        await asyncio.sleep(0.02)


async def test_profile_add_and_remove_change_what_a_running_listen_all_serves_without_dropping_a_request(monkeypatch):
    add(monkeypatch, "alpha", *WUZ, key=KEYS["alpha"])
    add(monkeypatch, "beta", *WUZ, key=KEYS["beta"])
    process, url = await start_headless(None, "--all", before=("--insecure-storage",))
    assert [record.pid for record in serving_all()] == [process.pid]
    statuses: dict[str, list[int]] = {"alpha": [], "beta": []}
    done = asyncio.Event()

    async def sender(name: str) -> None:
        # Its own connection, kept alive throughout: a reload must not drop it.
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=30)) as http:
            started = time.monotonic()
            for index in range(SENDS):
                if done.is_set() or time.monotonic() - started > BOUND:
                    return
                statuses[name].append(await post(http, f"{url}/a/{name}/session", KEYS[name], index))

    senders = [asyncio.create_task(sender(name)) for name in statuses]
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=30)) as http:
        assert await post(http, f"{url}/a/gamma/session", KEYS["gamma"], 0) == 404  # not a profile yet
        await until(lambda: asyncio.sleep(0, len(statuses["beta"]) >= 5), "beta's first events")
        add(monkeypatch, "gamma", *WUZ, key=KEYS["gamma"])  # sends the SIGHUP itself

        async def gamma_served() -> bool:
            return await post(http, f"{url}/a/gamma/session", KEYS["gamma"], 1) == 200

        await until(gamma_served, "the added profile's path answering 200")
        assert await post(http, f"{url}/a/gamma/session", KEYS["alpha"], 2) == 401  # verified with its own key
        assert running("gamma") is not None and running("gamma").pid == process.pid  # the doctor finds it
        assert main(["--insecure-storage", "profile", "remove", "beta"]) == 0

        async def beta_gone() -> bool:
            return bool(statuses["beta"]) and statuses["beta"][-1] == 404

        await until(beta_gone, "the removed profile's path answering 404")
        count = len(statuses["alpha"])
        await until(lambda: asyncio.sleep(0, len(statuses["alpha"]) >= count + 5), "alpha's events after both")
    done.set()
    await asyncio.gather(*senders)  # a dropped connection would raise here
    stderr = process.first_line + await stop(process)
    assert set(statuses["alpha"]) == {200}, stderr
    first_404 = statuses["beta"].index(404)
    assert set(statuses["beta"][:first_404]) == {200} and set(statuses["beta"][first_404:]) == {404}, stderr
    assert "reload: now serving gamma; serving 3 profiles" in stderr
    assert "reload: no longer beta (their paths answer 404); serving 2 profiles" in stderr
    assert f"gamma (HMAC key set): session family (session events; signature required): {url}/a/gamma/session" in stderr
    assert serving_all() == [] and running("alpha") is None  # its records go with it


async def test_a_reload_that_cannot_read_the_profiles_keeps_serving_and_says_why(monkeypatch, tmp_path):
    add(monkeypatch, "alpha", *WUZ, key=KEYS["alpha"])
    process, url = await start_headless(None, "--all", before=("--insecure-storage",))
    from tui.local.config import profiles_path

    profiles_path().write_text("this is [not toml")
    process.send_signal(signal.SIGHUP)
    line = ""
    deadline = time.monotonic() + BOUND
    while "reload:" not in line:
        assert time.monotonic() < deadline
        line = (await asyncio.wait_for(process.stderr.readline(), timeout=BOUND)).decode()
    assert line.startswith("reload: kept the profiles served before: "), line
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=30)) as http:
        assert await post(http, f"{url}/a/alpha/session", KEYS["alpha"], 0) == 200
    await stop(process)


def unit(*flags: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tui", "listen", *flags, "--print-unit"], capture_output=True,
                          text=True, timeout=BOUND, env={**os.environ, **(env or {})}, stdin=subprocess.DEVNULL)


def test_print_unit_runs_this_listen_for_every_profile_under_the_same_directories(tmp_path):
    printed = unit("--port", "8799", env={"XDG_CONFIG_HOME": str(tmp_path / "my config")})
    assert printed.returncode == 0, printed.stderr
    lines = printed.stdout.splitlines()
    exec_start = next(line for line in lines if line.startswith("ExecStart="))
    assert exec_start == f"ExecStart={sys.executable} -m tui listen --port 8799 --all"
    assert f'Environment="XDG_CONFIG_HOME={tmp_path / "my config"}"' in lines
    assert "ExecReload=/bin/kill -HUP $MAINPID" in lines and "WantedBy=default.target" in lines
    assert "--print-unit" not in printed.stdout.replace("`listen --print-unit`", "")
    named = unit("--profile", "shop")
    assert next(line for line in named.stdout.splitlines() if line.startswith("ExecStart=")).endswith(
        "listen --profile shop")  # one profile named: that profile, not --all
    if shutil.which("systemd-analyze"):  # systemd's own reading of it, where the machine has systemd's tools
        path = tmp_path / "gateway-tui-listen.service"
        path.write_text(printed.stdout)
        checked = subprocess.run(["systemd-analyze", "verify", "--user", str(path)], capture_output=True, text=True,
                                 timeout=BOUND, stdin=subprocess.DEVNULL)
        assert "gateway-tui-listen.service:" not in checked.stderr, checked.stderr


def test_print_unit_never_writes_a_secret_into_the_unit():
    refused = unit("--forward-to", "http://127.0.0.1:9000/hook?token=app-secret-0123")
    assert refused.returncode == 2 and refused.stdout == ""
    assert "--forward-to's URL carries a secret" in refused.stderr and "app-secret" not in refused.stderr
    plain = unit("--forward-to=http://127.0.0.1:9000/hook")
    assert plain.returncode == 0 and "--forward-to=http://127.0.0.1:9000/hook --all" in plain.stdout
