"""Inline media kept once (issue 37, item 15): the store holds the body without the file's base64 and a reference to
the kept file, and gives back the exact body received wherever the body is read (`events show`, export): 50 real-
shaped WuzAPI deliveries, JSON and form mode, posted signed to a real `listen`, are rebuilt byte for byte and their
signatures check; the store holds none of the files' bytes.

The wire shapes are WuzAPI's (wmiau.go: top-level `base64`, `mimeType`, `fileName` beside `type` and `event`; form
mode: `url.Values{"instanceName", "jsonData", "userID"}.Encode()`, keys sorted, Go's QueryEscape; docs/gateways/wuzapi.md §3.2,
§4.3)."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlencode

import httpx

from tests import media_files
from tests.webhooks import headless
from tests.webhooks.recording_app import RecordingApp
from tests.webhooks.test_inline_media import show
from tui.api.signing import SIGNATURE_HEADER, Verdict, sign, verify

KEY = "kept-once-key-0123456789abcdef0123456"
FORM = "application/x-www-form-urlencoded"


def photo(index: int) -> bytes:
    """A distinct PNG with bytes that base64 spells with `+`, `/` and `=` (form mode escapes those)."""
    filler = b"\xfb\xef\xbe\xff\xff\xff"  # `++++////` at one of the three alignments: each comes once below
    return media_files.png(size=(16, 16), color=(index, 255 - index, 7)) + b"".join(
        bytes(pad) + filler for pad in (0, 1, 1)) + bytes(range(256)) * 8 + bytes(index % 3)  # past 1 KiB of base64


def event_json(image: bytes, index: int) -> dict:
    chat = f"55119{index:08d}@s.whatsapp.net"
    return {"Info": {"Chat": chat, "Sender": chat, "IsFromMe": False, "IsGroup": False, "ID": f"3EB0ONCE{index:04d}",
                     "Type": "media", "PushName": "Jo\u00e3o", "Timestamp": "2026-05-19T10:40:13-03:00",
                     "MediaType": "image"},
            "Message": {"imageMessage": {"caption": f"photo {index} <ok> & done", "mimetype": "image/png",
                                         "fileLength": len(image)}}}


def json_delivery(image: bytes, index: int) -> tuple[bytes, str]:
    """JSON mode, as Go's json.Marshal writes a map: keys sorted, no spaces, `<`, `>`, `&` as \\u escapes."""
    body = {"base64": base64.b64encode(image).decode(), "event": event_json(image, index),
            "fileName": f"3EB0ONCE{index:04d}.png", "instanceName": "wuz", "mimeType": "image/png",
            "type": "Message", "userID": "0123456789abcdef0123456789abcdef"}
    text = json.dumps(body, separators=(",", ":"), sort_keys=True, ensure_ascii=False)
    text = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return text.encode(), "application/json"


def form_delivery(image: bytes, index: int) -> tuple[bytes, str]:
    """Form mode: the same JSON (without the form's own fields) url-encoded in `jsonData`."""
    inner = {"base64": base64.b64encode(image).decode(), "event": event_json(image, index),
             "fileName": f"3EB0ONCE{index:04d}.png", "mimeType": "image/png", "type": "Message"}
    text = json.dumps(inner, separators=(",", ":"), sort_keys=True, ensure_ascii=False)
    fields = {"instanceName": "wuz", "jsonData": text, "userID": "0123456789abcdef0123456789abcdef"}
    return urlencode(sorted(fields.items())).encode(), FORM


def export(db: Path) -> list[dict]:
    done = subprocess.run([sys.executable, "-m", "tui", "events", "export", "--db", str(db)],
                          capture_output=True, text=True, timeout=120, cwd=headless.REPO,
                          env={k: v for k, v in os.environ.items() if k != "GATEWAY_TUI_HMAC_KEY"})
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


def body_of(document: dict) -> bytes:
    return base64.b64decode(document["body_base64"]) if "body_base64" in document else document["body"].encode()


async def test_fifty_deliveries_are_rebuilt_byte_for_byte_and_their_files_kept_once(tmp_path: Path) -> None:
    db = tmp_path / "events.sqlite3"
    images = [photo(index) for index in range(50)]
    sent = [(json_delivery if index % 2 else form_delivery)(image, index) for index, image in enumerate(images)]
    assert all(b"%2B" in body and b"%2F" in body for body, kind in sent if kind == FORM)  # escapes really spelled
    process, url = await headless.start_headless(db, key=KEY)
    ids = []
    try:
        async with httpx.AsyncClient(timeout=30) as client:
            for body, content_type in sent:
                answer = await client.post(url + "/session", content=body,
                                           headers={"Content-Type": content_type, SIGNATURE_HEADER: sign(KEY, body)})
                assert answer.status_code == 200, answer.text
                ids.append(answer.json()["id"])
    finally:
        process.terminate()
        await process.wait()
    with __import__("sqlite3").connect(db) as connection:
        stored = dict(connection.execute("SELECT id, length(body) FROM events").fetchall())
    for event_id, image, (body, _kind) in zip(ids, images, sent, strict=True):
        assert stored[event_id] < len(body) - len(image)  # the file's base64 is not in the store
    exported = {document["id"]: document for document in export(db)}
    for event_id, (body, _kind) in zip(ids, sent, strict=True):
        document = exported[event_id]
        rebuilt = body_of(document)
        assert rebuilt == body, event_id
        assert document["body_size"] == len(body) and not document["body_cut"]
        assert verify(KEY, rebuilt, document["headers"][SIGNATURE_HEADER]) is Verdict.VALID
    for event_id, (body, _kind) in list(zip(ids, sent, strict=True))[:4]:  # `events show` too
        assert body_of(show(db, event_id)) == body
    app = await RecordingApp().start()  # and `events replay`: the bytes sent again are the bytes received
    try:
        for event_id, (body, _kind) in list(zip(ids, sent, strict=True))[:2]:
            replaying = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "tui", "events", "replay", str(event_id), "--to", app.url, "--db", str(db),
                cwd=headless.REPO, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
            out, err = await asyncio.wait_for(replaying.communicate(), timeout=60)
            assert replaying.returncode == 0, err.decode()
            assert app.received[-1].body == body
            assert verify(KEY, app.received[-1].body, app.received[-1].headers[SIGNATURE_HEADER]) is Verdict.VALID
    finally:
        await app.stop()


async def test_a_body_whose_kept_file_is_gone_shows_as_cut_and_is_never_sent_as_whole(store, tmp_path: Path) -> None:
    """The file removed by hand (or altered): the stored body cannot be rebuilt, and says so rather than passing a
    body with a hole for the one received."""
    import dataclasses

    from tests.webhooks.conftest import record
    from tui.webhooks.media import MediaFolder
    from tui.webhooks.spliced import find_span

    image = photo(3)
    body, _kind = json_delivery(image, 3)
    kept = MediaFolder.of_store(store).keep(image)
    text = base64.b64encode(image).decode()
    span = find_span(body, text, image, kept.path.name)
    assert span is not None
    event = await store.append(dataclasses.replace(record({"type": "Message"}, body=body), media=span))
    whole = store.get(event.id)
    assert whole is not None and whole.body == body and not whole.body_cut
    kept.path.write_bytes(image[:-1] + b"\x00")  # altered
    altered = store.get(event.id)
    assert altered is not None and altered.body_cut and altered.cut_from == len(body)
    kept.path.unlink()
    gone = store.get(event.id)
    assert gone is not None and gone.body_cut and gone.cut_from == len(body)


async def test_another_stores_limit_never_removes_a_file_this_stores_events_need(store, tmp_path: Path) -> None:
    """The stores of one data folder (each profile's, the sandbox's, `listen --all`'s) each keep their files in their
    own folder: when they shared one, another store's limit removed a file this store's events need, and their bodies
    could not be rebuilt (found in review: two stores beside each other, the other's limit 10 kB)."""
    import dataclasses

    from tests.webhooks.conftest import record
    from tui.webhooks.media import MediaFolder
    from tui.webhooks.spliced import find_span
    from tui.webhooks.store import EventStore

    image = photo(4)
    body, _kind = json_delivery(image, 4)
    kept = MediaFolder.of_store(store).keep(image)
    span = find_span(body, base64.b64encode(image).decode(), image, kept.path.name)
    assert span is not None
    event = await store.append(dataclasses.replace(record({"type": "Message"}, body=body), media=span))
    with EventStore(tmp_path / "events-other.sqlite3") as other:
        other_folder = MediaFolder.of_store(other, limit=10_000)
        for index in range(3):
            other_folder.keep(photo(10 + index) + bytes([index]) * 8_000)  # each one alone fills its limit
    stored = store.get(event.id)
    assert stored is not None and not stored.body_cut and stored.body == body


async def test_a_file_kept_when_the_stores_shared_one_folder_is_still_found(store) -> None:
    """An event stored before each store had its own media folder kept its body whole and its file in `media/`
    beside the stores: `events show` and the thread still find that file there."""
    from tests.webhooks.conftest import record
    from tui.webhooks.media import MediaFolder, event_media
    from tui.api.signing import Verdict

    image = photo(5)
    body, _kind = json_delivery(image, 5)
    earlier = MediaFolder(store.shared_media_folder).keep(image)  # where the listener kept it then
    event = await store.append(record(json.loads(body), body=body, verdict=Verdict.NO_KEY))
    stored = store.get(event.id)
    assert stored is not None
    assert event_media(stored, MediaFolder.of_store(store)) == []  # not in the store's own folder
    [found] = event_media(stored, MediaFolder.of_store(store), store.shared_media_folder)
    assert found.path == earlier.path and found.path.read_bytes() == image
