"""Incoming media kept as files (issue 25): WuzAPI's inline base64, written before the listener answers 200.

WuzAPI puts a received image, audio, document or video, base64-encoded, in a `Message` event's top-level `base64`
field, with `mimeType` and `fileName` (wmiau.go: `postmap["base64"]`, `postmap["mimeType"]`, `postmap["fileName"]`,
when its media delivery is `base64` or `both`; wuzapi.md §4.3). The listener writes those bytes to the media folder
beside the event store, as `<sha256>.<ext>` (the same bytes twice are one file), and only for an event it accepts:
a rejected one's media is never decoded or written. The raw body stays in the store as received.

A retention limit bounds the folder: past it the oldest files (by last write) go first, never the one just kept.

    folder = MediaFolder(store.path.parent / "media", limit=500 * 1024 * 1024)
    media = inline_media(payload)             # InlineMedia or None
    kept = folder.keep(media.decode())        # KeptMedia(path, mime_type, size, sha256)
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import logging
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tui.api.media import DEFAULT_MEDIA_LIMIT, sniff
from tui.webhooks.bodies import UnparseableBody, parse_body
from tui.webhooks.events import StoredEvent
from tui.webhooks.signing import Verdict

log = logging.getLogger(__name__)

MEDIA_FOLDER_NAME = "media"


@dataclass(frozen=True)
class InlineMedia:
    """A `Message` event's inline file, still base64 (decoding waits until the event is accepted)."""

    text: str
    mime_type: str
    file_name: str | None

    def decode(self) -> bytes | None:
        """The file's bytes; None when the base64 does not decode (the event is kept, the file is not)."""
        try:
            return base64.b64decode(self.text, validate=True)
        except (binascii.Error, ValueError):
            return None


def inline_media(payload: Any) -> InlineMedia | None:
    """The inline media of a WuzAPI `Message` payload (JSON mode or form mode alike, see bodies.py), or None."""
    if not isinstance(payload, dict) or payload.get("type") != "Message":
        return None
    text = payload.get("base64")
    if not isinstance(text, str) or not text:
        return None
    mime_type = payload.get("mimeType")
    file_name = payload.get("fileName")
    return InlineMedia(text, mime_type if isinstance(mime_type, str) else "",
                       file_name if isinstance(file_name, str) and file_name else None)


@dataclass(frozen=True)
class KeptMedia:
    path: Path  # absolute
    mime_type: str
    size: int
    sha256: str

    def to_json(self) -> dict[str, object]:
        return {"path": str(self.path), "mime_type": self.mime_type, "size": self.size, "sha256": self.sha256}


def media_name(data: bytes) -> tuple[str, str, str]:
    """(file name, sha256, media type by content) of a media file's bytes."""
    digest = hashlib.sha256(data).hexdigest()
    sniffed = sniff(data)
    extension = sniffed.extension if sniffed.known and sniffed.extension.isalnum() else "bin"
    return f"{digest}.{extension}", digest, sniffed.mime_type


class MediaFolder:
    """The media files kept beside one event store. Thread-safe: the listener writes from worker threads."""

    def __init__(self, path: Path, limit: int = DEFAULT_MEDIA_LIMIT) -> None:
        self.path = path.absolute()
        self.limit = limit
        self._lock = threading.Lock()
        self._total: int | None = None  # bytes in the folder, counted once, then kept up to date

    @classmethod
    def beside(cls, store_path: Path, limit: int = DEFAULT_MEDIA_LIMIT) -> MediaFolder:
        return cls(store_path.parent / MEDIA_FOLDER_NAME, limit)

    def where(self, data: bytes) -> KeptMedia:
        """Where these bytes are (or would be) kept, without writing."""
        name, digest, mime_type = media_name(data)
        return KeptMedia(self.path / name, mime_type, len(data), digest)

    def keep(self, data: bytes) -> KeptMedia:
        """Write `data` unless the same bytes are there already; then hold the folder to its limit."""
        kept = self.where(data)
        with self._lock:
            self.path.mkdir(parents=True, exist_ok=True, mode=0o700)
            if kept.path.exists():
                os.utime(kept.path)  # seen again: it is the newest now
            else:
                temporary = kept.path.with_name(f".{kept.path.name}.{os.getpid()}.{threading.get_ident()}.part")
                fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
                with os.fdopen(fd, "wb") as handle:
                    handle.write(data)
                os.replace(temporary, kept.path)
                if self._total is not None:
                    self._total += len(data)
            self._hold_to_limit(keep=kept.path)
        return kept

    def _hold_to_limit(self, keep: Path) -> None:
        if self._total is not None and self._total <= self.limit:
            return
        files = []
        for entry in os.scandir(self.path):
            if entry.is_file() and not entry.name.startswith("."):
                info = entry.stat()
                files.append((info.st_mtime_ns, info.st_size, Path(entry.path)))
        total = sum(size for _, size, _ in files)
        for _, size, path in sorted(files):
            if total <= self.limit:
                break
            if path == keep:
                continue
            try:
                path.unlink()
            except FileNotFoundError:
                pass  # another process pruned it first
            total -= size
        self._total = total


def event_media(event: StoredEvent, folder: MediaFolder) -> list[KeptMedia]:
    """The media files kept for a stored event: its inline file, found again from the raw body (the store keeps no
    other trace of it), listed while the file is in the folder. None for a rejected or unverified event: its media
    was never written."""
    if event.rejected or event.verdict not in (Verdict.VALID, Verdict.NO_KEY) or event.body_cut:
        return []
    try:
        parsed, _from_form = parse_body(event.headers.get("content-type", ""), event.body)
    except UnparseableBody:
        return []
    inline = inline_media(parsed)
    data = inline.decode() if inline is not None else None
    if data is None:
        return []
    kept = folder.where(data)
    return [kept] if kept.path.is_file() else []
