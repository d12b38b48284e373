"""Where the focus goes: a section's first field when it opens, and back where it was after a call.

A container may name its own first field with `first_field() -> Widget | None` (Groups: the open tab's first
input, not the tab bar); otherwise the first focusable widget inside it that is not a scrolling container.
"""

from __future__ import annotations

import functools
import weakref
from typing import Protocol, runtime_checkable

from textual.binding import Binding
from textual.containers import ScrollableContainer
from textual.css.query import NoMatches
from textual.screen import Screen
from textual.scroll_view import ScrollView
from textual.widget import Widget
from textual.widgets import Input

from tui.ui.keymap import typed_in_a_form


@runtime_checkable
class ChoosesFirstField(Protocol):
    """A container that names its own first field (may raise NoMatches or KeyError while not set up yet)."""

    def first_field(self) -> Widget | None: ...


def first_field(container: Widget) -> Widget | None:
    if isinstance(container, ChoosesFirstField):
        try:
            chosen = container.first_field()
        except (NoMatches, KeyError):  # not composed yet, or its parts not set up yet (a TabbedContent with no
            chosen = None               # active tab in its first moments): the first focusable widget instead
        if isinstance(chosen, Widget):
            return chosen
    for widget in container.query("*"):
        if widget.focusable and not _is_layout(widget) and _shown_within(widget, container):
            return widget
    return None


def first_field_set_up(container: Widget) -> bool:
    """The container's own choice of first field exists (False in a TabbedContent's first moments, when
    `first_field` would fall back to the first focusable widget: a tab or a button, not a field)."""
    if not isinstance(container, ChoosesFirstField):
        return True
    try:
        return isinstance(container.first_field(), Widget)
    except (NoMatches, KeyError):
        return False


def _shown_within(widget: Widget, container: Widget) -> bool:
    """Not inside a hidden part of the container (an inactive tab, a form of another kind)."""
    for node in widget.ancestors_with_self:
        if node is container:
            return True
        if isinstance(node, Widget) and not node.display:
            return False
    return True


@functools.cache
def _tab_bar() -> type[Widget]:
    """Textual's Tabs, imported when first asked about (no tab bar is on screen at start)."""
    from textual.widgets import Tabs

    return Tabs


def _is_layout(widget: Widget) -> bool:
    """Scrolling containers and the tab bar take the focus but are not fields (an Input is a ScrollView, a
    field)."""
    return isinstance(widget, _tab_bar()) or (isinstance(widget, ScrollableContainer) and not isinstance(widget, ScrollView))


@functools.cache
def _other_form_scrollers() -> tuple[type[Widget], ...]:
    """Form controls that scroll besides the Input (so the rule below would take them for lists). Imported when
    first asked about, not with this module: the start's focus is an Input, and Textual's text area and pickers
    cost ~5 ms of it."""
    from textual.widgets import RadioSet, Select, SelectionList, TextArea

    return (TextArea, Select, RadioSet, SelectionList)


def _is_form_scroller(node: object) -> bool:
    """A form control that scrolls, or what is inside one (a picker's open list)."""
    return isinstance(node, Input) or isinstance(node, _other_form_scrollers())


def in_form(widget: Widget | None) -> bool:
    """The focus is on a part of a form: a field, a picker (open or not), a checkbox, a switch, a radio set, a button.
    What is typed there is never a command (`TypingInForms`). Outside forms: lists,
    tables, the thread, the tab bar, a section itself, nothing focused."""
    if widget is None:
        return False
    if any(_is_form_scroller(node) for node in widget.ancestors_with_self):
        return True
    return not isinstance(widget, (ScrollView, ScrollableContainer, _tab_bar(), Screen))


class TypingInForms(Widget):
    """A part of the screen (a section, a form, a field row) that takes the printable keys while the focus is on a
    form control inside it: the keys bound to letters, digits and symbols above it (1-9, `e`, `?`, a section's
    letters) are typing there, never a command, and the footer leaves them out. The control's own keys (space
    toggles a checkbox) and the keys that cannot be text (alt+1..9, ctrl+..., F-keys) stay. Textual asks every node
    between the focus and a binding (`check_consume_key`) before it acts on a key or shows it; an Input or a
    TextArea says so of itself, this says it for every part of a form, in every section."""

    def check_consume_key(self, key: str, character: str | None) -> bool:
        return takes_typed_key(self, key)


def takes_typed_key(node: Widget, key: str) -> bool:
    """`key` (as `BINDINGS` write it, before the user's keymap) is typing at `node`: the focus is on a form control
    and the bindings above `node` on that key type a character once the user's keymap is applied."""
    if not typed_in_a_form(key, _binding_ids_above(node).get(key, (None,))):
        return False
    focused = node.screen.focused
    if focused is None:
        return False
    if (answer := _IN_FORM.get(focused)) is None:
        answer = _IN_FORM[focused] = in_form(focused)
    return answer


_IN_FORM: weakref.WeakKeyDictionary[Widget, bool] = weakref.WeakKeyDictionary()
"""`in_form` of a focused widget, worked out once: Textual asks `takes_typed_key` for every key above the focus each
time it works out the keys in force (every key typed, every footer update)."""


_IDS_ABOVE: weakref.WeakKeyDictionary[Widget, dict[str, list[str | None]]] = weakref.WeakKeyDictionary()


def _binding_ids_above(node: Widget) -> dict[str, list[str | None]]:
    """Key -> the ids of the bindings the nodes above `node` declare on it (their classes' `BINDINGS`), worked out
    once per node: a part of a form stays where it was mounted."""
    ids = _IDS_ABOVE.get(node)
    if ids is None:
        ids = _IDS_ABOVE[node] = {}
        for ancestor in node.ancestors:
            for cls in type(ancestor).__mro__:
                for binding in vars(cls).get("BINDINGS", ()):
                    if isinstance(binding, Binding):
                        for key in binding.key.split(","):
                            ids.setdefault(key.strip(), []).append(binding.id)
    return ids


def focus_first(container: Widget) -> None:
    """Focus the container's first field; with none, the container itself when it can take the focus."""
    # The screen's set_focus acts at once, so keys already on their way (typed right after alt+2) go to the new
    # field; Widget.focus() would only schedule it, and they would land in the section just left.
    widget = first_field(container)
    if widget is not None:
        # Not scrolled here: a section just switched in has not been laid out at its size yet, and a scroll worked
        # out from that layout (a long text wrapped at no width) can leave the view far below the field, its
        # title and first blocks out of sight. The view is placed once laid out.
        container.screen.set_focus(widget, scroll_visible=False)
        container.call_after_refresh(_show_from_the_top, widget)
    elif container.focusable:
        container.screen.set_focus(container)


def _show_from_the_top(field: Widget, tries: int = 5) -> None:
    """The first field in view, with its section's top (title, first block) when both fit; left alone once the
    user has moved the focus elsewhere."""
    if not field.is_attached or field.screen.focused is not field:
        return
    scroller = next((node for node in field.ancestors if isinstance(node, ScrollableContainer)), None)
    if scroller is None:
        return
    if not scroller.size.height and tries:  # not laid out yet (the switcher shows it in this refresh)
        field.call_after_refresh(_show_from_the_top, field, tries - 1)
        return
    scroller.scroll_home(animate=False, immediate=True)
    scroller.scroll_to_widget(field, animate=False, immediate=True)


def restore_focus(widget: Widget | None, covered: Widget | None = None) -> None:
    """Give the focus back to `widget` (the one focused when a call started) when the call left nobody focused,
    or left the focus inside or around what the call covered (`covered`, its busy widget), or on a container or
    the tab bar (where covering a form sends it). A user who moved on to another field meanwhile keeps it."""
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
    if current is None or not current.focusable or displaced or _is_layout(current):
        screen.set_focus(widget, scroll_visible=False)
