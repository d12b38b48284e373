"""Issue 20 item 4: forwards still pending when `listen` dies (SIGKILL) or stops are kept in the store and go out
after the next start, once each and in order per chat. Real `listen` processes, a real app on port 0."""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
from collections import defaultdict

import aiohttp

from tests.webhooks.conftest import KEY, ids, record, until
from tests.webhooks.headless import start_headless
from tests.webhooks.recording_app import RecordingApp, free_port
from tests.webhooks.test_events_cli import cli
from tui.webhooks.forwarder import Forwarder, ForwardLog, Outcome
from tui.api.signing import SIGNATURE_HEADER, sign
from tui.webhooks.store import EventStore

CHATS = 5
EVENTS = 50


def message(chat: int, seq: int) -> bytes:
    jid = f"55119000{chat:04d}@s.whatsapp.net"
    return json.dumps({
        "type": "Message",
        "event": {"Info": {"Chat": jid, "Sender": jid, "ID": f"3EB0{seq:04d}"}, "Message": {"conversation": f"m{seq}"}},
    }).encode()


async def post(http: aiohttp.ClientSession, url: str, body: bytes, *, signed: bool = True) -> tuple[int, dict]:
    headers = {"Content-Type": "application/json"}
    if signed:
        headers[SIGNATURE_HEADER] = sign(KEY, body)
    async with http.post(url + "/session", data=body, headers=headers) as response:
        return response.status, await response.json()


class Listen:
    """A real `gateway-tui listen --forward-to` whose stderr is read all along (a full pipe would block it)."""

    def __init__(self) -> None:
        self.process: asyncio.subprocess.Process | None = None
        self.url = ""
        self.lines: list[str] = []
        self._reader: asyncio.Task[None] | None = None

    async def start(self, db, target: str) -> Listen:
        self.process, self.url = await start_headless(db, "--forward-to", target, key=KEY)
        self._reader = asyncio.get_running_loop().create_task(self._read())
        return self

    async def _read(self) -> None:
        assert self.process is not None and self.process.stderr is not None
        while line := await self.process.stderr.readline():
            self.lines.append(line.decode())

    async def end(self, sig: int) -> str:
        assert self.process is not None and self._reader is not None
        self.process.send_signal(sig)
        await asyncio.wait_for(self.process.wait(), 30)
        await asyncio.wait_for(self._reader, 30)
        return "".join(self.lines)


def forwarded_outcomes(db, ids: list[int]) -> dict[int, Outcome]:
    with ForwardLog(db) as log:
        return {event_id: attempt.outcome for event_id, attempt in log.latest(ids).items()}


def sent_ids(app: RecordingApp) -> list[int]:
    return [int(request.headers["x-gateway-tui-event"]) for request in app.received]


async def test_forwards_pending_at_a_sigkill_go_out_after_the_restart_once_each_in_order_per_chat(tmp_path):
    db = tmp_path / "resume.sqlite3"
    down = f"http://127.0.0.1:{free_port()}/hook"
    first = await Listen().start(db, down)
    chat_of: dict[int, int] = {}  # stored id -> chat
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=10)) as http:
        for seq in range(EVENTS):
            status, answer = await post(http, first.url, message(seq % CHATS, seq))
            assert status == 200
            chat_of[answer["id"]] = seq % CHATS
        # Received again (the gateway's retries) and refused (unsigned): stored, never forwarded.
        again = [await post(http, first.url, message(seq % CHATS, seq)) for seq in (0, 7)]
        assert [status for status, _answer in again] == [200, 200]
        refused = await post(http, first.url, message(0, 999), signed=False)
        assert refused[0] == 401
    accepted = sorted(chat_of)
    # The head of each chat's lane has been tried against the app that is down: "(retrying)".
    await until(lambda: len(forwarded_outcomes(db, accepted)) >= CHATS, "a first attempt in every chat")
    assert set(forwarded_outcomes(db, accepted).values()) == {Outcome.RETRYING}
    await first.end(signal.SIGKILL)
    assert first.process is not None and first.process.returncode == -9
    with EventStore(db) as store:
        assert all(store.get(answer["id"]).duplicate_of is not None for _status, answer in again)
        assert store.get(refused[1]["id"]).rejected
    code, out, _ = await cli("events", "show", str(accepted[0]), "--db", str(db))
    assert code == 0 and "(retrying" in out and "forward pending: kept in the store" in out, out

    app = await RecordingApp().start()  # the app is up now, on another port: the pending forwards go there
    second = await Listen().start(db, app.url)
    try:
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=10)) as http:
            for chat in range(CHATS):  # new events after the restart queue behind the chat's pending ones
                status, answer = await post(http, second.url, message(chat, 100 + chat))
                assert status == 200
                chat_of[answer["id"]] = chat
        await app.wait_for(len(chat_of), timeout=30)
        await until(
            lambda: set(forwarded_outcomes(db, sorted(chat_of)).values()) == {Outcome.DELIVERED},
            "every forward recorded as delivered",
        )
    finally:
        stderr = await second.end(signal.SIGTERM)
        await app.stop()

    received = sent_ids(app)
    assert sorted(received) == sorted(chat_of), "every accepted event exactly once, nothing else"
    per_chat: dict[int, list[int]] = defaultdict(list)
    for event_id in received:
        per_chat[chat_of[event_id]].append(event_id)
    assert all(ids == sorted(ids) for ids in per_chat.values()), per_chat
    assert "not forwarded yet" not in stderr, stderr
    code, out, _ = await cli("events", "show", str(accepted[0]), "--db", str(db))
    assert code == 0
    attempts = [line for line in out.splitlines() if " → " in line]
    assert "(retrying" in attempts[0] and "(delivered" in attempts[-1], out
    assert "forward pending" not in out
    assert f"attempt {len(attempts)} → {app.url}" in attempts[-1]  # numbering goes on across the restart


async def test_forwards_left_at_a_clean_stop_are_named_and_resume_at_the_next_start(tmp_path):
    db = tmp_path / "stop.sqlite3"
    first = await Listen().start(db, f"http://127.0.0.1:{free_port()}/hook")
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=10)) as http:
        ids = [(await post(http, first.url, message(seq % 2, seq)))[1]["id"] for seq in range(4)]
    stderr = await first.end(signal.SIGTERM)
    assert "4 events not forwarded yet: #1, #2, #3, #4; they are kept and go out when forwarding starts again" in stderr

    app = await RecordingApp().start()
    second = await Listen().start(db, app.url)
    try:
        await app.wait_for(4)
        await until(lambda: set(forwarded_outcomes(db, ids).values()) == {Outcome.DELIVERED}, "4 deliveries recorded")
    finally:
        stderr = await second.end(signal.SIGTERM)
        with contextlib.suppress(Exception):
            await app.stop()
    assert sorted(sent_ids(app)) == ids
    assert "not forwarded yet" not in stderr


# -- in one process: a switched target, forwarding switched off, retention ---------------------------------------


def _chat_message(chat: int, seq: int) -> dict:
    return json.loads(message(chat, seq))


async def forward_what_is_queued(app: RecordingApp, log: ForwardLog, store: EventStore) -> None:
    """A forwarder's run with no new event: it sends the queue and stops."""
    forwarder = Forwarder(app.url, log, store=store)
    await forwarder.start()
    await forwarder.wait_idle()
    await forwarder.stop()


async def test_a_new_target_takes_the_pending_forwards_and_nothing_stored_while_forwarding_is_off(tmp_path):
    with EventStore(tmp_path / "switch.sqlite3") as store, ForwardLog(store.path) as log:
        down = Forwarder(f"http://127.0.0.1:{free_port()}/hook", log, store=store, first_delay=5)
        await down.start()
        first = [await store.append(record(_chat_message(seq % 2, seq))) for seq in range(4)]
        for event in first:
            down.submit(event)
        await until(lambda: len(log.latest(ids(first))) == 2, "the head of both lanes tried")
        await down.stop(handing_over=True)  # the app's Settings: a new target replaces the old one
        during = await store.append(record(_chat_message(0, 10)))  # stored between the two: queued all the same

        app = await RecordingApp().start()
        try:
            switched = Forwarder(app.url, log, store=store)
            await switched.start()
            switched.submit(during)  # announced after the new forwarder read the queue: sent once, not twice
            await switched.wait_idle()
            await switched.stop()  # forwarding switched off
            off = await store.append(record(_chat_message(1, 11)))
            await forward_what_is_queued(app, log, store)
        finally:
            await app.stop()
        sent = sent_ids(app)
        assert sorted(sent) == [*ids(first), during.id]
        assert off.id not in sent and not log.is_queued(off.id)
        assert [attempt.attempt for attempt in log.attempts(first[0].id)] == [1, 2]


async def test_queued_forwards_of_events_retention_deleted_are_dropped(tmp_path):
    with EventStore(tmp_path / "kept.sqlite3", retention=2) as store, ForwardLog(store.path) as log:
        store.in_each_commit(ForwardLog.queue)  # queueing as a forwarder does, with none running
        events = [await store.append(record(_chat_message(0, seq))) for seq in range(3)]
        store.in_each_commit(None)
        assert all(log.is_queued(event.id) for event in events)
        app = await RecordingApp().start()
        try:
            await forward_what_is_queued(app, log, store)
        finally:
            await app.stop()
        assert sent_ids(app) == ids(events[1:])
        assert not any(log.is_queued(event.id) for event in events)
