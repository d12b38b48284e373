"""Groups: look up (instance metadata + session information side by side), participants table,
create (session family), add participants, rename (spec ops 8, 9, 10, 21, 22)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any, ClassVar

from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.widgets import Button, Checkbox, DataTable, Input, Static, TabbedContent, TabPane

from tui.api.models import (
    AddParticipant,
    AddParticipantResult,
    GroupCreate,
    GroupInfo,
    GroupInfoRequest,
    GroupMetadata,
    GroupParticipant,
    UpdateGroupName,
)
from tui.api.operations import ADD_PARTICIPANT, GROUP_CREATE, UPDATE_GROUP_NAME, OperationId, Section
from tui.webhooks.identities import Identity, is_lid, who
from tui.ui.keymap import bindings_for, label
from tui.ui.widgets.feedback import ErrorLine, explain_error
from tui.ui.widgets.forms import (
    FieldRow,
    Form,
    GroupRefValidator,
    PhoneListValidator,
    TextInput,
    as_group_id,
    require_group_refs,
    split_list,
    validated,
    value_of,
)
from tui.ui.widgets.operation_form import DerivedForms
from tui.ui.widgets.section import CopyableValue, OperationSection

if TYPE_CHECKING:
    from tui.api.client import InstanceClient, SessionClient

# A group looked up in both families at once: each answer, or what went wrong with it.
LookedUp = tuple["GroupMetadata | BaseException", "GroupInfo | BaseException"]

ROLE_ORDER = {"super admin": 0, "admin": 1, "member": 2}


def role_of(is_admin: bool, is_super_admin: bool) -> str:
    return "super admin" if is_super_admin else "admin" if is_admin else "member"


def participant_rows(metadata: GroupMetadata | None, info: GroupInfo | None) -> list[tuple[str, str]]:
    """(participant, role) per member; session information wins (it knows super admins), else metadata."""
    if info is not None and info.Participants:
        return [(_member(p), p.role) for p in info.Participants]
    if metadata is not None:
        return [(p.phone, role_of(p.isAdmin, p.isSuperAdmin)) for p in metadata.participants]
    return []


def _member(participant: GroupParticipant) -> str:
    """A member WhatsApp names by a LID reads as their number and name (tui.webhooks.identities)."""
    if not is_lid(participant.JID):
        return participant.JID
    phone = participant.PhoneNumber.partition("@")[0]
    return who(participant.JID, Identity(participant.JID, phone if phone.isdigit() else "", participant.DisplayName))


def _when(value: datetime | None) -> str:
    return value.isoformat() if value is not None else "—"


def _yes(flag: bool) -> str:
    return "yes" if flag else "no"


def metadata_lines(metadata: GroupMetadata) -> list[tuple[str, str]]:
    admins = sum(1 for p in metadata.participants if p.isAdmin or p.isSuperAdmin)
    return [
        ("Group id", metadata.groupId),
        ("Name", metadata.groupName or "—"),
        ("Description", metadata.description or "—"),
        ("Owner", metadata.owner or "—"),
        ("Created", _when(metadata.createdAt)),
        ("Participants", f"{len(metadata.participants)} ({admins} admins)"),
    ]


def info_lines(info: GroupInfo) -> list[tuple[str, str]]:
    timer = f"{info.DisappearingTimer} s" if info.DisappearingTimer else "off"
    return [
        ("JID", info.JID),
        ("Name", info.Name or "—"),
        ("Owner", info.OwnerJID or "—"),
        ("Created", _when(info.GroupCreated)),
        ("Topic", info.Topic or "—"),
        ("Announce only", _yes(info.IsAnnounce)),
        ("Locked", _yes(info.IsLocked)),
        ("Disappearing", timer if info.IsEphemeral or info.DisappearingTimer else "off"),
    ]


def _facts(title: str, lines: Iterable[tuple[str, str]]) -> Content:
    body = "\n".join(f"{label:<14}{value}" for label, value in lines)
    return Content.assemble((title, "bold"), "\n", body)


class ParticipantsTable(Vertical):
    """Participants of one group: filter box + DataTable (sortable by clicking a column header).

    Rows are added in one `add_rows` call and no widget per row exists, so 1,024 members render fast.
    """

    DEFAULT_CSS = """
    ParticipantsTable { height: auto; }
    ParticipantsTable > #participants-bar { height: auto; }
    ParticipantsTable > #participants-bar > Input { width: 1fr; }
    ParticipantsTable > #participants-bar > Static { width: auto; padding: 1 1 0 1; color: $text-muted; }
    ParticipantsTable > DataTable { height: 14; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.participants: list[tuple[str, str]] = []
        self.sort_column: str | None = None
        self.sort_reverse = False

    def compose(self) -> ComposeResult:
        with Horizontal(id="participants-bar"):
            yield TextInput(placeholder="Filter participants (number or role)", id="participants-filter")
            yield Static("", id="participants-count")
        table: DataTable[str] = DataTable(id="participants", cursor_type="row", zebra_stripes=True)
        yield table

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_column("Participant", key="participant", width=36)
        table.add_column("Role", key="role", width=12)

    def set_participants(self, rows: list[tuple[str, str]]) -> None:
        self.participants = rows
        self._fill()

    def _fill(self) -> None:
        needle = self.query_one("#participants-filter", Input).value.strip().lower()
        rows = [row for row in self.participants if not needle or needle in row[0].lower() or needle in row[1]]
        table = self.query_one(DataTable)
        table.clear()
        table.add_rows(rows)
        if self.sort_column is not None:
            self._sort()
        shown = f"{len(rows)} of {len(self.participants)}" if needle else f"{len(rows)}"
        self.query_one("#participants-count", Static).update(f"{shown} participants")

    def _sort(self) -> None:
        table = self.query_one(DataTable)
        if self.sort_column == "role":
            table.sort("role", "participant", key=lambda row: (ROLE_ORDER.get(row[0], 9), row[1]), reverse=self.sort_reverse)
        else:
            table.sort("participant", reverse=self.sort_reverse)

    def sort_by(self, column: str) -> None:
        """Sort by `participant` or `role`; sorting by the same column again reverses it."""
        self.sort_reverse = not self.sort_reverse if self.sort_column == column else False
        self.sort_column = column
        self._sort()

    @on(DataTable.HeaderSelected)
    def _header(self, event: DataTable.HeaderSelected) -> None:
        event.stop()
        self.sort_by(str(event.column_key.value))

    @on(Input.Changed, "#participants-filter")
    def _filter(self, event: Input.Changed) -> None:
        event.stop()
        self._fill()

    @on(Input.Submitted, "#participants-filter")
    def _filter_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.query_one(DataTable).focus()

    def visible_rows(self) -> list[tuple[str, str]]:
        table = self.query_one(DataTable)
        return [(str(row[0]), str(row[1])) for row in map(table.get_row_at, range(table.row_count))]


# The gateway operations of this section performed by a hand-built tab (the one each opens). Any other operation of
# the section gets a form read off its row (tui.ui.widgets.operation_form), below the tabs.
HAND_BUILT: dict[str, str] = {
    OperationId.GROUP_METADATA: "tab-lookup",
    OperationId.GROUP_INFO: "tab-lookup",
    OperationId.GROUP_CREATE: "tab-create",
    OperationId.ADD_PARTICIPANT: "tab-add",
    OperationId.UPDATE_GROUP_NAME: "tab-rename",
}

TABS: dict[str, str] = {
    "lookup-group": "tab-lookup",
    "create-group": "tab-create",
    "add-participants": "tab-add",
    "rename-group": "tab-rename",
    **HAND_BUILT,
}


class GroupsSection(OperationSection):
    # Beyond the gateway operations (the palette takes those from tui.api.operations): the combined lookup.
    OPERATIONS: ClassVar[Mapping[str, str]] = {
        "lookup-group": "Look up group (metadata and information)",
    }

    HELP = """\
## Groups

**ctrl+l**, **ctrl+n**, **ctrl+g** and **ctrl+r** open the Look-up, Create, Add participants and Rename tabs;
**ctrl+s** (or the tab's button) runs the form of the open tab. **Enter** moves to the next field.

**Look up** a group by id — either form works: `120363019502650977-group` (instance family)
or `120363019502650977@g.us` (session family); the other is derived. Metadata (instance) and
information (session) are shown side by side, and the participants in a table: type in the filter box
to narrow it, click a column header (or press **s** / **r** on the table) to sort by participant / role.

**Create** a group with a name and participant numbers (session family; invalid numbers are
ignored by the network). **Add participants**: numbers separated by commas or spaces;
with *auto-invite* an invitation is sent instead; each number that failed is listed.
**Rename**: you must be a group administrator. The group id of Add participants and Rename follows the
group you last looked up or created.

The **group lists** (and any other operation of this section without a tab) open a form of their own below the
tabs, one line per field of the operation: **Enter** moves to the next field, **ctrl+s** sends it, and the
gateway's answer is shown under it.

**Escape** cancels a running call.
"""

    BINDINGS = bindings_for("groups")

    DEFAULT_CSS = """
    GroupsSection TabbedContent { height: auto; }
    GroupsSection TabPane { height: auto; padding: 0; }
    GroupsSection .lookup-bar { height: auto; }
    GroupsSection .lookup-bar > FieldRow { width: 1fr; }
    GroupsSection .lookup-bar > Button { margin-top: 1; }
    GroupsSection .facts { height: auto; }
    GroupsSection #add-result { height: auto; padding: 0 1; }
    """

    def compose(self) -> ComposeResult:
        yield Static("Groups", classes="section-title")
        with TabbedContent(initial="tab-lookup", id="group-tabs"):
            with TabPane("Look up", id="tab-lookup"):
                with Form(id="lookup-form"):
                    with Horizontal(classes="lookup-bar"):
                        yield FieldRow(
                            "Group id (…-group or …@g.us)",
                            TextInput(id="lookup-id", placeholder="120363019502650977-group", validators=[GroupRefValidator()]),
                            field=("group", "GROUP_PHONE_NUMBER", "GroupJID"),
                        )
                        yield Button(label("Look up", "groups.run"), id="lookup", variant="primary")
                with Horizontal(classes="side-by-side", id="lookup-panels"):
                    yield Static(_facts("Metadata (instance)", []), id="metadata", classes="panel facts")
                    yield Static(_facts("Information (session)", []), id="info", classes="panel facts")
                yield ParticipantsTable(id="participants-table")
            with TabPane("Create", id="tab-create"):
                with Form(id="create-form"):
                    yield FieldRow("Group name", TextInput(id="create-name"), field="name")
                    yield FieldRow(
                        "Participants (phone numbers, separated by commas or spaces)",
                        TextInput(id="create-participants", validators=[PhoneListValidator()]),
                        field="participants",
                    )
                    with Horizontal(classes="actions"):
                        yield Button(label("Create group", "groups.run"), id="create", variant="primary")
                yield CopyableValue("Created group:", id="created-jid")
            with TabPane("Add participants", id="tab-add"):
                with Form(id="add-form"):
                    yield FieldRow(
                        "Group id (…-group or …@g.us)",
                        TextInput(id="add-group", validators=[GroupRefValidator()]),
                        field=("group", "groupId"),
                    )
                    yield FieldRow(
                        "Phone numbers to add (commas or spaces)",
                        TextInput(id="add-phones", validators=[PhoneListValidator()]),
                        field="phones",
                    )
                    yield Checkbox("Auto-invite (send an invitation instead of adding directly)", id="add-invite")
                    with Horizontal(classes="actions"):
                        yield Button(label("Add participants", "groups.run"), id="add", variant="primary")
                yield Static("", id="add-result")
            with TabPane("Rename", id="tab-rename"):
                with Form(id="rename-form"):
                    yield FieldRow(
                        "Group id (…-group or …@g.us)",
                        TextInput(id="rename-group", validators=[GroupRefValidator()]),
                        field=("group", "groupId"),
                    )
                    yield FieldRow("New name", TextInput(id="rename-name"), field="groupName")
                    with Horizontal(classes="actions"):
                        yield Button(label("Rename group", "groups.run"), id="rename", variant="primary")
        yield ErrorLine(id="group-status")
        yield DerivedForms(Section.GROUPS, HAND_BUILT, run_binding="groups.run")

    # -- helpers -----------------------------------------------------------------------------------

    @property
    def status(self) -> ErrorLine:
        return self.query_one("#group-status", ErrorLine)

    def text(self, widget_id: str) -> str:
        return value_of(self.query_one(f"#{widget_id}"))

    FIRST_FIELD: ClassVar[dict[str, str]] = {
        "tab-lookup": "lookup-id", "tab-create": "create-name", "tab-add": "add-group", "tab-rename": "rename-group",
    }

    def first_field(self) -> Input:
        """The open tab's first field (not the tab bar)."""
        return self.query_one(f"#{self.FIRST_FIELD[str(self.query_one('#group-tabs', TabbedContent).active)]}", Input)

    def open_operation(self, op_id: str) -> None:
        if self.open_derived(op_id):
            return
        tab = TABS[op_id]
        self.query_one("#group-tabs", TabbedContent).active = tab
        if self.display and self.screen.is_current:
            self.screen.set_focus(self.first_field())  # at once: what is typed next goes into the tab's field
        self.call_after_refresh(lambda: self.first_field().focus())

    def action_open(self, op_id: str) -> None:
        self.open_operation(op_id)

    def action_filter(self) -> None:
        self.open_operation("lookup-group")
        self.call_after_refresh(self.query_one("#participants-filter", Input).focus)

    def action_submit(self) -> None:
        if self.submit_derived():
            return
        {
            "tab-lookup": self.action_lookup,
            "tab-create": self.action_create,
            "tab-add": self.action_add,
            "tab-rename": self.action_rename,
        }[str(self.query_one("#group-tabs", TabbedContent).active)]()

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        """Enter looks up (a one-field form); in Create, Add and Rename it moves on to the next field."""
        event.stop()
        if event.input.id == "lookup-id":
            self.action_lookup()
        else:
            self.screen.focus_next()

    def _follow(self, group_id: str) -> None:
        """The group just looked up or created becomes the group of Add participants and Rename (and of the
        look-up after a create), so the next action is on it, not on one looked up earlier."""
        for widget_id in ("lookup-id", "add-group", "rename-group"):
            field = self.query_one(f"#{widget_id}", Input)
            if field.value.strip() != group_id:
                field.value = group_id

    # -- look up -----------------------------------------------------------------------------------

    @on(Button.Pressed, "#lookup")
    def action_lookup(self) -> None:
        form = self.query_one("#lookup-form", Form)
        refs = validated(form.rows(), lambda: require_group_refs(self.text("lookup-id"), field="group"), status=self.status)
        if refs is None:
            return
        group_id, jid = refs

        async def both(clients: tuple[InstanceClient, SessionClient]) -> LookedUp:
            instance, session = clients
            metadata, info = await asyncio.gather(
                instance.group_metadata(group_id), session.group_info(GroupInfoRequest(GroupJID=jid)), return_exceptions=True
            )
            if isinstance(metadata, BaseException) and isinstance(info, BaseException):
                raise metadata
            return metadata, info

        self.call(
            "Look up group",
            both,
            family=("instance", "session"),
            busy=self.query_one("#tab-lookup"),
            status=self.status,
            done=self._looked_up,
        )

    def _looked_up(self, results: LookedUp) -> None:
        metadata, info = results
        meta_ok = metadata if isinstance(metadata, GroupMetadata) else None
        info_ok = info if isinstance(info, GroupInfo) else None
        self.query_one("#metadata", Static).update(
            _facts("Metadata (instance)", metadata_lines(metadata))
            if isinstance(metadata, GroupMetadata)
            else Content.assemble(("Metadata (instance)", "bold"), "\n", explain_error(metadata))
        )
        self.query_one("#info", Static).update(
            _facts("Information (session)", info_lines(info))
            if isinstance(info, GroupInfo)
            else Content.assemble(("Information (session)", "bold"), "\n", explain_error(info))
        )
        self.query_one(ParticipantsTable).set_participants(participant_rows(meta_ok, info_ok))
        if isinstance(metadata, BaseException):
            self.status.show_error(f"Partly looked up. {explain_error(metadata)}")
        elif isinstance(info, BaseException):
            self.status.show_error(f"Partly looked up. {explain_error(info)}")
        else:
            self.status.show_ok(f"Looked up {info.Name or metadata.groupName!s}.")
        self._follow(self.text("lookup-id"))

    # -- create ------------------------------------------------------------------------------------

    @on(Button.Pressed, "#create")
    def action_create(self) -> None:
        form = self.query_one("#create-form", Form)
        request = validated(
            form.rows(),
            lambda: GroupCreate(name=self.text("create-name"), participants=split_list(self.text("create-participants"))),
            status=self.status,
        )
        if request is None:
            return
        self.run_operation(
            GROUP_CREATE,
            request,
            title="Create group",
            busy=form,
            status=self.status,
            done=self._created,
            confirm_repeat=f"Create another group named {request.name}?",
        )

    def _created(self, info: GroupInfo) -> None:
        self.query_one("#created-jid", CopyableValue).show(
            info.JID, f"“{info.Name}”, {len(info.Participants)} participants"
        )
        self.status.show_ok(f"Created group {info.Name} ({info.JID}).")
        self._follow(info.JID)

    # -- add participants --------------------------------------------------------------------------

    @on(Button.Pressed, "#add")
    def action_add(self) -> None:
        form = self.query_one("#add-form", Form)

        request = validated(
            form.rows(),
            lambda: AddParticipant(
                groupId=as_group_id(self.text("add-group")),
                phones=split_list(self.text("add-phones")),
                autoInvite=self.query_one("#add-invite", Checkbox).value,
            ),
            status=self.status,
        )
        if request is None:
            return
        self.query_one("#add-result", Static).update("")
        self.run_operation(
            ADD_PARTICIPANT,
            request,
            title="Add participants",
            busy=form,
            status=self.status,
            done=lambda result: self._added(request, result),
            confirm_repeat=f"Add the same numbers to {request.groupId} again?",
        )

    def _added(self, request: AddParticipant, result: AddParticipantResult) -> None:
        verb = "Invited" if request.autoInvite else "Added"
        if not result.ok:
            self.query_one("#add-result", Static).update(Content(""))
            self.status.show_error(
                f"Adding to {request.groupId} failed: the gateway answered {result.refusal}; nobody was added."
            )
            return
        if not result.lists_reported:
            # Z-API answers only {value: true}: it accepted the request but does not say who was added.
            asked = ", ".join(request.phones)
            self.query_one("#add-result", Static).update(
                Content(f"Accepted by the gateway for: {asked}. It does not report which numbers were added.")
            )
            self.status.show_ok(f"The gateway accepted the request for {len(request.phones)} number(s) in {request.groupId}.")
            return
        lines = [f"{verb}: {', '.join(result.added) if result.added else 'none'}"]
        lines += [f"Failed: {phone} — not added (not on the network, or privacy settings refuse it)" for phone in result.failed]
        self.query_one("#add-result", Static).update(Content("\n".join(lines)))
        if result.failed:
            self.status.show_error(f"{len(result.failed)} of {len(request.phones)} numbers failed; see the list above.")
        else:
            self.status.show_ok(f"{verb} {len(result.added)} participants to {request.groupId}.")

    # -- rename ------------------------------------------------------------------------------------

    @on(Button.Pressed, "#rename")
    def action_rename(self) -> None:
        form = self.query_one("#rename-form", Form)

        request = validated(
            form.rows(),
            lambda: UpdateGroupName(groupId=as_group_id(self.text("rename-group")), groupName=self.text("rename-name")),
            status=self.status,
        )
        if request is None:
            return
        self.run_operation(
            UPDATE_GROUP_NAME,
            request,
            title="Rename group",
            busy=form,
            status=self.status,
            done=lambda result: self._renamed(request, result),
        )

    def _renamed(self, request: UpdateGroupName, result: Any) -> None:
        if result.ok:
            self.status.show_ok(f"Renamed {request.groupId} to {request.groupName}.")
        else:
            self.status.show_error(f"Rename of {request.groupId}: the gateway answered {result.refusal}; not renamed.")

