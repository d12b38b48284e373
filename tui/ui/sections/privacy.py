"""Privacy: who may add me to groups, who sees my last seen, each with a blacklist editor (spec ops 6, 7)."""

from __future__ import annotations


from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.widgets import Button, Input, Select, Static

from tui.api.models import PHONE_RULE, BlacklistAction, OperationResult, PrivacyScope, Request, is_phone
from tui.api.operations import PRIVACY_GROUP_ADD, PRIVACY_LAST_SEEN, Operation, Section, erased
from tui.ui.keymap import bindings_for, label
from tui.ui.widgets.feedback import ErrorLine
from tui.ui.widgets.forms import FieldRow, Form, PhoneValidator, TextInput, validated
from tui.ui.widgets.operation_form import DerivedForms
from tui.ui.widgets.section import OperationSection

SCOPE_TITLES: dict[PrivacyScope, str] = {
    PrivacyScope.ALL: "Everyone",
    PrivacyScope.CONTACT: "My contacts",
    PrivacyScope.NONE: "Nobody",
    PrivacyScope.CONTACT_BLACKLIST: "My contacts except…",
}


class BlacklistEditor(Vertical):
    """Pending `contactsBlacklist` changes of one setting: add or remove numbers; shown only for CONTACT_BLACKLIST."""

    DEFAULT_CSS = """
    BlacklistEditor { height: auto; display: none; }
    BlacklistEditor.-shown { display: block; }
    BlacklistEditor > Horizontal { height: auto; }
    BlacklistEditor > Horizontal > Button { margin-right: 1; }
    BlacklistEditor > .entries { padding: 0 1; height: auto; color: $text; }
    """

    def __init__(self, prefix: str) -> None:
        super().__init__(id=f"{prefix}-blacklist")
        self.prefix = prefix
        self.entries: dict[str, BlacklistAction] = {}  # phone → action, in the order given

    def compose(self) -> ComposeResult:
        yield FieldRow(
            "Blacklist: phone number",
            TextInput(id=f"{self.prefix}-phone", placeholder="5511999999999", validators=[PhoneValidator()]),
            field="contactsBlacklist",
        )
        with Horizontal():
            yield Button("Add to blacklist", id=f"{self.prefix}-bl-add", classes="bl-add", compact=True)
            yield Button("Remove from blacklist", id=f"{self.prefix}-bl-remove", classes="bl-remove", compact=True)
        yield Static("No blacklist changes.", classes="entries")

    @property
    def row(self) -> FieldRow:
        return self.query_one(FieldRow)

    def stage(self, action: BlacklistAction) -> bool:
        """Stage the typed number for `action`; False (error shown under the field) when it is invalid."""
        field = self.query_one(Input)
        phone = field.value.strip()
        if not is_phone(phone):
            self.row.set_error(f"must be {PHONE_RULE}")
            return False
        self.row.set_error(None)
        self.entries.pop(phone, None)
        self.entries[phone] = action
        field.value = ""
        self._render_entries()
        return True

    def clear_entries(self) -> None:
        self.entries.clear()
        self._render_entries()

    def wire(self) -> list[dict[str, str]]:
        return [{"action": action.value, "phone": phone} for phone, action in self.entries.items()]

    def _render_entries(self) -> None:
        if not self.entries:
            text = "No blacklist changes."
        else:
            text = "\n".join(
                f"{'+ add   ' if action is BlacklistAction.ADD else '− remove'} {phone}" for phone, action in self.entries.items()
            )
        self.query_one(".entries", Static).update(Content(text))

    @on(Button.Pressed, ".bl-add")
    def _add(self, event: Button.Pressed) -> None:
        event.stop()
        self.stage(BlacklistAction.ADD)

    @on(Button.Pressed, ".bl-remove")
    def _remove(self, event: Button.Pressed) -> None:
        event.stop()
        self.stage(BlacklistAction.REMOVE)

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.stage(BlacklistAction.ADD)


SETTINGS: dict[str, tuple[str, str, Operation[Request, OperationResult]]] = {
    # prefix: (title, scope field, operation); the request model and the wire come from the operation's row
    "group-add": ("Who may add me to groups", "type", erased(PRIVACY_GROUP_ADD)),
    "last-seen": ("Who sees my last seen", "visualizationType", erased(PRIVACY_LAST_SEEN)),
}

# The gateway operations of this section with a hand-built panel (op id -> its prefix in SETTINGS). Any other
# operation of the section gets a form read off its row (tui.ui.widgets.operation_form), below the panels.
HAND_BUILT: dict[str, str] = {op.id: prefix for prefix, (_, _, op) in SETTINGS.items()}


class PrivacySection(OperationSection):
    # Both settings are gateway operations: the palette takes them from tui.api.operations.
    HELP = """\
## Privacy

Two settings, side by side: **who may add me to groups** and **who sees my last seen**. Each is one of
*Everyone* (`ALL`), *My contacts* (`CONTACT`), *Nobody* (`NONE`) or *My contacts except…*
(`CONTACT_BLACKLIST`).

With *My contacts except…* a **blacklist editor** appears: type a number and choose *Add to blacklist*
(Enter) or *Remove from blacklist*; the staged changes are sent with the setting. A number still in the
field when you apply is added too; one that is not a valid number stops the apply, with the reason under it.

**Apply** the setting of the panel you are in with **ctrl+s** (or its Apply button).
The gateway cannot report the current setting, so the panel shows what you last applied.
**Escape** cancels a running call.
"""

    BINDINGS = bindings_for("privacy")

    DEFAULT_CSS = """
    PrivacySection .panel Select { margin: 0 0 1 0; }
    PrivacySection .applied { padding: 0 1; color: $text-muted; }
    """

    def compose(self) -> ComposeResult:
        yield Static("Privacy", classes="section-title")
        with Horizontal(classes="side-by-side"):
            for prefix, (title, scope_field, _) in SETTINGS.items():
                with Form(id=f"{prefix}-form", classes="panel"):
                    yield Static(title, classes="subtitle")
                    yield FieldRow(
                        "Applies to",
                        Select(
                            [(SCOPE_TITLES[scope], scope.value) for scope in PrivacyScope],
                            value=PrivacyScope.ALL.value,
                            allow_blank=False,
                            id=f"{prefix}-scope",
                        ),
                        field=scope_field,
                    )
                    yield BlacklistEditor(prefix)
                    with Horizontal(classes="actions"):
                        yield Button(label("Apply", "privacy.apply"), id=f"{prefix}-apply", classes="apply", variant="primary")
                    yield Static("Applied: nothing yet in this session.", id=f"{prefix}-applied", classes="applied")
        yield ErrorLine(id="privacy-status")
        yield DerivedForms(Section.PRIVACY, HAND_BUILT, run_binding="privacy.apply")

    @property
    def status(self) -> ErrorLine:
        return self.query_one("#privacy-status", ErrorLine)

    def open_operation(self, op_id: str) -> None:
        if self.open_derived(op_id):
            return
        if op_id not in HAND_BUILT:
            raise KeyError(op_id)
        prefix = HAND_BUILT[op_id]
        self.call_after_refresh(self.query_one(f"#{prefix}-scope", Select).focus)

    def scope(self, prefix: str) -> PrivacyScope:
        return PrivacyScope(str(self.query_one(f"#{prefix}-scope", Select).value))

    @on(Select.Changed)
    def _scope_changed(self, event: Select.Changed) -> None:
        prefix = str(event.select.id).removesuffix("-scope")
        if prefix in SETTINGS:
            editor = self.query_one(f"#{prefix}-blacklist", BlacklistEditor)
            editor.set_class(event.value == PrivacyScope.CONTACT_BLACKLIST.value, "-shown")

    def _focused_prefix(self) -> str:
        focused = self.screen.focused
        for prefix in SETTINGS:
            form = self.query_one(f"#{prefix}-form")
            if focused is not None and (focused is form or form in focused.ancestors):
                return prefix
        return "group-add"

    def action_apply(self) -> None:
        if self.submit_derived():
            return
        self.apply(self._focused_prefix())

    @on(Button.Pressed, ".apply")
    def _apply_pressed(self, event: Button.Pressed) -> None:
        self.apply(str(event.button.id).removesuffix("-apply"))

    def apply(self, prefix: str) -> None:
        title, scope_field, op = SETTINGS[prefix]
        scope = self.scope(prefix)
        editor = self.query_one(f"#{prefix}-blacklist", BlacklistEditor)
        form = self.query_one(f"#{prefix}-form", Form)
        if scope is PrivacyScope.CONTACT_BLACKLIST and editor.query_one(Input).value.strip():
            # A number typed but not added with Enter is part of what the user asked for: add it, or refuse.
            if not editor.stage(BlacklistAction.ADD):
                self.status.show_error(f"{title}: not applied — the number in the blacklist field is not valid.")
                return
        blacklist = editor.wire() if scope is PrivacyScope.CONTACT_BLACKLIST else []
        request = validated(
            form.rows(),
            lambda: op.request(**{scope_field: scope, "contactsBlacklist": blacklist or None}),
            status=self.status,
        )
        if request is None:
            return
        self.run_operation(
            op,
            request,
            title=title,
            busy=form,
            status=self.status,
            done=lambda result: self._applied(prefix, scope, blacklist, result),
        )

    def _applied(
        self, prefix: str, scope: PrivacyScope, blacklist: list[dict[str, str]], result: OperationResult
    ) -> None:
        title = SETTINGS[prefix][0]
        if not result.ok:
            self.status.show_error(f"{title}: the gateway answered {result.refusal}; the setting may be unchanged.")
            return
        changes = ", ".join(f"{entry['action']} {entry['phone']}" for entry in blacklist)
        summary = SCOPE_TITLES[scope] + (f" (blacklist: {changes})" if changes else "")
        self.query_one(f"#{prefix}-applied", Static).update(Content(f"Applied: {summary}"))
        self.query_one(f"#{prefix}-blacklist", BlacklistEditor).clear_entries()
        self.status.show_ok(f"{title}: {summary}.")
