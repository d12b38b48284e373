"""A received media message in the thread (issue 25), in the app against the sandbox at 80×24: its file line, and
the keys on it: ctrl+o opens the file with the system viewer (a stand-in `xdg-open` on PATH records what it was
given; none on PATH: a plain message), ctrl+s saves it to a path asked in a small dialog (an existing file is
replaced only after a yes), ctrl+e previews an image.

The events are literal: WuzAPI's json-mode `Message` with the file inline (wmiau.go's top-level `base64`,
`mimeType`, `fileName`; docs/gateways/wuzapi.md §4.3) and Z-API's `ReceivedCallback` with `image.imageUrl`
(docs/gateways/zapi.md §5.3), the URL on the sandbox's stand-in for Z-API's storage (the sandbox is on loopback:
its media may be fetched)."""

from __future__ import annotations

import base64
import hashlib
import io
import os
from pathlib import Path

from PIL import Image
from textual.widgets import Input

from tests.app.test_inbox import choose, inbox_settled, open_inbox, post
from tests.harness import running_sandbox_app, screen_text, settle, wait_until
from tui.sandbox.events import MEDIA_PATH, REPLY_FILES
from tui.ui.screens.media import SaveMediaScreen
from tui.ui.screens.preview import PreviewScreen
from tui.ui.widgets.feedback import ErrorLine
from tui.ui.widgets.image_preview import ImagePreview
from tui.ui.widgets.section import ConfirmScreen
from tui.ui.widgets.thread_view import ThreadView

SIZE = (80, 24)
PEER = "5491155553934"


def png(colour: tuple[int, int, int] = (200, 30, 30)) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (40, 20), colour).save(out, "PNG")
    return out.getvalue()


def wuzapi_image(data: bytes, message_id: str = "3EB0MEDIA1") -> dict:
    return {"base64": base64.b64encode(data).decode(), "mimeType": "image/png", "fileName": f"{message_id}.png",
            "instanceName": "wuz", "type": "Message", "userID": "0123456789abcdef0123456789abcdef",
            "event": {"Info": {"Chat": f"{PEER}@s.whatsapp.net", "Sender": f"{PEER}@s.whatsapp.net",
                               "IsFromMe": False, "IsGroup": False, "ID": message_id, "Type": "media",
                               "PushName": "John", "Timestamp": "2026-05-19T10:40:13-03:00", "MediaType": "image"},
                      "Message": {"imageMessage": {"caption": "the receipt", "mimetype": "image/png",
                                                   "fileLength": len(data)}}}}


def zapi_image(url: str) -> dict:
    return {"isStatusReply": False, "senderLid": "81896604192873@lid", "connectedPhone": "554499999999",
            "waitingMessage": False, "isEdit": False, "isGroup": False, "isNewsletter": False, "instanceId": "sandbox",
            "messageId": "A20DA9C0183A2D35A260F53F5D2B9244", "phone": PEER, "fromMe": False, "momment": 1632228955000,
            "status": "RECEIVED", "chatName": "John", "senderPhoto": None, "senderName": "John", "participantPhone": None,
            "photo": None, "broadcast": False, "type": "ReceivedCallback",
            "image": {"mimeType": "image/png", "imageUrl": url, "thumbnailUrl": url, "caption": "the shelf",
                      "width": 96, "height": 64, "viewOnce": False}}


def stand_in_viewer(folder: Path) -> Path:
    """An `xdg-open` that writes its argument to a file and exits."""
    record = folder / "opened.txt"
    script = folder / "xdg-open"
    script.write_text(f"#!/bin/sh\nprintf '%s' \"$1\" > '{record}'\n")
    script.chmod(0o755)
    return record


async def thread_with(pilot, payload: dict, path: str) -> ThreadView:
    screen = await open_inbox(pilot)
    assert await post(pilot, path, payload) == 200
    await wait_until(pilot, lambda: PEER in [row.chat_id for row in screen.rows], what="the chat with the file")
    await choose(pilot, screen, PEER)
    view = screen.query_one(ThreadView)
    view.focus()
    await settle(pilot)
    return view


def status_text(pilot) -> str:
    return str(pilot.app.screen.query_one("#inbox-status", ErrorLine).render())


async def test_ctrl_o_opens_an_inline_image_with_the_system_viewer(tmp_path, monkeypatch):
    record = stand_in_viewer(tmp_path)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    data = png()
    async with running_sandbox_app(SIZE) as pilot:
        view = await thread_with(pilot, wuzapi_image(data), "/session")
        text = " ".join(view.text().split())
        assert "[image] the receipt" in text and f"▤ image · 3EB0MEDIA1.png · {len(data)} bytes · image/png" in text, text
        footer = screen_text(pilot.app).splitlines()[-1]
        assert "^o Open" in footer and "^s Save" in footer, footer
        await pilot.press("ctrl+o")
        await wait_until(pilot, lambda: record.exists(), what="the viewer to be started")
        opened = Path(record.read_text())
        assert opened.name == hashlib.sha256(data).hexdigest() + ".png" and opened.read_bytes() == data
        await wait_until(pilot, lambda: "Opened 3EB0MEDIA1.png with xdg-open" in status_text(pilot), what="the words")


async def test_ctrl_o_fetches_a_zapi_link_then_opens_it(tmp_path, monkeypatch):
    record = stand_in_viewer(tmp_path)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    async with running_sandbox_app(SIZE) as pilot:
        url = pilot.app.runtime.sandbox.url + f"{MEDIA_PATH}/photo.png"
        view = await thread_with(pilot, zapi_image(url), "/delivery")
        assert "▤ image · size not known until fetched · image/png" in " ".join(view.text().split())
        await pilot.press("ctrl+o")
        await wait_until(pilot, lambda: record.exists(), what="the fetch and the viewer")
        assert Path(record.read_text()).read_bytes() == REPLY_FILES["image"].data()


async def test_without_a_system_viewer_a_plain_message_names_the_file(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))  # neither xdg-open nor open
    async with running_sandbox_app(SIZE) as pilot:
        await thread_with(pilot, wuzapi_image(png()), "/session")
        await pilot.press("ctrl+o")
        await wait_until(pilot, lambda: "No system viewer" in status_text(pilot), what="the message")
        assert "neither xdg-open nor open is on PATH" in status_text(pilot)


async def test_ctrl_s_saves_to_the_path_typed_and_replaces_a_file_only_after_a_yes(tmp_path):
    data = png()
    target = tmp_path / "saved.png"
    async with running_sandbox_app(SIZE) as pilot:
        await thread_with(pilot, wuzapi_image(data), "/session")
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, SaveMediaScreen), what="the save dialog")
        field = pilot.app.screen.query_one("#save-path", Input)
        assert field.value.endswith("3EB0MEDIA1.png")
        field.value = ""
        await pilot.press(*str(target))  # letters (e, q, s...) are the path here, never commands
        assert field.value == str(target) and isinstance(pilot.app.screen, SaveMediaScreen)
        await pilot.press("enter")
        await wait_until(pilot, lambda: target.exists(), what="the file saved")
        assert target.read_bytes() == data and target.stat().st_mode & 0o777 == 0o600
        await wait_until(pilot, lambda: "Saved the image as" in status_text(pilot), what="the words")
        target.write_bytes(b"mine")
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, SaveMediaScreen), what="the save dialog")
        pilot.app.screen.query_one("#save-path", Input).value = str(target)
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, ConfirmScreen), what="the question")
        await pilot.press("escape")
        await wait_until(pilot, lambda: "was kept as it was" in status_text(pilot), what="not replaced")
        assert target.read_bytes() == b"mine"
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, SaveMediaScreen), what="the save dialog")
        pilot.app.screen.query_one("#save-path", Input).value = str(target)
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, ConfirmScreen), what="the question")
        pilot.app.screen.query_one("#yes").press()
        await wait_until(pilot, lambda: target.read_bytes() == data, what="replaced after the yes")


async def test_ctrl_e_previews_the_image(monkeypatch):
    monkeypatch.setenv("GATEWAY_TUI_GRAPHICS", "blocks")
    async with running_sandbox_app(SIZE) as pilot:
        await thread_with(pilot, wuzapi_image(png((10, 200, 10))), "/session")
        await pilot.press("ctrl+e")
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, PreviewScreen), what="the preview")
        await settle(pilot)
        preview = pilot.app.screen.query_one(ImagePreview)
        line = preview.render_line(0)
        assert "▀" in line.text
        assert any(segment.style is not None and segment.style.color is not None
                   and segment.style.color.get_truecolor().green == 200 for segment in line)
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(pilot.app.screen, PreviewScreen), what="closed")


async def test_an_unsigned_events_media_never_becomes_a_message():
    """A rejected (unsigned, a key set) event is no message: nothing in the thread to open or fetch."""
    async with running_sandbox_app(SIZE) as pilot:
        screen = await open_inbox(pilot)
        assert await post(pilot, "/session", wuzapi_image(png()), signed=False) == 401
        await inbox_settled(pilot)
        assert PEER not in [row.chat_id for row in screen.rows]


async def test_the_demos_history_document_says_why_each_media_key_cannot_act():
    """The sandbox's launch group holds a document from the seeded history (issue 38, item 13): no event delivered
    its file, so each key the help lists for the thread says so instead of doing nothing."""
    from tui.sandbox.state import LAUNCH_ID

    async with running_sandbox_app(SIZE) as pilot:
        screen = await open_inbox(pilot)
        await choose(pilot, screen, f"{LAUNCH_ID}@g.us")
        view = screen.query_one(ThreadView)
        view.focus()
        await settle(pilot)
        assert "[document] press-release-v3.pdf" in view.text()
        footer = screen_text(pilot.app).splitlines()[-1]
        assert "^o Open" in footer, footer
        for key, verb in (("ctrl+o", "opened"), ("ctrl+s", "saved"), ("ctrl+e", "previewed")):
            await pilot.press(key)
            await wait_until(pilot, lambda verb=verb: f"The document cannot be {verb}" in status_text(pilot),
                             what=f"why it cannot be {verb}")
            assert "came with the chat's history" in status_text(pilot), status_text(pilot)
            assert pilot.app.screen is screen.screen  # no dialog: nothing to save


async def test_a_media_key_on_a_thread_without_a_file_says_so():
    async with running_sandbox_app(SIZE) as pilot:
        screen = await open_inbox(pilot)
        await choose(pilot, screen, "5511987654321")  # Ana: texts only
        view = screen.query_one(ThreadView)
        view.focus()
        await settle(pilot)
        await pilot.press("ctrl+o")
        await wait_until(pilot, lambda: "No media message in this thread" in status_text(pilot), what="the words")


def wuzapi_document(data: bytes, mime_type: str, file_name: str, message_id: str = "3EB0DOC1") -> dict:
    """WuzAPI's json-mode `Message` with a document inline (wmiau.go: top-level `base64`, `mimeType`, `fileName`)."""
    return {"base64": base64.b64encode(data).decode(), "mimeType": mime_type, "fileName": file_name,
            "instanceName": "wuz", "type": "Message", "userID": "0123456789abcdef0123456789abcdef",
            "event": {"Info": {"Chat": f"{PEER}@s.whatsapp.net", "Sender": f"{PEER}@s.whatsapp.net",
                               "IsFromMe": False, "IsGroup": False, "ID": message_id, "Type": "media",
                               "PushName": "John", "Timestamp": "2026-05-19T10:40:13-03:00", "MediaType": "document"},
                      "Message": {"documentMessage": {"mimetype": mime_type, "title": file_name, "fileName": file_name,
                                                      "fileLength": len(data)}}}}


SCRIPTED_SVG = b'<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"><script>alert(2)</script></svg>'
PAGE = b"<!DOCTYPE html><html><head><script>alert(1)</script></head><body>invoice</body></html>"


async def test_ctrl_o_asks_before_opening_what_is_not_an_image_audio_or_video(tmp_path, monkeypatch):
    """A document whose content is HTML (whatever the event calls it) may run what it holds once opened: the app
    asks first (issue 37, item 14); no means it is not opened. The file is kept 0600, never executable."""
    record = stand_in_viewer(tmp_path)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    async with running_sandbox_app(SIZE) as pilot:
        await thread_with(pilot, wuzapi_document(PAGE, "image/png", "invoice.png"), "/session")
        await pilot.press("ctrl+o")
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, ConfirmScreen), what="the question")
        question = " ".join(screen_text(pilot.app).split())
        assert "Open invoice.png with xdg-open?" in question and "HTML document (text/html)" in question, question
        await pilot.press("escape")
        await wait_until(pilot, lambda: "Not opened" in status_text(pilot), what="not opened")
        assert not record.exists()
        await pilot.press("ctrl+o")
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, ConfirmScreen), what="the question")
        pilot.app.screen.query_one("#yes").press()
        await wait_until(pilot, lambda: record.exists(), what="opened after the yes")
        kept = Path(record.read_text())
        assert kept.name == hashlib.sha256(PAGE).hexdigest() + ".html"
        assert kept.stat().st_mode & 0o777 == 0o600


async def test_ctrl_o_asks_before_opening_an_svg(tmp_path, monkeypatch):
    """An SVG is an image by its type, but a script runs in it: not on the allow-list."""
    record = stand_in_viewer(tmp_path)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    async with running_sandbox_app(SIZE) as pilot:
        await thread_with(pilot, wuzapi_document(SCRIPTED_SVG, "image/svg+xml", "logo.svg"), "/session")
        await pilot.press("ctrl+o")
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, ConfirmScreen), what="the question")
        await pilot.press("escape")
        await wait_until(pilot, lambda: "Not opened" in status_text(pilot), what="not opened")
        assert not record.exists()
