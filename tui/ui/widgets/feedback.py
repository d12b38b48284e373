"""What the user reads when an operation fails: what happened, then what to do.

`explain_error` returns plain text. Server text is part of it, so callers must never let Textual
interpret it as markup: `notify(text, markup=False)`, `Static(Content(text))`, or `rich.markup.escape`.
`ErrorLine` is the one widget that shows such text in a section.

Every result is seen where it is shown, whatever the terminal's size: `in_view` is the one way a result line (an
`ErrorLine`, a copyable value) is brought on screen. It scrolls the section so the result and the focused field
both show; when they cannot both show (80×24 with the events panel open, a long form), the focus keeps its field
and the result is said in a toast as well.
"""

from __future__ import annotations

from typing import Literal

from pydantic import ValidationError
from textual.containers import ScrollableContainer
from textual.content import Content
from textual.widget import Widget
from textual.widgets import Static

from tui.api.errors import (
    BadRequest,
    Conflict,
    ConnectionLost,
    ConnectionRefused,
    GatewayError,
    GatewayTimeout,
    InvalidBaseUrl,
    ReadOnlyRefused,
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
    if isinstance(exc, ReadOnlyRefused):
        return exc.message  # says what happened (nothing was sent) and how to make the profile writable
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


Severity = Literal["information", "warning", "error"]


def _scroller(widget: Widget) -> ScrollableContainer | None:
    """The nearest scrolling container around `widget` (the section)."""
    for node in widget.ancestors:
        if isinstance(node, ScrollableContainer):
            return node
    return None


def is_shown(widget: Widget) -> bool:
    """On the current screen and inside no hidden part (another section, the other view of Chats)."""
    return widget.is_attached and widget.screen.is_current and all(
        node.display for node in widget.ancestors_with_self if isinstance(node, Widget))


LAYOUT_TRIES = 5
"""Refreshes `in_view` waits at most for a result line just shown to be laid out."""


def in_view(result: Widget, toast: str | None, *, severity: Severity = "information") -> None:
    """After the next refresh (the result's new height laid out), scroll its section so `result` and the focused
    field both show; when they cannot, keep the field in view and say `toast` in a toast (plain text; None: it is
    already in one). A result inside a hidden part is left for when that part shows.

    A refresh's callbacks can run before a line just shown is laid out (when the screen was not yet marked for a
    layout: the footer, rebuilt for the focus's return, took that turn), and a line with no place yet cannot be
    seen: it would be scrolled to nowhere and toasted while it shows a moment later. It is waited for instead."""

    def bring(tries: int = LAYOUT_TRIES) -> None:
        if not is_shown(result):
            return
        if not result.region and tries:  # shown since the last layout (display none → block), not laid out yet:
            result.call_after_refresh(bring, tries - 1)  # its place is not known (a refresh may come first)
            return
        screen = result.screen
        focused = screen.focused
        if screen.can_view_entire(result) and (focused is None or screen.can_view_entire(focused)):
            return
        scroller = _scroller(result)
        if scroller is not None:
            _scroll_to_show(scroller, result, focused)
        result.call_after_refresh(said_if_unseen)

    def said_if_unseen() -> None:
        if toast is not None and is_shown(result) and not result.screen.can_view_entire(result):
            result.notify(toast, severity=severity, markup=False, timeout=8)

    result.call_after_refresh(bring)


def _scroll_to_show(scroller: ScrollableContainer, result: Widget, focused: Widget | None) -> None:
    """Scroll `scroller` the least that shows `result`, then the least that shows the focused widget (when it is in
    the same container): both show when they fit together; when they do not, the focused widget wins. Each scroll
    is made at once, in the container's own coordinates (the screen's map may be a frame old, after a dialog)."""
    scroller.scroll_to_widget(result, animate=False, immediate=True)
    if focused is not None and scroller in focused.ancestors:
        scroller.scroll_to_widget(focused, animate=False, immediate=True)


class ErrorLine(Static):
    """A plain-text line for a section's last error (or success); text is never interpreted as markup.

    A shown line comes into view (`in_view`), and stays in view while the content above it changes height (a
    warning appearing) until the focus moves."""

    DEFAULT_CSS = """
    ErrorLine { height: auto; padding: 0 1; display: none; }
    ErrorLine.-shown { display: block; }
    ErrorLine.-error { color: $text-error; background: $error-muted; }
    ErrorLine.-ok { color: $text-success; background: $success-muted; }
    """

    def show_error(self, exc_or_text: BaseException | str, *, notified: bool = False) -> None:
        """`notified`: the same text is already in a toast (a failed call's), so none is added when the line
        cannot come into view."""
        text = exc_or_text if isinstance(exc_or_text, str) else explain_error(exc_or_text)
        self._show(text, "-error", "error", notified=notified)

    def show_ok(self, text: str) -> None:
        self._show(text, "-ok", "information")

    _kept_for: Widget | None = None
    """The widget focused when the line was last shown: while it keeps the focus, the line is kept in view."""
    _watching = False

    def _show(self, text: str, kind: str, severity: Severity, *, notified: bool = False) -> None:
        self.update(Content(text))
        self.remove_class("-error", "-ok")
        self.add_class("-shown", kind)
        # After the refresh in which a call gives the focus back (tui.ui.widgets.focus.restore_focus): that field is
        # the one the user is in.
        self.call_after_refresh(self._remember_focus)
        in_view(self, None if notified else text, severity=severity)
        self._follow_the_section()

    def _remember_focus(self) -> None:
        if self.is_attached:
            self._kept_for = self.screen.focused

    def _follow_the_section(self) -> None:
        """Keep this line in view when the section is resized or its content changes height (Textual sends no
        Resize for the latter) until the focus moves."""
        scroller = _scroller(self)
        if scroller is None or self._watching:
            return
        self._watching = True
        self.watch(scroller, "virtual_size", self._keep_in_view, init=False)
        self.watch(scroller, "size", self._keep_in_view, init=False)

    def _keep_in_view(self) -> None:
        if not self.has_class("-shown") or not is_shown(self):
            return
        kept_for = self._kept_for
        if kept_for is None or self.screen.focused is not kept_for:
            return  # the user moved on: the field they are in is what stays in view
        scroller = _scroller(self)
        screen = self.screen
        if scroller is not None and not (screen.can_view_entire(self) and screen.can_view_entire(kept_for)):
            self.call_after_refresh(_scroll_to_show, scroller, self, kept_for)

    def clear(self) -> None:
        self.update("")
        self.remove_class("-shown", "-error", "-ok")
        self._kept_for = None
