"""Settings' profile description: the account's "about" text (instance family)."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import Button, Static

from tui.api.models import ProfileDescription
from tui.api.operations import PROFILE_DESCRIPTION
from tui.ui.widgets.feedback import ErrorLine
from tui.ui.widgets.forms import FieldRow, Form, TextInput, validated, value_of
from tui.ui.sections.settings.block import block_status, section_of


class DescriptionBlock(Form):
    """`#description-form`."""

    def compose(self) -> ComposeResult:
        yield Static("Profile description", classes="block-title")
        yield FieldRow("Description", TextInput(id="description", placeholder="Open 9–18h"), field="value")
        with Horizontal(classes="actions"):
            yield Button("Set description", id="description-apply", compact=True)
        yield ErrorLine(classes="block-status")

    @on(Button.Pressed, "#description-apply")
    def set_description(self) -> None:
        status = block_status(self)
        request = validated(self.rows(), lambda: ProfileDescription(value=value_of(self.query_one("#description"))),
                            status=status)
        if request is not None:
            section_of(self).run_operation(
                PROFILE_DESCRIPTION, request, group="description", busy=self, status=status,
                done=lambda _: status.show_ok(f"Profile description set to {request.value!r}."))
