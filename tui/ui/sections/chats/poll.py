"""The poll's form: a question, its options one per line, how many a voter may pick."""

from __future__ import annotations

from textual.app import ComposeResult

from tui.api.dialects import InstanceDialect
from tui.api.models import SendPoll
from tui.ui.sections.chats.kind_form import KindForm, text_row
from tui.ui.widgets.forms import FieldRow, optional
from tui.ui.widgets.text_box import TextBox


class PollForm(KindForm):
    """`#form-poll`."""

    def compose(self) -> ComposeResult:
        yield text_row("Question", "message", "poll-question")
        yield FieldRow("Options (one per line, at least 2)", TextBox(id="poll-options"), field="poll")
        yield text_row("Voters may select up to", "selectableCount", "poll-count", placeholder="1")

    def build(self, recipient: str, dialect: InstanceDialect) -> SendPoll:
        options = self.lines("poll-options")
        count = optional(self.text("poll-count"))
        return SendPoll.model_validate({
            "phone": recipient,
            "message": self.text("poll-question"),
            "poll": [{"name": option} for option in options],
            **({"selectableCount": count} if count is not None else {}),
        })
