"""What WuzAPI takes as media, by kind (spec.yml, handlers.go). It states no size limit; the file goes to WhatsApp's
servers, so WhatsApp's limits apply (video 16 MB there, since WuzAPI has no larger one of its own)."""

from __future__ import annotations

from collections.abc import Mapping

from tui.api.media import MB, WHATSAPP_MEDIA, MediaRule
from tui.api.operations import SendKind
from tui.gateways.wuzapi.wire import WUZAPI_AUDIO_TYPE, WUZAPI_IMAGE_TYPES, WUZAPI_VIDEO_TYPES

WUZAPI_SPEC = "WuzAPI's spec.yml"

WUZAPI_MEDIA_RULES: Mapping[SendKind, MediaRule] = {
    SendKind.IMAGE: MediaRule(WUZAPI_IMAGE_TYPES, WUZAPI_SPEC, 5 * MB, WHATSAPP_MEDIA),
    SendKind.VIDEO: MediaRule(WUZAPI_VIDEO_TYPES, WUZAPI_SPEC, 16 * MB, WHATSAPP_MEDIA),
    SendKind.AUDIO: MediaRule((WUZAPI_AUDIO_TYPE,), WUZAPI_SPEC, 16 * MB, WHATSAPP_MEDIA),
    SendKind.DOCUMENT: MediaRule(None, WUZAPI_SPEC, 100 * MB, WHATSAPP_MEDIA),
}
