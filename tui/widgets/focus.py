"""Where the focus goes: a section's first field when it opens, and back where it was after a call.

A container may name its own first field with `first_field() -> Widget | None` (Groups: the open tab's first
input, not the tab bar); otherwise the first focusable widget inside it that is not a scrolling container.
"""

from __future__ import annotations

from textual.containers import ScrollableContainer
from textual.widget import Widget
from textual.widgets import Tabs


def first_field(container: Widget) -> Widget | None:
    own = getattr(container, "first_field", None)
    if callable(own):
        chosen = own()
        if isinstance(chosen, Widget):
            return chosen
    for widget in container.query("*"):
        if widget.focusable and not isinstance(widget, (ScrollableContainer, Tabs)):
            return widget
    return None


def focus_first(container: Widget) -> None:
    """Focus the container's first field; with none, the container itself when it can take the focus."""
    widget = first_field(container)
    if widget is not None:
        widget.focus()
    elif container.focusable:
        container.focus()


def restore_focus(widget: Widget | None, covered: Widget | None = None) -> None:
    """Give the focus back to `widget` (the one focused when a call started) when the call left nobody focused,
    or left the focus inside what the call covered (`covered`, its busy widget). A user who moved on to another
    place meanwhile keeps their focus."""
    if widget is None or not widget.is_attached:
        return
    screen = widget.screen
    current = screen.focused
    if current is widget:
        return
    inside_covered = covered is not None and current is not None and covered in current.ancestors_with_self
    if current is None or not current.focusable or inside_covered:
        screen.set_focus(widget, scroll_visible=False)
