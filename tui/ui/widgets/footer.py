"""The footer: Textual's, fitted to its width. When the keys in force do not fit beside the palette key (80 columns:
Groups' five tab keys, the conversation list's letters, the form's keys), the entries the actions table ranks to go
first (`tui.ui.keymap.KeyAction.footer_drop`: Requests, then Panel, then Help) are left out, then the screen's own
keys from the last one; F1's help still lists every key. Cut entries never show half a label."""

from __future__ import annotations

from collections.abc import Sequence
from rich.cells import cell_len
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Footer

from tui.ui.keymap import ACTIONS_BY_ID
from tui.ui.textual_compat import FooterKey

PALETTE_WIDTH_EXTRA = 0
"""Columns of the palette key beyond its key and label (its left border takes the place of its left padding)."""


def footer_drop(binding: Binding) -> int:
    action = ACTIONS_BY_ID.get(binding.id or "")
    return action.footer_drop if action is not None else 0


def key_width(key_display: str, description: str) -> int:
    """Columns one FooterKey takes (not compact): ` key description `."""
    return cell_len(key_display) + 2 + (cell_len(description) + 1 if description else 0)


def fitting(entries: Sequence[tuple[int, int]], width: int) -> list[int]:
    """Indexes of the entries (width, drop rank) kept within `width`, in their order: the highest rank goes first,
    the last of equal ranks first."""
    kept = list(range(len(entries)))
    while kept and sum(entries[index][0] for index in kept) > width:
        kept.remove(max(kept, key=lambda index: (entries[index][1], index)))
    return kept


class GatewayFooter(Footer):
    """Footer that leaves out the lowest-ranked keys instead of cutting the last ones in the middle.

    It is rebuilt only when what it would show changes: Textual's footer recomposes after every change of the
    bindings in force (each focus change, each mount), three times in a row during the start for the same keys
    (~30 ms before the app took keys, bench/start_interactive.py)."""

    _composed_width = 0
    _composed: tuple[object, ...] | None = None
    """What the footer shows now (`_keys()` when it was composed); None before its first compose."""
    _recompose_pending = False

    def _keys(self) -> tuple[int, tuple[tuple[Binding, str, bool, str], ...], tuple[Binding, bool, str] | None]:
        """What compose would show: the width, each kept key (binding, its key display, enabled, tooltip) and the
        palette's key."""
        active = self.screen.active_bindings
        first_of_action: dict[str, tuple[Binding, bool, str]] = {}
        for _node, binding, enabled, tooltip in active.values():
            if binding.show and binding.action not in first_of_action:
                first_of_action[binding.action] = (binding, enabled, tooltip)
        shown = list(first_of_action.values())
        palette: tuple[Binding, bool, str] | None = None
        if self.show_command_palette and self.app.ENABLE_COMMAND_PALETTE:
            found = active.get(self.app.COMMAND_PALETTE_BINDING)
            if found is not None:
                palette = (found.binding, found.enabled, found.tooltip)
        width = self.size.width or self.app.size.width
        room = width
        if palette is not None:
            room -= key_width(self.app.get_key_display(palette[0]), palette[0].description) + PALETTE_WIDTH_EXTRA
        displays = [self.app.get_key_display(binding) for binding, _, _ in shown]
        keep = fitting([(key_width(display, binding.description), footer_drop(binding))
                        for display, (binding, _, _) in zip(displays, shown, strict=True)], room)
        kept = tuple((shown[index][0], displays[index], shown[index][1], shown[index][2]) for index in keep)
        return width, kept, palette

    def compose(self) -> ComposeResult:
        if not self._bindings_ready:
            return
        keys = self._keys()
        self._composed = keys
        width, kept, palette = keys
        self._composed_width = width
        # Each key starts with the classes its `compact` gives it, so that its watcher changes none when it is mounted:
        # a FooterKey starts compact, and the binding made it not compact at once, restyling every key twice (~20
        # restyles per footer built, and the footer is rebuilt whenever the keys in force change).
        for binding, display, enabled, tooltip in kept:
            key = FooterKey(binding.key, display, binding.description, binding.action, disabled=not enabled,
                            tooltip=tooltip, classes="-compact" if self.compact else "")
            key.set_reactive(FooterKey.compact, self.compact)
            yield key.data_bind(compact=Footer.compact)
        if palette is not None:
            binding, enabled, _tooltip = palette
            yield FooterKey(binding.key, self.app.get_key_display(binding), binding.description, binding.action,
                            classes="-command-palette -compact", disabled=not enabled,
                            tooltip=binding.tooltip or binding.description)

    def bindings_changed(self, screen: Screen) -> None:
        """Textual's, with the rebuilds asked for before the next frame made one, and none when the keys are the same.

        Rebuilt before that frame (Textual's rebuilds after it): the frame that shows a new focus shows its keys,
        instead of the keys of the widget no longer focused and one frame more (~15-30 ms at start)."""
        self._bindings_ready = True
        if not screen.app.app_focus:
            return
        if self.is_attached and screen is self.screen and not self._recompose_pending:
            self._recompose_pending = True
            self.call_later(self._recompose_if_changed)

    async def _recompose_if_changed(self) -> None:
        self._recompose_pending = False
        if self.is_attached and self._keys() != self._composed:
            await self.recompose()

    def on_resize(self) -> None:
        if self._bindings_ready and self.size.width != self._composed_width:
            self.call_after_refresh(self.recompose)
