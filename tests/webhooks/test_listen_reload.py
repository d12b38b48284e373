"""SIGHUP makes a running `listen --all` serve the profiles as they are now (issue 32): a profile added answers 200
on its own paths with its key, one removed answers 404, and a sender posting throughout sees only 200s (nothing in
flight is dropped, no restart)."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import signal
import sys

import aiohttp

from tests.webhooks.headless import start_headless
from tui.local import config
from tui.local.secrets import InsecureFileSecrets, SecretName

KEYS = {name: f"{name}-hmac-key-0123456789abcdefghijklmnop" for name in ("alpha", "beta", "gamma")}
# A WuzAPI Message as its webhook posts it (JSON mode), literal.
MESSAGE = (b'{"type":"Message","event":{"Info":{"ID":"3EB0HUP0001","Chat":"5511999990000@s.whatsapp.net",'
           b'"Sender":"5511999990000@s.whatsapp.net","IsFromMe":false,"PushName":"Ana"},'
           b'"Message":{"conversation":"hello"}}}')


def add_profile(name: str) -> None:
    config.save_profile(config.Profile(name=name, session_url="http://127.0.0.1:9", secrets_file=True))
    InsecureFileSecrets().set(name, SecretName.HMAC_KEY, KEYS[name])


async def post(http: aiohttp.ClientSession, url: str, name: str, body: bytes = MESSAGE) -> int:
    signature = hmac.new(KEYS[name].encode(), body, hashlib.sha256).hexdigest()
    async with http.post(f"{url}/a/{name}/session", data=body,
                         headers={"Content-Type": "application/json", "x-hmac-signature": signature}) as answer:
        await answer.read()
        return answer.status


async def test_sighup_serves_the_profiles_as_they_are_now_without_dropping_a_request():
    for name in ("alpha", "beta"):
        add_profile(name)
    process, url = await start_headless(None, "--all")
    try:
        async with aiohttp.ClientSession() as http:
            assert await post(http, url, "gamma") == 404
            statuses: list[int] = []
            reloaded = asyncio.Event()

            async def sender() -> None:  # posts throughout the reload, bounded in count
                for number in range(400):
                    body = MESSAGE.replace(b"HUP0001", f"HUP{number:04d}".encode())
                    statuses.append(await post(http, url, "alpha", body))
                    if reloaded.is_set() and number >= 20:
                        return

            sending = asyncio.create_task(sender())
            add_profile("gamma")
            assert config.remove_profile("beta")
            process.send_signal(signal.SIGHUP)
            line = ""
            while "reload:" not in line:
                raw = await asyncio.wait_for(process.stderr.readline(), timeout=30)
                assert raw, f"listen ended on SIGHUP (exit {await process.wait()})"
                line = raw.decode()
            reloaded.set()
            assert "gamma" in line and "beta" in line
            await asyncio.wait_for(sending, timeout=60)
            assert set(statuses) == {200}, statuses
            assert await post(http, url, "gamma") == 200
            assert await post(http, url, "beta") == 404
            assert process.returncode is None  # no restart
    finally:
        if process.returncode is None:
            process.send_signal(signal.SIGTERM)
            await asyncio.wait_for(process.wait(), timeout=20)


async def test_profile_remove_tells_a_running_listen_all():
    for name in ("alpha", "beta"):
        add_profile(name)
    process, url = await start_headless(None, "--all")
    try:
        removing = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "tui", "--insecure-storage", "profile", "remove", "beta",
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        _out, err = await asyncio.wait_for(removing.communicate(), timeout=60)
        assert removing.returncode == 0, err
        assert f"told `listen --all` (pid {process.pid}, on :" in err.decode()
        line = ""
        while "reload:" not in line:
            raw = await asyncio.wait_for(process.stderr.readline(), timeout=30)
            assert raw, "listen ended"
            line = raw.decode()
        assert "no longer beta (their paths answer 404)" in line
        async with aiohttp.ClientSession() as http:
            assert await post(http, url, "beta") == 404
            assert await post(http, url, "alpha") == 200
    finally:
        if process.returncode is None:
            process.send_signal(signal.SIGTERM)
            await asyncio.wait_for(process.wait(), timeout=20)
