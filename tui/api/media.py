"""Media sends from a file: what the file really is (by its content, never its name), whether the gateway takes it,
and the request that sends it. Every refusal happens here, before anything is sent.

    media = read_media(Path("invoice.pdf"), Family.INSTANCE)           # MediaRefused: missing, unreadable, too big…
    op, request = media_request(media, Family.INSTANCE, phone="5511999999999", caption="As promised")
    await instance_client.request(op, request)

The type comes from `puremagic` (pure Python, maintained), refined where the gateways care about more than it
tells: an Ogg file is Opus only when its first page holds `OpusHead` (both gateways play only Opus in Ogg), and an
ISO media file's brand says MP4, 3GPP or M4A audio.

Formats and limits per family, and where each comes from:

* instance family (Z-API's send-image/video/audio/document; the spec names no media call): Z-API's pages send the
  reader to WhatsApp's "Supported media types" (developers.facebook.com/docs/whatsapp/api/media): images JPEG or
  PNG up to 5 MB; audio AAC, AMR, MP3, M4A or Ogg (Opus only) up to 16 MB; documents of any type up to 100 MB. Video:
  MP4 or 3GPP (the same page) up to 100 MB, the limit Z-API's own send-video page states ("must not exceed 100MB").
* session family (WuzAPI, spec.yml and handlers.go): images PNG or JPEG ("must be base64 encoded in image/png or
  image/jpeg"), video MP4 or 3GPP, audio Opus in Ogg only ("opus format, mime type audio/ogg"), documents of any
  type. WuzAPI states no size limit; the file goes to WhatsApp's servers, so WhatsApp's limits above apply (video
  16 MB there, the WhatsApp figure, since WuzAPI has no larger one of its own).
"""

from __future__ import annotations

import base64
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from tui.api import models as m
from tui.api.models import size_text
from tui.api.operations import ErasedOperation, Family, OperationId, SendKind, operation
from tui.api import operations as ops

MB = 1000 * 1000
# Received media kept beside an event store before the oldest files go (the listener's and the profile's default).
DEFAULT_MEDIA_LIMIT = 512 * 1024 * 1024
WHATSAPP_MEDIA = "WhatsApp's supported media types (developers.facebook.com/docs/whatsapp/api/media)"
ZAPI_VIDEO_PAGE = "Z-API's send-video page (developer.z-api.io/en/message/send-message-video)"
WUZAPI_SPEC = "WuzAPI's spec.yml"
OCTET_STREAM = "application/octet-stream"


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
    """What one gateway takes for one kind: the media types (None: any), the largest size, and their sources."""

    types: tuple[str, ...] | None
    types_source: str
    limit: int
    limit_source: str


_IMAGE_TYPES = ("image/jpeg", "image/png")
_VIDEO_TYPES = ("video/mp4", "video/3gpp")
_ZAPI_AUDIO = ("audio/aac", "audio/amr", "audio/mpeg", "audio/mp4", "audio/ogg")

RULES: dict[tuple[Family, SendKind], MediaRule] = {
    (Family.INSTANCE, SendKind.IMAGE): MediaRule(_IMAGE_TYPES, WHATSAPP_MEDIA, 5 * MB, WHATSAPP_MEDIA),
    (Family.INSTANCE, SendKind.VIDEO): MediaRule(_VIDEO_TYPES, WHATSAPP_MEDIA, 100 * MB, ZAPI_VIDEO_PAGE),
    (Family.INSTANCE, SendKind.AUDIO): MediaRule(_ZAPI_AUDIO, WHATSAPP_MEDIA, 16 * MB, WHATSAPP_MEDIA),
    (Family.INSTANCE, SendKind.DOCUMENT): MediaRule(None, "Z-API's send-document page", 100 * MB, WHATSAPP_MEDIA),
    (Family.SESSION, SendKind.IMAGE): MediaRule(ops.WUZAPI_IMAGE_TYPES, WUZAPI_SPEC, 5 * MB, WHATSAPP_MEDIA),
    (Family.SESSION, SendKind.VIDEO): MediaRule(ops.WUZAPI_VIDEO_TYPES, WUZAPI_SPEC, 16 * MB, WHATSAPP_MEDIA),
    (Family.SESSION, SendKind.AUDIO): MediaRule((ops.WUZAPI_AUDIO_TYPE,), WUZAPI_SPEC, 16 * MB, WHATSAPP_MEDIA),
    (Family.SESSION, SendKind.DOCUMENT): MediaRule(None, WUZAPI_SPEC, 100 * MB, WHATSAPP_MEDIA),
}

OPERATIONS: dict[tuple[Family, SendKind], OperationId] = {
    (Family.INSTANCE, SendKind.IMAGE): OperationId.SEND_IMAGE,
    (Family.INSTANCE, SendKind.VIDEO): OperationId.SEND_VIDEO,
    (Family.INSTANCE, SendKind.AUDIO): OperationId.SEND_AUDIO,
    (Family.INSTANCE, SendKind.DOCUMENT): OperationId.SEND_DOCUMENT,
    (Family.SESSION, SendKind.IMAGE): OperationId.CHAT_SEND_IMAGE,
    (Family.SESSION, SendKind.VIDEO): OperationId.CHAT_SEND_VIDEO,
    (Family.SESSION, SendKind.AUDIO): OperationId.CHAT_SEND_AUDIO,
    (Family.SESSION, SendKind.DOCUMENT): OperationId.CHAT_SEND_DOCUMENT,
}

_GATEWAY = {Family.INSTANCE: "the instance family (Z-API)", Family.SESSION: "WuzAPI"}

# ISO base media brands (bytes 8-12 after `ftyp`) that are not plain MP4 video.
_BRANDS = {b"3gp": ("video/3gpp", "3gp", "3GPP video"), b"3g2": ("video/3gpp", "3gp", "3GPP video"),
           b"M4A": ("audio/mp4", "m4a", "MPEG-4 audio"), b"M4B": ("audio/mp4", "m4a", "MPEG-4 audio"),
           b"qt ": ("video/quicktime", "mov", "QuickTime video")}


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
SNIFFED_BYTES = 64 * 1024  # enough of a file's head for `sniff` to tell its type


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
    if sniffed.mime_type in _IMAGE_TYPES:
        return SendKind.IMAGE
    if sniffed.mime_type in _VIDEO_TYPES:
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


def read_media(path: Path, family: Family, kind: SendKind | None = None) -> MediaFile:
    """Read and check `path` for sending on `family` as `kind` (None: by its type). MediaRefused says why not."""
    shown = str(path)
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise MediaRefused(f"{shown}: no such file") from None
    except OSError as error:
        raise MediaRefused(f"{shown}: cannot be read ({error.strerror or error})") from None
    if not stat.S_ISREG(info.st_mode):
        raise MediaRefused(f"{shown}: not a regular file")
    if info.st_size == 0:
        raise MediaRefused(f"{shown}: the file is empty")
    largest = max(rule.limit for (rule_family, _), rule in RULES.items() if rule_family is family)
    chosen_limit = RULES[(family, kind)].limit if kind is not None else largest
    if info.st_size > chosen_limit:  # refused before reading megabytes it could never send
        _refuse_size(shown, info.st_size, family, kind or SendKind.DOCUMENT)
    try:
        data = path.read_bytes()
    except OSError as error:
        raise MediaRefused(f"{shown}: cannot be read ({error.strerror or error})") from None
    sniffed = sniff(data)
    chosen = kind or kind_of(sniffed)
    rule = RULES[(family, chosen)]
    if rule.types is not None and sniffed.mime_type not in rule.types:
        takes = ", ".join(rule.types)
        raise MediaRefused(
            f"{shown}: its content is {sniffed.name} ({sniffed.mime_type}), whatever its name says; "
            f"{_GATEWAY[family]} takes {'an' if chosen in (SendKind.IMAGE, SendKind.AUDIO) else 'a'} {chosen.value} "
            f"only as {takes} ({rule.types_source})"
            + ("" if kind is None else "; send it as a document instead (--as document)")
        )
    if sniffed.mime_type == "audio/ogg" and not sniffed.opus and chosen is SendKind.AUDIO:
        raise MediaRefused(
            f"{shown}: it is Ogg audio but not Opus; WhatsApp plays Ogg audio only in Opus ({rule.types_source}): "
            "convert it, e.g. `ffmpeg -i IN -c:a libopus OUT.ogg`"
        )
    if len(data) > rule.limit:
        _refuse_size(shown, len(data), family, chosen)
    return MediaFile(path, data, sniffed, chosen)


def _refuse_size(shown: str, size: int, family: Family, kind: SendKind) -> None:
    rule = RULES[(family, kind)]
    raise MediaRefused(
        f"{shown}: {size_text(size)} is over the {size_text(rule.limit)} {_GATEWAY[family]} takes for "
        f"{'an' if kind is SendKind.IMAGE or kind is SendKind.AUDIO else 'a'} {kind.value} ({rule.limit_source})"
    )


def _document_extension(media: MediaFile) -> str:
    """Z-API's `{extension}` path segment: the type's usual extension, else the file name's, else `bin`."""
    for candidate in (media.sniffed.extension if media.sniffed.known else "", media.path.suffix.lstrip(".")):
        if candidate.isascii() and candidate.isalnum() and len(candidate) <= 10:
            return candidate.lower()
    return "bin"


def media_request(
    media: MediaFile, family: Family, phone: str, caption: str | None = None
) -> tuple[ErasedOperation, m.Request]:
    """The operation and request that send `media` to `phone`. pydantic's ValidationError for a bad phone;
    MediaRefused when the gateway has no place for the caption."""
    kind = media.kind
    caption = caption or None
    if caption is not None and kind is SendKind.AUDIO:
        raise MediaRefused("--caption: audio takes no caption (neither Z-API's send-audio nor WuzAPI's documents one)")
    op = operation(OPERATIONS[(family, kind)])
    name = media.path.name
    request: m.Request
    if family is Family.INSTANCE:
        url = media.data_url()
        if kind is SendKind.IMAGE:
            request = m.SendImage(phone=phone, image=url, caption=caption)
        elif kind is SendKind.VIDEO:
            request = m.SendVideo(phone=phone, video=url, caption=caption)
        elif kind is SendKind.AUDIO:
            request = m.SendAudio(phone=phone, audio=url)
        else:
            extension = _document_extension(media)
            request = m.SendDocument(phone=phone, extension=extension, document=url, fileName=name, caption=caption)
    else:
        url = media.data_url()
        if kind is SendKind.IMAGE:
            request = m.ChatSendImage(Phone=phone, Image=url, Caption=caption)
        elif kind is SendKind.VIDEO:
            request = m.ChatSendVideo(Phone=phone, Video=url, Caption=caption)
        elif kind is SendKind.AUDIO:
            request = m.ChatSendAudio(Phone=phone, Audio=url)
        else:
            request = m.ChatSendDocument(Phone=phone, Document=url, FileName=name, Caption=caption)
    return op, request


def media_family(families: frozenset[Family], session_dialect: ops.SessionDialect) -> Family | None:
    """The family the app sends media on: the instance family when the account has it, else the session family in
    WuzAPI's dialect (the spec's session family has no media call); None when neither can."""
    if Family.INSTANCE in families:
        return Family.INSTANCE
    if Family.SESSION in families and session_dialect is not ops.SessionDialect.SPEC:
        return Family.SESSION
    return None


def described(media: MediaFile) -> str:
    """`PDF document (application/pdf), 82 KB, sent as a document`: what the file is, by its content."""
    article = "an" if media.kind in (SendKind.IMAGE, SendKind.AUDIO) else "a"
    return f"{media.sniffed.name} ({media.sniffed.mime_type}), {size_text(media.size)}: sent as {article} {media.kind.value}"
