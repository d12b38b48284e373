"""Turn an HTTP answer into the operation's typed result or a typed error.

Liberal in what it accepts (docs/gateways/zapi.md §6, docs/gateways/wuzapi.md §1.2): session bodies with or without
the `{code,data,success}` envelope, error text under `error`, `message`, `data` or `details`, bare JSON
strings, plain text and HTML. The HTTP status is authoritative over a body's `success` flag.

A 2xx whose body is only an error report (Z-API's `{"error":"NOT_FOUND","message":...}` for an unknown
route, or an envelope with `success:false`) is an error: NotFound when the report says NOT_FOUND,
UnexpectedStatus otherwise; either way `status` keeps the real 2xx code.
"""

from __future__ import annotations

import email.utils
import html
import json
import re
from datetime import UTC, datetime
from http import HTTPStatus
from typing import Any, TypeVar

from pydantic import AliasChoices, BaseModel, ValidationError

from tui.api.errors import (
    ERRORS_BY_STATUS,
    GatewayError,
    MalformedResponse,
    NotFound,
    RateLimited,
    UnexpectedStatus,
)
from tui.api.json_text import NestedTooDeeply, load_json
from tui.api.models import Details, HmacStatus, ListAnswer, OperationResult, field_errors

Result = TypeVar("Result", bound=BaseModel)

MAX_MESSAGE = 500
_ENVELOPE_KEYS = frozenset({"code", "data", "success", "error", "message", "details"})
_MESSAGE_KEYS = ("error", "message", "data", "details", "Details", "response")


def status_line(status: int) -> str:
    try:
        return f"{status} {HTTPStatus(status).phrase}"
    except ValueError:
        return str(status)


def _shorten(text: str, limit: int = MAX_MESSAGE) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def is_envelope(body: Any) -> bool:
    return isinstance(body, dict) and "success" in body and "code" in body and set(body) <= _ENVELOPE_KEYS


def _texts_in(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value] if value.strip() else []
    if isinstance(value, dict):
        found: list[str] = []
        for key in _MESSAGE_KEYS:
            found.extend(_texts_in(value.get(key)))
        return found
    if isinstance(value, list):
        # Evolution API's envelope: `{"response": {"message": [...]}}`, its texts in a list, a schema failure's
        # in a list inside it, a group validator's as `{property, message}` rows (docs/gateways/evolution.md §1.3).
        return [text for item in value for text in _texts_in(item)]
    return []


def _plain_text(text: str) -> str | None:
    stripped = text.strip()
    if not stripped:
        return None
    if stripped.startswith("<"):
        title = re.search(r"<title[^>]*>(.*?)</title>", stripped, re.IGNORECASE | re.DOTALL)
        if title and title.group(1).strip():
            return _shorten(html.unescape(title.group(1)))
        stripped = html.unescape(re.sub(r"<[^>]+>", " ", stripped))
    return _shorten(stripped) or None


def server_message(text: str) -> str | None:
    """The server's own explanation, from whichever body shape came back; None when it gave none."""
    try:
        body = load_json(text)
    except ValueError:
        return _plain_text(text)
    texts = _texts_in(body)
    if not texts:
        return None
    unique = list(dict.fromkeys(" ".join(t.split()) for t in texts))
    return _shorten(" — ".join(unique))


def parse_retry_after(value: str | None) -> float | None:
    """Retry-After as seconds (delta-seconds or an HTTP date); None when absent or unreadable."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - datetime.now(UTC)).total_seconds())


def error_for_status(status: int, text: str, *, retry_after: str | None = None) -> GatewayError:
    """The typed error of a non-2xx answer, with a human message: `401 Unauthorized: <server text>`."""
    reason = server_message(text)
    if reason is None and _claims_success(text):
        reason = "the gateway gave no reason (its body claimed success)"
    message = status_line(status) + (f": {reason}" if reason else "")
    body = _shorten(text, 2000) if text else None
    if status == 429:
        seconds = parse_retry_after(retry_after)
        if seconds is not None:
            message += f" (retry after {seconds:g} s)"
        return RateLimited(message, retry_after=seconds, status=status, body=body)
    error_type = ERRORS_BY_STATUS.get(status, UnexpectedStatus)
    return error_type(message, status=status, body=body)


def _claims_success(text: str) -> bool:
    try:
        body = load_json(text)
    except ValueError:
        return False
    return isinstance(body, dict) and body.get("success") is True


def expected_keys(model: type[BaseModel]) -> set[str]:
    keys: set[str] = set()
    for name, info in model.model_fields.items():
        keys.add(name)
        if info.alias:
            keys.add(info.alias)
        alias = info.validation_alias
        if isinstance(alias, str):
            keys.add(alias)
        elif isinstance(alias, AliasChoices):
            keys.update(choice for choice in alias.choices if isinstance(choice, str))
    return keys


def _error_report(status: int, body: Any, operation: str) -> GatewayError:
    reason = server_message(json.dumps(body)) or "no reason given"
    message = f"{status_line(status)} for {operation}, but the gateway reported an error: {reason}"
    codes = {body.get("error"), body.get("code")} if isinstance(body, dict) else set()
    error_type = NotFound if "NOT_FOUND" in codes else UnexpectedStatus
    return error_type(message, status=status, body=_shorten(json.dumps(body, ensure_ascii=False), 2000))


def _is_error_report(payload: Any, model: type[BaseModel]) -> bool:
    if not isinstance(payload, dict) or "error" not in payload:
        return False
    return not (set(payload) & (expected_keys(model) - {"error"}))


def decode_success(model: type[Result], status: int, text: str, operation: str) -> Result:
    """The typed result of a 2xx answer; MalformedResponse (keeping the status) when it is not that shape."""
    validate = model.model_validate  # taken before the issubclass checks below narrow `model` away from Result
    if not text.strip():
        if model is HmacStatus or issubclass(model, OperationResult):
            return model()
        raise MalformedResponse(f"{status_line(status)} for {operation}, but the body is empty", status=status)
    try:
        body = load_json(text)
    except NestedTooDeeply as error:
        raise MalformedResponse(
            f"{status_line(status)} for {operation}, but the body is not JSON ({error})", status=status,
            body=_shorten(text, 2000),
        ) from None
    except ValueError:
        raise MalformedResponse(
            f"{status_line(status)} for {operation}, but the body is not JSON: {_shorten(text, 120)!r}",
            status=status,
            body=_shorten(text, 2000),
        ) from None

    if is_envelope(body):
        if body.get("success") is False or "error" in body:
            raise _error_report(status, body, operation)
        payload = body.get("data")
    else:
        payload = body

    if _is_error_report(payload, model):
        raise _error_report(status, payload, operation)
    if model is HmacStatus and payload in ("", None):
        payload = {"hmac_key": ""}  # WuzAPI: no key configured
    elif model is Details and isinstance(payload, str):
        payload = {"Details": payload}
    elif model is not HmacStatus and issubclass(model, OperationResult) and payload is None:
        payload = {}

    if not isinstance(payload, dict) and not (issubclass(model, ListAnswer) and isinstance(payload, list | None)):
        # Lists come as bare arrays (Z-API) or null (nothing to list); every other answer is an object.
        raise MalformedResponse(
            f"{status_line(status)} for {operation}, but the answer is a JSON {_json_kind(payload)} "
            "where an object was expected",
            status=status,
            body=_shorten(text, 2000),
        )
    try:
        return validate(payload)
    except ValidationError as error:
        problems = "; ".join(
            f"{'answer' if field == 'request' else field}: {problem}"
            for field, problem in field_errors(error).items()
        )
        raise MalformedResponse(
            f"{status_line(status)} for {operation}, but the answer is not the expected shape: {problems}",
            status=status,
            body=_shorten(text, 2000),
        ) from None


def _json_kind(value: Any) -> str:
    if isinstance(value, list):
        return "array"
    if isinstance(value, str):
        return "string"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    return "number"
