"""SIGKILL mid-flood: every event that was answered 200 must be in the store afterwards."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import time

import aiohttp

from tests.webhooks.conftest import KEY
from tests.webhooks.headless import start_headless
from tui.api.signing import SIGNATURE_HEADER, sign
from tui.webhooks.store import EventStore

FLOOD = 3000  # at most this many events are sent
KILL_AFTER = 400  # acknowledgements before the kill
CONNECTIONS = 24
DEADLINE_SECONDS = 60


async def test_every_acknowledged_event_survives_sigkill(tmp_path):
    db = tmp_path / "crash.sqlite3"
    process, url = await start_headless(db, key=KEY)
    acknowledged: dict[int, int] = {}  # seq -> id from the 200 answer
    sequence = iter(range(FLOOD))
    deadline = time.monotonic() + DEADLINE_SECONDS
    killed_at: list[int] = []

    async def sender(http: aiohttp.ClientSession) -> None:
        for seq in sequence:
            if time.monotonic() > deadline:
                return
            body = json.dumps({"type": "Message", "seq": seq, "event": {"Info": {"ID": f"F{seq}"}}}).encode()
            headers = {"Content-Type": "application/json", SIGNATURE_HEADER: sign(KEY, body)}
            try:
                async with http.post(url + "/flood", data=body, headers=headers) as response:
                    if response.status == 200:
                        acknowledged[seq] = (await response.json())["id"]
            except (TimeoutError, aiohttp.ClientError, ConnectionError):
                pass  # refused or cut off by the kill: not acknowledged, so not promised
            if len(acknowledged) >= KILL_AFTER and not killed_at:
                killed_at.append(len(acknowledged))
                process.kill()  # SIGKILL: no cleanup, no final commit, no close

    connector = aiohttp.TCPConnector(limit=CONNECTIONS)
    async with aiohttp.ClientSession(connector=connector, timeout=aiohttp.ClientTimeout(total=10)) as http:
        await asyncio.gather(*(sender(http) for _ in range(CONNECTIONS)))
    await asyncio.wait_for(process.wait(), timeout=30)

    assert killed_at, "the flood ended before the kill"
    assert process.returncode == -9
    assert KILL_AFTER <= len(acknowledged) < FLOOD  # killed mid-way, after real traffic
    with sqlite3.connect(db) as raw:
        assert raw.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    with EventStore(db) as store:
        missing = [seq for seq, event_id in acknowledged.items()
                   if (event := store.get(event_id)) is None or event.payload["seq"] != seq]
        assert missing == []
        assert store.count() >= len(acknowledged)
