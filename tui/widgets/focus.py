"""Where the focus goes: a section's first field when it opens, and back where it was after a call.

A container may name its own first field with `first_field() -> Widget | None` (Groups: the open tab's first
input, not the tab bar); otherwise the first focusable widget inside it that is not a scrolling container.
"""

from __future__ import annotations

from textual.containers import ScrollableContainer
from textual.scroll_view import ScrollView
from textual.widget import Widget
from textual.widgets import Tabs


def first_field(container: Widget) -> Widget | None:
    own = getattr(container, "first_field", None)
    if callable(own):
        chosen = own()
        if isinstance(chosen, Widget):
            return chosen
    for widget in container.query("*"):
        if widget.focusable and not _is_layout(widget):
            return widget
    return None


def _is_layout(widget: Widget) -> bool:
    """Scrolling containers and the tab bar take the focus but are not fields (an Input is a ScrollView, a
    field)."""
    return isinstance(widget, Tabs) or (isinstance(widget, ScrollableContainer) and not isinstance(widget, ScrollView))


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
    # Covering a form moves the focus off it (to nobody, or up to a container): that is not the user's choice.
    displaced = covered is not None and current is not None and (
        covered in current.ancestors_with_self or current in covered.ancestors
    )
    if current is None or not current.focusable or displaced:
        screen.set_focus(widget, scroll_visible=False)
