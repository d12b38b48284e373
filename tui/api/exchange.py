"""One recorded HTTP exchange for the request log, with "copy as curl", and the bounded log itself.

Everything stored here is already redacted; `as_curl` puts shell variables where the secrets were, so the
copied command runs after `export GATEWAY_TUI_CLIENT_TOKEN=...` and never carries a secret itself.
"""

from __future__ import annotations

import logging
import shlex
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from tui.api.json_text import load_json
from tui.api.redaction import (
    INSTANCE_TOKEN_PLACEHOLDER,
    MASK,
    PROXY_URL_KEYS,
    SECRET_BODY_KEYS,
    dump_json,
)

log = logging.getLogger(__name__)

CLIENT_TOKEN_VAR = "GATEWAY_TUI_CLIENT_TOKEN"
INSTANCE_TOKEN_VAR = "GATEWAY_TUI_INSTANCE_TOKEN"
SESSION_TOKEN_VAR = "GATEWAY_TUI_SESSION_TOKEN"
HMAC_KEY_VAR = "GATEWAY_TUI_HMAC_KEY"
PROXY_PASSWORD_VAR = "GATEWAY_TUI_PROXY_PASSWORD"

_HEADER_VARS = {"client-token": CLIENT_TOKEN_VAR, "token": SESSION_TOKEN_VAR}
# Headers httpx adds by itself; curl adds its own equivalents.
_AUTOMATIC_HEADERS = frozenset({"host", "content-length", "connection", "accept-encoding", "user-agent", "accept"})

MAX_RESPONSE_BODY = 4096


def truncate(text: str, limit: int = MAX_RESPONSE_BODY) -> str:
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text) - limit} more characters)"


@dataclass(frozen=True)
class Exchange:
    started_at: datetime
    method: str
    url: str
    status: int | None
    duration_ms: float
    request_headers: dict[str, str] = field(default_factory=dict)
    request_body: str | None = None
    response_body: str | None = None
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None and self.status is not None and 200 <= self.status < 300

    def summary(self) -> str:
        outcome = str(self.status) if self.status is not None else "no answer"
        line = f"{self.method} {self.url} → {outcome} in {self.duration_ms:.0f} ms"
        return f"{line} ({self.error})" if self.error else line

    def as_curl(self) -> str:
        words = ["curl", "-sS", "-X", self.method, _shell_word(self.url, {INSTANCE_TOKEN_PLACEHOLDER: INSTANCE_TOKEN_VAR})]
        for name, value in self.request_headers.items():
            if name.lower() in _AUTOMATIC_HEADERS:
                continue
            variable = _HEADER_VARS.get(name.lower())
            if variable and value == MASK:
                words += ["-H", _shell_word(f"{name}: {MASK}", {MASK: variable})]
            else:
                words += ["-H", shlex.quote(f"{name}: {value}")]
        if self.request_body is not None:
            words += ["--data-raw", _curl_body(self.request_body)]
        return " ".join(words)


_HMAC_SLOT = "@@GATEWAY_TUI_HMAC_KEY@@"
_PROXY_SLOT = "@@GATEWAY_TUI_PROXY_PASSWORD@@"


def _curl_body(body: str) -> str:
    try:
        parsed = load_json(body)
    except ValueError:
        return shlex.quote(body)
    with_slots = dump_json(_slot_secrets(parsed))
    return _shell_word(with_slots, {_HMAC_SLOT: HMAC_KEY_VAR, _PROXY_SLOT: PROXY_PASSWORD_VAR})


def _slot_secrets(body: Any) -> Any:
    if isinstance(body, dict):
        slotted: dict[str, Any] = {}
        for key, value in body.items():
            if key.lower() == "password" and value == MASK:  # Evolution's proxy password, a field of its own
                slotted[key] = _PROXY_SLOT
            elif key.lower() in SECRET_BODY_KEYS and value == MASK:
                slotted[key] = _HMAC_SLOT
            elif key.lower() in PROXY_URL_KEYS and isinstance(value, str) and f":{MASK}@" in value:
                slotted[key] = value.replace(f":{MASK}@", f":{_PROXY_SLOT}@", 1)
            else:
                slotted[key] = _slot_secrets(value)
        return slotted
    if isinstance(body, list):
        return [_slot_secrets(item) for item in body]
    return body


def _shell_word(text: str, variables: dict[str, str]) -> str:
    """Quote `text` for a POSIX shell, with each placeholder turned into a double-quoted `"$VARIABLE"`."""
    pieces: list[tuple[str, bool]] = [(text, False)]
    for placeholder, variable in variables.items():
        split: list[tuple[str, bool]] = []
        for piece, is_variable in pieces:
            if is_variable:
                split.append((piece, True))
                continue
            parts = piece.split(placeholder)
            for index, part in enumerate(parts):
                if index:
                    split.append((variable, True))
                split.append((part, False))
        pieces = split
    word = "".join(f'"${piece}"' if is_variable else shlex.quote(piece) for piece, is_variable in pieces if piece)
    return word or "''"


Subscriber = Callable[[Exchange], None]


class RequestLog:
    """The most recent exchanges, oldest first. Pass `request_log.append` as GatewayHttp's `on_exchange`."""

    def __init__(self, maxlen: int = 500) -> None:
        self._exchanges: deque[Exchange] = deque(maxlen=maxlen)
        self._subscribers: list[Subscriber] = []

    @property
    def maxlen(self) -> int:
        return self._exchanges.maxlen or 0

    def append(self, exchange: Exchange) -> None:
        self._exchanges.append(exchange)
        for subscriber in list(self._subscribers):
            try:
                subscriber(exchange)
            except Exception:  # a broken view must not break the HTTP call that is being logged
                log.exception("request-log subscriber failed")

    def subscribe(self, callback: Subscriber) -> Callable[[], None]:
        """Call `callback` for every new exchange; returns a function that unsubscribes it."""
        self._subscribers.append(callback)

        def unsubscribe() -> None:
            if callback in self._subscribers:
                self._subscribers.remove(callback)

        return unsubscribe

    def clear(self) -> None:
        self._exchanges.clear()

    def __iter__(self) -> Iterator[Exchange]:
        return iter(list(self._exchanges))

    def __len__(self) -> int:
        return len(self._exchanges)

    def __repr__(self) -> str:
        return f"RequestLog({len(self)}/{self.maxlen} exchanges)"
