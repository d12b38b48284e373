"""What every kind's form shares: it builds its request from what is typed (the recipient given), and may say
what the profile's instance dialect needs in its labels."""

from __future__ import annotations

from textual.validation import Validator

from tui.api.dialects import InstanceDialect
from tui.api.models import Request
from tui.ui.widgets.forms import FieldProblems, FieldRow, Form, TextInput, lines_of, optional, value_of
from tui.ui.widgets.text_box import TextBox


def text_row(label: str, field: str | tuple[str, ...], widget_id: str, *, placeholder: str = "",
             hint: str | None = None, validators: list[Validator] | None = None) -> FieldRow:
    """A labelled one-line field of the send form."""
    return FieldRow(
        label,
        TextInput(id=widget_id, placeholder=placeholder, validators=validators or []),
        field=field,
        hint=hint,
    )


class KindForm(Form):
    """The form of one kind of message (`#form-<kind>` in the kinds' switcher)."""

    def build(self, recipient: str, dialect: InstanceDialect) -> Request:
        """The request of what is typed, to `recipient`. Raises ValidationError or FieldProblems, which the
        section shows under the fields."""
        raise NotImplementedError

    def show_dialect_rules(self, dialect: InstanceDialect) -> None:
        """Labels that depend on the instance dialect; most forms have none."""

    def text(self, widget_id: str) -> str:
        return value_of(self.query_one(f"#{widget_id}"))

    def lines(self, widget_id: str) -> list[str]:
        """The non-empty lines of a text box (buttons', options')."""
        return lines_of(self.query_one(f"#{widget_id}", TextBox).text)

    @staticmethod
    def numbered(labels: list[str], key: str) -> list[dict[str, str]]:
        """Labels as the gateway's numbered choices: [{"id": "1", key: label}, ...]."""
        return [{"id": str(index), key: label} for index, label in enumerate(labels, 1)]

    def row_of(self, widget_id: str) -> FieldRow:
        return self.query_one(f"#{widget_id}").query_ancestor(FieldRow)

    def delay_ms(self, widget_id: str, dialect: InstanceDialect) -> int | str | None:
        """The delay field as the spec's milliseconds; in the Z-API dialect the field holds whole seconds."""
        text = optional(self.text(widget_id))
        if text is None or dialect is not InstanceDialect.ZAPI:
            return text
        if not text.isdigit() or not 1 <= int(text) <= 15:
            raise FieldProblems({"delayMessage": "Z-API waits whole seconds: a number from 1 to 15"})
        return int(text) * 1000

    def show_delay_rule(self, widget_id: str, dialect: InstanceDialect) -> None:
        zapi = dialect is InstanceDialect.ZAPI
        self.row_of(widget_id).set_label("Delay s, 1-15 (optional, Z-API)" if zapi else "Delay ms (optional)")
