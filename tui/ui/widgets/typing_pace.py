"""While the user types, the screen's background redraws wait for the moment just after a key is drawn.

A typed key waits for whatever the main thread is doing when it arrives: under a flow of events that is often a
redraw of the events panel, the listener's counts or the inbox (a frame of 15-35 ms on a busy 120×40 screen,
bench/fleet.py). People type a key every 80-200 ms; a redraw run right after a key's own frame is over before the
next key comes. So while keys come (one within TYPING_WINDOW), a redraw asked for is held and released after the
next key's frame, or after HELD_AT_MOST if no key comes: what arrived is never more than that late on screen.

    if self.state.pace.holds(self, self._redraw):   # in the redraw's own timer callback
        return                                      # called again, once, when released
"""

from __future__ import annotations

import time
from collections.abc import Callable

from textual.app import App
from textual.message_pump import MessagePump
from textual.timer import Timer

TYPING_WINDOW = 0.5
"""Seconds since the last key during which the user counts as typing."""
HELD_AT_MOST = 0.3
"""Seconds a held redraw waits at most (no key came meanwhile): events still reach the screen within 0.5 s."""


class TypingPace:
    """The keys' pace, noted by the app (`key_typed`), and the redraws held meanwhile (`holds`)."""

    def __init__(self, app: App[object]) -> None:
        self._app = app
        self._last_key = float("-inf")
        self._held: dict[Callable[[], object], MessagePump] = {}  # each once, in the order asked, with its widget
        self._passes: set[Callable[[], object]] = set()  # released: runs when it comes back to `holds`
        self._timer: Timer | None = None

    @property
    def typing(self) -> bool:
        return time.monotonic() - self._last_key < TYPING_WINDOW

    @property
    def held(self) -> int:
        """How many redraws wait (tests look)."""
        return len(self._held)

    def key_typed(self) -> None:
        """A key came (the app's first look at it, before any widget's)."""
        self._last_key = time.monotonic()
        if self._held:
            self._app.call_after_refresh(self.release)  # once the key's own frame is drawn

    def holds(self, widget: MessagePump, redraw: Callable[[], object]) -> bool:
        """True: the user is typing, and `redraw` is called later on `widget` (after the next key's frame, at most
        HELD_AT_MOST from now; never once the widget is gone); the caller returns. False: the caller goes on now.
        Only for what the user did not ask for (a flow of events): their own action's redraw is never held."""
        if redraw in self._passes:
            self._passes.discard(redraw)
            return False
        if not self.typing:
            return False
        self._held[redraw] = widget
        if self._timer is None:
            self._timer = self._app.set_timer(HELD_AT_MOST, self.release, name="held redraws")
        return True

    def release(self) -> None:
        """Hand each held redraw back to its widget (a widget closed meanwhile drops it)."""
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        held, self._held = self._held, {}
        for redraw, widget in held.items():
            self._passes.add(redraw)
            widget.call_later(redraw)
