"""A flood of rejected posts cannot fill the disk (issue 37): past a bound per window, rejected and unknown-path
events are no longer stored one by one but counted, and summarised as "N more rejected from …", so every rejection
stays countable. A real `listen` process, real sockets; the flood is bounded in count (and each post in time)."""

from __future__ import annotations

import asyncio
import json
import signal
from pathlib import Path

import aiohttp

from tests.webhooks.conftest import KEY
from tests.webhooks.headless import start_headless
from tui.webhooks.store import EventStore

REJECTED = 10_000
UNKNOWN = 500  # posts to an account this listener does not serve (404)
BODY_SIZE = 4096
GROWTH_LIMIT = 8 * 1024 * 1024
SENDERS = 16


def body(number: int) -> bytes:
    """A WuzAPI Message (docs/gateways/wuzapi.md §4), unsigned, padded to BODY_SIZE bytes; each one different."""
    head = ('{"event":{"Info":{"Chat":"5491155553934@s.whatsapp.net","ID":"3EB0%08d","IsFromMe":false,'
            '"Sender":"5491155553934@s.whatsapp.net"},"Message":{"conversation":"' % number)
    tail = '"}},"type":"Message"}'
    return (head + "x" * (BODY_SIZE - len(head) - len(tail)) + tail).encode()


def files_size(db: Path) -> int:
    return sum(path.stat().st_size for path in (db, db.with_name(db.name + "-wal")) if path.exists())


async def test_ten_thousand_rejected_posts_grow_the_store_by_at_most_8_mib(tmp_path):
    db = tmp_path / "events.sqlite3"
    process, url = await start_headless(db, key=KEY)
    before = files_size(db)
    queue: asyncio.Queue[tuple[str, bytes]] = asyncio.Queue()
    for number in range(REJECTED):
        queue.put_nowait(("/session", body(number)))
    for number in range(UNKNOWN):
        queue.put_nowait(("/a/nobody/session", body(REJECTED + number)))
    statuses: dict[int, int] = {}

    async def send(http: aiohttp.ClientSession) -> None:
        while not queue.empty():
            path, data = queue.get_nowait()
            async with http.post(url + path, data=data, headers={"Content-Type": "application/json"}) as answer:
                statuses[answer.status] = statuses.get(answer.status, 0) + 1
                await answer.read()

    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=30)) as http:
        await asyncio.gather(*(send(http) for _ in range(SENDERS)))
    process.send_signal(signal.SIGINT)
    _stdout, stderr = await asyncio.wait_for(process.communicate(), timeout=30)
    assert statuses == {401: REJECTED, 404: UNKNOWN}
    growth = files_size(db) - before
    assert growth <= GROWTH_LIMIT, f"the store grew by {growth / 2**20:.1f} MiB"
    # Every rejection stays countable: the rows kept, plus the counts of the summaries.
    with EventStore(db) as store:
        events = store.newest(REJECTED + UNKNOWN)
    summaries = [event for event in events if isinstance(event.payload, dict) and "rejected_more" in event.payload]
    kept = [event for event in events if event not in summaries]
    assert all(event.rejected for event in events)
    assert summaries, "no summary of the rejections not kept"
    assert len(kept) + sum(event.payload["rejected_more"] for event in summaries) == REJECTED + UNKNOWN
    assert all(event.summary.startswith(f"{event.payload['rejected_more']} more rejected from ") for event in summaries)
    assert f"{REJECTED + UNKNOWN} rejected" in stderr.decode()
    assert json.dumps(KEY) not in stderr.decode()


async def test_the_count_is_stored_when_its_window_ends_without_waiting_for_more_traffic(store, start_listener, http):
    from tests.webhooks.conftest import until
    from tui.webhooks.rejections import RejectionBound

    listener = await start_listener(hmac_key=KEY)
    listener.rejections = RejectionBound(window=0.5, rows=2)
    answers = []
    for number in range(5):
        async with http.post(listener.url + "/session", data=body(number)) as answer:
            answers.append((answer.status, "id" in await answer.json()))
    assert answers == [(401, True), (401, True), (401, False), (401, False), (401, False)]
    await until(lambda: store.count() == 3, "the window's summary")  # no post after the window, no stop
    summary = store.newest(1)[0]
    assert (summary.payload["rejected_more"], summary.summary[:32]) == (3, "3 more rejected from no known ac")
    assert "signature missing: 3" in summary.summary and summary.rejected
    assert (listener.received, listener.rejected) == (2, 5)
