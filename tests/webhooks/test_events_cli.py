"""`gateway-tui events list|show|export|replay` and `gateway-tui trigger`, run as users run them.

Reading commands run in-process on a filled store; the loop (listen --forward-to, trigger, list, replay) runs
as real processes against a recording app, as the README shows it.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from urllib.parse import parse_qs

import aiohttp
import pytest

from tests.webhooks.conftest import KEY, record
from tests.webhooks.headless import start_headless
from tests.webhooks.recording_app import RecordingApp
from tests.webhooks.test_headless import stop
from tests.webhooks.test_signing import JSON_BODY, JSON_BODY_SIGNATURE
from tui.local import config
from tui.cli.main import main
from tui.local.paths import profile_events_path
from tui.webhooks.forwarder import ForwardLog, Outcome
from tui.api.signing import Verdict, sign
from tui.webhooks.store import EventStore

MESSAGE = {"type": "Message", "event": {"Info": {"ID": "3EB0AA", "Chat": "1@s.whatsapp.net"}, "Message": {"conversation": "pizza tonight"}}}
RECEIPT = {"type": "ReadReceipt", "event": {"MessageIDs": ["3EB0AA"]}}


async def _fill(path) -> list[int]:
    with EventStore(path) as store:
        events = [
            await store.append(record(MESSAGE, kind="Message", summary="Message: pizza tonight")),
            await store.append(record(RECEIPT, kind="ReadReceipt", summary="ReadReceipt read")),
            await store.append(record(MESSAGE, kind="Message", verdict=Verdict.INVALID, rejected=True)),
            await store.append(record({"type": "Message", "event": {"Message": {"conversation": "salad"}}}, kind="Message")),
        ]
    return [event.id for event in events]


@pytest.fixture
def db(tmp_path):
    path = tmp_path / "events.sqlite3"
    asyncio.run(_fill(path))
    return path


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def listed_ids(capsys, db, *filters: str) -> list[int]:
    code, out, _ = run(capsys, "events", "list", "--db", str(db), "--json", *filters)
    assert code == 0
    return [event["id"] for event in json.loads(out)]


def test_list_filters(capsys, db):
    assert listed_ids(capsys, db) == [4, 3, 2, 1]
    assert listed_ids(capsys, db, "--kind", "ReadReceipt") == [2]
    assert listed_ids(capsys, db, "--verdict", "invalid") == [3]
    assert listed_ids(capsys, db, "--verdict", "rejected") == [3]
    assert listed_ids(capsys, db, "--search", "pizza") == [3, 1]
    assert listed_ids(capsys, db, "--search", "pizza", "--limit", "1") == [3]
    assert listed_ids(capsys, db, "--kind", "Message", "--verdict", "valid") == [4, 1]


def test_list_json_is_the_stored_event(capsys, db):
    code, out, _ = run(capsys, "events", "list", "--db", str(db), "--json", "--limit", "1", "--kind", "ReadReceipt")
    (event,) = json.loads(out)
    assert event["kind"] == "ReadReceipt" and event["payload"] == RECEIPT and event["verdict"] == "valid"
    assert json.loads(event["body"]) == RECEIPT
    assert event["forwarded"] is None


def test_list_as_text_one_line_each(capsys, db):
    code, out, _ = run(capsys, "events", "list", "--db", str(db), "--kind", "ReadReceipt")
    assert code == 0
    (header, line) = out.splitlines()
    assert line.split()[0] == "2" and "ReadReceipt read" in line
    assert header.split() == ["ID", "RECEIVED", "KIND", "VERDICT", "SUMMARY"]
    # each heading stands over its column
    assert line.index("ReadReceipt") == header.index("KIND") and line.index("valid") == header.index("VERDICT")


def test_list_as_text_marks_duplicates_and_json_keeps_its_fields(capsys, tmp_path):
    """Issue 21 item 12: a delivery received again is marked in the text listing (as the events panel marks it);
    `--json` is unchanged (its `duplicate_of` field was already there)."""
    path = tmp_path / "dup.sqlite3"

    async def fill() -> None:
        with EventStore(path) as store:
            await store.append(record(MESSAGE, kind="Message", summary="Message: pizza tonight"))
            await store.append(record(RECEIPT, kind="ReadReceipt", summary="ReadReceipt read"))
            await store.append(record(MESSAGE, kind="Message", summary="Message: pizza tonight"))

    asyncio.run(fill())
    code, out, _ = run(capsys, "events", "list", "--db", str(path))
    assert code == 0
    header, again, receipt, first = out.splitlines()
    assert again.split()[0] == "3" and "duplicate of #1 · Message: pizza tonight" in again
    assert "duplicate" not in receipt and "duplicate" not in first
    code, out, _ = run(capsys, "events", "list", "--db", str(path), "--json")
    documents = json.loads(out)
    assert [document["duplicate_of"] for document in documents] == [1, None, None]
    assert documents[0]["summary"] == "Message: pizza tonight"
    assert sorted(documents[0]) == sorted([
        "id", "received_at", "path", "kind", "summary", "verdict", "rejected", "reason", "message_ids",
        "duplicate_of", "headers", "payload", "body", "forwarded",
        "body_cut", "body_size",  # added by issue 20 item 3 (a rejected body kept to 4 KiB): added, none renamed
        "account",  # added by issue 26 (one store for many accounts): the profile the event came for
        "sender"])  # added by issue 35 (who wrote): a LID sender's phone and name, null when none is named


def test_show_json_with_forward_attempts(capsys, db):
    code, out, _ = run(capsys, "events", "show", "1", "--db", str(db), "--json")
    shown = json.loads(out)
    assert code == 0 and shown["id"] == 1 and shown["payload"] == MESSAGE and shown["forward_attempts"] == []
    assert shown["forward_pending"] is False


def test_show_unknown_id_says_so(capsys, db):
    code, _, err = run(capsys, "events", "show", "99", "--db", str(db), "--json")
    assert code == 1 and "no event #99" in err  # not found: 1, as `message` says of a message id


@pytest.mark.parametrize("action", ["show", "replay"])
@pytest.mark.parametrize("event_id", ["99999999999999999999", "0", "-3"])
def test_an_id_no_event_can_have_is_one_line(capsys, db, action, event_id):
    """SQLite's ids run from 1 to 2**63-1: a number beyond them was an OverflowError traceback."""
    to = ["--to", "http://127.0.0.1:9/hook"] if action == "replay" else []
    code, out, err = run(capsys, "events", action, event_id, "--db", str(db), *to)
    assert (code, out) == (2, "")
    assert err == (f"gateway-tui events: no event #{event_id}: event ids are whole numbers from 1 to "
                   "9223372036854775807\n")


def test_a_store_path_with_escape_sequences_is_shown_escaped_on_one_line(capsys, tmp_path):
    path = tmp_path / "x\x1b[2J\nsecond line.sqlite3"
    code, out, err = run(capsys, "events", "list", "--db", str(path))
    assert (code, out) == (2, "")
    assert err == f"gateway-tui events: no event store at {tmp_path}/x\\x1b[2J\\nsecond line.sqlite3 (nothing " \
                  "received yet, or pass --db PATH)\n"


def test_export_filters_oldest_first(capsys, db, tmp_path):
    code, out, _ = run(capsys, "events", "export", "--db", str(db), "--kind", "Message", "--verdict", "valid")
    assert code == 0 and [json.loads(line)["id"] for line in out.splitlines()] == [1, 4]
    code, out, _ = run(capsys, "events", "export", "--db", str(db), "--search", "pizza", "--limit", "1")
    assert [json.loads(line)["id"] for line in out.splitlines()] == [3]
    target = tmp_path / "out.jsonl"
    code, _, err = run(capsys, "events", "export", "--db", str(db), "--verdict", "rejected", "-o", str(target))
    assert code == 0 and "1 events written" in err
    assert [json.loads(line)["id"] for line in target.read_text().splitlines()] == [3]


def test_missing_store_is_named_not_created(capsys, tmp_path):
    code, _, err = run(capsys, "events", "list", "--db", str(tmp_path / "nope.sqlite3"))
    assert code == 2 and "no event store at" in err
    assert not (tmp_path / "nope.sqlite3").exists()


def test_without_db_the_profiles_store_is_read(capsys):
    config.save_profile(config.Profile(name="work", base_url="https://a.example", instance_id="i",
                                       session_url="https://s.example"))
    asyncio.run(_fill(profile_events_path("work")))
    code, out, _ = run(capsys, "events", "list", "--json", "--kind", "ReadReceipt")
    assert code == 0 and [event["id"] for event in json.loads(out)] == [2]
    code, _, err = run(capsys, "--profile", "other", "events", "list")
    assert code == 2 and "no profile named 'other'" in err


def test_remote_replay_target_is_refused(capsys, db):
    code, _, err = run(capsys, "events", "replay", "1", "--db", str(db), "--to", "http://203.0.113.9/hook")
    assert code == 2 and "--allow-remote" in err


def test_trigger_refuses_a_kind_the_dialect_does_not_send(capsys):
    code, _, err = run(capsys, "trigger", "ReadReceipt", "--dialect", "zapi", "--to", "http://127.0.0.1:9/x")
    assert code == 2 and "Z-API sends callbacks" in err


# -- as processes ----------------------------------------------------------------------------------------------


async def cli(*argv: str, key: str | None = None, extra_env: dict[str, str] | None = None) -> tuple[int, str, str]:
    env = {k: v for k, v in os.environ.items() if k != "GATEWAY_TUI_HMAC_KEY"} | (extra_env or {})
    if key is not None:
        env["GATEWAY_TUI_HMAC_KEY"] = key
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "tui", *argv, env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    out, err = await asyncio.wait_for(process.communicate(), 60)
    return process.returncode, out.decode(), err.decode()


@pytest.fixture
async def app():
    recording = await RecordingApp().start()
    yield recording
    await recording.stop()


async def test_trigger_sends_signed_samples_of_each_encoding(app):
    code, out, _ = await cli("trigger", "ReadReceipt", "--format", "form", "--dialect", "wuzapi", "--to", app.url, key=KEY)
    assert code == 0, out
    code, _, _ = await cli("trigger", "MessageStatusCallback", "--to", app.url, key=KEY)
    assert code == 0
    code, out, _ = await cli("trigger", "ReceivedCallback", "--dialect", "zapi", "--to", app.url, key=KEY)
    assert code == 0 and "unsigned, as Z-API sends it" in out
    form, status, zapi = app.received
    assert form.headers["content-type"] == "application/x-www-form-urlencoded"
    assert form.headers["x-hmac-signature"] == sign(KEY, form.body)
    fields = parse_qs(form.body.decode())
    assert sorted(fields) == ["instanceName", "jsonData", "userID"]
    receipt = json.loads(fields["jsonData"][0])
    assert receipt["type"] == "ReadReceipt" and receipt["state"] == "Read" and receipt["event"]["Type"] == "read"
    assert len(receipt["event"]["MessageIDs"]) == 1
    assert status.headers["x-hmac-signature"] == sign(KEY, status.body)
    status_payload = json.loads(status.body)
    assert status_payload["type"] == "MessageStatusCallback" and status_payload["status"] == "READ"
    assert isinstance(status_payload["ids"], list) and isinstance(status_payload["momment"], int)
    assert "x-hmac-signature" not in zapi.headers
    assert json.loads(zapi.body)["text"]["message"]


NO_KEYRING = {"PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring"}


def _save_profile(name: str = "box") -> None:
    config.save_profile(config.Profile(name=name, base_url="https://a.example", instance_id="i",
                                       session_url="https://s.example"))


async def test_trigger_with_no_key_anywhere_sends_unsigned_and_says_so(app):
    """Issue 21 item 12: no GATEWAY_TUI_HMAC_KEY, no OS keyring, no private file: the event goes out unsigned and
    the line says so, instead of failing on a keyring the profile never used."""
    _save_profile()
    code, out, err = await cli("trigger", "Message", "--to", app.url, extra_env=NO_KEYRING)
    assert code == 0, (out, err)
    assert "unsigned: no HMAC key" in out and "HTTP 200" in out
    (received,) = app.received
    assert "x-hmac-signature" not in received.headers


async def test_trigger_signs_with_the_key_in_the_private_file_without_a_keyring(app):
    """A profile whose secrets live in the opt-in private file: its HMAC key signs, with no keyring at all and
    without --insecure-storage on the command line."""
    from tui.local.secrets import InsecureFileSecrets, SecretName

    _save_profile()
    InsecureFileSecrets().set("box", SecretName.HMAC_KEY, KEY)
    code, out, err = await cli("trigger", "Message", "--to", app.url, extra_env=NO_KEYRING)
    assert code == 0, (out, err)
    assert "(application/json" in out and ", signed)" in out
    (received,) = app.received
    assert received.headers["x-hmac-signature"] == sign(KEY, received.body)
    assert KEY not in out and KEY not in err


async def test_trigger_reports_an_app_that_is_down():
    code, out, _ = await cli("trigger", "Message", "--to", "http://127.0.0.1:9/hook")
    assert code == 1 and "no answer" in out


async def test_the_loop_listen_forward_trigger_list_replay(app, tmp_path):
    db = tmp_path / "loop.sqlite3"
    process, listener_url = await start_headless(db, "--forward-to", app.url, key=KEY)
    try:
        code, out, _ = await cli("trigger", "Message", "--to", listener_url + "/session", key=KEY)
        assert code == 0 and "HTTP 200" in out
        (forwarded,) = await app.wait_for(1)
    finally:
        _, stderr = await stop(process)
    assert "event #1: attempt 1 → " in stderr.decode()
    assert forwarded.headers["x-hmac-signature"] == sign(KEY, forwarded.body)
    assert forwarded.headers["x-gateway-tui-event"] == "1"

    code, out, _ = await cli("events", "list", "--db", str(db), "--json")
    (listed,) = json.loads(out)
    assert listed["kind"] == "Message" and listed["verdict"] == "valid"
    assert listed["body"].encode() == forwarded.body
    assert listed["forwarded"]["outcome"] == "delivered" and listed["forwarded"]["status"] == 200

    code, out, _ = await cli("events", "replay", "1", "--db", str(db), "--to", app.url)
    assert code == 0 and "HTTP 200" in out
    first, replayed = app.received
    assert replayed.body == first.body and replayed.headers["x-hmac-signature"] == first.headers["x-hmac-signature"]
    assert replayed.headers["x-gateway-tui-replay"] == "1"
    with EventStore(db) as store, ForwardLog(db) as forward_log:
        assert [(a.replay, a.outcome) for a in forward_log.attempts(1)] == [
            (False, Outcome.DELIVERED), (True, Outcome.DELIVERED)]
        assert store.count() == 1


async def test_listen_never_prints_a_forward_targets_query(app, tmp_path):
    """`--forward-to URL?token=…`: the app's shared secret rides in the query. The store keeps the target without
    it; listen's own lines (where it forwards, each attempt) show the same, never the secret."""
    secret = "forward-query-SECRET-7f3a"
    db = tmp_path / "query.sqlite3"
    process, listener_url = await start_headless(db, "--forward-to", f"{app.url}?token={secret}", key=KEY)
    try:
        code, out, _ = await cli("trigger", "Message", "--to", listener_url + "/session", key=KEY)
        assert code == 0 and "HTTP 200" in out
        await app.wait_for(1)  # still forwarded with its query: only what is shown loses it
    finally:
        _, stderr = await stop(process)
    shown = process.first_line + stderr.decode()
    assert f"forwarding to {app.url}" in process.first_line
    assert "event #1: attempt 1 → " in shown
    assert secret not in shown


async def test_listen_stops_promptly_with_the_app_down_and_says_what_was_not_forwarded(tmp_path):
    from tests.webhooks.recording_app import free_port

    db = tmp_path / "down.sqlite3"
    process, listener_url = await start_headless(db, "--forward-to", f"http://127.0.0.1:{free_port()}/hook", key=KEY)
    code, out, _ = await cli("trigger", "Message", "--to", listener_url + "/session", key=KEY)
    assert code == 0 and "HTTP 200" in out  # acknowledged while the app is down
    _, stderr = await stop(process, signal.SIGTERM)
    assert process.returncode == 0
    assert "1 event not forwarded yet: #1;" in stderr.decode()
    code, out, _ = await cli("events", "show", "1", "--db", str(db), "--json")
    shown = json.loads(out)
    attempts = shown["forward_attempts"]
    assert attempts and all(a["status"] is None and a["outcome"] == "retrying" for a in attempts)
    assert shown["forward_pending"] is True  # kept: the next `listen --forward-to` sends it


async def test_sigterm_stops_listen_within_2_s_with_a_forward_the_app_never_answers(tmp_path):
    """Issue 13: SIGTERM stops `listen` within 2 s in every state. Here a forward is hanging in an app that accepted
    the connection and never answers (the forwarder's own timeout is 10 s), and another sender's body is stalled
    halfway: neither may hold the stop up, and the user is told which event was not forwarded."""
    forward_arrived = asyncio.Event()
    hung: list[asyncio.StreamWriter] = []

    async def never_answers(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        hung.append(writer)
        await reader.readuntil(b"\r\n\r\n")
        forward_arrived.set()
        await reader.read()  # until the listener gives up and closes; no answer is ever written

    target = await asyncio.start_server(never_answers, "127.0.0.1", 0)
    target_port = target.sockets[0].getsockname()[1]
    db = tmp_path / "hung.sqlite3"
    process, listener_url = await start_headless(db, "--forward-to", f"http://127.0.0.1:{target_port}/hook", key=KEY)
    stalled = None
    try:
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=30)) as http:
            headers = {"Content-Type": "application/json", "x-hmac-signature": JSON_BODY_SIGNATURE}
            async with http.post(listener_url + "/session", data=JSON_BODY, headers=headers) as response:
                assert response.status == 200
        await asyncio.wait_for(forward_arrived.wait(), 30)  # the forward is now hanging in the app
        port = int(listener_url.rsplit(":", 1)[1])
        stalled = await asyncio.open_connection("127.0.0.1", port)
        stalled[1].write(b"POST /hook HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{")
        await stalled[1].drain()
        started = time.monotonic()
        process.send_signal(signal.SIGTERM)
        _, stderr = await asyncio.wait_for(process.communicate(), 30)
        stopped_after = time.monotonic() - started
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
        if stalled is not None:
            stalled[1].close()
        for writer in hung:
            writer.close()
        target.close()
        await target.wait_closed()
    assert process.returncode == 0, stderr
    assert stopped_after < 2.0, f"stopped {stopped_after:.2f} s after SIGTERM"
    text = stderr.decode()
    assert "1 event not forwarded yet: #1; they are kept and go out when forwarding starts again" in text, text
    assert "Traceback" not in text


def test_a_reader_that_stops_early_ends_the_listing_quietly(tmp_path):
    # `gateway-tui events export | head -1`: head closes the pipe after one line. BrokenPipeError is an OSError,
    # and the handler for export files that cannot be written (OSError) stood first, so a closed pipe was
    # reported as an error with exit 1.
    path = tmp_path / "events.sqlite3"

    async def fill() -> None:
        with EventStore(path) as store:
            for number in range(3000):
                await store.append(record({"type": "Message", "n": number}, kind="Message", summary=f"Message {number}"))

    asyncio.run(fill())
    reader, writer = os.pipe()
    command = [sys.executable, "-m", "tui", "events", "export", "--db", str(path)]
    with subprocess.Popen(command, stdout=writer, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL) as process:
        os.close(writer)
        with os.fdopen(reader, "rb") as pipe:
            assert pipe.readline().startswith(b"{")
        _, err = process.communicate(timeout=60)
    assert process.returncode == 0, err.decode()
    assert err == b""
