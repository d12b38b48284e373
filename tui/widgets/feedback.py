"""What the user reads when an operation fails: what happened, then what to do.

`explain_error` returns plain text. Server text is part of it, so callers must never let Textual
interpret it as markup: `notify(text, markup=False)`, `Static(Content(text))`, or `rich.markup.escape`.
`ErrorLine` is the one widget that shows such text in a section.
"""

from __future__ import annotations

from typing import Literal

from pydantic import ValidationError
from textual.content import Content
from textual.widgets import Static

from tui.api.errors import (
    BadRequest,
    Conflict,
    ConnectionLost,
    ConnectionRefused,
    GatewayError,
    GatewayTimeout,
    InvalidBaseUrl,
    MalformedResponse,
    NotFound,
    RateLimited,
    ServerError,
    Unauthorized,
    UnexpectedStatus,
)
from tui.api.models import describe_validation_error

SETTINGS_HINT = "Settings (6)"


def _detail(error: GatewayError) -> str:
    """The client's message (status line + server text, secrets already redacted), or nothing."""
    return (error.message or "").strip()


def _wait_seconds(error: RateLimited) -> str:
    if error.retry_after is None:
        return "a few seconds"
    seconds = error.retry_after
    return f"{seconds:g} s"


def explain_error(exc: BaseException) -> str:
    """One or two plain-text sentences: what happened + what to do. Never markup, never secrets."""
    from tui.api.operations import DialectRefusal

    if isinstance(exc, DialectRefusal):
        return f"{exc.message}. Correct it (or change the profile's dialect in {SETTINGS_HINT}); nothing was sent."
    if isinstance(exc, Unauthorized):
        return (
            "The gateway rejected the credentials (401). Check the Client-Token / instance token / "
            f"session token in {SETTINGS_HINT}."
        )
    if isinstance(exc, Conflict):
        return (
            "The instance is not connected (409). Reconnect the phone to the instance "
            f"(scan the QR code in the gateway dashboard), then try again. Gateway said: {_detail(exc)}"
        )
    if isinstance(exc, RateLimited):
        return f"Rate limited (429): wait {_wait_seconds(exc)} before trying again."
    if isinstance(exc, NotFound):
        return (
            f"Not found (404): the gateway has no such group, product, community or instance. "
            f"Check the identifier (and the instance id in {SETTINGS_HINT}). Gateway said: {_detail(exc)}"
        )
    if isinstance(exc, BadRequest):
        return f"The gateway refused the request (400): {_detail(exc)}. Correct the fields and send again."
    if isinstance(exc, ServerError):
        return f"The gateway failed (500): {_detail(exc)}. Try again later; if it persists, check the gateway."
    if isinstance(exc, GatewayTimeout):
        return (
            f"The gateway did not answer in time: {_detail(exc)}. Check the base URL in {SETTINGS_HINT} "
            "and that the gateway is running."
        )
    if isinstance(exc, ConnectionRefused):
        return (
            f"Could not reach the gateway: {_detail(exc)}. Is the gateway running? "
            f"Check the base URL in {SETTINGS_HINT}."
        )
    if isinstance(exc, ConnectionLost):
        return f"The connection to the gateway broke: {_detail(exc)}. Try again; check the network if it repeats."
    if isinstance(exc, InvalidBaseUrl):
        return f"The base URL cannot be used: {_detail(exc)}. Fix it in {SETTINGS_HINT}."
    if isinstance(exc, MalformedResponse):
        return (
            f"The gateway answered something unexpected: {_detail(exc)}. "
            f"Check that the base URL in {SETTINGS_HINT} points at the right gateway."
        )
    if isinstance(exc, UnexpectedStatus):
        status = f" ({exc.status})" if exc.status else ""
        return f"The gateway answered with an unexpected status{status}: {_detail(exc)}."
    if isinstance(exc, GatewayError):
        return f"The gateway call failed: {_detail(exc)}."
    if isinstance(exc, ValidationError):
        return f"Invalid input: {describe_validation_error(exc)}. Correct it; nothing was sent."
    return f"Unexpected error ({type(exc).__name__}): {exc}. Nothing more is known; see the log."


def status_hint(exc: BaseException) -> Literal["warning", "error"]:
    """A short severity-ish tag for toasts: 'warning' for things the user can fix by waiting, else 'error'."""
    return "warning" if isinstance(exc, RateLimited) else "error"


class ErrorLine(Static):
    """A plain-text line for a section's last error (or success); text is never interpreted as markup."""

    DEFAULT_CSS = """
    ErrorLine { height: auto; padding: 0 1; display: none; }
    ErrorLine.-shown { display: block; }
    ErrorLine.-error { color: $text-error; background: $error-muted; }
    ErrorLine.-ok { color: $text-success; background: $success-muted; }
    """

    def show_error(self, exc_or_text: BaseException | str) -> None:
        text = exc_or_text if isinstance(exc_or_text, str) else explain_error(exc_or_text)
        self._show(text, "-error")

    def show_ok(self, text: str) -> None:
        self._show(text, "-ok")

    def _show(self, text: str, kind: str) -> None:
        self.update(Content(text))
        self.remove_class("-error", "-ok")
        self.add_class("-shown", kind)

    def clear(self) -> None:
        self.update("")
        self.remove_class("-shown", "-error", "-ok")
