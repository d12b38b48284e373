"""How WuzAPI writes the session family (docs/gateways/wuzapi.md §2; asternic/wuzapi handlers.go): media as data URLs
of the types its handlers take, GETs without a body, and a partial webhook update sent whole after a read, since its
PUT /webhook blanks every field it is not sent."""

from __future__ import annotations

from collections.abc import Callable

from tui.api import models as m
from tui.api import operations as ops
from tui.api.adapter import WireForms, no_body
from tui.api.errors import GatewayError
from tui.api.operations import Body, DialectRefusal, WireRequest
from tui.gateways.addressing import spec_phone, with_phones

# What WuzAPI's handlers accept (handlers.go): the data URL's head, and spec.yml's words for it.
WUZAPI_IMAGE_TYPES = ("image/png", "image/jpeg")  # spec.yml: "must be base64 encoded in image/png or image/jpeg"
WUZAPI_VIDEO_TYPES = ("video/mp4", "video/3gpp")  # spec.yml: "video/mp4 or video/3gpp ... H.264 ... AAC"
WUZAPI_AUDIO_TYPE = "audio/ogg"  # spec.yml: "opus format, mime type audio/ogg"; the handler checks data:audio/ogg
WUZAPI_DOCUMENT_HEAD = "data:application/octet-stream;base64,"  # handlers.go SendDocument refuses any other head


def _wuzapi_data(field_name: str, allowed: tuple[str, ...], rule: str) -> Callable[[m.Request], Body]:
    def encode(request: m.Request) -> Body:
        body = with_phones(request.wire(), spec_phone, "Phone")
        if m.data_url_type(body[field_name]) not in allowed:
            raise DialectRefusal(field_name, f"is {m.data_url_type(body[field_name])}: {rule}")
        return body

    return encode


def _wuzapi_document(request: m.ChatSendDocument) -> Body:
    """WuzAPI reads a document only from `data:application/octet-stream;base64,` (it sniffs the type itself)."""
    body = with_phones(request.wire(), spec_phone, "Phone")
    body["Document"] = WUZAPI_DOCUMENT_HEAD + m.data_url_payload(request.Document)
    return body


def wuzapi_forms() -> WireForms:
    forms = WireForms("WuzAPI")
    forms.form(ops.CHAT_SEND_IMAGE, _wuzapi_data("Image", WUZAPI_IMAGE_TYPES, "WuzAPI takes PNG or JPEG only"))
    forms.form(ops.CHAT_SEND_VIDEO, _wuzapi_data(
        "Video", WUZAPI_VIDEO_TYPES, "WuzAPI takes MP4 or 3GPP only (H.264 video, AAC audio)"))
    forms.form(ops.CHAT_SEND_AUDIO, _wuzapi_data(
        "Audio", (WUZAPI_AUDIO_TYPE,), "WuzAPI takes Opus in Ogg only (data:audio/ogg;base64,)"))
    forms.form(ops.CHAT_SEND_DOCUMENT, _wuzapi_document)
    forms.form_each((ops.HMAC_STATUS.id, ops.HMAC_DELETE.id, ops.USER_CONTACTS.id, ops.USER_LID.id, ops.MESSAGE_HISTORY.id,
                     ops.WEBHOOK_READ.id,
                     ops.GROUP_LIST.id, ops.SESSION_STATUS.id, ops.SESSION_QR.id, ops.SESSION_DISCONNECT.id,
                     ops.SESSION_LOGOUT.id), no_body)
    return forms


# WuzAPI's PUT /webhook zeroes what it is not sent (URL blank, no events, delivery off); a partial update reads
# the current configuration with this GET first and sends the merged whole (docs/gateways/wuzapi.md §2.5).
WUZAPI_WEBHOOK_READ = WireRequest(("webhook",), None)


def needs_current_webhook(request: m.WebhookUpdate) -> bool:
    return request.webhook is None or request.events is None or request.active is None


def merged_wuzapi_webhook(request: m.WebhookUpdate, current: m.WebhookConfig) -> Body:
    """The whole configuration WuzAPI must be sent: the request's fields over what GET /webhook answered
    (`{webhook, subscribe}`; no events reads `[""]`). GET says nothing of `active`: a configured URL is on."""
    events = request.events if request.events is not None else [e for e in current.events or [] if e]
    url = request.webhook if request.webhook is not None else current.webhook
    active = request.active if request.active is not None else bool(url)
    if not url and request.active is not False:
        # Sent without a URL, WuzAPI would switch delivery off and drop the events: the update would be lost.
        raise DialectRefusal("webhook", "is required: WuzAPI has no webhook URL yet, and without one it drops the rest")
    return {"webhook": url, "events": events, "active": active}


def webhook_read_failed(error: GatewayError) -> str:
    return (
        "Not sent: WuzAPI's PUT /webhook blanks every field it is not given, so a partial update needs "
        f"the current configuration, and reading it (GET /webhook) failed: {error.message}. "
        "Give webhook, events and active together to update without reading."
    )
