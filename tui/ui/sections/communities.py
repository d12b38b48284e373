"""Communities: promote administrators, reset the invite link (spec ops 11, 12)."""

from __future__ import annotations


from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import Button, Input, Static

from tui.api.models import COMMUNITY_ID_RULE, AddAdmin, InviteLink, OperationResult, RedefineInvitationLink
from tui.api.operations import ADD_ADMIN, REDEFINE_INVITATION_LINK, OperationId, Section
from tui.ui.keymap import bindings_for, label
from tui.ui.widgets.feedback import ErrorLine
from tui.ui.widgets.forms import (
    FieldRow,
    Form,
    PatternValidator,
    PhoneListValidator,
    TextInput,
    as_group_id,
    split_list,
    validated,
    value_of,
)
from tui.ui.widgets.operation_form import DerivedForms
from tui.ui.widgets.section import ConfirmScreen, CopyableValue, OperationSection

# The gateway operations of this section with a hand-built form (op id -> the field it starts at). Any other
# operation of the section gets a form read off its row (tui.ui.widgets.operation_form), below these.
HAND_BUILT: dict[str, str] = {
    OperationId.ADD_ADMIN: "promote-phones", OperationId.REDEFINE_INVITATION_LINK: "reset-groups",
}


class CommunitiesSection(OperationSection):
    # Both are gateway operations: the palette takes them from tui.api.operations.
    HELP = """\
## Communities

The **community id** is digits only (e.g. `120363186053925765`).

**Promote administrators** (**ctrl+s** or the Promote button): phone numbers with country code, separated by commas or spaces.

**Reset the invite link** (**ctrl+n** or its button): a new link is created and **the old one stops working** at once;
you are asked to confirm. Optionally name the community groups affected (`…-group` or `…@g.us`).
The new link is shown; copy it with the Copy button or **ctrl+o**.

**Enter** moves to the next field; nothing is sent by Enter. **Escape** cancels a running call.
"""

    BINDINGS = bindings_for("communities")

    DEFAULT_CSS = """
    CommunitiesSection Form { margin-bottom: 1; }
    """

    def compose(self) -> ComposeResult:
        yield Static("Communities", classes="section-title")
        yield FieldRow(
            "Community id",
            TextInput(id="community-id", placeholder="120363186053925765", validators=[PatternValidator(r"\d+", COMMUNITY_ID_RULE)]),
            field="communityId",
            id="community-row",
        )
        yield Static("Promote administrators", classes="subtitle")
        with Form(id="promote-form"):
            yield FieldRow(
                "Phone numbers to promote (commas or spaces)",
                TextInput(id="promote-phones", validators=[PhoneListValidator()]),
                field="phones",
            )
            with Horizontal(classes="actions"):
                yield Button(label("Promote", "communities.promote"), id="promote", variant="primary")
            yield ErrorLine(id="promote-status")  # each form answers under its own button
        yield Static("Reset the invite link", classes="subtitle")
        with Form(id="reset-form"):
            yield FieldRow(
                "Community groups affected (optional; …-group or …@g.us, commas or spaces)",
                TextInput(id="reset-groups"),
                field="groupsPhones",
            )
            with Horizontal(classes="actions"):
                yield Button(label("Reset invite link", "communities.reset_link"), id="reset", variant="warning")
            yield CopyableValue("New invite link:", id="invite-link")
            yield ErrorLine(id="reset-status")
        yield DerivedForms(Section.COMMUNITIES, HAND_BUILT, run_binding="communities.promote")

    @property
    def promote_status(self) -> ErrorLine:
        return self.query_one("#promote-status", ErrorLine)

    @property
    def reset_status(self) -> ErrorLine:
        return self.query_one("#reset-status", ErrorLine)

    def text(self, widget_id: str) -> str:
        return value_of(self.query_one(f"#{widget_id}"))

    def open_operation(self, op_id: str) -> None:
        if self.open_derived(op_id):
            return
        if op_id not in HAND_BUILT:
            raise KeyError(op_id)
        target = HAND_BUILT[op_id]
        if not self.text("community-id"):
            target = "community-id"
        self.call_after_refresh(self.query_one(f"#{target}", Input).focus)

    def _rows(self, form_id: str) -> list[FieldRow]:
        return [self.query_one("#community-row", FieldRow), *self.query_one(f"#{form_id}", Form).rows()]

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        """Enter moves on to the next field; promoting and resetting need their key or button."""
        event.stop()
        self.screen.focus_next()

    # -- promote -----------------------------------------------------------------------------------

    @on(Button.Pressed, "#promote")
    def action_promote(self) -> None:
        if self.submit_derived():  # ctrl+s in a form read off the table sends that one
            return
        request = validated(
            self._rows("promote-form"),
            lambda: AddAdmin(communityId=self.text("community-id"), phones=split_list(self.text("promote-phones"))),
            status=self.promote_status,
        )
        if request is None:
            return
        self.run_operation(
            ADD_ADMIN,
            request,
            title="Promote administrators",
            busy=self.query_one("#promote-form"),
            status=self.promote_status,
            done=lambda result: self._promoted(request, result),
            confirm_repeat=f"Promote the same numbers in {request.communityId} again?",
        )

    def _promoted(self, request: AddAdmin, result: OperationResult) -> None:
        if result.ok:
            self.promote_status.show_ok(f"Promoted {', '.join(request.phones)} in community {request.communityId}.")
        else:
            self.promote_status.show_error(f"Promote in {request.communityId}: the gateway answered {result.refusal}; nobody was promoted.")

    # -- reset link --------------------------------------------------------------------------------

    @on(Button.Pressed, "#reset")
    def action_reset_link(self) -> None:
        def build() -> RedefineInvitationLink:
            groups = [as_group_id(item) for item in split_list(self.text("reset-groups"))]
            return RedefineInvitationLink(communityId=self.text("community-id"), groupsPhones=groups or None)

        request = validated(self._rows("reset-form"), build, status=self.reset_status)
        if request is None:
            return
        self.app.push_screen(
            ConfirmScreen(
                f"Reset the invite link of community {request.communityId}?",
                "The old link stops working at once: anyone who has not joined with it yet will need the new one.",
                confirm_label="Reset",
            ),
            lambda yes: self._reset(request) if yes else self.reset_status.show_ok("Reset cancelled; the old link still works."),
        )

    def _reset(self, request: RedefineInvitationLink) -> None:
        self.run_operation(
            REDEFINE_INVITATION_LINK,
            request,
            title="Reset invite link",
            busy=self.query_one("#reset-form"),
            status=self.reset_status,
            done=lambda link: self._link_reset(request, link),
        )

    def _link_reset(self, request: RedefineInvitationLink, link: InviteLink) -> None:
        self.query_one("#invite-link", CopyableValue).show(link.inviteLink)
        self.reset_status.show_ok(f"New invite link for community {request.communityId}; the old one no longer works.")

    def action_copy_link(self) -> None:
        value = self.query_one("#invite-link", CopyableValue).value
        if value:
            self.copy(value, "Invite link")


__all__ = ["CommunitiesSection"]
