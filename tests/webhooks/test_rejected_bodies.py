"""A rejected event keeps its headers, verdict, reason and at most the first 4 KiB of its body (issue 20, item 3):
a flood of big unsigned posts must not fill the disk. Every reader says the body was cut, and its size; nothing
sends the cut body as if it were the original. A real `listen` process, real sockets, the store file measured."""

from __future__ import annotations

import json
import os
import signal
import asyncio

import aiohttp

from tests.webhooks.conftest import KEY
from tests.webhooks.headless import start_headless
from tests.webhooks.recording_app import RecordingApp
from tests.webhooks.test_events_cli import cli
from tui.api.signing import SIGNATURE_HEADER, sign

BIG = 5 * 1024 * 1024
KEPT = 4096
POSTS = 30


def big_message(number: int) -> bytes:
    head = b'{"type":"Message","event":{"Info":{"ID":"3EB0BIG%04d"},"Message":{"conversation":"' % number
    tail = b'"}}}'
    return head + b"x" * (BIG - len(head) - len(tail)) + tail


def store_size(db) -> int:
    return sum(os.path.getsize(f"{db}{suffix}") for suffix in ("", "-wal") if os.path.exists(f"{db}{suffix}"))


async def test_thirty_rejected_5_mib_posts_grow_the_store_by_less_than_1_mib(tmp_path):
    db = tmp_path / "events.sqlite3"
    process, url = await start_headless(db, key=KEY)
    statuses = []
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=60)) as http:
        small = b'{"type":"Message","event":{"Message":{"conversation":"hi"}}}'
        async with http.post(url + "/session", data=small, headers={SIGNATURE_HEADER: sign(KEY, small)}) as response:
            assert response.status == 200
        before = store_size(db)
        for number in range(POSTS):
            async with http.post(url + "/session", data=big_message(number),
                                 headers={"Content-Type": "application/json"}) as response:
                statuses.append(response.status)
                answer = await response.json()
        last_id = answer["id"]
    process.send_signal(signal.SIGINT)
    await asyncio.wait_for(process.communicate(), timeout=30)
    after = store_size(db)
    assert statuses == [401] * POSTS
    assert after - before < 1024 * 1024, f"the store grew by {after - before} bytes"

    # Every reader says the body was cut, and how big it was.
    code, out, _err = await cli("events", "show", str(last_id), "--db", str(db), "--json")
    shown = json.loads(out)
    assert code == 0
    assert shown["rejected"] is True and shown["verdict"] == "unsigned" and shown["reason"] == "signature missing"
    assert shown["body_cut"] is True and shown["body_size"] == BIG
    assert shown["body"] == big_message(POSTS - 1)[:KEPT].decode()
    assert shown["headers"]["content-length"] == str(BIG)
    code, out, _err = await cli("events", "show", str(last_id), "--db", str(db))
    assert f"body cut: the first {KEPT} of {BIG} bytes kept" in out
    code, out, _err = await cli("events", "export", "--db", str(db))
    exported = [json.loads(line) for line in out.splitlines()]
    assert [(event["body_cut"], event["body_size"]) for event in exported] == [(False, len(small))] + [(True, BIG)] * POSTS
    code, out, _err = await cli("events", "list", "--db", str(db), "--json", "--limit", "1")
    assert [(event["body_cut"], event["body_size"]) for event in json.loads(out)] == [(True, BIG)]

    # A cut body is never sent as if it were the original.
    app = await RecordingApp().start()
    try:
        code, out, err = await cli("events", "replay", str(last_id), "--db", str(db), "--to", app.url)
        assert code != 0 and app.received == []
        assert "cut" in err and str(BIG) in err
        code, _out, _err = await cli("events", "replay", "1", "--db", str(db), "--to", app.url)
        assert code == 0 and [received.body for received in app.received] == [small]
    finally:
        await app.stop()


async def test_a_small_rejected_body_is_kept_whole(tmp_path):
    db = tmp_path / "events.sqlite3"
    process, url = await start_headless(db, key=KEY)
    body = b'{"type":"Message","event":{"Message":{"conversation":"' + b"y" * 3000 + b'"}}}'
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=30)) as http:
        async with http.post(url + "/session", data=body, headers={"Content-Type": "application/json"}) as response:
            assert response.status == 401
            event_id = (await response.json())["id"]
    process.send_signal(signal.SIGINT)
    await asyncio.wait_for(process.communicate(), timeout=30)
    code, out, _err = await cli("events", "show", str(event_id), "--db", str(db), "--json")
    shown = json.loads(out)
    assert shown["body"] == body.decode() and shown["body_cut"] is False and shown["body_size"] == len(body)
    assert shown["payload"]["event"]["Message"]["conversation"] == "y" * 3000


async def test_an_event_kept_without_its_body_is_not_replayed(tmp_path):
    """A post to an account the listener does not serve is answered 404 and kept without its body: replaying it
    would POST nothing and report it delivered. It is refused, as a cut body is, and nothing reaches the app."""
    db = tmp_path / "events.sqlite3"
    process, url = await start_headless(db, key=KEY)
    body = b'{"type":"Message","event":{"Message":{"conversation":"for nobody"}}}'
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=30)) as http:
        async with http.post(url + "/a/nobody/session", data=body, headers={SIGNATURE_HEADER: sign(KEY, body)}) as answer:
            assert answer.status == 404
            event_id = (await answer.json())["id"]
    process.send_signal(signal.SIGINT)
    await asyncio.wait_for(process.communicate(), timeout=30)
    app = await RecordingApp().start()
    try:
        code, out, err = await cli("events", "replay", str(event_id), "--db", str(db), "--to", app.url)
    finally:
        await app.stop()
    assert app.received == []
    assert (code, out) == (2, "")
    assert err == (f"gateway-tui events: event #{event_id} not sent: it was stored without its body (no account "
                   "named 'nobody' on this listener; body not kept), so there is nothing to send again\n")
