"""Media sends from a file: whether the family's gateway takes it (its adapter's `media_rules`), and the request
that sends it. Every refusal happens here, before anything is sent.

    media = read_media(Path("invoice.pdf"), Family.INSTANCE)           # MediaRefused: missing, unreadable, too big…
    op, request = media_request(media, Family.INSTANCE, phone="5511999999999", caption="As promised")
    await instance_client.request(op, request)

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

import os
import stat
from collections.abc import Mapping
from pathlib import Path

from tui.api import models as m
from tui.api.media import MediaFile, MediaRefused, MediaRule, kind_of, sniff
from tui.api.models import size_text
from tui.api.operations import ErasedOperation, Family, OperationId, SendKind, SessionDialect, operation
from tui.gateways import adapter_for
from tui.gateways.wuzapi import WUZAPI
from tui.gateways.zapi import ZAPI

# Each family's media go by its real gateway's rules: the spec names no media call, and its instance family writes
# Z-API's media shapes.
RULES: Mapping[tuple[Family, SendKind], MediaRule] = {
    **{(Family.INSTANCE, kind): rule for kind, rule in ZAPI.media_rules.items()},
    **{(Family.SESSION, kind): rule for kind, rule in WUZAPI.media_rules.items()},
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


def media_family(families: frozenset[Family], session_dialect: SessionDialect) -> Family | None:
    """The family the app sends media on: the instance family when the account has it, else the session family
    when its gateway has a media call (WuzAPI's; the spec's session family has none); None when neither can."""
    if Family.INSTANCE in families:
        return Family.INSTANCE
    if Family.SESSION in families and adapter_for(session_dialect).refusal(OperationId.CHAT_SEND_IMAGE) is None:
        return Family.SESSION
    return None


def described(media: MediaFile) -> str:
    """`PDF document (application/pdf), 82 KB, sent as a document`: what the file is, by its content."""
    article = "an" if media.kind in (SendKind.IMAGE, SendKind.AUDIO) else "a"
    return f"{media.sniffed.name} ({media.sniffed.mime_type}), {size_text(media.size)}: sent as {article} {media.kind.value}"
