"""Keep secrets out of everything the client shows: reprs, log lines, exception text, the request log.

Secrets are the `Client-Token` and `token` headers, the instance token in the path, and what a request
body carries: `hmac_key` and the password inside `proxy_url`.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import quote, urlsplit

from tui.api.json_text import NestedTooDeeply, load_json
from tui.api.listener_paths import INSTANCE_PATH, PATH_SECRET_SEGMENT

MASK = "***"
SHORT_SECRET = 6  # characters: shorter secrets are masked as whole words only
INSTANCE_TOKEN_PLACEHOLDER = "{instanceToken}"
SECRET_HEADERS = frozenset({"client-token", "token", "authorization"})
SECRET_BODY_KEYS = frozenset({"hmac_key", "password"})  # password: Evolution's proxy, a field of its own
PROXY_URL_KEYS = frozenset({"proxy_url", "proxyurl"})


class Redactor:
    """Replaces every known secret value, raw or URL-quoted, with `***` in arbitrary text."""

    def __init__(self, secrets: Iterable[str | None] = ()) -> None:
        variants: set[str] = set()
        for secret in secrets:
            if secret:
                variants.update({secret, quote(secret, safe=""), quote(secret)})
        # Longest first, so a secret containing another one is replaced whole.
        self._secrets = sorted(variants, key=len, reverse=True)
        # A secret of a few characters is masked where it stands alone, not inside words: a one-letter token made
        # "Could not connect" read "Could not ***onne***t", which hid nothing and garbled everything.
        self._short = [re.compile(rf"(?<![A-Za-z0-9]){re.escape(secret)}(?![A-Za-z0-9])")
                       for secret in self._secrets if len(secret) < SHORT_SECRET]

    def with_secrets(self, *secrets: str | None) -> Redactor:
        return Redactor([*self._secrets, *secrets])

    def __call__(self, text: str) -> str:
        for secret in self._secrets:
            if len(secret) >= SHORT_SECRET:
                text = text.replace(secret, MASK)
        for short in self._short:
            text = short.sub(MASK, text)
        return text

    def __repr__(self) -> str:
        return f"Redactor({len(self._secrets)} secret forms)"


def redact_headers(headers: Mapping[str, str]) -> dict[str, str]:
    return {name: MASK if name.lower() in SECRET_HEADERS else value for name, value in headers.items()}


def proxy_password(url: str) -> str | None:
    try:
        return urlsplit(url).password
    except ValueError:
        return None


def body_secrets(body: Any) -> list[str]:
    """The secret values a request body carries, so they can be redacted wherever they are echoed."""
    found: list[str] = []
    if isinstance(body, Mapping):
        for key, value in body.items():
            if key.lower() in SECRET_BODY_KEYS and isinstance(value, str):
                found.append(value)
            elif key.lower() in PROXY_URL_KEYS and isinstance(value, str):
                password = proxy_password(value)
                if password:
                    found.append(password)
            else:
                found.extend(body_secrets(value))
    elif isinstance(body, list):
        for item in body:
            found.extend(body_secrets(item))
    return found


def redact_body(body: Any) -> Any:
    """A copy of a JSON body with `hmac_key` masked, proxy passwords masked inside their URLs, and media data URLs
    cut to their head (`shortened_data_url`)."""
    if isinstance(body, Mapping):
        redacted: dict[str, Any] = {}
        for key, value in body.items():
            if key.lower() in SECRET_BODY_KEYS and isinstance(value, str):
                redacted[key] = MASK
            elif key.lower() in PROXY_URL_KEYS and isinstance(value, str):
                redacted[key] = mask_url_password(value)
            else:
                redacted[key] = redact_body(value)
        return redacted
    if isinstance(body, list):
        return [redact_body(item) for item in body]
    if isinstance(body, str):
        return redact_delivery_secret(shortened_data_url(body))
    return body


def mask_json_keys(text: str, keys: frozenset[str]) -> str:
    """A JSON answer with the values of `keys` (any depth, any case) masked: admin answers carry every account's
    token. Text that is not JSON, or no keys, pass unchanged."""
    if not keys:
        return text
    try:
        value = load_json(text)
    except NestedTooDeeply:
        return _TOO_DEEP_TO_MASK
    except ValueError:
        return text

    def mask(item: Any) -> Any:
        if isinstance(item, dict):
            return {key: MASK if key.lower() in keys and isinstance(val, str) and val else mask(val)
                    for key, val in item.items()}
        if isinstance(item, list):
            return [mask(element) for element in item]
        return item

    try:
        return dump_json(mask(value))
    except RecursionError:  # parsed, but too deep to walk
        return _TOO_DEEP_TO_MASK


# An answer too deep to mask is dropped from the record rather than kept with the secrets it may hold.
_TOO_DEEP_TO_MASK = "(answer not kept: nested too deeply to mask its secrets)"


DATA_URL_SHOWN = 64  # characters of a media data URL's base64 kept in logs


def shortened_data_url(value: str) -> str:
    """A media file sent inline (`data:image/png;base64,…`, megabytes of base64) as its head and its size: the
    request log, errors and copies never hold the file itself. Any other text passes unchanged."""
    if not value.startswith("data:"):
        return value
    comma = value.find(";base64,", 0, 256)
    if comma < 0:
        return value
    start = comma + len(";base64,")
    payload = len(value) - start
    if payload <= DATA_URL_SHOWN:
        return value
    size = payload * 3 // 4 - value[-2:].count("=")
    return f"{value[:start + DATA_URL_SHOWN]}… ({size} bytes of base64 data left out)"


def mask_url_password(url: str) -> str:
    password = proxy_password(url)
    if not password:
        return url
    scheme, rest = url.split("://", 1) if "://" in url else ("", url)
    userinfo, _, host = rest.rpartition("@")
    user = userinfo.split(":", 1)[0]
    return f"{scheme}://{user}:{MASK}@{host}" if scheme else f"{user}:{MASK}@{host}"


def dump_json(body: Any) -> str:
    """The exact text sent on the wire (compact, UTF-8), so the request log shows what the server got."""
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


_INSTANCE_TOKEN_IN_PATH = re.compile(r"(/instances/[^/\s]+/token/)[^/\s\"'?#]+")
_TOKEN_IN_QUERY = re.compile(r"([?&]token=)[^&\s\"'#]+", re.IGNORECASE)
_DELIVERY_SECRET_IN_PATH = re.compile(rf"({re.escape(INSTANCE_PATH)}/{PATH_SECRET_SEGMENT}/)[^/\s\"'?#&,;)]+")


def redact_url_secrets(text: str) -> str:
    """Mask instance tokens in instance-family paths, `token=` query values and the secret segment of Z-API's
    capability URL (`/delivery/secret/***`), wherever a URL is printed."""
    text = _INSTANCE_TOKEN_IN_PATH.sub(rf"\g<1>{MASK}", redact_delivery_secret(text))
    return _TOKEN_IN_QUERY.sub(rf"\g<1>{MASK}", text)


def redact_delivery_secret(text: str) -> str:
    """`…/delivery/secret/<secret>` as `…/delivery/secret/***` (tui.api.listener_paths.PATH_SECRET_SEGMENT)."""
    return _DELIVERY_SECRET_IN_PATH.sub(rf"\g<1>{MASK}", text)


class _UrlSecretsFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        redacted = redact_url_secrets(message)
        if redacted != message:
            record.msg, record.args = redacted, None
        return True


_LIBRARY_LOGGERS = ("httpx", "httpcore")


def install_library_log_redaction() -> None:
    """httpx logs every request URL at INFO; keep instance tokens out of those lines. Idempotent."""
    for name in _LIBRARY_LOGGERS:
        logger = logging.getLogger(name)
        if not any(isinstance(existing, _UrlSecretsFilter) for existing in logger.filters):
            logger.addFilter(_UrlSecretsFilter())
