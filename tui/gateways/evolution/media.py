"""What Evolution API takes as media, by kind (docs/gateways/evolution.md §2.4): it checks no size per type (its
body limit is 136 MB), so WhatsApp's own limits apply; the file goes as an http(s) URL or raw base64 (a `data:`
URL is turned into raw base64 by the wire forms, never sent as is)."""

from __future__ import annotations

from collections.abc import Mapping

from tui.api.media import IMAGE_TYPES, MB, VIDEO_TYPES, WHATSAPP_MEDIA, MediaRule
from tui.api.operations import SendKind

EVOLUTION_DOC = "Evolution API's sendMedia (docs/gateways/evolution.md §2.4)"
EVOLUTION_AUDIO_TYPES = ("audio/aac", "audio/amr", "audio/mpeg", "audio/mp4", "audio/ogg")

EVOLUTION_MEDIA_RULES: Mapping[SendKind, MediaRule] = {
    SendKind.IMAGE: MediaRule(IMAGE_TYPES, WHATSAPP_MEDIA, 5 * MB, WHATSAPP_MEDIA),
    SendKind.VIDEO: MediaRule(VIDEO_TYPES, WHATSAPP_MEDIA, 16 * MB, WHATSAPP_MEDIA),
    SendKind.AUDIO: MediaRule(EVOLUTION_AUDIO_TYPES, WHATSAPP_MEDIA, 16 * MB, WHATSAPP_MEDIA),
    SendKind.DOCUMENT: MediaRule(None, EVOLUTION_DOC, 100 * MB, WHATSAPP_MEDIA),
}
