"""The form of a kind no form was written for: one line per field of its request model (`forms.model_rows`)."""

from __future__ import annotations

from textual.app import ComposeResult

from tui.api.dialects import InstanceDialect
from tui.api.models import Request
from tui.ui.sections.chats.kind_form import KindForm
from tui.ui.widgets.forms import FieldRow, model_from_rows

RECIPIENT_FIELDS = ("phone", "Phone")  # the request field the form's recipient fills (instance, session family)


class ModelForm(KindForm):
    """`#form-<kind>`, its rows read off `model`."""

    def __init__(self, model: type[Request], rows: list[FieldRow], *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.model = model
        self._model_rows = rows

    def compose(self) -> ComposeResult:
        yield from self._model_rows

    def build(self, recipient: str, dialect: InstanceDialect) -> Request:
        to = next(name for name in RECIPIENT_FIELDS if name in self.model.model_fields)
        return model_from_rows(self.model, self.rows(), {to: recipient})
