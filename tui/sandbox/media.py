"""Media sends as the gateways read them (issue 25): the file as a URL or a base64 data URL, checked the way each
gateway checks it, written independently of `tui.api.models` and `tui.api.media` (as `checks.py` is) so a client
that writes the wrong thing fails a test instead of being agreed with.

* instance family (Z-API's send-image, send-video, send-audio, send-document/{extension}; the spec dialect takes the
  same bodies): the media field is required, a link (http/https) or `data:<type>;base64,…` whose base64 decodes;
  `caption` and `fileName` are strings; `delayMessage` whole seconds 1-15; the extension is letters and digits.
* WuzAPI (handlers.go SendImage, SendVideo, SendAudio, SendDocument): data URLs only, with the heads its handlers
  test (`data:image`, `data`, `data:audio/ogg`, `data:application/octet-stream`) and their error texts; an image
  must decode (WuzAPI makes a thumbnail of it: PNG and JPEG here); a document needs `FileName`.
"""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass

from aiohttp import web

from tui.sandbox.checks import GoBody, ZapiBody
from tui.sandbox.wire import ApiError, Handler, bad_field

_DATA_URL = re.compile(r"data:([\w.+-]+/[\w.+-]+)(?:;[\w.+-]+=[^;,]*)*;base64,")
ZAPI_MEDIA_FIELDS = {"image": "send-image", "video": "send-video", "audio": "send-audio", "document": "send-document"}


@dataclass(frozen=True)
class ReceivedMedia:
    """One media send as the sandbox took it: bytes (from a data URL) or a link, and what came with them."""

    kind: str  # image, video, audio, document
    media_type: str | None
    data: bytes | None
    url: str | None
    caption: str | None = None
    file_name: str | None = None

    @property
    def text(self) -> str:
        """What the sandbox remembers as the message's text."""
        label = f"[{self.kind}]" + (f" {self.file_name}" if self.file_name else "")
        return f"{label} {self.caption}" if self.caption else label


def decode_data_url(value: str, field: str) -> tuple[str, bytes]:
    match = _DATA_URL.match(value)
    if match is None:
        raise bad_field(field, "must be a link (http:// or https://) or data:<type>;base64,<data>")
    try:
        data = base64.b64decode(value[match.end():], validate=True)
    except (binascii.Error, ValueError):
        raise bad_field(field, "holds base64 that does not decode") from None
    if not data:
        raise bad_field(field, "holds no data")
    return match.group(1).lower(), data


def instance_media(body: ZapiBody, kind: str, extension: str | None = None) -> ReceivedMedia:
    """The media of a Z-API (or spec-dialect instance) media send; 400 naming the field otherwise."""
    value = body.required_text(kind)
    if value.startswith(("http://", "https://")):
        media_type, data, url = None, None, value
    else:
        (media_type, data), url = decode_data_url(value, kind), None
    if extension is not None and not re.fullmatch(r"[A-Za-z0-9]{1,10}", extension):
        raise bad_field("extension", "must be the file's extension, letters and digits (e.g. pdf)")
    if kind == "audio" and "caption" in body.data:
        raise bad_field("caption", "is not a field of send-audio")
    caption = body.text("caption", required=False) if kind != "audio" else None
    file_name = body.text("fileName", required=False) if kind == "document" else None
    body.delay_seconds("delayMessage")
    return ReceivedMedia(kind, media_type, data, url, caption, file_name)


def _sniffed_image(data: bytes) -> bool:
    return data.startswith(b"\x89PNG\r\n\x1a\n") or data.startswith(b"\xff\xd8\xff")


# handlers.go: (body field, the head its check compares, the error when it differs)
WUZAPI_HEADS = {
    "image": ("Image", "data:image", 'Image data should start with "data:image/png;base64,"'),
    "video": ("Video", "data", 'Data should start with "data:mime/type;base64,"'),
    "audio": ("Audio", "data:audio/ogg", 'Audio data should start with "data:audio/ogg;base64,"'),
    "document": ("Document", "data:application/octet-stream",
                 'Document data should start with "data:application/octet-stream;base64,"'),
}


def wuzapi_media(body: GoBody, kind: str) -> tuple[str, ReceivedMedia]:
    """(Phone, media) of a WuzAPI media send, checked in its handler's order with its error texts."""
    field, head, wrong_head = WUZAPI_HEADS[kind]
    phone = body.string("Phone")
    if not phone:
        raise ApiError(400, "missing Phone in Payload", field="Phone")
    value = body.string(field)
    if not value:
        raise ApiError(400, f"missing {field} in Payload", field=field)
    file_name = body.string("FileName") if kind == "document" else None
    if kind == "document" and not file_name:
        raise ApiError(400, "missing FileName in Payload", field="FileName")
    if not value.startswith(head):
        raise ApiError(400, wrong_head, field=field)
    try:
        media_type, data = decode_data_url(value, field)
    except ApiError:
        raise ApiError(400, "could not decode base64 encoded data from payload", field=field) from None
    if kind == "image" and not _sniffed_image(data):
        raise ApiError(500, "could not decode image for thumbnail preparation: image: unknown format", field=field)
    caption = body.string("Caption") or None if kind != "audio" else None
    return phone, ReceivedMedia(kind, media_type, data, None, caption, file_name)


def no_media_in_spec(path: str) -> Handler:
    """The spec's session family has no media call: 404, as a gateway that implements only the spec would."""

    async def refuse(_request: web.Request) -> web.Response:
        raise ApiError(404, f"{path} not found: the service's session family has no media call")

    return refuse
