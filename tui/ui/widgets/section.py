"""What every operation section shares: reaching the clients, running a call in a worker with progress
and cancellation, showing the outcome, confirming destructive actions, and copyable results.

A section subclasses `OperationSection` (a `tui.ui.widgets.section_api.Section`), declares `HELP` (markdown),
`BINDINGS` and `OPERATIONS` (its own palette entries beyond the gateway operations, command id → title),
implements `open_operation(id)` for those and for the gateway operations `tui.api.operations` places in it, and
sends each through the table:

    self.run_operation(SEND_POLL, request, busy=form, status=self.status,
                       done=self._sent, group="send")

A gateway operation needs no code here unless a form is written for it: the section declares those it wrote
(`HAND_BUILT`, op id -> the control that performs it) and composes a `DerivedForms`, which holds a form read off
the row for every other one; `open_derived` opens it, `submit_derived` sends it on ctrl+s, and this class sends
what it posts (`OperationForm.Submitted`).
"""

from __future__ import annotations

import asyncio
import functools
import json
import shlex
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, ClassVar, Literal, Self, TypeVar, cast, overload

from pydantic import BaseModel

from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widget import Widget
from textual.widgets import Button, Label, Static
from textual.worker import Worker

from tui.api.dialects import InstanceDialect, SessionDialect
from tui.api.errors import BadRequest, Conflict, ConnectionLost, GatewayTimeout, TransportFault, Unauthorized
from tui.api.models import Request, Sendable
from tui.api.operations import DialectRefusal, ErasedOperation, Operation
from tui.api.operations import Family as OperationFamily
from tui.ui.keymap import bindings_for, label
from tui.ui.messages import SendUnanswered
from tui.ui.widgets.clipboard import copy_text
from tui.ui.widgets.feedback import ErrorLine, explain_error, in_view, status_hint
from tui.ui.widgets.focus import restore_focus
from tui.ui.widgets.forms import Form
from tui.core.accounts.accounts import Accounts
from tui.core.display import Display
from tui.core.services import Services
from tui.ui.widgets.gateway_app import AppState
from tui.ui.widgets.section_api import Section
from tui.ui.widgets.focus import TypingInForms
from tui.ui.widgets.forms import validated
from tui.ui.widgets.operation_form import DerivedForms, OperationForm

if TYPE_CHECKING:

    from tui.api.client import InstanceClient, SessionClient

Family = Literal["instance", "session"]
Both = tuple[Literal["instance"], Literal["session"]]  # calls that need both clients: ("instance", "session")
Req = TypeVar("Req", bound=Request)
Res = TypeVar("Res", bound=BaseModel)
T = TypeVar("T")
# What a call's coroutine is given: one family's client, or both (instance, session).
Clients = TypeVar("Clients", "InstanceClient", "SessionClient", "tuple[InstanceClient, SessionClient]")


class GatewayNotReady(Exception):
    """The runtime (clients) is not set up yet: no credentials, or still starting."""


@overload
def runtime_client(accounts: Accounts, family: Literal["instance"]) -> InstanceClient: ...
@overload
def runtime_client(accounts: Accounts, family: Literal["session"]) -> SessionClient: ...
def runtime_client(accounts: Accounts, family: Family) -> InstanceClient | SessionClient:
    """The current account's client of `family`, or raise GatewayNotReady with what to do: the profile has no such
    family (in plain words), or the clients are not built yet."""
    from tui.core.accounts.account import ClientsNotReady
    from tui.local.config import MissingFamily

    account = accounts.current
    if account is not None:
        try:
            return account.client(OperationFamily(family))
        except MissingFamily as error:
            raise GatewayNotReady(str(error)) from None
        except ClientsNotReady:
            pass
    raise GatewayNotReady(
        f"The gateway is not ready: no {family} client yet. Wait for the connection, or set up a profile "
        "(ctrl+p → Set up a profile); nothing was sent."
    )


def account_flags_of(accounts: Accounts) -> list[str]:
    """What names the run's current account after a command's name, as a suggested command must (`--profile NAME`,
    or the sandbox's flags when the app runs on it)."""
    from tui.core.suggested_commands import account_flags

    instance, session = accounts.dialects
    current = accounts.current
    name = None if accounts.sandbox_mode or current is None else current.name
    return account_flags(name, (instance.value, session.value))


def field_named_by(error: BaseException) -> str | None:
    """The request field a 400 blames, from whichever body shape came back (`field`, or `error: "name: …"`)."""
    if not isinstance(error, BadRequest) or not error.body:
        return None
    try:
        body = json.loads(error.body)
    except ValueError:
        return None
    if isinstance(body, dict) and isinstance(body.get("data"), dict):
        body = body["data"]
    if not isinstance(body, dict):
        return None
    field = body.get("field")
    if isinstance(field, str) and field:
        return field
    text = body.get("error") or body.get("message")
    if isinstance(text, str) and ":" in text:
        candidate = text.split(":", 1)[0].strip()
        if candidate.replace(".", "").replace("_", "").isalnum():
            return candidate
    return None


REPEAT_WINDOW = 5.0
"""Seconds within which sending the same request again asks first."""


class OperationSection(VerticalScroll, Section):
    """Base of the Chats, Groups, Communities, Privacy, Catalog and Settings sections: the current account's
    clients and dialects come from `accounts`, what the run's details look like on screen from `run_display`."""

    HELP: ClassVar[str | None] = ""  # Textual's own attribute (DOMNode.HELP): the section's help markdown

    BINDINGS = bindings_for("section")

    DEFAULT_CSS = """
    OperationSection { padding: 0 1; }
    OperationSection .section-title { text-style: bold; padding: 0 1; color: $accent; }
    OperationSection .subtitle { text-style: bold; padding: 0 1; margin-top: 1; }
    OperationSection .actions { height: auto; padding: 0 1; }
    OperationSection .actions Button { margin-right: 1; }
    OperationSection .side-by-side { height: auto; }
    OperationSection .panel { width: 1fr; height: auto; border: round $panel-lighten-2; padding: 0 1; }
    """

    def __init__(self, accounts: Accounts, display: Display, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.accounts = accounts
        self.run_display = display

    @classmethod
    def with_services(cls, services: Services, state: AppState) -> Self:
        return cls(services.accounts, services.display)

    @functools.cached_property
    def _unanswered_sends(self) -> dict[str, str]:
        """Operation id -> the request (as JSON) of its last send that got no answer and may have gone."""
        return {}

    @functools.cached_property
    def _last_sends(self) -> dict[str, tuple[str, float]]:
        """Operation id -> (request as JSON, when it was sent): what a repeat send is compared with."""
        return {}

    # -- calls -------------------------------------------------------------------------------------

    @overload
    def client(self, family: Literal["instance"]) -> InstanceClient: ...
    @overload
    def client(self, family: Literal["session"]) -> SessionClient: ...
    @overload
    def client(self, family: Both) -> tuple[InstanceClient, SessionClient]: ...
    def client(self, family: Family | Both) -> InstanceClient | SessionClient | tuple[InstanceClient, SessionClient]:
        """One family's client, or both (instance, session) for calls that need the two."""
        if isinstance(family, tuple):
            return runtime_client(self.accounts, "instance"), runtime_client(self.accounts, "session")
        if family == "instance":
            return runtime_client(self.accounts, "instance")
        return runtime_client(self.accounts, "session")

    @overload
    def call(
        self, title: str, operation: Callable[[InstanceClient], Awaitable[T]], *, family: Literal["instance"],
        busy: Widget, status: ErrorLine, done: Callable[[T], object], group: str = "call",
    ) -> Worker[T | None] | None: ...
    @overload
    def call(
        self, title: str, operation: Callable[[SessionClient], Awaitable[T]], *, family: Literal["session"],
        busy: Widget, status: ErrorLine, done: Callable[[T], object], group: str = "call",
    ) -> Worker[T | None] | None: ...
    @overload
    def call(
        self, title: str, operation: Callable[[tuple[InstanceClient, SessionClient]], Awaitable[T]], *, family: Both,
        busy: Widget, status: ErrorLine, done: Callable[[T], object], group: str = "call",
    ) -> Worker[T | None] | None: ...
    def call(
        self,
        title: str,
        operation: Callable[[Clients], Awaitable[T]],
        *,
        family: Family | Both,
        busy: Widget,
        status: ErrorLine,
        done: Callable[[T], object],
        group: str = "call",
    ) -> Worker[T | None] | None:
        """Run `operation(client)` in an exclusive worker of `group`; `busy` shows progress meanwhile. The
        overloads tie `family` to the client type `operation` is given.

        Errors (typed client errors, not-ready) end in `status` and a toast, as plain text.
        Returns None, showing why, when the client is not ready.
        """
        try:
            # The overloads guarantee that `family` names the clients `operation` takes.
            client = cast(Clients, self.client(family))
        except GatewayNotReady as error:
            status.show_error(str(error))
            return None
        status.clear()
        work = self._run_call(title, operation, client, busy, status, done, self.screen.focused)
        return self.run_worker(
            work,
            name=title,
            group=group,
            exclusive=True,
            exit_on_error=False,
            description=title,
        )

    async def _run_call(
        self,
        title: str,
        operation: Callable[[Clients], Awaitable[T]],
        client: Clients,
        busy: Widget,
        status: ErrorLine,
        done: Callable[[T], object],
        focused: Widget | None = None,
    ) -> T | None:
        """`focused` (the widget that had the focus when the call started) gets it back when the call ends,
        whether it answered, failed or was cancelled. Meanwhile `busy` is covered and the focus waits on the
        section itself, so its Escape (Cancel call) is what the footer shows and what Escape does."""
        busy.loading = True
        self._calls_running += 1
        self._wait_on_section(busy)
        try:
            result = await operation(client)
        except asyncio.CancelledError:
            status.show_error(f"{title}: cancelled. If it was a send, it may still have reached the gateway.")
            raise
        except Exception as error:  # every failure reaches the user, as plain text
            text = explain_error(error)
            text = self.run_display.scrub(text)  # deterministic runs hide random loopback ports
            status.show_error(text, notified=True)  # the toast below says it too
            if isinstance(error, (Unauthorized, Conflict, TransportFault)):
                self._recheck_connection()
            field = field_named_by(error)
            if isinstance(error, DialectRefusal) and isinstance(busy, Form):
                busy.apply_errors({error.field: error.problem})
            elif field is not None and isinstance(busy, Form):
                busy.apply_errors({field: f"the gateway refused it: {str(error).strip()}"})
            self.notify(text, title=f"{title} failed", severity=status_hint(error), markup=False)
            return None
        finally:
            self._calls_running -= 1
            busy.loading = False
            restore_focus(focused, busy)  # at once: a key typed right after the answer goes back into the field
            self.call_after_refresh(restore_focus, focused, busy)  # and again if uncovering moved it meanwhile
        done(result)
        return result

    def run_operation(
        self,
        op: Operation[Req, Res],
        request: Req,
        *,
        busy: Widget,
        status: ErrorLine,
        done: Callable[[Res], object],
        title: str | None = None,
        group: str = "call",
        confirm_repeat: str | None = None,
    ) -> Worker[Res | None] | None:
        """Send `request` as `op` (a row of `tui.api.operations`) through the client of its family, in the
        profile's dialect. The dispatch is the table's: no method names, no string maps.

        With `confirm_repeat` (the question), the same request sent again within `REPEAT_WINDOW` seconds asks
        first: a second ctrl+s or click does not send a duplicate unnoticed."""

        fingerprint = request.model_dump_json()

        async def answered_or_not(send: Awaitable[Res]) -> Res:
            """A send with no answer (cancelled, timed out, the connection lost) may have reached the gateway: the
            thread keeps it as such, and the same send again asks first whenever it comes."""
            try:
                result = await send
            except (asyncio.CancelledError, GatewayTimeout, ConnectionLost):
                if op.sends is not None and isinstance(request, Sendable):
                    self._unanswered_sends[op.id.value] = fingerprint
                    self.post_message(SendUnanswered(op.id, request))
                raise
            self._unanswered_sends.pop(op.id.value, None)
            return result

        def go() -> Worker[Res | None] | None:
            if op.family is OperationFamily.INSTANCE:

                async def via_instance(client: InstanceClient) -> Res:
                    return await answered_or_not(client.request(op, request))

                return self.call(
                    title or op.title, via_instance, family="instance", busy=busy, status=status, done=done,
                    group=group,
                )

            async def via_session(client: SessionClient) -> Res:
                return await answered_or_not(client.request(op, request))

            return self.call(
                title or op.title, via_session, family="session", busy=busy, status=status, done=done, group=group
            )

        if confirm_repeat is None:
            return go()
        now = time.monotonic()
        last = self._last_sends.get(op.id.value)
        self._last_sends[op.id.value] = (fingerprint, now)
        unanswered = self._unanswered_sends.get(op.id.value) == fingerprint
        if not unanswered and (last is None or last[0] != fingerprint or now - last[1] >= REPEAT_WINDOW):
            return go()

        def answered(yes: bool | None) -> None:
            if yes:
                self._last_sends[op.id.value] = (fingerprint, time.monotonic())
                go()
            else:
                status.show_ok("Not sent again.")

        detail = ("The last time it got no answer: it may have reached the gateway already." if unanswered or last is None
                  else f"You sent exactly this {now - last[1]:.0f} s ago.")
        self.app.push_screen(ConfirmScreen(confirm_repeat, detail, confirm_label="Send again"), answered)
        return None

    # -- the forms read off the table (tui.ui.widgets.operation_form) -----------------------------------------

    def open_derived(self, op_id: str) -> bool:
        """Open the form read off the table for `op_id`; False when the section has none for it (a hand-built
        one performs it, or it is not of this section)."""
        return any(forms.open(op_id) is not None for forms in self.query(DerivedForms))

    def submit_derived(self) -> bool:
        """ctrl+s in a form read off the table sends that form; False when the focus is in none."""
        focused = self.screen.focused
        form = next((node for node in focused.ancestors_with_self if isinstance(node, OperationForm)), None) \
            if focused is not None else None
        if form is None:
            return False
        form.submit()
        return True

    @on(OperationForm.Submitted)
    def _send_derived(self, message: OperationForm.Submitted) -> None:
        message.stop()
        form = message.form
        request = validated(form.rows(), form.request, status=form.status)
        if request is None:
            return
        op = form.op

        def send() -> None:
            command = self.call_command(op, request)
            self.run_operation(op, request, busy=form, status=form.status,
                               done=lambda result: form.show_answer(result, command), group=form.id or "call",
                               confirm_repeat=f"{op.title}: send exactly this again?" if op.writes else None)

        if not op.destructive:
            send()
            return
        self.app.push_screen(
            ConfirmScreen(f"{op.title}?", "It cannot be undone.", confirm_label=op.title),
            lambda yes: send() if yes else form.status.show_ok("Not sent."),
        )

    def call_command(self, op: ErasedOperation, request: Request) -> str:
        """The `gateway-tui call` that sends `request` as the current account, as the user types it (a long answer
        names it, to print it whole): the fields typed, and the profile, or the sandbox in its dialects."""
        from tui.core.calls import CallRefused, refuse_secrets_in_arguments
        data = request.model_dump(mode="json", exclude_none=True)
        try:
            refuse_secrets_in_arguments(op, data)
        except CallRefused:  # a secret is never shown, nor put in a process's arguments: `call` takes it from a file
            given = "@FILE"
        else:
            given = json.dumps(data)
        return shlex.join(["gateway-tui", "call", op.id.value, *account_flags_of(self.accounts),
                           *(["--data", given] if data else [])])

    def dialects(self) -> tuple[InstanceDialect, SessionDialect]:
        """What the profile speaks; the spec's shapes until the runtime has a profile."""
        return self.accounts.dialects

    def _recheck_connection(self) -> None:
        """The error says something about the connection: let the header read the status again now."""
        from tui.ui.widgets.header import GatewayHeader

        for header in self.screen.query(GatewayHeader):
            header.poll_status()

    def running(self) -> list[Worker]:
        return [worker for worker in self.workers if worker.node is self and worker.is_running]

    _calls_running = 0
    """Calls of this section under way (each covers its form)."""

    def _wait_on_section(self, busy: Widget) -> None:
        """While a call covers `busy`, the focus waits on the section (not on nobody, where covering a form would
        leave it): the section's keys stay reachable and the footer says Escape cancels the call. A focus the user
        placed elsewhere (another form, the events panel) stays where it is."""
        current = self.screen.focused
        if current is None or current is self or not current.focusable or busy in current.ancestors_with_self:
            self.screen.set_focus(self, scroll_visible=False)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "cancel":
            return bool(self.running())  # otherwise Escape goes on to the screen
        if self._calls_running and self.screen.focused is self:
            return False  # waiting for an answer: the form's keys (send, tabs) would act on a covered form
        return True

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        # `cancel` is offered only while a call runs: the footer must follow the worker, not the next key press
        # (under load it kept "esc Cancel call" after the call had ended).
        self.refresh_bindings()

    def action_cancel(self) -> None:
        for worker in self.running():
            worker.cancel()

    def copy(self, text: str, what: str) -> None:
        copy_text(self.app, text, what)


class CopyableValue(Horizontal, TypingInForms):
    """A labelled result value (message id, invite link) with a Copy button; the text is selectable."""

    DEFAULT_CSS = """
    CopyableValue { height: auto; padding: 0 1; display: none; }
    CopyableValue.-shown { display: block; layout: horizontal; }
    CopyableValue > .value-label { color: $text-muted; width: auto; padding-right: 1; }
    CopyableValue > .value { width: 1fr; text-style: bold; color: $text-success; }
    CopyableValue > Button { min-width: 8; height: 1; border: none; }
    """

    def __init__(self, label: str, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.label = label
        self.value: str | None = None

    def compose(self) -> ComposeResult:
        yield Label(Content(self.label), classes="value-label")
        yield Static("", classes="value")
        yield Button("Copy", classes="copy", compact=True)

    def show(self, value: str, detail: str = "", *, shown: str | None = None) -> None:
        """`value` is what Copy copies; `shown` what the screen shows instead (a secret, masked)."""
        self.value = value
        text = (value if shown is None else shown) + (f"  {detail}" if detail else "")
        self.query_one(".value", Static).update(Content(text))
        self.add_class("-shown")
        in_view(self, f"{self.label} {text}")

    def clear(self) -> None:
        self.value = None
        self.remove_class("-shown")

    @on(Button.Pressed, ".copy")
    def _copy(self, event: Button.Pressed) -> None:
        event.stop()
        if self.value:
            copy_text(self.app, self.value, self.label.rstrip(": ").replace("Sent, ", "The "))


class ConfirmScreen(ModalScreen[bool]):
    """Yes/No for destructive operations; the question is plain text (it may hold user input)."""

    BINDINGS = bindings_for("confirm")

    DEFAULT_CSS = """
    ConfirmScreen { align: center middle; }
    ConfirmScreen > Vertical { width: 64; height: auto; border: thick $warning; background: $surface; padding: 1 2; }
    ConfirmScreen .question { text-style: bold; margin-bottom: 1; }
    ConfirmScreen .detail { color: $text-muted; margin-bottom: 1; }
    ConfirmScreen Horizontal { height: auto; align-horizontal: right; }
    ConfirmScreen Button { margin-left: 2; }
    """

    def __init__(self, question: str, detail: str = "", *, confirm_label: str = "Yes") -> None:
        super().__init__()
        self.question = question
        self.detail = detail
        self.confirm_label = confirm_label

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Content(self.question), classes="question")
            if self.detail:
                yield Static(Content(self.detail), classes="detail")
            with Horizontal():
                yield Button(label("No", "confirm.no"), id="no")
                yield Button(label(self.confirm_label, "confirm.yes"), id="yes", variant="error")

    def on_mount(self) -> None:
        self.query_one("#no", Button).focus()

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)
