"""One sent message's timeline, over the thread: sent (the gateway's 2xx), handed to the network, delivered, read,
played or failed (with the gateway's error), each with its time, and whether it is stuck. ↑/↓ (or [ and ]) move
to the sent message before or after it in the thread; escape or q closes.

The steps are what the gateways' events said (`tui.webhooks.receipts`, one table for both): a step no event
named shows "—", never a time. The screen reads the store through the function it is given, once per message.
"""

from __future__ import annotations

from collections.abc import Callable

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Footer, Static

from tui.ui.keymap import bindings_for
from tui.core.runtime import Timeline

PREVIEW = 60  # characters of the message's text in the title


class TimelineScreen(ModalScreen[None]):
    BINDINGS = bindings_for("timeline")

    DEFAULT_CSS = """
    TimelineScreen { align: center middle; }
    TimelineScreen > #timeline {
        width: 72; height: auto; max-width: 100%; max-height: 100%;
        border: thick $primary; background: $surface; padding: 0 1;
    }
    TimelineScreen #timeline-title { text-style: bold; height: auto; }
    TimelineScreen #timeline-text { color: $text-muted; height: auto; }
    TimelineScreen #timeline-steps { height: auto; margin-top: 1; }
    """

    def __init__(self, message_ids: list[str], index: int, *, read: Callable[[str], Timeline | None],
                 time_text: Callable[[int], str], clock: Callable[[], int], stuck_after_minutes: float) -> None:
        super().__init__()
        self.message_ids = message_ids
        self.index = index
        self.read = read
        self.time_text = time_text
        self.clock = clock
        self.stuck_after_minutes = stuck_after_minutes

    def compose(self) -> ComposeResult:
        with Vertical(id="timeline"):
            yield Static("", id="timeline-title")
            yield Static("", id="timeline-text")
            yield Static("", id="timeline-steps")
        yield Footer()

    def on_mount(self) -> None:
        self._show()

    def _show(self) -> None:
        message_id = self.message_ids[self.index]
        timeline = self.read(message_id)
        where = f"{self.index + 1} of {len(self.message_ids)} sent"
        title = Text.assemble(("Timeline", "bold"), f" · {message_id} · {where}")
        self.query_one("#timeline-title", Static).update(title)
        text = ""
        if timeline is not None and timeline.message is not None:
            line = " ".join(timeline.message.body.split())
            text = line if len(line) <= PREVIEW else line[: PREVIEW - 1] + "…"
        self.query_one("#timeline-text", Static).update(Text(text))
        if timeline is None:
            steps = Text("Nothing here names this message any more.")
        else:
            lines = timeline.lines(self.time_text, self.clock(), self.stuck_after_minutes)
            steps = Text("\n".join(lines))
            steps.highlight_regex(r"^⚠.*$", "bold yellow")
            steps.highlight_regex(r"^failed.*$", "bold red")
        self.query_one("#timeline-steps", Static).update(steps)

    def action_move(self, step: int) -> None:
        index = self.index + step
        if not 0 <= index < len(self.message_ids):
            self.app.bell()
            return
        self.index = index
        self._show()
