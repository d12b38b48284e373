"""Messages to send: text, buttons, lists, links, polls, locations, stickers, forwards, contact cards, and the
media sends (images, videos, audio, documents) of both gateway families."""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    Field,
    ValidationInfo,
    field_validator,
)

from tui.api.models.base import DelayMs, Request, ToPhone, _lines
from tui.api.models.fields import CaptionText, HttpUrl, MessageText, Recipient, Text, _http_url, _unique


class SendText(ToPhone):
    message: MessageText

    def reads_as(self) -> str:
        return self.message


class Button(Request):
    id: Text
    text: Text


class SendButtonActions(ToPhone):
    """Operation 1: at most 3 quick-reply buttons; a pressed button's text comes back as the reply."""

    message: MessageText
    title: str | None = None
    footer: str | None = None
    buttons: list[Button] = Field(min_length=1, max_length=3)

    def reads_as(self) -> str:
        labels = "  ".join(f"[ {button.text} ]" for button in self.buttons)
        return _lines(self.title, self.message, self.footer, labels)

    @field_validator("buttons")
    @classmethod
    def _distinct_ids(cls, buttons: list[Button]) -> list[Button]:
        _unique(buttons, "id", "button ids")
        return buttons


class ListButton(Request):
    id: str | None = None
    label: Text


class ButtonList(Request):
    buttons: list[ListButton] = Field(min_length=1)


class SendButtonList(ToPhone):
    """`/send-button-list`: the spec names it only; this is the shape the real gateway documents."""

    message: MessageText
    buttonList: ButtonList

    def reads_as(self) -> str:
        return _lines(self.message, *(f"  • {button.label}" for button in self.buttonList.buttons))


class SendLink(ToPhone):
    message: MessageText
    linkUrl: HttpUrl
    image: HttpUrl | None = None
    title: str | None = None
    linkDescription: str | None = None

    def reads_as(self) -> str:
        preview = " — ".join(part for part in (self.title, self.linkDescription) if part)
        return _lines(self.message, f"  ⧉ {self.linkUrl}", preview and f"  {preview}")


class PollOption(Request):
    name: Text


class SendPoll(ToPhone):
    message: MessageText
    poll: list[PollOption] = Field(min_length=2)
    selectableCount: int = Field(default=1, ge=1)

    def reads_as(self) -> str:
        return _lines(f"[poll] {self.message}", *(f"  ○ {option.name}" for option in self.poll))

    @field_validator("poll")
    @classmethod
    def _distinct_options(cls, options: list[PollOption]) -> list[PollOption]:
        _unique(options, "name", "poll options")
        return options

    @field_validator("selectableCount")
    @classmethod
    def _selectable_within_options(cls, count: int, info: ValidationInfo) -> int:
        options = info.data.get("poll")
        if options is not None and count > len(options):
            raise ValueError(f"must be between 1 and the number of options ({len(options)})")
        return count


class SendLocation(ToPhone):
    title: Text
    address: Text
    lat: float = Field(ge=-90, le=90)
    lng: float = Field(ge=-180, le=180)
    delayMessage: DelayMs | None = None

    def reads_as(self) -> str:
        return _lines(f"[location] {self.title}", f"  {self.address} ({self.lat}, {self.lng})")


class SendSticker(ToPhone):
    sticker: HttpUrl
    delayMessage: DelayMs | None = None

    def reads_as(self) -> str:
        return f"[sticker] {self.sticker.rsplit('/', 1)[-1]}"


class ForwardMessage(ToPhone):
    """`/forward-message`: shape from the real gateway (the spec names it only)."""

    messageId: Text
    messagePhone: Recipient
    delayMessage: DelayMs | None = None

    def reads_as(self) -> str:
        return f"[forwarded] message {self.messageId}"


def _vcard_text(value: str) -> str:
    lines = value.strip().splitlines()
    if not lines or lines[0].strip().upper() != "BEGIN:VCARD" or lines[-1].strip().upper() != "END:VCARD":
        raise ValueError("must be vCard text from BEGIN:VCARD to END:VCARD")
    return value


class ContactCard(Request):
    """Operation 23. Build `Vcard` with `tui.api.vcard.build_vcard` rather than by hand."""

    Phone: Recipient
    Name: Text
    Vcard: Annotated[str, AfterValidator(_vcard_text)]
    Id: str | None = None
    ContextInfo: dict[str, Any] | None = None

    @property
    def recipient(self) -> str:
        return self.Phone

    def reads_as(self) -> str:
        return f"[contact] {self.Name}"


# ---------------------------------------------------------------------------------------------
# Media sends (issue 25). The spec names no media call: the instance family takes Z-API's shapes (developer.z-api.io
# send-image, send-video, send-audio, send-document/{extension}); the session family WuzAPI's (spec.yml
# MessageImage, MessageVideo, MessageAudio, MessageDocument). Build them from a file with `tui.api.media`, which
# checks the file's real type and the gateway's limits first.

_DATA_URL_HEAD = re.compile(r"data:([\w.+-]+/[\w.+-]+)((?:;[\w.+-]+=[^;,]*)*);base64,")
DATA_URL_RULE = "a base64 data URL, data:<type>;base64,<data>"
_DOCUMENT_EXTENSION = re.compile(r"[A-Za-z0-9]{1,10}")


def data_url_type(value: str) -> str | None:
    """The media type a base64 data URL names (`data:image/png;base64,…` → `image/png`); None when it is not one."""
    match = _DATA_URL_HEAD.match(value)
    return match.group(1).lower() if match else None


def data_url_payload(value: str) -> str:
    """The base64 text after a data URL's comma ("" when it is not a data URL)."""
    match = _DATA_URL_HEAD.match(value)
    return value[match.end():] if match else ""


def _media_source(value: str) -> str:
    if data_url_type(value) is not None:
        return value
    if value.startswith("data:"):
        raise ValueError(f"must be {DATA_URL_RULE}")
    try:
        return _http_url(value)
    except ValueError:
        raise ValueError(f"must be an http:// or https:// URL, or {DATA_URL_RULE}") from None


def _data_url(value: str) -> str:
    if data_url_type(value) is None:
        raise ValueError(f"must be {DATA_URL_RULE}: WuzAPI takes the file's bytes, not a link")
    return value


def _document_extension(value: str) -> str:
    if not _DOCUMENT_EXTENSION.fullmatch(value):
        raise ValueError("must be the file's extension without the dot, letters and digits only, e.g. pdf")
    return value.lower()


MediaSource = Annotated[str, AfterValidator(_media_source)]
DataUrl = Annotated[str, AfterValidator(_data_url)]


def size_text(size: int) -> str:
    """`1.2 MB`, `340 KB`, `12 bytes`: decimal units, as the gateways' limits are written."""
    if size >= 1000 * 1000:
        return f"{size / (1000 * 1000):.1f} MB"
    if size >= 1000:
        return f"{size / 1000:.0f} KB"
    return f"{size} bytes"


def binary_size_text(size: int) -> str:
    """`256 MiB`, `64 KiB`, `100 bytes`: a limit of ours, in the binary units the command line's sizes take."""
    for unit, factor in (("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if size >= factor and size % factor == 0:
            return f"{size // factor} {unit}"
    return f"{size} bytes"


def _media_reading(kind: str, source: str, name: str | None, caption: str | None) -> str:
    """`[image] 12 KB  caption`, `[document] invoice.pdf, 80 KB  caption`: a link, or the size of the file carried
    inline, never its bytes."""
    payload = data_url_payload(source)
    shown = size_text(len(payload) * 3 // 4 - payload[-2:].count("=")) if payload else source
    what = ", ".join(part for part in (name, shown) if part)
    return f"[{kind}] {what}" + (f"  {caption}" if caption else "")


class SendImage(ToPhone):
    """`/send-image`: PNG or JPEG, by URL or as `data:image/png;base64,…`."""

    image: MediaSource
    caption: CaptionText | None = None
    delayMessage: DelayMs | None = None

    def reads_as(self) -> str:
        return _media_reading("image", self.image, None, self.caption)


class SendVideo(ToPhone):
    """`/send-video`: MP4 (H.264), by URL or as `data:video/mp4;base64,…`."""

    video: MediaSource
    caption: CaptionText | None = None
    delayMessage: DelayMs | None = None

    def reads_as(self) -> str:
        return _media_reading("video", self.video, None, self.caption)


class SendAudio(ToPhone):
    """`/send-audio`: no caption (Z-API documents none)."""

    audio: MediaSource
    delayMessage: DelayMs | None = None

    def reads_as(self) -> str:
        return _media_reading("audio", self.audio, None, None)


class SendDocument(ToPhone):
    """`/send-document/{extension}`: the extension goes in the path, the rest in the body."""

    extension: Annotated[str, AfterValidator(_document_extension)]
    document: MediaSource
    fileName: str | None = None
    caption: CaptionText | None = None
    delayMessage: DelayMs | None = None

    def reads_as(self) -> str:
        return _media_reading("document", self.document, self.fileName, self.caption)


class _ToSessionPhone(Request):
    """A WuzAPI media send, addressed by `Phone`."""

    Phone: Recipient

    @property
    def recipient(self) -> str:
        return self.Phone


class ChatSendImage(_ToSessionPhone):
    """WuzAPI's `/chat/send/image` (spec.yml MessageImage): PNG or JPEG as a data URL."""

    Image: DataUrl
    Caption: CaptionText | None = None
    Id: str | None = None

    def reads_as(self) -> str:
        return _media_reading("image", self.Image, None, self.Caption)


class ChatSendVideo(_ToSessionPhone):
    """WuzAPI's `/chat/send/video` (spec.yml MessageVideo): MP4 or 3GPP as a data URL."""

    Video: DataUrl
    Caption: CaptionText | None = None
    Id: str | None = None

    def reads_as(self) -> str:
        return _media_reading("video", self.Video, None, self.Caption)


class ChatSendAudio(_ToSessionPhone):
    """WuzAPI's `/chat/send/audio` (spec.yml MessageAudio): Opus in Ogg, `data:audio/ogg;base64,…`; no caption."""

    Audio: DataUrl
    Id: str | None = None

    def reads_as(self) -> str:
        return _media_reading("audio", self.Audio, None, None)


class ChatSendDocument(_ToSessionPhone):
    """WuzAPI's `/chat/send/document`: FileName required; `Caption` is read by its handler (handlers.go
    SendDocument, since 2024-04) though spec.yml's MessageDocument omits it."""

    Document: DataUrl
    FileName: Text
    Caption: CaptionText | None = None
    Id: str | None = None

    def reads_as(self) -> str:
        return _media_reading("document", self.Document, self.FileName, self.Caption)


MediaRequest = SendImage | SendVideo | SendAudio | SendDocument | ChatSendImage | ChatSendVideo | ChatSendAudio | ChatSendDocument
