"""Media files: what a file really is (by its content, never its name), read once. Whether a gateway takes it and
the request that sends it are the gateways' (`tui.gateways.media`, each adapter's `media_rules`).

The type comes from `puremagic` (pure Python, maintained), refined where the gateways care about more than it
tells: an Ogg file is Opus only when its first page holds `OpusHead` (both gateways play only Opus in Ogg), and an
ISO media file's brand says MP4, 3GPP or M4A audio.
"""

from __future__ import annotations

import base64
import functools
from dataclasses import dataclass
from pathlib import Path

from tui.api.operations import SendKind

MB = 1000 * 1000
# Received media kept beside an event store before the oldest files go (the listener's and the profile's default).
DEFAULT_MEDIA_LIMIT = 512 * 1024 * 1024
OCTET_STREAM = "application/octet-stream"
WHATSAPP_MEDIA = "WhatsApp's supported media types (developers.facebook.com/docs/whatsapp/api/media)"


class MediaRefused(Exception):
    """Nothing was sent: the file cannot be read, or the gateway would not take it. The text says why."""


@dataclass(frozen=True)
class Sniffed:
    """What a file is by its bytes: `mime_type` ("application/octet-stream" when unknown), a usual `extension`
    (without the dot, "" when unknown), a name for people, and for Ogg whether it holds Opus."""

    mime_type: str
    extension: str
    name: str
    opus: bool = False

    @property
    def known(self) -> bool:
        return self.mime_type != OCTET_STREAM


@dataclass(frozen=True)
class MediaRule:
    """What one gateway takes for one kind: the media types (None: any), the largest size, and their sources
    (each gateway's adapter has its own: `tui.gateways.<name>`)."""

    types: tuple[str, ...] | None
    types_source: str
    limit: int
    limit_source: str


# WhatsApp's (the same page): what the gateways show inline as an image or a video.
IMAGE_TYPES = ("image/jpeg", "image/png")
VIDEO_TYPES = ("video/mp4", "video/3gpp")

# ISO base media brands (bytes 8-12 after `ftyp`) that are not plain MP4 video.
_BRANDS = {b"3gp": ("video/3gpp", "3gp", "3GPP video"), b"3g2": ("video/3gpp", "3gp", "3GPP video"),
           b"M4A": ("audio/mp4", "m4a", "MPEG-4 audio"), b"M4B": ("audio/mp4", "m4a", "MPEG-4 audio"),
           b"qt ": ("video/quicktime", "mov", "QuickTime video")}


SNIFFED_BYTES = 64 * 1024  # enough of a file's head for `sniff` to tell its type
_USUAL_EXTENSIONS = {"image/jpeg": "jpg", "audio/mpeg": "mp3"}  # where puremagic's first guess is a rarer one


def sniff(data: bytes) -> Sniffed:
    """The file's type by its content."""
    if data[4:8] == b"ftyp":
        mime, extension, name = _BRANDS.get(data[8:11], ("video/mp4", "mp4", "MPEG-4 video"))
        return Sniffed(mime, extension, name)
    if data[:4] == b"OggS":
        if data[28:36] == b"OpusHead":
            return Sniffed("audio/ogg", "ogg", "Ogg Opus audio", opus=True)
        return Sniffed("audio/ogg", "ogg", "Ogg audio, not Opus")
    signature = next((signature for signature in _SIGNATURES_THAT_DECIDE if data.startswith(signature)), None)
    if signature is not None:
        return _sniffed_by_puremagic_once(signature)
    # Its head alone, as sniff_file reads a file: puremagic's cost grows with what it is given (2.6 ms for a 1 MiB
    # image, a third of the listener's work for an event carrying one), and a type is told by the head.
    return _sniffed_by_puremagic(data[:SNIFFED_BYTES])


# Signatures that alone say what a usual file is (PNG, JPEG, GIF, PDF): puremagic's own answer for each is asked once
# and kept, so a photo costs no walk of its whole table of signatures (about 1 ms each). tests/api/test_media_sniff.py
# holds them to what puremagic says of whole files.
_SIGNATURES_THAT_DECIDE = (b"\x89PNG\r\n\x1a\n", b"\xff\xd8\xff", b"GIF87a", b"GIF89a", b"%PDF-")


@functools.cache
def _sniffed_by_puremagic_once(signature: bytes) -> Sniffed:
    return _sniffed_by_puremagic(signature)


def _sniffed_by_puremagic(data: bytes) -> Sniffed:
    import puremagic

    try:
        matches = puremagic.magic_string(data)
    except (puremagic.PureError, ValueError):
        matches = []
    typed = sorted((match for match in matches if match.mime_type), key=lambda match: -match.confidence)
    if not typed:
        return Sniffed(OCTET_STREAM, "", "unknown binary or text data")
    best = typed[0]
    mime = best.mime_type.lower()
    extension = _USUAL_EXTENSIONS.get(mime) or best.extension.lstrip(".").lower()
    return Sniffed(mime, extension, best.name)


# What a received file may be handed to the system opener as without asking first: raster images, audio and video,
# which viewers show and play without running anything the file holds. Everything else asks (a PDF, HTML, an SVG,
# which may hold a script, an AppImage, an unknown type): the program that opens it may run what it holds.
OPENED_WITHOUT_ASKING = frozenset({
    "image/jpeg", "image/png", "image/gif", "image/webp", "image/bmp", "image/tiff", "image/heic", "image/heif",
    "image/avif",
    "audio/ogg", "audio/mpeg", "audio/mp4", "audio/aac", "audio/amr", "audio/wav", "audio/x-wav", "audio/flac",
    "audio/webm", "audio/opus",
    "video/mp4", "video/3gpp", "video/quicktime", "video/webm", "video/x-matroska", "video/mpeg", "video/x-msvideo",
})


def opens_without_asking(sniffed: Sniffed) -> bool:
    """Whether a received file of this type (by its content) is opened without asking (`OPENED_WITHOUT_ASKING`)."""
    return sniffed.mime_type in OPENED_WITHOUT_ASKING


def sniff_file(path: Path) -> Sniffed:
    """The type of the file at `path`, by the content of its head. OSError when it cannot be read."""
    with path.open("rb") as handle:
        return sniff(handle.read(SNIFFED_BYTES))


def kind_of(sniffed: Sniffed) -> SendKind:
    """How a file of this type is sent when `--as` does not say: images and videos the gateways show inline as
    such, any audio as audio, everything else (a GIF or WebP too) as a document."""
    if sniffed.mime_type in IMAGE_TYPES:
        return SendKind.IMAGE
    if sniffed.mime_type in VIDEO_TYPES:
        return SendKind.VIDEO
    if sniffed.mime_type.startswith("audio/"):
        return SendKind.AUDIO
    return SendKind.DOCUMENT


@dataclass(frozen=True)
class MediaFile:
    path: Path
    data: bytes
    sniffed: Sniffed
    kind: SendKind

    @property
    def size(self) -> int:
        return len(self.data)

    def data_url(self, mime_type: str | None = None) -> str:
        return f"data:{mime_type or self.sniffed.mime_type};base64,{base64.b64encode(self.data).decode('ascii')}"
