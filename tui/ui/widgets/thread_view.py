"""One conversation's messages, drawn line by line (Textual's line API): only the visible lines are rendered,
and only a window of the thread is held (the newest page; older pages load when scrolled to the top), so a
thread of any length opens at the cost of one page.

The view is given rows (`tui.webhooks.conversations.MessageRow`) and a function that formats times; it knows
nothing of the store. Outgoing messages sit on the right with their delivery mark, incoming on the left with
the sender's name in groups. A sent message waiting at "sent" or "handed to the network" longer than the user's
threshold (`stuck_after_minutes`, `tui.local.preferences`) is marked "⚠ N min at sent", measured on `clock` (injectable).
Enter (keymap `thread.timeline`) asks for the timeline of the newest sent message in view (`ShowTimeline`).
"""

from __future__ import annotations

import dataclasses
import enum
import textwrap
from collections.abc import Callable, Sequence
from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from tui.ui.keymap import bindings_for, keys_of
from tui.core.runtime import STATUS_MARKS, MessageRow, Status, Step, stuck

_HEADER_IN = Style(bold=True, color="cyan")
_HEADER_OUT = Style(bold=True, color="green")
_BODY = Style()
_MARK_READ = Style(color="bright_blue", bold=True)
_MARK = Style(dim=True)
_FAILED = Style(color="red", bold=True)
_NOTE = Style(dim=True, italic=True)
_STUCK = Style(color="yellow", bold=True)
_MEDIA = Style(color="magenta")
_RECOVERED = Style(dim=True, italic=True)
RECOVERED_MARK = " · recovered"  # a message read back from the gateway's history after a gap (tui.core.catchup)
_FINAL = frozenset({Status.READ, Status.PLAYED, Status.FAILED})  # marks that no later event changes


class MediaAction(enum.StrEnum):
    """What the thread's media keys ask for."""

    OPEN = "open"
    SAVE = "save"
    PREVIEW = "preview"


_MEDIA_ACTIONS = frozenset(f"{action}_media" for action in MediaAction)


class ThreadView(ScrollView, can_focus=True):
    """A scrollable thread. `show(rows, has_older)` replaces it, `extend(rows)` appends new messages,
    `prepend(rows, has_older)` adds an older page, `set_statuses({id: status})` updates the marks."""

    BINDINGS = [
        Binding("up", "scroll_up", "Scroll", show=False),
        Binding("down", "scroll_down", "Scroll", show=False),
        Binding("pageup", "page_up", "Page", show=False),
        Binding("pagedown", "page_down", "Page", show=False),
        Binding("home", "scroll_home", "Oldest", show=False),
        Binding("end", "scroll_end", "Newest", show=False),
        *bindings_for("thread"),
    ]

    DEFAULT_CSS = """
    ThreadView { height: 1fr; background: $surface; scrollbar-size-vertical: 1; overflow-x: hidden; }
    ThreadView:focus { background-tint: $foreground 4%; }
    """

    class NeedOlder(Message):
        """Scrolled to the top of the window while older messages exist."""

    class ShowTimeline(Message):
        """Show the timeline of `message_ids[index]`, the account's sent messages in the window oldest first."""

        def __init__(self, message_ids: list[str], index: int) -> None:
            super().__init__()
            self.message_ids = message_ids
            self.index = index

    class MediaAsked(Message):
        """Open, save or preview the file of a media message (`row.media`); `row` None: the thread has none (the
        key still answers, in words)."""

        def __init__(self, row: MessageRow | None, action: MediaAction) -> None:
            super().__init__()
            self.row = row
            self.action = action

    class Typed(Message):
        """A character typed while the thread has the focus: meant for the reply, not lost on a scroll view."""

        def __init__(self, character: str) -> None:
            super().__init__()
            self.character = character

    def on_key(self, event: events.Key) -> None:
        unanswered = _media_key_action(event.key)
        if unanswered is not None and not any(row.is_media for row in self.rows):
            # The media keys are out of the footer on a thread without a file, but the help lists them: the key
            # says why it does nothing rather than passing silently to a binding further up.
            event.stop()
            event.prevent_default()
            self.post_message(self.MediaAsked(None, unanswered))
            return
        if event.character is not None and event.character.isprintable() and event.key not in _BOUND_KEYS:
            event.stop()
            event.prevent_default()
            self.post_message(self.Typed(event.character))

    def __init__(self, *, time_text: Callable[[int], str] = str, clock: Callable[[], int] | None = None,
                 stuck_after_minutes: float = 0.0, id: str | None = None) -> None:
        super().__init__(id=id)
        self.time_text = time_text
        self.clock = clock  # now, in microseconds since the epoch; None: no stuck marks
        self.stuck_after_minutes = stuck_after_minutes  # 0: no stuck marks
        self._stuck: dict[int, int] = {}  # row id -> whole minutes it has waited, as last drawn
        self.rows: list[MessageRow] = []
        self.has_older = False
        self.placeholder = "Choose a conversation."
        self._lines: list[Strip] = []
        self._width = 0
        self._line_width = 0  # the width the lines were wrapped to
        self._laid_from = 0  # rows[_laid_from:] are in _lines; the older ones are laid out after the next frame
        self._finishing = False
        self._asked_older = False
        self._follow = True  # at the newest message: kept there when the width, height or messages change
        self.recovered: frozenset[str] = frozenset()  # ids of messages recovered after a gap: marked as such

    # -- content ---------------------------------------------------------------------------------------------

    def show(self, rows: Sequence[MessageRow], has_older: bool, *, placeholder: str | None = None) -> None:
        self.rows = list(rows)
        self.has_older = has_older
        if placeholder is not None:
            self.placeholder = placeholder
        self._asked_older = False
        self._follow = True
        self.refresh_bindings()  # the media keys are in force while the thread holds media
        self._layout_lines()
        if self.container_size.height:  # at the newest message in the frame that first shows it
            self.scroll_end(animate=False, immediate=True, force=True)
        self._to_newest()  # and again once laid out (the size may not be known yet)

    @property
    def following(self) -> bool:
        """Kept at the newest message (not scrolled back by the reader)."""
        return self._follow

    @property
    def at_newest(self) -> bool:
        """Scrolled to the newest message (the bottom), once laid out."""
        return self.scroll_y >= self.max_scroll_y

    def _to_newest(self) -> None:
        """To the newest message without animation, after the layout (the size may not be known yet)."""
        # force: right after a new layout the scrollbars (which allow scrolling) may not be updated yet
        self.call_after_refresh(self.scroll_end, animate=False, immediate=True, force=True)

    def extend(self, rows: Sequence[MessageRow]) -> None:
        known = {row.id for row in self.rows}
        new = [row for row in rows if row.id not in known]
        if not new:
            return
        at_bottom = self._follow or self.scroll_y >= self.max_scroll_y - 1
        had_rows = bool(self.rows)
        self.rows.extend(new)
        if any(row.media is not None for row in new):
            self.refresh_bindings()
        self._stuck = self._stuck_now()
        if had_rows and self._line_width == self._wrap_width():  # only the new messages are laid out
            width, bubble = self._line_width, _bubble(self._line_width)
            self._lines.extend(strip for row in new for strip in self._block(row, width, bubble))
            self._set_lines(self._lines)
        else:
            self._layout_lines()
        if at_bottom:
            self._follow = True
            self._to_newest()

    def prepend(self, rows: Sequence[MessageRow], has_older: bool) -> None:
        """An older page above the window: only its messages are laid out, the view stays where it was."""
        self._finish_layout()
        before = len(self._lines)
        kept = self._lines[len(self._head()):] if self.rows else []
        self.rows[:0] = list(rows)
        self.has_older = has_older
        self._asked_older = False
        width = self._line_width or self._wrap_width()
        bubble = _bubble(width)
        older = [strip for row in rows for strip in self._block(row, width, bubble)]
        self._set_lines([*self._head_lines(width), *older, *kept])
        self.scroll_to(y=self.scroll_y + len(self._lines) - before, animate=False, immediate=True, force=True)

    def set_statuses(self, statuses: dict[str, Step]) -> None:
        """New best steps of sent messages (and when they were reached); redraws when a mark or a stuck note
        changes (call it on a timer too: a message becomes stuck with no event)."""
        changed = False
        for index, row in enumerate(self.rows):
            step = statuses.get(row.message_id or "")
            if row.outgoing and step is not None and (step.status, step.at_us) != (row.status, row.status_us):
                self.rows[index] = dataclasses.replace(row, status=step.status, status_us=step.at_us)
                changed = True
        if self._stuck_now() != self._stuck:
            changed = True
        if changed:
            self._layout_lines()
            if self._follow:
                self._to_newest()

    def pending_ids(self) -> list[str]:
        """Outgoing messages in the window whose mark may still change by an event this app is told of."""
        return [row.message_id for row in self.rows
                if row.outgoing and row.message_id and row.status not in _FINAL]

    def sent_ids(self) -> list[str]:
        """Every outgoing message in the window (a full re-read of their marks)."""
        return [row.message_id for row in self.rows if row.outgoing and row.message_id]

    def _stuck_minutes(self, row: MessageRow) -> int | None:
        """Whole minutes a sent message has waited at its step, when that is too long; else None."""
        if self.clock is None or not row.outgoing or row.status_us is None:
            return None
        now = self.clock()
        if not stuck(row.status, row.status_us, now, self.stuck_after_minutes):
            return None
        return (now - row.status_us) // 60_000_000

    def _stuck_now(self) -> dict[int, int]:
        found = {}
        for row in self.rows:
            minutes = self._stuck_minutes(row)
            if minutes is not None:
                found[row.id] = minutes
        return found

    def action_timeline(self) -> None:
        """Ask for the timeline of the newest sent message that starts above the view's bottom (in view, else the
        nearest above it; the oldest sent one when all are below)."""
        sent = [row for row in self.rows if row.outgoing and row.message_id]
        chosen = self._newest_in_view(lambda row: row.outgoing and bool(row.message_id))
        if chosen is None:
            self.app.bell()
            return
        self.post_message(self.ShowTimeline([row.message_id or "" for row in sent], sent.index(chosen)))

    def _newest_in_view(self, wanted: Callable[[MessageRow], bool]) -> MessageRow | None:
        """The newest `wanted` row that starts above the view's bottom (in view, else the nearest above it; the
        oldest wanted one when all are below); None when the window has none."""
        candidates = [row for row in self.rows if wanted(row)]
        if not candidates:
            return None
        self._finish_layout()
        bottom = self.scroll_y + max(1, self.scrollable_content_region.height)
        width = self._line_width or self._wrap_width()
        bubble = _bubble(width)
        line = len(self._head_lines(width))
        chosen = candidates[0]
        for row in self.rows:
            if line >= bottom:
                break
            if wanted(row):
                chosen = row
            line += len(self._block(row, width, bubble))
        return chosen

    # -- media (issue 25): the newest media message in view is the one the keys act on ----------------------------

    def media_row(self) -> MessageRow | None:
        """The media message the keys act on: the newest one that starts above the view's bottom (one of the
        seeded history's too, whose file never came: the key then says so)."""
        return self._newest_in_view(lambda row: row.is_media)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in _MEDIA_ACTIONS:
            return any(row.is_media for row in self.rows)  # shown in the footer only then
        return True

    def _ask_media(self, action: MediaAction) -> None:
        self.post_message(self.MediaAsked(self.media_row(), action))

    def action_open_media(self) -> None:
        self._ask_media(MediaAction.OPEN)

    def action_save_media(self) -> None:
        self._ask_media(MediaAction.SAVE)

    def action_preview_media(self) -> None:
        self._ask_media(MediaAction.PREVIEW)

    @property
    def oldest_key(self) -> tuple[int, int] | None:
        return (self.rows[0].at_us, self.rows[0].id) if self.rows else None

    @property
    def newest_id(self) -> int:
        return max((row.id for row in self.rows), default=0)

    def text(self) -> str:
        """The window as plain text (tests and copy)."""
        self._finish_layout()
        return "\n".join(strip.text.rstrip() for strip in self._lines)

    # -- layout and drawing ----------------------------------------------------------------------------------

    def on_resize(self) -> None:
        if self.size.width != self._width:
            self._layout_lines()  # rewrapped: a different number of lines
        if self._follow:
            self._to_newest()

    def _wrap_width(self) -> int:
        return max(20, self.scrollable_content_region.width or self.size.width or 60)

    def _layout_lines(self) -> None:
        """Lay the window out as lines. At the newest message only the newest messages filling the view twice
        are laid out now (what the next frame shows of a 200-message window); the older ones right after that
        frame (`_finish_layout`), so a long window opens at the cost of a screenful."""
        width = self._wrap_width()
        self._width = self.size.width
        self._line_width = width
        self._stuck = self._stuck_now()
        bubble = _bubble(width)
        enough = max(self.size.height, 20) * 2 if self._follow else None
        blocks: list[list[Strip]] = []
        count, index = 0, len(self.rows)
        while index > 0 and (enough is None or count < enough):
            index -= 1
            blocks.append(self._block(self.rows[index], width, bubble))
            count += len(blocks[-1])
        lines = [strip for block in reversed(blocks) for strip in block]
        self._laid_from = index
        self._set_lines([*self._head_lines(width), *lines] if index == 0 else lines)
        if index and not self._finishing:
            self._finishing = True
            self.call_after_refresh(self._finish_layout)

    def _finish_layout(self) -> None:
        """Lay out the older messages of the window above the newest ones; the view stays where it is."""
        self._finishing = False
        if not self._laid_from:
            return
        width = self._line_width
        bubble = _bubble(width)
        older = [strip for row in self.rows[: self._laid_from] for strip in self._block(row, width, bubble)]
        self._laid_from = 0
        before = len(self._lines)
        self._set_lines([*self._head_lines(width), *older, *self._lines])
        if self._follow:
            self.scroll_end(animate=False, immediate=True, force=True)
        else:
            self.scroll_to(y=self.scroll_y + len(self._lines) - before, animate=False, immediate=True, force=True)

    def _head(self) -> list[Strip]:
        """The notes above the messages: older ones to load, or the placeholder of an empty thread."""
        return self._head_lines(self._line_width)

    def _head_lines(self, width: int) -> list[Strip]:
        lines: list[Strip] = []
        if self.has_older:
            lines.append(Strip([Segment("↑ older messages: scroll up".center(width), _NOTE)]))
        if not self.rows:
            lines.append(Strip([Segment(self.placeholder, _NOTE)]))
        return lines

    def _block(self, row: MessageRow, width: int, bubble: int) -> list[Strip]:
        return [*self._message_lines(row, width, bubble), Strip.blank(width)]

    def _set_lines(self, lines: list[Strip]) -> None:
        self._lines = lines
        self.virtual_size = Size(self._line_width, len(lines))
        self.refresh()

    def _message_lines(self, row: MessageRow, width: int, bubble: int) -> list[Strip]:
        time = self.time_text(row.at_us)
        body: list[str] = []
        for paragraph in row.body.splitlines() or [""]:
            body.extend(textwrap.wrap(paragraph, bubble, replace_whitespace=False, drop_whitespace=True) or [""])
        media = [Strip([Segment(line, _MEDIA)]) for line in _media_lines(row, bubble)]
        if row.outgoing:
            mark = STATUS_MARKS.get(row.status, "")
            style = (_MARK_READ if row.status in (Status.READ, Status.PLAYED)
                     else _FAILED if row.status is Status.FAILED else _MARK)
            header = [Segment(f"You · {time}", _HEADER_OUT)] + ([Segment(" " + mark, style)] if mark else [])
            if row.message_id in self.recovered:
                header.append(Segment(RECOVERED_MARK, _RECOVERED))
            minutes = self._stuck_minutes(row)
            if minutes is not None and row.status is not None:
                header.append(Segment(f" ⚠ {minutes} min at {row.status.word}", _STUCK))
            block = [Strip(header), *(Strip([Segment(line, _BODY)]) for line in body), *media]
            pad = max(0, width - 1 - max(strip.cell_length for strip in block))
            return [Strip([Segment(" " * pad), *strip]) for strip in block]
        who = f"{row.sender} · {time}" if row.sender else time
        strips = [Strip([Segment(who, _HEADER_IN)] + ([Segment(RECOVERED_MARK, _RECOVERED)]
                                                      if row.message_id in self.recovered else []))]
        strips.extend(Strip([Segment(line, _BODY)]) for line in body)
        strips.extend(media)
        return strips

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        index = scroll_y + y
        width = self.scrollable_content_region.width
        if index >= len(self._lines):
            return Strip.blank(width, self.rich_style)
        strip = self._lines[index].crop(scroll_x, scroll_x + width)
        return strip.extend_cell_length(width).apply_style(self.rich_style)

    def watch_show_vertical_scrollbar(self, shown: bool) -> None:
        """Textual moves the scrollbar's thumb only on a scroll while the scrollbar is shown: after a scroll to
        the newest message made before the layout that shows the scrollbar, the thumb stayed at the top."""
        if shown:
            self.vertical_scrollbar.position = self.scroll_y

    @property
    def settled(self) -> bool:
        """The whole window laid out, the scrollbar shown exactly when the lines overflow the view and its thumb
        where the view is (a capture waits for this after a change)."""
        if self._laid_from or self._finishing:
            return False
        overflows = self.virtual_size.height > self.container_size.height
        if self.show_vertical_scrollbar != overflows:
            return False
        return not overflows or self.vertical_scrollbar.position == self.scroll_y

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        if self.size.height:  # a scroll by the reader (or to an older page) stops following the newest message
            self._follow = new_value >= self.max_scroll_y - 1
        if new_value <= 0 and self.has_older and not self._asked_older and self.rows and not self._laid_from:
            self._asked_older = True
            self.post_message(self.NeedOlder())


# The thread's own keys (scrolling); any other printable key typed on it is meant for the reply.
def _media_key_action(key: str) -> MediaAction | None:
    """The media action `key` is bound to on the thread now (the user's keymap applied), or None."""
    for action in MediaAction:
        if key in keys_of(f"thread.{action}_media").split(","):
            return action
    return None


_BOUND_KEYS = frozenset(binding.key for binding in ThreadView.BINDINGS if isinstance(binding, Binding))


def _bubble(width: int) -> int:
    return max(16, width * 3 // 4)


def _media_lines(row: MessageRow, bubble: int) -> list[str]:
    """A media message's file under its text: `▤ document · report.pdf · 3.1 KB · application/pdf`, and its
    caption when the text above shows the file name instead."""
    media = row.media
    if media is None:
        return []
    lines = textwrap.wrap("▤ " + media.describe(), bubble) or []
    if media.caption and media.caption not in row.body:
        lines.extend(textwrap.wrap(f"“{media.caption}”", bubble))
    return lines
