"""Turn a webhook body into its payload: JSON, or WuzAPI's form encoding with the JSON in a `jsonData` field.

WuzAPI's default (form) body is `instanceName=…&jsonData=<url-encoded JSON>&userID=…` (docs/gateways/wuzapi.md
§3.2); its JSON mode puts `instanceName` and `userID` at the top level instead. The form payload is normalised to that
JSON-mode shape so both modes classify alike.
"""

from __future__ import annotations

import json
import secrets
from typing import Any
from urllib.parse import parse_qsl

import pybase64

from tui.webhooks.inline_base64 import KnownBase64

FORM_CONTENT_TYPE = "application/x-www-form-urlencoded"
FORM_JSON_FIELD = "jsonData"
FORM_TOP_LEVEL_FIELDS = ("instanceName", "userID")


class UnparseableBody(ValueError):
    """The body is neither JSON nor a form with a JSON `jsonData` field; the message says why, without the body."""


def parse_body(content_type: str, body: bytes) -> tuple[Any, bool]:
    """(payload, came_from_form). Raises UnparseableBody."""
    if not body.strip():
        raise UnparseableBody("empty body")
    if _media_type(content_type) == FORM_CONTENT_TYPE:
        return _parse_form(body), True
    try:
        return _loads(body), False
    except UnparseableBody:
        # A sender that forgets the Content-Type of a form body still gets its event read.
        if FORM_JSON_FIELD.encode() + b"=" not in body:
            raise
    return _parse_form(body), True


def _parse_form(body: bytes) -> Any:
    try:
        text = body.decode("utf-8")
        fields = dict(parse_qsl(text, keep_blank_values=True, strict_parsing=True, errors="strict"))
    except (UnicodeDecodeError, ValueError) as error:
        raise UnparseableBody(f"malformed form body: {type(error).__name__}") from None
    if FORM_JSON_FIELD not in fields:
        raise UnparseableBody(f"form body without a {FORM_JSON_FIELD} field")
    payload = _loads(fields[FORM_JSON_FIELD].encode("utf-8", "surrogatepass"), field=FORM_JSON_FIELD)
    if isinstance(payload, dict):
        for name in FORM_TOP_LEVEL_FIELDS:
            if name in fields:
                payload.setdefault(name, fields[name])
    return payload


def _loads(data: bytes, *, field: str = "body") -> Any:
    try:
        if data[:1] in (b"{", b"[") and data[1:2] != b"\x00":
            # What json.loads(bytes) does for a body that is UTF-8 by its first bytes, without its encoding sniffing
            # (a few percent of the listener's time per event); other bodies (UTF-16/32, a BOM) take its own path.
            if len(data) >= _SKIPPED_SCAN:
                payload = _loads_around_inline_media(data)
                if payload is not _NOT_SKIPPED:
                    return payload
            return json.loads(data.decode("utf-8", "surrogatepass"))
        return json.loads(data)
    except json.JSONDecodeError as error:
        raise UnparseableBody(f"{field} is not JSON: {error.msg} at offset {error.pos}") from None
    # UnicodeDecodeError: not UTF-8; ValueError: e.g. an integer past Python's digit limit;
    # RecursionError: nesting deep enough to exhaust the parser's stack.
    except (ValueError, RecursionError) as error:
        raise UnparseableBody(f"{field} is not JSON: {type(error).__name__}") from None


# An inline file this long (WuzAPI's top-level `base64`, Evolution's `data.message.base64`) is not scanned by the JSON parser: 1 ms of the GIL a MiB.
_SKIPPED_SCAN = 64 * 1024
_INLINE_KEY = b'"base64":"'  # as Go's encoder and json.dumps(separators=(",", ":")) write it
# What stands in for the file while the rest is parsed: unguessable, so no sender can spell it (not even escaped),
# so finding it as the payload's `base64` proves the parser read exactly that string literal there.
_STAND_IN = "inline-media-" + secrets.token_hex(16)
_NOT_SKIPPED = object()


def _loads_around_inline_media(data: bytes) -> Any:
    """The JSON body's payload, parsed with its top-level `base64` string replaced by a short stand-in, then put
    back: the payload json.loads gives, without scanning a megabyte string character by character. _NOT_SKIPPED
    when that cannot be shown to be the same (then the whole body is parsed): the value must be plain base64 (no
    escape, no other character: a string literal's bytes are then its text) and end up as the payload's `base64`."""
    key = data.find(_INLINE_KEY)
    if key < 0:
        return _NOT_SKIPPED
    start = key + len(_INLINE_KEY)
    end = data.find(b'"', start)
    if end - start < _SKIPPED_SCAN or data.find(b"\\", start, end) >= 0:
        return _NOT_SKIPPED
    value = memoryview(data)[start:end]
    try:
        # Only the alphabet and padding: no quote, control or non-ASCII. Its bytes are kept (KnownBase64) where the
        # text is their canonical spelling: the listener keeps the file without decoding it again.
        decoded = pybase64.b64decode(value, validate=True)
    except ValueError:  # binascii.Error too
        return _NOT_SKIPPED
    try:
        payload = json.loads((data[:start] + _STAND_IN.encode() + data[end:]).decode("utf-8", "surrogatepass"))
    except (ValueError, RecursionError):
        return _NOT_SKIPPED  # the whole body's parse says why, at the offsets of the body received
    holder = inline_media_holder(payload)
    if holder is None or holder.get("base64") != _STAND_IN:
        return _NOT_SKIPPED  # that `"base64":"` was not the inline file's (nested elsewhere, or a later duplicate wins)
    holder["base64"] = KnownBase64.proven(data, start, end, decoded) or str(value, "ascii")
    return payload


def _media_type(content_type: str) -> str:
    return content_type.split(";", 1)[0].strip().lower()


# WuzAPI puts a media message's file, base64-encoded, in these top-level fields (docs/gateways/wuzapi.md §4.3);
# Evolution in the same field of `data.message` (inline_media_holder).
INLINE_MEDIA_FIELDS = ("base64",)
# Shorter values stay: they cost nothing and a test payload may use them.
INLINE_MEDIA_KEPT = 1024


def inline_media_holder(payload: Any) -> dict | None:
    """The object of a delivery that holds its inline file under `base64`: the payload itself (WuzAPI's top-level
    field), or Evolution's `data.message` (its messages.upsert and send.message with webhook base64 on:
    whatsapp.baileys.service.ts adds `message.base64`); None when neither has the field."""
    if not isinstance(payload, dict):
        return None
    if "base64" in payload:
        return payload
    data = payload.get("data")
    message = data.get("message") if isinstance(data, dict) else None
    return message if isinstance(message, dict) and "base64" in message else None


def without_inline_media(payload: Any) -> Any:
    """The payload with inline base64 media replaced by a note of its size.

    The raw body keeps every byte; the parsed payload is what the store indexes for search, the detail view
    pretty-prints and `--print-json` repeats, and a 20 MB base64 string helps none of them.
    """
    holder = inline_media_holder(payload)
    if holder is None:
        return payload
    bulky = [
        name
        for name in INLINE_MEDIA_FIELDS
        if isinstance(holder.get(name), str) and len(holder[name]) > INLINE_MEDIA_KEPT
    ]
    if not bulky:
        return payload
    trimmed = dict(holder)
    for name in bulky:
        trimmed[name] = f"({len(holder[name])} characters of base64 media; kept in the raw body)"
    if holder is payload:
        return trimmed
    return {**payload, "data": {**payload["data"], "message": trimmed}}  # Evolution's: copied down to its message
