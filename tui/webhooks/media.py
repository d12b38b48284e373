"""Incoming media kept as files (issue 25): WuzAPI's and Evolution's inline base64, written before the listener
answers 200.

WuzAPI puts a received image, audio, document or video, base64-encoded, in a `Message` event's top-level `base64`
field, with `mimeType` and `fileName` (wmiau.go: `postmap["base64"]`, `postmap["mimeType"]`, `postmap["fileName"]`,
when its media delivery is `base64` or `both`; docs/gateways/wuzapi.md §4.3); Evolution in `data.message.base64` of a
`messages.upsert` or `send.message` when its webhook's base64 is on (whatsapp.baileys.service.ts). The listener
writes those bytes to the media folder beside the event store, as `<sha256>.<ext>` (the same bytes twice are one
file), and only for an event it accepts: a rejected one's media is never decoded or written. The bytes are kept once: the store keeps the body
without the file's base64 and a reference to the file, and rebuilds the exact body received from the two
(tui.webhooks.spliced).

A retention limit bounds the files no stored event needs (fetched links, files whose events are gone): past it the
oldest (by last write) go first, never the one just kept. A file an event needs to rebuild its body is the store's,
bounded by the store's retention like the body it replaces; it is never removed while that event is stored.

    folder = MediaFolder.of_store(store, limit=500 * 1024 * 1024)
    media = inline_media(payload)             # InlineMedia or None
    kept = folder.keep(media.decode())        # KeptMedia(path, mime_type, size, sha256)
"""

from __future__ import annotations

import collections
import hashlib
import heapq
import itertools
import logging
import os
import threading
import time
from dataclasses import dataclass, replace
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tui.api.media import DEFAULT_MEDIA_LIMIT, sniff
from tui.webhooks.bodies import UnparseableBody, inline_media_holder, parse_body
from tui.webhooks.events import StoredEvent
from tui.webhooks.inline_base64 import decode_strict
from tui.webhooks.store import EventStore
from tui.api.signing import TRUSTED_VERDICTS

log = logging.getLogger(__name__)



@dataclass(frozen=True)
class InlineMedia:
    """A `Message` event's inline file, still base64 (decoding waits until the event is accepted)."""

    text: str
    mime_type: str
    file_name: str | None

    def decode(self) -> bytes | None:
        """The file's bytes; None when the base64 does not decode (the event is kept, the file is not). Strict, as
        binascii's strict mode judges it (the alphabet, the padding), at SIMD speed (inline_base64)."""
        return decode_strict(self.text)


def inline_media(payload: Any) -> InlineMedia | None:
    """The inline media of a WuzAPI `Message` payload (JSON mode or form mode alike, see bodies.py), or of an
    Evolution `messages.upsert` / `send.message` (`data.message.base64`), or None."""
    if not isinstance(payload, dict):
        return None
    if _is_evolution_message(payload):
        return _evolution_inline(payload)
    if payload.get("type") != "Message":
        return None
    text = payload.get("base64")
    if not isinstance(text, str) or not text:
        return None
    mime_type = payload.get("mimeType")
    file_name = payload.get("fileName")
    return InlineMedia(text, mime_type if isinstance(mime_type, str) else "",
                       file_name if isinstance(file_name, str) and file_name else None)


# Evolution's deliveries whose `data.message` carries the file when its webhook's base64 is on
# (whatsapp.baileys.service.ts: the messages.upsert handler and sendMessageWithTyping add `message.base64`).
EVOLUTION_MEDIA_EVENTS = frozenset({"messages.upsert", "send.message"})


def _is_evolution_message(payload: dict[str, Any]) -> bool:
    """An Evolution envelope of a message (its `event` a name; WuzAPI's `event` is an object)."""
    event = payload.get("event")
    return isinstance(event, str) and event in EVOLUTION_MEDIA_EVENTS


def _evolution_inline(payload: dict[str, Any]) -> InlineMedia | None:
    """Evolution's file in `data.message.base64`, its type and name from the message's part as Baileys wrote it
    (`imageMessage.mimetype`, `documentMessage.fileName`)."""
    message = inline_media_holder(payload)
    if message is None or message is payload:
        return None
    text = message.get("base64")
    if not isinstance(text, str) or not text:
        return None
    part = next((value for name, value in message.items() if name.endswith("Message") and isinstance(value, dict)),
                {})
    mime_type, file_name = part.get("mimetype"), part.get("fileName")
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
    """The media files kept beside one event store. Thread-safe: the listener writes from worker threads.

    The folder's size is counted once (its first keep) and then kept up to date as files come and go, with the
    files in the order they go (oldest write first): keeping one more file at the limit costs no rescan (with
    100,000 files a rescan took 2.3 s an event). The folder is rescanned only when another process changed it (its
    modification time is not the one this instance left), so two processes sharing it both hold it to the limit.

    A write goes to a `.part` file first (`.<name>.<pid>.<thread>.part`), renamed when whole. A writer killed
    mid-write leaves its part behind: a scan removes the parts whose process is gone, and counts the others
    (a live writer's) against the limit without touching them."""

    def __init__(self, path: Path, limit: int = DEFAULT_MEDIA_LIMIT, *,
                 in_use: Callable[[str], bool] | None = None) -> None:
        self.path = path.absolute()
        self.limit = limit
        # Whether a stored event needs a file to rebuild its body (EventStore.media_in_use): such a file is never
        # removed, nor counted against the limit (its bytes are the event's, kept once); the store's retention
        # frees it, and a rescan counts it again.
        self._in_use = in_use
        self._held: collections.Counter[str] = collections.Counter()  # kept for an event not stored yet
        self._held_lock = threading.Lock()  # only for `_held`, held for microseconds (see `release`)
        self._lock = threading.Lock()
        self._renamed = 0  # files this instance named in the folder (under _lock)
        self._synced = 0  # of those, the ones whose names are on the disk (under _sync_lock)
        self._sync_lock = threading.Lock()
        self._total: int | None = None  # bytes in the folder (live writers' parts too); None: not counted yet
        self._files: dict[str, tuple[int, int]] = {}  # kept file name -> (its entry's number, size)
        self._oldest_first: list[tuple[int, int, str]] = []  # heap of (last write ns, entry number, name)
        self._numbers = itertools.count()
        self._folder_mtime_ns: int | None = None  # the folder's modification time as this instance left it

    @classmethod
    def of_store(cls, store: EventStore, limit: int = DEFAULT_MEDIA_LIMIT) -> MediaFolder:
        """The media folder of `store`, which never removes a file one of its events needs."""
        return cls(store.media_folder, limit, in_use=store.media_in_use)

    def where(self, data: bytes) -> KeptMedia:
        """Where these bytes are (or would be) kept, without writing."""
        name, digest, mime_type = media_name(data)
        return KeptMedia(self.path / name, mime_type, len(data), digest)

    def keep(self, data: bytes, *, hold: bool = False) -> KeptMedia:
        """Write `data` unless the same bytes are there already; then hold the folder to its limit. `hold`: the file
        is for an event about to be stored, never removed until `release` (then the event refers to it)."""
        kept = self.where(data)
        if hold:
            with self._held_lock:
                self._held[kept.path.name] += 1
        try:
            with self._lock:
                self.path.mkdir(parents=True, exist_ok=True, mode=0o700)
                if self._total is None or os.stat(self.path).st_mtime_ns != self._folder_mtime_ns:
                    self._scan()
                try:
                    os.utime(kept.path)  # seen again: it is the newest now
                    part = None
                except FileNotFoundError:
                    part = self._part(kept.path)
                else:
                    self._note(kept.path.name, len(data), time.time_ns())
                    self._hold_to_limit(keep=kept.path.name)
                self._folder_mtime_ns = os.stat(self.path).st_mtime_ns
            if part is not None:
                self._keep_part(part, kept, data)
        except BaseException:
            if hold:  # no event will refer to it: the caller gets the error, not a file to release
                self.release(kept.path.name)
            raise
        return kept

    def _keep_part(self, part: Path, kept: KeptMedia, data: bytes) -> None:
        """Write and flush `part` outside the folder's lock (the disk's 2 ms are waited for in parallel), then name it
        `kept.path`, and flush the folder's names."""
        try:
            self._write(part, data)
        except BaseException:
            with self._lock:
                part.unlink(missing_ok=True)
                self._folder_mtime_ns = os.stat(self.path).st_mtime_ns
            raise
        with self._lock:
            changed = os.stat(self.path).st_mtime_ns != self._folder_mtime_ns  # another process's doing
            os.replace(part, kept.path)
            self._renamed += 1
            renamed = self._renamed
            if changed:
                self._scan()
            self._note(kept.path.name, len(data), time.time_ns())
            self._hold_to_limit(keep=kept.path.name)
            self._folder_mtime_ns = os.stat(self.path).st_mtime_ns
        self._sync_folder(renamed)

    def release(self, name: str) -> None:
        """The event a held file was kept for is stored (or was not): the file is the limit's again. Takes only the
        marks' own lock, never the folder's: the listener calls it on its event loop, and a keep on a worker thread
        may hold the folder for seconds (a rescan, a store that is slow to say which files its events need)."""
        with self._held_lock:
            self._held[name] -= 1
            if self._held[name] <= 0:
                del self._held[name]

    def _is_held(self, name: str) -> bool:
        with self._held_lock:
            return name in self._held

    def _part(self, path: Path) -> Path:
        """The part file `path` is written to (made now, under the folder's lock, as every name in it is)."""
        temporary = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.part")
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            os.fchmod(fd, 0o600)  # someone's message, never run: also when a part of the same name was there already
        finally:
            os.close(fd)
        return temporary

    def _write(self, part: Path, data: bytes) -> None:
        """Write `data` to `part`, whole and on the disk before it is named (a power cut never leaves the name of a
        short file): the store commits its events with synchronous=FULL, and an event kept once needs its file to
        rebuild its body, so an answered event must survive a power cut with its file."""
        fd = os.open(part, os.O_WRONLY | os.O_TRUNC)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            _flush_data(fd)

    def _sync_folder(self, renamed: int) -> None:
        """Flush the folder's names, up to its `renamed`-th rename, to the disk (a name is the folder's data): one
        fsync serves every keep waiting for it, outside the folder's lock (2-3 ms here)."""
        with self._sync_lock:
            if self._synced >= renamed:
                return
            upto = self._renamed
            fd = os.open(self.path, os.O_RDONLY | os.O_DIRECTORY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
            self._synced = max(self._synced, upto)

    def _note(self, name: str, size: int, written_ns: int) -> None:
        """Count `name` as written at `written_ns` (again, when it was counted already)."""
        earlier = self._files.get(name)
        if earlier is not None:
            self._total = (self._total or 0) - earlier[1]
        number = next(self._numbers)
        self._files[name] = (number, size)
        heapq.heappush(self._oldest_first, (written_ns, number, name))
        self._total = (self._total or 0) + size
        if len(self._oldest_first) > 2 * len(self._files) + 64:  # drop the entries a later write replaced
            self._oldest_first = [entry for entry in self._oldest_first
                                  if self._files.get(entry[2], (-1, 0))[0] == entry[1]]
            heapq.heapify(self._oldest_first)

    def _scan(self) -> None:
        """Count the folder afresh: its kept files oldest first, and the parts of live writers (the others go)."""
        self._files.clear()
        self._oldest_first = []
        self._total = 0
        for entry in os.scandir(self.path):
            if entry.name.startswith("."):
                if entry.name.endswith(".part"):
                    self._total += self._part_size(entry)
                continue
            try:
                if not entry.is_file(follow_symlinks=False):
                    continue
                info = entry.stat(follow_symlinks=False)
            except FileNotFoundError:
                continue  # another process pruned it meanwhile
            self._note(entry.name, info.st_size, info.st_mtime_ns)

    @staticmethod
    def _part_size(entry: os.DirEntry[str]) -> int:
        """A `.part` file's size while its writer lives; 0 once it is removed (its writer is gone)."""
        pieces = entry.name.rsplit(".", 3)
        try:
            size = entry.stat(follow_symlinks=False).st_size
        except FileNotFoundError:
            return 0  # renamed into place or removed meanwhile
        if len(pieces) != 4 or not pieces[1].isdigit() or _process_alive(int(pieces[1])):
            return size  # a live writer's (or a name not ours): counted, never removed
        try:
            os.unlink(entry.path)
            log.info("removed %s: its writer (process %s) is gone", entry.name, pieces[1])
        except FileNotFoundError:
            pass  # another process removed it first
        return 0

    def _hold_to_limit(self, keep: str) -> None:
        """Remove the oldest files until the folder is within its limit; never `keep`, the file just kept."""
        held = []
        while self._total is not None and self._total > self.limit and self._oldest_first:
            entry = heapq.heappop(self._oldest_first)
            _written_ns, number, name = entry
            counted = self._files.get(name)
            if counted is None or counted[0] != number:
                continue  # written again since: a newer entry stands for it
            if name == keep or self._is_held(name):
                held.append(entry)
                continue
            if self._in_use is not None and self._in_use(name):
                # An event's body needs it: its bytes are the store's (bounded by the store's retention), not the
                # limit's, which bounds the files no event needs (fetched links, files whose events are gone).
                del self._files[name]
                self._total -= counted[1]
                continue
            try:
                (self.path / name).unlink()
            except FileNotFoundError:
                pass  # another process pruned it first
            del self._files[name]
            self._total -= counted[1]
        for entry in held:
            heapq.heappush(self._oldest_first, entry)


def _flush_data(fd: int) -> None:
    """A file's bytes to the disk: fdatasync where the system has it (not macOS), else fsync."""
    if hasattr(os, "fdatasync"):
        os.fdatasync(fd)
    else:
        os.fsync(fd)


def _process_alive(pid: int) -> bool:
    """Whether process `pid` exists (signal 0 checks without sending anything)."""
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process: alive
    return True


def event_media(event: StoredEvent, folder: MediaFolder, earlier: Path | None = None) -> list[KeptMedia]:
    """The media files kept for a stored event: its inline file, found again from the raw body (the store keeps no
    other trace of it), listed while the file is in the folder (or in `earlier`, the folder the store's files were
    kept in before it had its own: EventStore.shared_media_folder). None for a rejected or unverified event: its
    media was never written."""
    if event.rejected or event.verdict not in TRUSTED_VERDICTS or event.body_cut:
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
    if not kept.path.is_file() and earlier is not None:
        kept = replace(kept, path=earlier / kept.path.name)
    return [kept] if kept.path.is_file() else []


# -- on demand: the media an event links to (Z-API's storage URLs, WuzAPI's S3 objects) ---------------------------

FETCH_LIMIT = 100 * 1000 * 1000  # the largest file the gateways send (a document), as tui.api.media's limits
FETCH_TIMEOUT = 60.0
MAX_REDIRECTS = 5
# Z-API's received-message payload keys and their URL fields (docs/gateways/zapi.md §5.3); WuzAPI's `s3.url`
# (docs/gateways/wuzapi.md §4.3); Evolution's `data.message.mediaUrl` (its own S3, when it uploads the file).
_ZAPI_MEDIA_URLS = {"image": "imageUrl", "audio": "audioUrl", "video": "videoUrl", "document": "documentUrl",
                    "sticker": "stickerUrl"}


class FetchRefused(Exception):
    """The media was not fetched: the URL's scheme or address, a redirect, its size or the time it took."""


def media_urls(event: StoredEvent) -> list[str]:
    """The media URLs an accepted, verified event links to; none for a rejected or unverified one (never fetched)."""
    if event.rejected or event.verdict not in TRUSTED_VERDICTS or event.body_cut:
        return []
    try:
        payload, _from_form = parse_body(event.headers.get("content-type", ""), event.body)
    except UnparseableBody:
        return []
    if not isinstance(payload, dict):
        return []
    urls = []
    for key, field in _ZAPI_MEDIA_URLS.items():
        part = payload.get(key)
        if isinstance(part, dict) and isinstance(part.get(field), str):
            urls.append(part[field])
    s3 = payload.get("s3")
    if isinstance(s3, dict) and isinstance(s3.get("url"), str):
        urls.append(s3["url"])
    data = payload.get("data")
    message = data.get("message") if isinstance(data, dict) else None
    if _is_evolution_message(payload) and isinstance(message, dict) and isinstance(message.get("mediaUrl"), str):
        urls.append(message["mediaUrl"])
    return urls


def is_loopback_url(url: str) -> bool:
    """Whether a base URL names this machine (the sandbox): then media it links to may be fetched from loopback."""
    import ipaddress
    from urllib.parse import urlsplit

    host = (urlsplit(url).hostname or "").lower()
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _forbidden(address: str, *, allow_loopback: bool) -> str | None:
    """Why an address may not be fetched from (None: it may)."""
    import ipaddress

    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    if ip.is_loopback:
        return None if allow_loopback else "a loopback address"
    if ip.is_link_local:
        return "a link-local address"
    if ip.is_private or ip.is_reserved or ip.is_multicast or ip.is_unspecified or not ip.is_global:
        return "a private address"
    return None


async def _check_host(host: str, port: int, *, allow_loopback: bool) -> None:
    import asyncio
    import socket

    try:
        infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as error:
        raise FetchRefused(f"{host} cannot be resolved ({error.strerror or error})") from None
    for info in infos:
        why = _forbidden(str(info[4][0]), allow_loopback=allow_loopback)
        if why is not None:
            raise FetchRefused(f"{host} is {why} ({info[4][0]}): media is never fetched from there")


async def fetch_media(
    url: str, *, allow_loopback: bool = False, limit: int = FETCH_LIMIT, timeout: float = FETCH_TIMEOUT,
) -> bytes:
    """The bytes at `url`: http or https only, at most `limit` bytes, within `timeout` seconds, redirects followed
    only within the same scheme, and never from a private, loopback or link-local address (loopback only when
    `allow_loopback`: the profile's base URL is itself on loopback). Every address is checked when the name is
    resolved and again on the connection made. FetchRefused says why not."""
    import asyncio
    from urllib.parse import urljoin, urlsplit

    import httpx

    async def attempt() -> bytes:
        current = url
        scheme = urlsplit(url).scheme.lower()
        async with httpx.AsyncClient(follow_redirects=False, trust_env=False, timeout=timeout) as client:
            for _hop in range(MAX_REDIRECTS + 1):
                parts = urlsplit(current)
                if current != url and parts.scheme.lower() != scheme:
                    raise FetchRefused(f"a redirect from {scheme} to {parts.scheme}: not followed")
                if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
                    raise FetchRefused(f"{parts.scheme or 'a URL without a scheme'}: only http and https are fetched")
                await _check_host(parts.hostname, parts.port or (443 if scheme == "https" else 80),
                                  allow_loopback=allow_loopback)
                async with client.stream("GET", current) as response:
                    peer = response.extensions.get("network_stream")
                    address = peer.get_extra_info("server_addr") if peer is not None else None
                    if address:
                        why = _forbidden(str(address[0]), allow_loopback=allow_loopback)
                        if why is not None:
                            raise FetchRefused(f"the connection went to {why}: media is never fetched from there")
                    if response.is_redirect:
                        current = urljoin(current, response.headers.get("location", ""))
                        continue
                    if not response.is_success:
                        raise FetchRefused(f"the server answered {response.status_code}")
                    declared = response.headers.get("content-length")
                    if declared is not None and declared.isdigit() and int(declared) > limit:
                        raise FetchRefused(f"{declared} bytes is over the {limit} bytes fetched at most")
                    data = bytearray()
                    async for chunk in response.aiter_bytes():
                        data += chunk
                        if len(data) > limit:
                            raise FetchRefused(f"over the {limit} bytes fetched at most")
                    return bytes(data)
        raise FetchRefused(f"more than {MAX_REDIRECTS} redirects")

    try:
        return await asyncio.wait_for(attempt(), timeout)
    except TimeoutError:
        raise FetchRefused(f"no whole answer within {timeout:g} s") from None
    except httpx.HTTPError as error:
        raise FetchRefused(f"the download failed ({type(error).__name__})") from None


async def fetch_and_keep(url: str, folder: MediaFolder, *, allow_loopback: bool = False) -> KeptMedia:
    """Fetch an event's linked media on demand and keep it in the folder like inline media."""
    import asyncio

    data = await fetch_media(url, allow_loopback=allow_loopback)
    return await asyncio.to_thread(folder.keep, data)
