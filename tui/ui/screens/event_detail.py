"""One webhook event in full: verdict and reason, headers, message ids, and the body as pretty JSON.

Everything shown comes from the sender and is displayed literally (rich Text / Syntax), never as markup.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Footer, Static

from tui.ui.widgets.clipboard import copy_text
from tui.ui.widgets.timefmt import attempt_text, moment_text
from tui.ui.keymap import bindings_for

from tui.ui.widgets.event_marks import DUPLICATE_STYLE, event_time, sent_marker, verdict_badge, verdict_words

if TYPE_CHECKING:
    from tui.core.services import Services
    from tui.ui.widgets.gateway_app import AppState

MAX_SHOWN_BODY = 200_000


def body_text(event: Any) -> tuple[str, str]:
    """(text, lexer): the payload pretty-printed as JSON, else the raw body decoded, else a note."""
    if event.payload is not None:
        return json.dumps(event.payload, indent=2, ensure_ascii=False), "json"
    if not event.body:
        return "(no body kept)", "text"
    text = event.body_text()
    if text is None:
        return f"({len(event.body)} bytes of binary data)", "text"
    return text, "text"


class EventDetailScreen(ModalScreen[None]):
    """Modal: Escape or q closes it."""

    BINDINGS = bindings_for("detail")

    DEFAULT_CSS = """
    EventDetailScreen { align: center middle; }
    EventDetailScreen > #detail {
        width: 100; height: 34; max-width: 100%; max-height: 100%;
        border: thick $primary; background: $surface; padding: 0 1;
    }
    EventDetailScreen #detail-title { text-style: bold; height: auto; }
    EventDetailScreen #detail-body { height: 1fr; }
    EventDetailScreen .detail-heading { color: $text-accent; text-style: bold; margin-top: 1; }
    """

    def __init__(self, event: Any, services: Services, state: AppState) -> None:
        super().__init__()
        self.event = event
        self.feed = services.feed
        self.run_display = services.display
        self.state = state

    def compose(self) -> ComposeResult:
        event = self.event
        scrub = self.run_display.scrub
        title = Text.assemble(
            (f"Event #{event.id}", "bold"),
            f" · {event.kind} · {event_time(event, deterministic=self.run_display.deterministic)} · {event.path} · ",
            verdict_badge(event),
        )
        with Vertical(id="detail"):
            yield Static(title, id="detail-title")
            with VerticalScroll(id="detail-body"):
                yield Static("Verdict", classes="detail-heading")
                lines = Text(verdict_words(event))
                if event.reason:
                    lines.append(f"\nreason: {event.reason}")
                if (cut := event.cut_note()) is not None:
                    lines.append(f"\n{cut}", style="bold")
                if event.duplicate_of is not None:
                    lines.append(
                        f"\nduplicate of #{event.duplicate_of}: the same delivery received again (a gateway retry or "
                        "a replay); stored and shown, counted once",
                        style=DUPLICATE_STYLE,
                    )
                marker = sent_marker(self.state.sent, event)
                if marker:
                    lines.append("\n" + marker.rstrip(" ·"), style="bold cyan")
                if event.message_ids:
                    lines.append("\nmessage ids: " + ", ".join(event.message_ids))
                lines.append(f"\nsummary: {scrub(event.summary)}")
                yield Static(lines, id="detail-verdict")
                # Filled by a thread worker (the attempts are on disk); hidden while there is nothing to say.
                yield Static("Forwarding", classes="detail-heading", id="detail-forward-heading")
                yield Static("", id="detail-forward")
                yield Static("Headers", classes="detail-heading")
                headers = Table.grid(padding=(0, 2))
                headers.add_column(style="bold")
                headers.add_column(overflow="fold")  # long values (signatures) wrap, never cut
                for name, value in sorted(event.headers.items()):
                    headers.add_row(Text(name), Text(scrub(value)))
                if not event.headers:
                    headers.add_row(Text("(none kept)"), Text(""))
                yield Static(headers, id="detail-headers")
                text, lexer = body_text(event)
                cut = f" (cut: the first {len(event.body)} of {event.cut_from} bytes)" if event.body_cut else ""
                yield Static("Body" + (" (JSON)" if lexer == "json" else "") + cut, classes="detail-heading")
                text = scrub(text[:MAX_SHOWN_BODY])
                yield Static(
                    Syntax(text, lexer, theme="ansi_dark", word_wrap=True, background_color="default"),
                    id="detail-json",
                )
        yield Footer()

    def on_mount(self) -> None:
        self._show_forwarding([])
        self._load_attempts()
        self.state.forward_attempted.subscribe(self, self._on_attempt)

    def _on_attempt(self, attempt: Any) -> None:
        if attempt.event_id == self.event.id:
            self._load_attempts()

    @work(thread=True, group="detail-attempts", exclusive=True, exit_on_error=False)
    def _load_attempts(self) -> None:
        attempts = self.feed.forward_attempts(self.event.id)
        self.app.call_from_thread(self._show_forwarding, attempts)

    def _show_forwarding(self, attempts: list[Any]) -> None:
        display = self.run_display
        target = self.feed.forward_target
        lines = Text()
        for attempt in attempts:
            when = moment_text(attempt.at, deterministic=display.deterministic)
            style = {"delivered": "green", "retrying": "yellow", "failed": "red"}.get(str(attempt.outcome), "")
            lines.append(("\n" if lines else "") + f"{when} ", style="dim")
            lines.append(attempt_text(display, attempt), style=style)
        if not attempts and target:
            lines.append("not forwarded (rejected events are kept back; events stored before forwarding began too)")
        if target:
            lines.append(f"\nforwarding to {display.scrub(target)} · r replays this event there", style="dim")
        self.query_one("#detail-forward", Static).update(lines)
        shown = bool(attempts or target)
        self.query_one("#detail-forward", Static).display = shown
        self.query_one("#detail-forward-heading", Static).display = shown

    @work(group="detail-replay", exclusive=True, exit_on_error=False)
    async def action_replay(self) -> None:
        if self.feed.forward_target is None:
            self.notify("No forward URL: set one in Settings (Forward events to your app), then press r again.",
                        severity="warning", markup=False)
            return
        if (refusal := self.event.replay_refusal()) is not None:  # a cut or unkept body is not the original
            self.notify(f"Not replayed: {refusal}", severity="warning", markup=False)
            return
        attempt = await self.feed.replay(self.event)
        self.notify(attempt_text(self.run_display, attempt), severity="information" if attempt.delivered else "error", markup=False)

    def action_copy(self) -> None:
        text, _lexer = body_text(self.event)
        copy_text(self.app, text, f"The body of event #{self.event.id}")
