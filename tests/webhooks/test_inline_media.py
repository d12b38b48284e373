"""Incoming media is kept (issue 25): WuzAPI's inline base64 in a `Message` event, written before the 200 as
`<sha256>.<ext>` beside the store, once per distinct file; never for a rejected or unsigned event. A real `listen`
process, real sockets; the wire shape is WuzAPI's (wmiau.go: top-level `base64`, `mimeType`, `fileName` beside
`type` and `event`, json mode)."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import httpx

from tests import media_files
from tests.webhooks import headless
from tui.webhooks.media import MediaFolder
from tui.api.signing import SIGNATURE_HEADER, sign

KEY = "inline-media-key-0123456789abcdef0123"


def message_with_image(image: bytes, message_id: str) -> bytes:
    """A WuzAPI json-mode `Message` with an image, written by hand from docs/gateways/wuzapi.md §4.3 and wmiau.go."""
    event = {
        "Info": {"Chat": "5491155553934@s.whatsapp.net", "Sender": "5491155553934@s.whatsapp.net",
                 "IsFromMe": False, "IsGroup": False, "ID": message_id, "Type": "media", "PushName": "John",
                 "Timestamp": "2026-05-19T10:40:13-03:00", "MediaType": "image"},
        "Message": {"imageMessage": {"caption": "the receipt", "mimetype": "image/png"}},
    }
    return json.dumps({"base64": base64.b64encode(image).decode(), "event": event, "fileName": f"{message_id}.png",
                       "instanceName": "wuz", "mimeType": "image/png", "type": "Message",
                       "userID": "0123456789abcdef0123456789abcdef"}, separators=(",", ":")).encode()


async def post(url: str, body: bytes, *, signed: bool) -> httpx.Response:
    headers = {"Content-Type": "application/json"}
    if signed:
        headers[SIGNATURE_HEADER] = sign(KEY, body)
    async with httpx.AsyncClient(timeout=10) as client:
        return await client.post(url + "/", content=body, headers=headers)


def show(db: Path, event_id: int) -> dict:
    done = subprocess.run([sys.executable, "-m", "tui", "events", "show", str(event_id), "--json", "--db", str(db)],
                          capture_output=True, text=True, timeout=60, cwd=headless.REPO,
                          env={k: v for k, v in os.environ.items() if k != "GATEWAY_TUI_HMAC_KEY"})
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def media_files_in(folder: Path) -> list[Path]:
    return sorted(path for path in folder.iterdir() if not path.name.startswith(".")) if folder.exists() else []


async def test_a_signed_image_is_kept_once_and_named_by_events_show(tmp_path: Path) -> None:
    db = tmp_path / "events.sqlite3"
    image = media_files.png(size=(64, 48))
    process, url = await headless.start_headless(db, key=KEY)
    try:
        first = await post(url, message_with_image(image, "3EB0AAAA"), signed=True)
        second = await post(url, message_with_image(image, "3EB0BBBB"), signed=True)  # the same photo again
    finally:
        process.terminate()
        await process.wait()
    assert (first.status_code, second.status_code) == (200, 200)
    folder = tmp_path / "events.sqlite3.media"
    digest = hashlib.sha256(image).hexdigest()
    assert media_files_in(folder) == [folder / f"{digest}.png"]  # the same bytes twice are kept once
    assert (folder / f"{digest}.png").read_bytes() == image
    for answer in (first, second):
        document = show(db, answer.json()["id"])
        assert document["media"] == [{"path": str((folder / f"{digest}.png").absolute()), "mime_type": "image/png",
                                      "size": len(image), "sha256": digest}]
        # the raw body stays as received (forward and replay need its exact bytes)
        assert json.loads(base64.b64decode(document["body_base64"]) if "body_base64" in document
                          else document["body"])["base64"] == base64.b64encode(image).decode()


async def test_an_unsigned_or_forged_image_keeps_no_file(tmp_path: Path) -> None:
    db = tmp_path / "events.sqlite3"
    image = media_files.png(size=(16, 16))
    process, url = await headless.start_headless(db, key=KEY)
    try:
        unsigned = await post(url, message_with_image(image, "3EB0CCCC"), signed=False)
        body = message_with_image(image, "3EB0DDDD")
        async with httpx.AsyncClient(timeout=10) as client:
            forged = await client.post(url + "/", content=body, headers={
                "Content-Type": "application/json", SIGNATURE_HEADER: sign("another-key-0123456789abcdef0123456", body)})
    finally:
        process.terminate()
        await process.wait()
    assert (unsigned.status_code, forged.status_code) == (401, 401)
    assert media_files_in(tmp_path / "events.sqlite3.media") == []
    assert show(db, unsigned.json()["id"])["media"] == []


async def test_an_unsigned_image_accepted_with_accept_unsigned_still_keeps_no_file(tmp_path: Path) -> None:
    db = tmp_path / "events.sqlite3"
    process, url = await headless.start_headless(db, "--accept-unsigned", key=KEY)
    try:
        answer = await post(url, message_with_image(media_files.png(), "3EB0EEEE"), signed=False)
    finally:
        process.terminate()
        await process.wait()
    assert answer.status_code == 200  # stored and flagged: a key is set, the event is not verified
    assert media_files_in(tmp_path / "events.sqlite3.media") == []


def test_the_folder_holds_to_its_limit_oldest_first(tmp_path: Path) -> None:
    folder = MediaFolder(tmp_path / "media", limit=2500)
    files = [media_files.png(size=(8, 8), color=(shade, 0, 0)) + bytes(1000) for shade in (1, 2, 3)]
    kept = []
    for number, data in enumerate(files):
        kept.append(folder.keep(data))
        os.utime(kept[-1].path, ns=(number * 10**9, number * 10**9))  # distinct ages, whatever the clock's grain
    assert not kept[0].path.exists()  # the oldest went first
    assert kept[1].path.exists() and kept[2].path.exists()
    again = folder.keep(files[1])  # seen again: the newest now
    assert again.path == kept[1].path and again.path.read_bytes() == files[1]
