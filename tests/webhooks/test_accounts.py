"""One listener, one store, many accounts (issue 26): `/a/<profile>/session` and `/a/<profile>/delivery` verified
with that account's key, every stored event carrying its account, `events --profile`, `listen --all`.

Real HTTP to a listener on port 0; the signatures are made here with hmac by hand (HMAC-SHA256 of the raw body,
hex, as WuzAPI's `x-hmac-signature`), never with the code under test."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import os
import re
import signal
import sqlite3
import sys
from datetime import UTC, datetime

import pytest

from tests.webhooks import headless
from tests.webhooks.conftest import KEY
from tui.local import config
from tui.cli.main import main
from tui.core.feed.bus import EventStored
from tui.local.paths import fleet_events_path
from tui.local.secrets import InsecureFileSecrets, SecretName
from tui.webhooks.events import EventRecord
from tui.api.signing import Verdict
from tui.webhooks.store import EventStore

ALPHA_KEY = "alpha-hmac-key-0123456789abcdefghijkl"
BETA_KEY = "beta-hmac-key-0123456789abcdefghijklm"
# A WuzAPI Message as its webhook posts it (JSON mode).
MESSAGE = (b'{"type":"Message","event":{"Info":{"ID":"3EB0ACC0001","Chat":"5511999990000@s.whatsapp.net",'
           b'"Sender":"5511999990000@s.whatsapp.net","IsFromMe":false,"PushName":"Ana"},'
           b'"Message":{"conversation":"hello"}}}')
SECOND = MESSAGE.replace(b"3EB0ACC0001", b"3EB0ACC0002")
# A Z-API ReceivedCallback (unsigned: Z-API never signs).
CALLBACK = (b'{"type":"ReceivedCallback","instanceId":"3C01","messageId":"ZAPI0001","phone":"5511999990000",'
            b'"fromMe":false,"text":{"message":"oi"}}')
JSON = {"Content-Type": "application/json"}


def signed(key: str, body: bytes) -> dict[str, str]:
    return {**JSON, "x-hmac-signature": hmac.new(key.encode(), body, hashlib.sha256).hexdigest()}


async def post(http, url: str, body: bytes, headers: dict[str, str]) -> tuple[int, dict]:
    async with http.post(url, data=body, headers=headers) as response:
        return response.status, json.loads(await response.read())


async def test_each_account_is_verified_with_its_own_key(store, start_listener, http):
    listener = await start_listener()
    listener.set_account_key("alpha", ALPHA_KEY)
    listener.set_account_key("beta", BETA_KEY)
    base = listener.url
    results = [
        await post(http, f"{base}/a/alpha/session", MESSAGE, signed(ALPHA_KEY, MESSAGE)),
        await post(http, f"{base}/a/beta/session", MESSAGE, signed(BETA_KEY, MESSAGE)),
        # alpha's key on beta's path: forged for beta...
        await post(http, f"{base}/a/beta/session", MESSAGE, signed(ALPHA_KEY, MESSAGE)),
        # ...which changes nothing for alpha, nor for beta's next honest event
        await post(http, f"{base}/a/alpha/session/hook", SECOND, signed(ALPHA_KEY, SECOND)),
        await post(http, f"{base}/a/beta/session", SECOND, signed(BETA_KEY, SECOND)),
        # unsigned: accepted below an account's /delivery (Z-API never signs), refused on its /session
        await post(http, f"{base}/a/beta/delivery/received", CALLBACK, JSON),
        await post(http, f"{base}/a/alpha/session", MESSAGE + b"  ", JSON),
    ]
    statuses = [status for status, _ in results]
    assert statuses == [200, 200, 401, 200, 200, 200, 401]
    events = [store.get(answer["id"]) for _, answer in results]
    assert [(event.account, event.verdict, event.rejected) for event in events] == [
        ("alpha", Verdict.VALID, False),
        ("beta", Verdict.VALID, False),
        ("beta", Verdict.INVALID, True),
        ("alpha", Verdict.VALID, False),
        ("beta", Verdict.VALID, False),
        ("beta", Verdict.UNSIGNED, False),
        ("alpha", Verdict.UNSIGNED, True),
    ]
    assert events[0].path == "/a/alpha/session" and events[5].kind == "ReceivedCallback"
    # the same message delivered to both accounts (a group both are in) is each one's, not a duplicate
    assert [event.duplicate_of for event in events] == [None] * 7


async def test_an_unknown_account_is_stored_and_answered_404_naming_it(store, start_listener, http):
    listener = await start_listener(hmac_key=KEY)
    listener.set_account_key("alpha", ALPHA_KEY)
    status, answer = await post(http, f"{listener.url}/a/gamma/session", MESSAGE, signed(ALPHA_KEY, MESSAGE))
    assert status == 404
    assert "gamma" in answer["error"] and "no account" in answer["error"]
    event = store.get(answer["id"])
    assert (event.rejected, event.account, event.path) == (True, None, "/a/gamma/session")
    assert "gamma" in (event.reason or "")


async def test_key_changes_apply_to_that_account_only(store, start_listener, http):
    listener = await start_listener()
    listener.set_account_key("alpha", ALPHA_KEY)
    listener.set_account_key("beta", BETA_KEY)
    new_key = "alpha-new-key-0123456789abcdefghijklmn"
    listener.set_account_key("alpha", new_key)
    base = listener.url
    old = await post(http, f"{base}/a/alpha/session", MESSAGE, signed(ALPHA_KEY, MESSAGE))
    new = await post(http, f"{base}/a/alpha/session", MESSAGE, signed(new_key, MESSAGE))
    beta = await post(http, f"{base}/a/beta/session", MESSAGE, signed(BETA_KEY, MESSAGE))
    assert [old[0], new[0], beta[0]] == [401, 200, 200]
    listener.set_account_key("alpha", None)  # alpha keeps no key now: nothing can be verified for it
    keyless = await post(http, f"{base}/a/alpha/session", MESSAGE + b" ", JSON)
    assert keyless[0] == 200 and store.get(keyless[1]["id"]).verdict is Verdict.NO_KEY
    assert dict(listener.accounts) == {"alpha": False, "beta": True}  # which accounts have a key: never the key
    assert ALPHA_KEY not in repr(listener) and BETA_KEY not in repr(listener)


async def test_the_old_paths_keep_the_listeners_own_key_and_account(store, start_listener, http):
    listener = await start_listener(hmac_key=KEY, account="work")
    listener.set_account_key("work", KEY)
    ok = await post(http, f"{listener.url}/session", MESSAGE, signed(KEY, MESSAGE))
    forged = await post(http, f"{listener.url}/session", MESSAGE, signed(ALPHA_KEY, MESSAGE))
    assert [ok[0], forged[0]] == [200, 401]
    assert store.get(ok[1]["id"]).account == "work"
    alone = await start_listener(hmac_key=KEY)  # nothing says whose: NULL
    ok = await post(http, f"{alone.url}/session", MESSAGE + b" ", signed(KEY, MESSAGE + b" "))
    assert ok[0] == 200 and store.get(ok[1]["id"]).account is None


def _old_schema_store(path) -> int:
    """A store as gateway-tui wrote it before events carried an account: the column and its index removed from a
    fresh one (schema 3, the rest unchanged), holding one event."""
    async def fill() -> int:
        with EventStore(path) as store:
            return (await store.append(EventRecord(
                received_at=datetime.now(UTC), path="/session",
                headers={}, body=MESSAGE, payload=json.loads(MESSAGE), kind="Message", summary="old one",
                verdict=Verdict.VALID))).id
    event_id = asyncio.run(fill())
    connection = sqlite3.connect(path)
    columns = {row[1] for row in connection.execute("PRAGMA table_info(events)")}
    if "account" in columns:
        connection.execute("DROP INDEX IF EXISTS events_by_account")
        connection.execute("ALTER TABLE events DROP COLUMN account")
    connection.commit()
    assert "account" not in {row[1] for row in connection.execute("PRAGMA table_info(events)")}
    connection.close()
    return event_id


def test_an_old_store_gains_the_account_column(tmp_path):
    path = tmp_path / "old.sqlite3"
    old_id = _old_schema_store(path)

    async def reopen() -> int:
        with EventStore(path) as store:
            assert store.get(old_id).account is None
            return (await store.append(EventRecord(
                received_at=datetime.now(UTC), path="/a/alpha/session",
                headers={}, body=b"{}", payload={}, kind="unknown", summary="new one", verdict=Verdict.VALID,
                account="alpha"))).id

    new_id = asyncio.run(reopen())
    connection = sqlite3.connect(path)
    assert "account" in {row[1] for row in connection.execute("PRAGMA table_info(events)")}
    indexes = {row[1] for row in connection.execute("PRAGMA index_list(events)")}
    assert "events_by_account" in indexes
    connection.close()
    with EventStore(path) as store:
        assert (store.get(old_id).account, store.get(new_id).account) == (None, "alpha")
        assert [event.id for event in store.newest(10, account="alpha")] == [new_id]


@pytest.fixture
def shared_db(tmp_path):
    path = tmp_path / "fleet.sqlite3"

    async def fill() -> None:
        with EventStore(path) as store:
            for account, text in (("alpha", "one"), ("beta", "two"), ("alpha", "three"), (None, "four")):
                await store.append(EventRecord(
                    received_at=datetime.now(UTC),
                    path=f"/a/{account}/session" if account else "/session", headers={}, body=text.encode(),
                    payload=None, kind="Message", summary=text, verdict=Verdict.VALID, account=account))

    asyncio.run(fill())
    return path


def test_events_list_and_export_filter_by_profile(capsys, shared_db):
    assert main(["events", "list", "--db", str(shared_db), "--json", "--profile", "alpha"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [(event["summary"], event["account"]) for event in listed] == [("three", "alpha"), ("one", "alpha")]
    assert main(["events", "export", "--db", str(shared_db), "--profile", "beta"]) == 0
    exported = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(event["summary"], event["account"]) for event in exported] == [("two", "beta")]
    assert main(["events", "list", "--db", str(shared_db)]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 5  # a header and every event, whoever's
    assert main(["events", "show", "--db", str(shared_db), "2"]) == 0
    assert "account: beta" in capsys.readouterr().out


# -- `listen --all` as a real process -------------------------------------------------------------------------


def _profiles() -> None:
    secrets = InsecureFileSecrets()
    for name, key in (("alpha", ALPHA_KEY), ("beta", BETA_KEY)):
        config.save_profile(config.Profile(name=name, base_url="https://api.example.com", instance_id=name.upper(),
                                           session_url="https://wuz.example.com", secrets_file=True,
                                           listener_port=0))
        secrets.set(name, SecretName.HMAC_KEY, key)


async def _listen_all(*extra: str, env: dict[str, str] | None = None):
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "tui", "listen", "--all", "--port", "0", *extra,
        env={**os.environ, **(env or {})}, stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE, cwd=headless.REPO,
    )
    headless.started.append(process)
    lines: list[str] = []
    while not any("largest body accepted" in line for line in lines):
        line = (await asyncio.wait_for(process.stderr.readline(), timeout=30)).decode()
        assert line, f"listen --all ended early: {''.join(lines)}"
        lines.append(line)
    return process, "".join(lines)


async def _stop(process) -> str:
    process.send_signal(signal.SIGINT)
    _out, err = await asyncio.wait_for(process.communicate(), timeout=30)
    return err.decode()


async def test_listen_all_serves_every_profile_on_one_port(http):
    _profiles()
    process, printed = await _listen_all(env={"GATEWAY_TUI_HMAC_KEY": KEY})
    urls = {name: url for url, name in re.findall(r"(http://\S+/a/(\w+)/session)\s", printed)}
    assert set(urls) == {"alpha", "beta"}, printed
    assert re.search(r"http://127\.0\.0\.1:\d+/a/alpha/delivery", printed), printed
    assert ALPHA_KEY not in printed and BETA_KEY not in printed and KEY not in printed
    # several profiles open: the environment's key is ignored, said once in plain words
    assert printed.count("GATEWAY_TUI_HMAC_KEY") == 1 and "ignored" in printed
    results = [
        await post(http, urls["alpha"], MESSAGE, signed(ALPHA_KEY, MESSAGE)),
        await post(http, urls["beta"], MESSAGE + b" ", signed(BETA_KEY, MESSAGE + b" ")),
        await post(http, urls["beta"], MESSAGE, signed(ALPHA_KEY, MESSAGE)),
        await post(http, urls["alpha"], MESSAGE, signed(KEY, MESSAGE)),  # the ignored variable's key
    ]
    assert [status for status, _ in results] == [200, 200, 401, 401], printed
    # with several accounts the old paths name none: refused, saying where to post
    old = await post(http, urls["alpha"].replace("/a/alpha/session", "/session"), MESSAGE, signed(ALPHA_KEY, MESSAGE))
    assert old[0] == 404 and "/a/<profile>/session" in old[1]["error"]
    stderr = await _stop(process)
    assert "stopped: 5 events stored, 3 rejected" in stderr, stderr
    with EventStore(fleet_events_path()) as store:
        assert [(event.account, event.verdict) for event in reversed(store.newest(4, account="alpha"))] == [
            ("alpha", Verdict.VALID), ("alpha", Verdict.INVALID)]
        assert [event.account for event in store.newest(10, account="beta")] == ["beta", "beta"]


# -- the app's runtime: each event to its account, each account's key on the listener ------------------------


async def test_the_runtime_publishes_each_event_to_its_account_and_serves_each_key(http, monkeypatch):
    from tui.core.accounts.account import new_account
    from tui.api.dialects import Family
    from tui.core.runtime import Runtime
    from tests.webhooks.conftest import until

    _profiles()
    monkeypatch.setenv("GATEWAY_TUI_HMAC_KEY", KEY)  # one profile open: it applies, as before
    runtime = Runtime(profile="alpha")
    await runtime.start()
    try:
        base = runtime.listener.url
        assert runtime.webhooks.account_webhook_url("alpha", Family.SESSION) == base + "/session"  # one account: unchanged
        assert (await post(http, base + "/a/alpha/session", MESSAGE, signed(KEY, MESSAGE)))[0] == 200
        # a second account opens (the fleet): each is served with its own stored key, the variable is ignored
        beta_profile = next(p for p in config.load_profiles() if p.name == "beta")
        runtime.accounts.append(new_account(beta_profile, runtime.current.secrets, store=lambda: runtime.store))
        await runtime.open_accounts.listen_for_accounts()
        alpha, beta = runtime.accounts
        seen: dict[str, list] = {"alpha": [], "beta": []}
        runtime.bus.subscribe(EventStored, lambda stored: seen[stored.account].append(stored.event))
        results = [
            await post(http, base + "/a/alpha/session", SECOND, signed(ALPHA_KEY, SECOND)),
            await post(http, base + "/a/beta/session", SECOND, signed(BETA_KEY, SECOND)),
            await post(http, base + "/a/beta/session", MESSAGE, signed(KEY, MESSAGE)),  # the ignored variable's key
        ]
        assert [status for status, _ in results] == [200, 200, 401]
        await until(lambda: len(seen["alpha"]) == 1 and len(seen["beta"]) == 2, "each event on its account's stream",
                    timeout=60)
        assert [event.account for event in seen["alpha"] + seen["beta"]] == ["alpha", "beta", "beta"]
        assert runtime.webhooks.account_webhook_url("beta", Family.INSTANCE) == base + "/a/beta/delivery"
        assert runtime.webhooks.account_webhook_url("alpha", Family.SESSION) == base + "/a/alpha/session"
        # Settings moves the listener: the new one serves the same accounts
        await runtime.webhooks.restart_listener("127.0.0.1", 0)
        moved = runtime.listener.url
        assert moved != base
        assert (await post(http, moved + "/a/beta/session", MESSAGE, signed(BETA_KEY, MESSAGE)))[0] == 200
    finally:
        await runtime.stop()
