"""What Z-API takes as media, by kind: its pages send the reader to WhatsApp's "Supported media types"; its own
send-video page states the 100 MB video limit."""

from __future__ import annotations

from collections.abc import Mapping

from tui.api.media import IMAGE_TYPES, MB, VIDEO_TYPES, WHATSAPP_MEDIA, MediaRule
from tui.api.operations import SendKind

ZAPI_VIDEO_PAGE = "Z-API's send-video page (developer.z-api.io/en/message/send-message-video)"
ZAPI_AUDIO_TYPES = ("audio/aac", "audio/amr", "audio/mpeg", "audio/mp4", "audio/ogg")

ZAPI_MEDIA_RULES: Mapping[SendKind, MediaRule] = {
    SendKind.IMAGE: MediaRule(IMAGE_TYPES, WHATSAPP_MEDIA, 5 * MB, WHATSAPP_MEDIA),
    SendKind.VIDEO: MediaRule(VIDEO_TYPES, WHATSAPP_MEDIA, 100 * MB, ZAPI_VIDEO_PAGE),
    SendKind.AUDIO: MediaRule(ZAPI_AUDIO_TYPES, WHATSAPP_MEDIA, 16 * MB, WHATSAPP_MEDIA),
    SendKind.DOCUMENT: MediaRule(None, "Z-API's send-document page", 100 * MB, WHATSAPP_MEDIA),
}
