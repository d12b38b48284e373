"""The inbox's list of conversations, drawn line by line (Textual's line API): two lines per chat (name and time,
then the last message or "typing…" and the unread count), and only the lines on screen are ever rendered, so
listing 200 or 2,000 chats costs the same (a DataTable built a row of Rich text per chat up front).

It is given rows (`tui.webhooks.conversations.ConversationRow`), the time "now" (for "typing…") and a function
that formats times; it knows nothing of the store. Moving the cursor posts `Highlighted`; enter or a click on
the chosen row posts `Selected`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import ClassVar

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding, BindingType
from textual.geometry import Region, Size
from textual.message import Message
from textual.scroll_view import ScrollView
from tui.ui.textual_compat import follow_virtual_size, virtual_size_without_layout
from textual.strip import Strip

from tui.api.wording import clip_words
from tui.core.runtime import ConversationRow

ROW_HEIGHT = 2
TIME_WIDTH = 6
_TYPING = Style(italic=True, color="green")
_DIM = Style(dim=True)
_BOLD = Style(bold=True)
_BADGE = Style(bold=True, reverse=True)


class ConversationList(ScrollView, can_focus=True):
    """Chats, two lines each; `rows` newest first, `cursor_row` the chosen one."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up", "cursor_up", "Up", show=False),
        Binding("down", "cursor_down", "Down", show=False),
        Binding("pageup", "page_up", "Page up", show=False),
        Binding("pagedown", "page_down", "Page down", show=False),
        Binding("home", "first", "First", show=False),
        Binding("end", "last", "Last", show=False),
    ]

    COMPONENT_CLASSES: ClassVar[set[str]] = {"conversation-list--cursor"}

    virtual_size = virtual_size_without_layout()  # a row more or less: no layout of the screen (its height is fixed)

    def watch_virtual_size(self, size: Size) -> None:
        follow_virtual_size(self, size)

    DEFAULT_CSS = """
    ConversationList { height: 1fr; scrollbar-size-vertical: 1; }
    ConversationList > .conversation-list--cursor { background: $surface-lighten-1; }
    ConversationList:focus > .conversation-list--cursor { background: $block-cursor-background;
                                                           color: $block-cursor-foreground; }
    """

    class _ChatMessage(Message):
        def __init__(self, chat_list: ConversationList, index: int, chat_id: str) -> None:
            super().__init__()
            self.chat_list = chat_list
            self.index = index
            self.chat_id = chat_id

        @property
        def control(self) -> ConversationList:
            return self.chat_list

    class Highlighted(_ChatMessage):
        """The cursor moved to a chat."""

    class Selected(_ChatMessage):
        """Enter (or a click) on a chat."""

    def __init__(self, *, time_text: Callable[[int], str] = str, id: str | None = None) -> None:
        super().__init__(id=id)
        self.time_text = time_text
        self.rows: list[ConversationRow] = []
        self.typing: list[bool] = []
        self.cursor_row = 0
        self._cache: dict[tuple[int, int], Strip] = {}  # (line, width) -> strip, for the rows as they are now

    # -- content ---------------------------------------------------------------------------------------------

    def set_rows(self, rows: Sequence[ConversationRow], typing: Sequence[bool]) -> None:
        """Replace the rows (the cursor stays on its index, clamped); nothing is rendered until drawn."""
        self.rows = list(rows)
        self.typing = list(typing)
        self._cache.clear()
        self.virtual_size = Size(self.scrollable_content_region.width or 1, len(self.rows) * ROW_HEIGHT)
        if self.rows and self.cursor_row >= len(self.rows):
            self.cursor_row = len(self.rows) - 1
        self.refresh()

    @property
    def row_count(self) -> int:
        return len(self.rows)

    @property
    def chosen(self) -> ConversationRow | None:
        return self.rows[self.cursor_row] if 0 <= self.cursor_row < len(self.rows) else None

    def move_cursor(self, *, row: int, animate: bool = False, notify: bool = True) -> None:
        """Put the cursor on `row` (clamped), scroll it into view, and say so (`Highlighted`) if it moved."""
        if not self.rows:
            return
        row = max(0, min(row, len(self.rows) - 1))
        moved = row != self.cursor_row
        self.cursor_row = row
        self._cache.clear()
        self.scroll_to_region(Region(0, row * ROW_HEIGHT, 1, ROW_HEIGHT), animate=animate, immediate=True)
        self.refresh()
        if moved and notify:
            self.post_message(self.Highlighted(self, row, self.rows[row].chat_id))

    # -- keys and mouse --------------------------------------------------------------------------------------

    def action_cursor_up(self) -> None:
        self.move_cursor(row=self.cursor_row - 1)

    def action_cursor_down(self) -> None:
        self.move_cursor(row=self.cursor_row + 1)

    def action_page_up(self) -> None:
        self.move_cursor(row=self.cursor_row - max(1, self.scrollable_content_region.height // ROW_HEIGHT))

    def action_page_down(self) -> None:
        self.move_cursor(row=self.cursor_row + max(1, self.scrollable_content_region.height // ROW_HEIGHT))

    def action_first(self) -> None:
        self.move_cursor(row=0)

    def action_last(self) -> None:
        self.move_cursor(row=len(self.rows) - 1)

    def action_select(self) -> None:
        chosen = self.chosen
        if chosen is not None:
            self.post_message(self.Selected(self, self.cursor_row, chosen.chat_id))

    def on_click(self, event: events.Click) -> None:
        index = (int(self.scroll_y) + event.y) // ROW_HEIGHT
        if 0 <= index < len(self.rows):
            was = self.cursor_row
            self.move_cursor(row=index)
            if index == was or event.chain > 1:
                self.action_select()

    # -- drawing ---------------------------------------------------------------------------------------------

    def on_resize(self) -> None:
        self._cache.clear()
        self.virtual_size = Size(self.scrollable_content_region.width or 1, len(self.rows) * ROW_HEIGHT)

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        line = int(self.scroll_y) + y
        index, half = divmod(line, ROW_HEIGHT)
        if index >= len(self.rows) or width <= 0:
            return Strip.blank(width, self.rich_style)
        key = (line, width)
        strip = self._cache.get(key)
        if strip is None:
            strip = self._draw(self.rows[index], self.typing[index] if index < len(self.typing) else False,
                               half, width)
            if index == self.cursor_row:
                strip = strip.apply_style(self.get_component_rich_style("conversation-list--cursor"))
            strip = strip.apply_style(self.rich_style)
            self._cache[key] = strip
        return strip

    def _draw(self, row: ConversationRow, typing: bool, half: int, width: int) -> Strip:
        text_width = max(4, width - TIME_WIDTH - 3)
        if half == 0:
            left = Segment(_fit(row.title, text_width), _BOLD if row.unread else Style())
            # No message stored: no date either (a gateway's chat list may claim one that nothing here shows).
            when = self.time_text(row.last_us) if row.messages else ""
            right = Segment(when[:TIME_WIDTH].rjust(TIME_WIDTH), _DIM)
        else:
            if typing:
                left = Segment(_fit("typing…", text_width), _TYPING)
            elif not row.messages:  # listed by the gateway, nothing stored here yet
                left = Segment(_fit("no messages here yet", text_width), _DIM)
            else:
                left = Segment(_fit(("You: " if row.last_outgoing else "") + row.last_body, text_width), _DIM)
            badge = f"({row.unread})"[:TIME_WIDTH] if row.unread else ""
            return _line(left, [Segment(" " * (TIME_WIDTH - len(badge))), Segment(badge, _BADGE)], width)
        return _line(left, [right], width)


def _line(left: Segment, right: list[Segment], width: int) -> Strip:
    gap = max(1, width - 2 - left.cell_length - TIME_WIDTH)
    return Strip([Segment(" "), left, Segment(" " * gap), *right, Segment(" ")]).adjust_cell_length(width)


def _fit(text: str, width: int) -> str:
    return clip_words(text, max(1, width))
