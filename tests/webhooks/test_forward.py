"""Forwarding to the user's app, against a recording app on 127.0.0.1: exact bytes and signature, an app that is
down or slow, order per chat, rejected events kept back, loopback-only targets."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime

import pytest

from tests.webhooks.conftest import KEY, record
from tests.webhooks.recording_app import RecordingApp, free_port
from tests.webhooks.test_signing import (
    FORM_BODY,
    FORM_BODY_SIGNATURE,
    JSON_BODY,
    JSON_BODY_SIGNATURE,
)
from tui.webhooks import forwarder as forwarder_module
from tui.webhooks.forwarder import (
    ForwardAttempt,
    Forwarder,
    ForwardLog,
    ForwardTargetRefused,
    Outcome,
    check_target,
    replay,
    shown_target,
)
from tui.api.signing import sign
from tui.webhooks.store import EventStore

FORM = "application/x-www-form-urlencoded"


@pytest.fixture
async def app():
    recording = await RecordingApp().start()
    yield recording
    await recording.stop()


@pytest.fixture
def forward_log(store):
    with ForwardLog(store.path) as opened:
        yield opened


@pytest.fixture
async def start_forwarder(forward_log):
    started: list[Forwarder] = []

    async def start(target: str, **options) -> Forwarder:
        options.setdefault("first_delay", 0.02)
        options.setdefault("max_delay", 0.1)
        forwarder = Forwarder(target, forward_log, **options)
        await forwarder.start()
        started.append(forwarder)
        return forwarder

    yield start
    for forwarder in started:
        await forwarder.stop()


async def post(http, listener, body: bytes, content_type: str, signature: str | None = None) -> tuple[int, dict]:
    headers = {"Content-Type": content_type}
    if signature is not None:
        headers["x-hmac-signature"] = signature
    async with http.post(listener.url + "/session", data=body, headers=headers) as response:
        return response.status, await response.json()


async def test_forwarded_bytes_and_signature_are_what_arrived(app, start_listener, start_forwarder, forward_log, http):
    forwarder = await start_forwarder(app.url)
    listener = await start_listener(hmac_key=KEY, on_event=forwarder.submit)
    status_form, answer_form = await post(http, listener, FORM_BODY, FORM, FORM_BODY_SIGNATURE)
    status_json, answer_json = await post(http, listener, JSON_BODY, "application/json", JSON_BODY_SIGNATURE)
    assert (status_form, status_json) == (200, 200)
    await forwarder.wait_idle()
    form, as_json = app.received
    assert form.body == FORM_BODY
    assert form.headers["x-hmac-signature"] == FORM_BODY_SIGNATURE
    assert form.headers["content-type"] == FORM
    assert form.headers["x-gateway-tui-event"] == str(answer_form["id"])
    assert form.path == "/hooks/gateway"
    assert as_json.body == JSON_BODY and as_json.headers["x-hmac-signature"] == JSON_BODY_SIGNATURE
    assert as_json.headers["x-gateway-tui-event"] == str(answer_json["id"])
    attempts = forward_log.attempts(answer_form["id"])
    assert [(a.attempt, a.status, a.outcome) for a in attempts] == [(1, 200, Outcome.DELIVERED)]
    assert attempts[0].target == app.url


async def test_rejected_events_are_not_forwarded(app, start_listener, start_forwarder, http):
    forwarder = await start_forwarder(app.url)
    listener = await start_listener(hmac_key=KEY, on_event=forwarder.submit)
    assert (await post(http, listener, JSON_BODY, "application/json", "0" * 64))[0] == 401
    assert (await post(http, listener, b"{broken", "application/json"))[0] == 401
    assert (await post(http, listener, JSON_BODY, "application/json", JSON_BODY_SIGNATURE))[0] == 200
    await forwarder.wait_idle()
    assert [received.body for received in app.received] == [JSON_BODY]


async def test_a_delivery_received_again_is_not_forwarded_again(app, start_listener, start_forwarder, http):
    """A gateway's retry of a delivery already stored is stored as a duplicate and answered 200; the app got the
    original and does not get it twice (under another X-Gateway-Tui-Event it could not deduplicate)."""
    forwarder = await start_forwarder(app.url)
    listener = await start_listener(hmac_key=KEY, on_event=forwarder.submit)
    first = await post(http, listener, JSON_BODY, "application/json", JSON_BODY_SIGNATURE)
    again = await post(http, listener, JSON_BODY, "application/json", JSON_BODY_SIGNATURE)
    assert (first[0], again[0]) == (200, 200)
    await forwarder.wait_idle()
    assert [received.headers["x-gateway-tui-event"] for received in app.received] == [str(first[1]["id"])]


async def test_app_down_event_stored_answered_then_delivered_when_it_is_up(
    start_listener, start_forwarder, forward_log, store, http
):
    port = free_port()
    target = f"http://127.0.0.1:{port}/hook"
    forwarder = await start_forwarder(target, max_attempts=50)
    listener = await start_listener(hmac_key=KEY, on_event=forwarder.submit)
    status, answer = await post(http, listener, JSON_BODY, "application/json", JSON_BODY_SIGNATURE)
    assert status == 200
    assert store.get(answer["id"]).body == JSON_BODY

    async def failed_attempts() -> list:
        while True:
            attempts = forward_log.attempts(answer["id"])
            if len(attempts) >= 2:
                return attempts
            await asyncio.sleep(0.02)

    attempts = await asyncio.wait_for(failed_attempts(), 20)
    assert all(a.status is None and a.outcome is Outcome.RETRYING for a in attempts)
    assert "connection refused" in attempts[0].error

    app = await RecordingApp(port).start()  # the app comes up
    try:
        received = await app.wait_for(1)
        await forwarder.wait_idle()
        assert received[0].body == JSON_BODY
        assert received[0].headers["x-hmac-signature"] == JSON_BODY_SIGNATURE
        final = forward_log.attempts(answer["id"])[-1]
        assert (final.status, final.outcome) == (200, Outcome.DELIVERED)
        assert len(app.received) == 1  # delivered once, not once per failed attempt
    finally:
        await app.stop()


async def test_a_slow_app_never_delays_acknowledgements(app, start_listener, start_forwarder, http):
    app.release.clear()  # the app holds every answer
    forwarder = await start_forwarder(app.url, timeout=60)
    listener = await start_listener(hmac_key=KEY, on_event=forwarder.submit)
    first = await post(http, listener, JSON_BODY, "application/json", JSON_BODY_SIGNATURE)
    await app.wait_for(1)  # the forward of the first event is now hanging in the app
    bodies = [json.dumps({"type": "Message", "event": {"Info": {"ID": f"3EB0{n}"}}}).encode() for n in range(5)]
    later = [await post(http, listener, body, "application/json", sign(KEY, body)) for body in bodies]
    assert [status for status, _ in [first, *later]] == [200] * 6
    assert len(app.received) == 1 and forwarder.pending == 6
    app.release.set()
    await forwarder.wait_idle()
    ids = [int(received.headers["x-gateway-tui-event"]) for received in app.received]
    assert ids == [answer["id"] for _, answer in [first, *later]]


def _event_in_chat(chat: str, text: str) -> dict:
    return {"type": "Message", "event": {"Info": {"Chat": chat, "Sender": chat, "ID": text}, "Message": {"conversation": text}}}


async def test_order_is_kept_per_chat_while_other_chats_go_on(app, store, start_forwarder):
    app.statuses = [503]  # the first request fails once and is retried
    forwarder = await start_forwarder(app.url, first_delay=0.3)
    a1 = await store.append(record(_event_in_chat("1@s.whatsapp.net", "a1")))
    forwarder.submit(a1)
    await app.wait_for(1)
    a2 = await store.append(record(_event_in_chat("1@s.whatsapp.net", "a2")))
    b1 = await store.append(record(_event_in_chat("2@s.whatsapp.net", "b1")))
    forwarder.submit(a2)
    forwarder.submit(b1)
    await forwarder.wait_idle()
    order = [json.loads(received.body)["event"]["Info"]["ID"] for received in app.received]
    assert order == ["a1", "b1", "a1", "a2"]


async def test_gives_up_after_the_bound_and_a_final_answer_is_not_retried(app, store, start_forwarder, forward_log):
    app.statuses = [503, 503, 503, 404]
    forwarder = await start_forwarder(app.url, max_attempts=3)
    first = await store.append(record({"type": "Message", "n": 1}))
    second = await store.append(record({"type": "Message", "n": 2}))
    forwarder.submit(first)
    forwarder.submit(second)
    await forwarder.wait_idle()
    assert [(a.status, a.outcome) for a in forward_log.attempts(first.id)] == [
        (503, Outcome.RETRYING), (503, Outcome.RETRYING), (503, Outcome.FAILED)]
    assert [(a.status, a.outcome) for a in forward_log.attempts(second.id)] == [(404, Outcome.FAILED)]
    assert forward_log.latest([first.id, second.id])[second.id].error == "HTTP 404 Not Found"


async def test_replay_sends_the_stored_event_again_and_records_it(app, store, forward_log):
    event = await store.append(record(body=FORM_BODY, payload={"type": "Message"}))
    attempt = await replay(event, app.url, forward_log=forward_log)
    assert attempt.status == 200 and attempt.replay
    (received,) = app.received
    assert received.body == FORM_BODY
    assert received.headers["x-gateway-tui-event"] == str(event.id)
    assert received.headers["x-gateway-tui-replay"] == "1"
    assert forward_log.attempts(event.id) == [attempt]


@pytest.mark.parametrize(
    "url", ["http://127.0.0.1:3000/hook", "http://localhost:3000", "http://[::1]:8080/x", "https://127.8.0.1/"]
)
def test_loopback_targets_are_allowed(url):
    assert check_target(url) == url


@pytest.mark.parametrize("url", ["http://example.com/hook", "http://10.0.0.5:3000/", "http://192.168.1.2"])
def test_remote_targets_need_an_explicit_allowance(url):
    with pytest.raises(ForwardTargetRefused, match="is not this machine.*--allow-remote"):
        check_target(url)
    assert check_target(url, allow_remote=True) == url


@pytest.mark.parametrize("url", ["ftp://127.0.0.1/x", "127.0.0.1:3000", "http://", "http://127.0.0.1:port/"])
def test_unusable_targets_are_refused(url):
    with pytest.raises(ForwardTargetRefused):
        check_target(url, allow_remote=True)


def test_stored_target_has_no_credentials_or_query():
    assert shown_target("http://user:pw@127.0.0.1:3000/hook?secret=abc#x") == "http://127.0.0.1:3000/hook"


async def test_a_full_queue_is_recorded_not_grown(app, store, start_forwarder, forward_log):
    app.release.clear()  # the app hangs: nothing leaves the queue
    forwarder = await start_forwarder(app.url, max_pending=2, timeout=60)
    events = [await store.append(record({"type": "Message", "n": n})) for n in range(4)]
    for event in events:
        forwarder.submit(event)
    assert forwarder.pending == 2
    app.release.set()
    await forwarder.wait_idle()
    assert [received.headers["x-gateway-tui-event"] for received in app.received] == [str(events[0].id), str(events[1].id)]
    for event in events[2:]:
        (attempt,) = forward_log.attempts(event.id)
        assert attempt.outcome is Outcome.FAILED and "too many events waiting" in attempt.error


async def test_attempts_of_events_deleted_by_retention_are_pruned(tmp_path, monkeypatch):
    monkeypatch.setattr(forwarder_module, "PRUNE_EVERY", 3)
    with EventStore(tmp_path / "r.sqlite3", retention=2) as store, ForwardLog(store.path) as log:
        events = [await store.append(record({"type": "Message"})) for _ in range(3)]  # the first is deleted
        for event in events:
            log.record(ForwardAttempt(event.id, 1, datetime.now(UTC), "http://127.0.0.1/x", 200, None, 1.0, Outcome.DELIVERED))
        assert log.attempts(events[0].id) == []
        assert len(log.attempts(events[1].id)) == 1 and len(log.attempts(events[2].id)) == 1
