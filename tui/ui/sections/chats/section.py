"""Chats: the conversations (the inbox, `tui.ui.sections.chats.inbox.InboxView`), and the form that sends every message
kind to a phone or group JID and acts on a chat (spec ops 1-5, 13, 23).

The section opens on the conversations, its search field focused. The form is one key away (ctrl+n for a new
number, ctrl+t or `k` for the open chat, enter on a number no chat matches) and ctrl+l goes back; one view
shows at a time, and the form's keys act only while it shows."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar, Self

from pydantic import ValidationError
from textual import on, work
from textual.app import ComposeResult
from textual import events
from textual.widgets import Button, ContentSwitcher, Input, Select

from tui.api.models import (
    DESTRUCTIVE_CHAT_ACTIONS,
    ChatAction,
    ContactSent,
    ModifyChat,
    RECIPIENT_RULE,
    Request,
    Sendable,
    field_errors,
    is_phone,
    is_recipient,
)
from tui.api.operations import (
    MEDIA_OPERATIONS,
    MODIFY_CHAT,
    NAME_LISTS,
    Family,
    OperationId,
)
from tui.core.services import Services
from tui.ui.widgets.gateway_app import AppState
from tui.ui.keymap import bindings_for, shown_key
from tui.ui.messages import MessageSent
from tui.ui.sections.chats.actions import CHAT_ACTION_TITLES, ChatActions
from tui.ui.widgets.feedback import ErrorLine
from tui.ui.widgets.forms import FieldRow, apply_field_errors, validated, value_of
from tui.ui.widgets.section import ConfirmScreen, CopyableValue, OperationSection
from tui.ui.widgets.section_api import SectionHost

if TYPE_CHECKING:
    from tui.ui.sections.chats.inbox import ReplyLine
    from tui.ui.sections.chats.kind_form import KindForm
    from tui.ui.sections.chats.kinds import Kind
    from tui.ui.sections.chats.media import MediaForm

# The form's modules (its nine kinds, ~15 ms to import) are imported where the form is used, not with this module:
# the section opens on the conversations and builds the form after the start (`build_deferred`).


class ChatsSection(OperationSection):
    # Shortcuts of this section beyond the gateway operations (which the palette takes from tui.api.operations).
    OPERATIONS: ClassVar[Mapping[str, str]] = {
        "inbox": "Conversations: the inbox",
        "compose": "New message to a number",
        **{f"chat-{action.value}": title for action, title in CHAT_ACTION_TITLES.items()},
    }

    HELP = """\
## Chats

Chats opens on the **conversations**: every chat (received messages, receipts and typing from the webhook
events, and every message sent from here or with `gateway-tui call`), newest first, with the thread of the
chosen one. The **search** field has the focus: type to filter chats and messages; **↓** or enter goes to the
list, or, when you typed a phone number no chat matches, enter opens the form to that number. On the list, **enter**
replies (a text, sent with enter), **m** marks the chat read on the gateway, **k** (or **ctrl+t**) opens the
full form for the chat, **n** (or **ctrl+n**) writes to a new number. **ctrl+l** comes back from the form.

### The form

Send a message to a **recipient**: a phone number with country code (digits only, e.g.
`5511999999999`) or a group JID (`120363019502650977@g.us`). The recipient is checked as you type.

Pick the **kind** — text, quick-reply buttons (up to 3, one label per line), button list, link with a
custom preview, poll (one option per line, how many a voter may pick), location, sticker (a WebP
URL), contact card (built into a vCard from name / phone / e-mail / organisation / title, sent by the
session family), forward or **media** — fill its form and press **ctrl+s**. Nothing is sent while a
field is invalid; the problem is shown under the field.

**Media** sends a file: type its path (→ completes it from the disk) or choose it with **ctrl+b**. Leaving
the path field shows what the file is by its content and its size; the gateway's formats and size limits
are checked before anything is sent, and a refusal says why. Its type picks the call (image, video, audio
or document); the instance family sends it, or the session family in WuzAPI's dialect.

A sent message shows its **id** (Copy button, or **ctrl+o**); its delivery events appear in the events
panel linked to that id.

**Chat actions** (read, archive, unarchive, pin, unpin, mute, unmute, clear, delete) act on the
recipient's chat: choose one and press **ctrl+g**. Clear and delete ask for confirmation.

**Escape** cancels a call that is still running.
"""

    BINDINGS = bindings_for("chats")

    DEFAULT_CSS = """
    ChatsSection #chat-views { height: auto; }
    ChatsSection #chat-views.-inbox { height: 1fr; }
    ChatsSection #compose { height: auto; }
    ChatsSection #chat-head { height: 1; }
    ChatsSection #chat-head > .section-title { width: auto; }
    ChatsSection #chat-head > .kind-label { width: auto; color: $text-muted; padding: 0 1 0 0; }
    ChatsSection #chat-head > #kind { width: 24; }
    ChatsSection #chat-head > .head-gap { width: 1fr; }
    ChatsSection #chat-top { height: auto; }
    ChatsSection #chat-top > FieldRow { width: 1fr; }
    ChatsSection #kinds { height: auto; }
    ChatsSection .form-cols { height: auto; }
    ChatsSection .form-cols > FieldRow { width: 1fr; }
    ChatsSection #chat-actions { height: auto; margin-top: 1; }
    ChatsSection #chat-actions > Select { width: 30; }
    """

    def __init__(self, services: Services, state: AppState, *, with_inbox: bool = True, id: str | None = None) -> None:
        super().__init__(services.accounts, services.display, id=id)
        self.services = services
        self.state = state  # the inbox's: the events stored, on the UI's loop
        self.inbox = services.inbox
        self.sandbox = services.sandbox
        self.with_inbox = with_inbox
        self._runtime_ready = False  # the app's flag, as its watch last said

    @classmethod
    def with_services(cls, services: Services, state: AppState) -> Self:
        return cls(services, state)

    @property
    def view(self) -> str:
        """"inbox" (the conversations) or "compose" (the form)."""
        return "inbox" if self.with_inbox and self.query_one("#chat-views", ContentSwitcher).current == "inbox" \
            else "compose"

    def on_mount(self) -> None:
        self.watch(self.app, "runtime_ready", self._note_runtime_ready, init=True)

    def _note_runtime_ready(self, ready: bool) -> None:
        self._runtime_ready = ready

    def compose(self) -> ComposeResult:
        from tui.ui.sections.chats.inbox import InboxView

        with ContentSwitcher(initial="inbox" if self.with_inbox else "compose", id="chat-views",
                             classes="-inbox" if self.with_inbox else ""):
            if self.with_inbox:
                yield InboxView(self.services, self.state, id="inbox", ask_for_form=self._form_for_inbox)
            else:
                from tui.ui.sections.chats.form import ChatForm

                yield ChatForm(with_inbox=False, id="compose")

    # -- the form, built after the start ---------------------------------------------------------------
    # The form is ~150 widgets (nine kinds of message): mounting it with the conversations cost ~200 ms before the
    # app took keys (bench/start_interactive.py), for a view the first frame does not show. The main screen builds
    # it once the app is interactive (`build_deferred`, before the other sections); asked for earlier (ctrl+n,
    # the palette), it is built at once while the screen keeps the keys typed meanwhile, replayed into it after.

    _form_built: asyncio.Future[None] | None = None

    @property
    def form_ready(self) -> bool:
        """The send form is mounted with its fields (they can be queried). The form is in the DOM a few turns of
        the loop before its fields are: Textual marks it mounted only once everything it composes is."""
        forms = self.query("#compose")
        return bool(forms) and forms.first().is_mounted

    async def build_deferred(self) -> None:
        """Mount the send form (once; a second caller waits for the first)."""
        if self._form_built is not None:
            await asyncio.shield(self._form_built)
            return
        self._form_built = asyncio.get_running_loop().create_future()
        try:
            if not self.query("#compose"):  # composed with the section when there is no inbox
                from tui.ui.sections.chats.form import ChatForm

                form = ChatForm(with_inbox=self.with_inbox, id="compose")
                form.display = False  # the switcher shows the conversations
                await self.query_one("#chat-views", ContentSwitcher).mount(form)
                if self._runtime_ready:
                    from tui.ui.widgets.samples import apply_samples

                    apply_samples(form, self.sandbox.samples())
                self.show_dialect_rules()
        finally:
            self._form_built.set_result(None)

    def _with_form(self, then: Callable[[], object]) -> None:
        """Run `then` with the form mounted: at once when it is, else once it is built, the keys typed meanwhile
        kept by the main screen (not typed into the conversations) and replayed after `then` placed the focus."""
        if self.form_ready:
            then()
            return
        screen = self.screen
        if isinstance(screen, SectionHost):
            screen.hold_keys_while(self.build_deferred(), then)
            return
        self.run_worker(self._build_then(then), group="chat-form", exit_on_error=False,
                        description="build the send form")

    async def _build_then(self, then: Callable[[], object]) -> None:
        await self.build_deferred()
        then()


    # -- helpers -----------------------------------------------------------------------------------

    @property
    def status(self) -> ErrorLine:
        """The send's answer (the sent message's id shows above it)."""
        return self.query_one("#chat-status", ErrorLine)

    @property
    def action_status(self) -> ErrorLine:
        """The chat action's answer."""
        return self.query_one("#chat-action-status", ErrorLine)

    def clear_results(self) -> None:
        """The answers belong to one recipient (and the send's to one kind): a change of either clears them, so
        no line speaks of another chat or of a message not sent."""
        self.query_one("#sent-id", CopyableValue).clear()
        self.status.clear()
        self.action_status.clear()
        self._answered_recipient = None

    _answered_recipient: str | None = None  # the recipient the answers under the form speak of

    def _answering(self) -> None:
        """A send or chat action starts: its answer speaks of the recipient as it is now."""
        self._answered_recipient = self.text("recipient")

    @on(Input.Changed, "#recipient")
    def _recipient_changed(self) -> None:
        # A Changed still on its way up when Send or a chat action answered (typed, then sent at once) is not a
        # change of recipient: the field holds what was answered, and the answer stays.
        if self._answered_recipient is not None and self.text("recipient") == self._answered_recipient:
            return
        self.clear_results()

    def text(self, widget_id: str) -> str:
        return value_of(self.query_one(f"#{widget_id}"))

    @property
    def kind(self) -> Kind:
        from tui.ui.sections.chats.kinds import kind_of

        return kind_of(str(self.query_one("#kind", Select).value))

    def active_form(self) -> KindForm:
        from tui.ui.sections.chats.kind_form import KindForm

        return self.query_one(f"#form-{self.kind.key}", KindForm)

    def recipient_row(self) -> FieldRow:
        return self.query_one("#recipient").parent  # type: ignore[return-value]

    def rows(self) -> list[FieldRow]:
        return [self.recipient_row(), *self.active_form().rows()]

    # -- kind switching / palette ------------------------------------------------------------------

    @on(Select.Changed, "#kind")
    def _kind_changed(self, event: Select.Changed) -> None:
        self.query_one("#kinds", ContentSwitcher).current = f"form-{event.value}"
        self.query_one("#sent-id", CopyableValue).clear()
        self.status.clear()
        self.show_dialect_rules()
        self.refresh_bindings()  # ctrl+b (browse) is the Media kind's

    def on_show(self) -> None:
        self.show_dialect_rules()

    def show_dialect_rules(self) -> None:
        """Labels say what the profile's instance dialect needs: Z-API requires the link preview fields and
        waits whole seconds (1-15); the spec's preview is optional and its delay is in milliseconds."""
        if not self.form_ready:
            return  # built later, it shows them then (build_deferred)
        from tui.ui.sections.chats.kind_form import KindForm

        dialect = self.dialects()[0]
        for form in self.query_one("#kinds", ContentSwitcher).query_children(KindForm):
            form.show_dialect_rules(dialect)

    # -- the two views -------------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("send", "chat_action", "copy_id", "browse_media") and self.view != "compose":
            return False  # the form's keys act only while the form shows
        if action == "browse_media" and not self._media_kind_shown():
            return False  # the file picker belongs to the Media kind
        if action == "inbox" and self.view != "compose":
            return False
        return super().check_action(action, parameters)

    def _media_kind_shown(self) -> bool:
        from tui.ui.sections.chats.media import MEDIA_KEY

        return self.form_ready and self.kind.key == MEDIA_KEY

    def _show_view(self, view: str) -> None:
        switcher = self.query_one("#chat-views", ContentSwitcher)
        switcher.current = view
        switcher.set_class(view == "inbox", "-inbox")
        self.scroll_home(animate=False, immediate=True)
        self.refresh_bindings()

    @on(Button.Pressed, "#open-inbox")
    def action_inbox(self) -> None:
        """Back to the conversations, the list focused (on the chat just written to, when there is one)."""
        if not self.with_inbox:
            return
        from tui.ui.sections.chats.inbox import InboxList, InboxView

        self._show_view("inbox")
        inbox = self.query_one(InboxView)
        recipient = self.text("recipient") if self.form_ready else ""
        if recipient and (is_phone(recipient) or recipient.endswith("@g.us")):
            inbox.reload(select=recipient)
        self.screen.set_focus(inbox.query_one(InboxList))

    def show_form(self, recipient: str | None = None, *, message_first: bool = False) -> None:
        """The form, to `recipient` when given (the message field focused), else the recipient field."""
        if not self.form_ready:
            self._with_form(lambda: self.show_form(recipient, message_first=message_first))
            return
        self._show_view("compose")
        field = self.query_one("#recipient", Input)
        if recipient is not None or not message_first:
            field.value = recipient or ""  # a new chat starts with no recipient, not the last one's
        if recipient is not None or message_first:
            self._focus_first(at_once=True)  # at once: keys already on their way land in the message
        else:
            self.screen.set_focus(field)

    def _form_for_inbox(self, recipient: str | None, full: bool) -> None:
        self.show_form(recipient, message_first=full)

    def on_reply_line_moved_to_form(self, event: ReplyLine.MovedToForm) -> None:
        """Several lines pasted into the reply: the full form to the open chat, a text with every line in its message
        box, the cursor at its end. Nothing is sent: ctrl+s does that, as for any message written there."""
        from tui.ui.sections.chats.inbox import InboxView

        event.stop()
        text = event.text
        chat = self.query_one(InboxView).open_chat_id

        def fill() -> None:
            from tui.ui.widgets.text_box import TextBox

            self.query_one("#kind", Select).value = "text"
            self.query_one("#kinds", ContentSwitcher).current = "form-text"
            box = self.query_one("#text-message", TextBox)
            box.load_text(text)
            box.move_cursor(box.document.end)
            self.screen.set_focus(box)
            lines = len(text.splitlines())
            self.notify(f"The pasted text has {lines} lines: it is in the message box, whole. "
                        f"{shown_key('chats.send')} sends it.", title="Moved to the full form", markup=False)

        def to_the_form() -> None:
            self.show_form(chat, message_first=True)
            fill()

        self._with_form(to_the_form)

    def on_focus(self, _event: events.Focus) -> None:
        """Escape left a field of the conversations: the list takes the focus (its letter keys work there)."""
        if self.view == "inbox":
            from tui.ui.sections.chats.inbox import InboxList

            self.screen.set_focus(self.query_one(InboxList))

    def open_operation(self, op_id: str) -> None:
        if op_id == "inbox":
            self.action_inbox()
            return
        if op_id in NAME_LISTS or op_id in (OperationId.USER_LID, OperationId.MESSAGE_HISTORY,
                                            OperationId.FIND_MESSAGES):
            # The lists name the inbox's chats, and the look-ups after them map numbers to LIDs: read them again,
            # and show the conversations (the histories' messages come in by catch-up, tui.core.catchup).
            self.inbox.refresh_names()
            self.action_inbox()
            return
        if op_id == "compose":
            self.show_form()
            return
        if not self.form_ready:
            self._with_form(lambda: self.open_operation(op_id))
            return
        from tui.ui.sections.chats.kinds import kinds
        from tui.ui.sections.chats.media import MEDIA_KEY

        self._show_view("compose")
        for kind in kinds():
            if kind.op_id == op_id:
                self.query_one("#kind", Select).value = kind.key
                self.query_one("#kinds", ContentSwitcher).current = f"form-{kind.key}"
                self.call_after_refresh(self._focus_first)
                return
        if op_id in MEDIA_OPERATIONS:  # one Media kind for every media row: the file's type picks the row
            self.query_one("#kind", Select).value = MEDIA_KEY
            self.query_one("#kinds", ContentSwitcher).current = f"form-{MEDIA_KEY}"
            self.call_after_refresh(self._focus_first)
            return
        if op_id == OperationId.MODIFY_CHAT:
            self.call_after_refresh(self.query_one("#chat-action", Select).focus)
            return
        if op_id.startswith("chat-"):
            # The palette's "Clear chat history", "Archive chat", ...: act on the recipient's chat at once (clear
            # and delete ask first); without a valid recipient, say so under it and wait there.
            self.query_one(ChatActions).action = ChatAction(op_id.removeprefix("chat-"))
            recipient = self.query_one("#recipient", Input)
            if recipient.value.strip():
                self.call_after_refresh(self.action_chat_action)
            else:
                self.recipient_row().set_error(
                    f"type the recipient of the chat, then {shown_key('chats.chat_action')} applies "
                    f"“{CHAT_ACTION_TITLES[ChatAction(op_id.removeprefix('chat-'))]}”"
                )
            self.call_after_refresh(recipient.focus)
            return
        raise KeyError(op_id)

    def first_field(self) -> Input:
        """The conversations' search field; in the form, the recipient (every send and chat action starts there,
        not at the kind picker)."""
        if self.view == "inbox":
            return self.query_one("#inbox-search", Input)
        return self.query_one("#recipient", Input)

    def _focus_first(self, at_once: bool = False) -> None:
        recipient = self.query_one("#recipient", Input)
        controls = [row.control for row in self.active_form().rows()] if recipient.value else [recipient]
        if controls and at_once:
            self.screen.set_focus(controls[0])
        elif controls:
            controls[0].focus()

    # -- sending -----------------------------------------------------------------------------------

    def build_request(self) -> Request | None:
        """The request for the active kind (its form builds it), or None with errors shown inline."""
        recipient = self.text("recipient")
        form = self.active_form()
        dialect = self.dialects()[0]
        return validated(self.rows(), lambda: form.build(recipient, dialect), status=self.status)

    @on(Button.Pressed, "#send")
    def action_send(self) -> None:
        self.query_one("#sent-id", CopyableValue).clear()  # a new attempt: the last one's id no longer answers
        self._answering()
        if self._media_kind_shown():
            self._send_media()
            return
        request = self.build_request()
        if request is None:
            return  # errors are shown inline; nothing is sent
        if not isinstance(request, Sendable):  # every send's model is one (tests/test_operations_complete.py)
            raise TypeError(f"{type(request).__name__} is not a Sendable request")
        kind = self.kind
        self.run_operation(
            kind.operation,
            request,
            title=f"Send {kind.title.lower()}",
            busy=self.active_form(),
            status=self.status,
            done=lambda result: self._sent(kind.title, kind.op_id, request, result),
            group="send",
            confirm_repeat=f"Send the same {kind.title.lower()} to {self.text('recipient')} again?",
        )

    def _sent(self, title: str, op_id: OperationId, request: Sendable, result: Any) -> None:
        message_id = result.Id if isinstance(result, ContactSent) else result.message_id
        recipient = request.recipient
        self.query_one("#sent-id", CopyableValue).show(message_id, f"({title.lower()} to {recipient})")
        self.post_message(MessageSent(message_id, op_id, recipient, request, result))

    # -- media (issue 25): the form reads and checks the file (tui.api.media) before anything is sent; the account's
    # family, the recipient, the send and its answer are the section's -----------------------------------------

    def _media_family(self) -> Family | None:
        from tui.gateways.media import media_family

        account = self.accounts.current
        if account is None:
            return None
        return media_family(account.families, account.dialects[1])

    def _media_problem(self) -> str | None:
        """Why no media can be sent from this account, in words; None when it can."""
        if self.accounts.current is None:
            return "The gateway is not ready yet; nothing was sent."
        if self._media_family() is None:
            return ("This profile cannot send media: the instance family (Z-API) or the session family in WuzAPI's "
                    "dialect can, the spec's session family has no media call. Nothing was sent.")
        return None

    def action_browse_media(self) -> None:
        from tui.ui.sections.chats.media import MediaForm

        self.query_one(MediaForm).browse()

    def on_media_form_check_asked(self, event: MediaForm.CheckAsked) -> None:
        event.stop()
        if self._media_sending:
            return  # the send covering the form moved the focus off the path: the file is being read for it already
        self._check_media()

    def _send_media(self) -> None:
        from tui.ui.sections.chats.media import MediaForm
        from tui.ui.sections.chats.model_form import RECIPIENT_FIELDS

        form = self.query_one(MediaForm)
        problems: dict[str, str] = {}
        if not is_recipient(self.text("recipient")):
            problems[RECIPIENT_FIELDS[0]] = f"must be {RECIPIENT_RULE}"
        if not form.path:
            problems["file"] = "type the file's path (→ completes it) or choose it with ctrl+b"
        if problems:
            apply_field_errors(self.rows(), problems)
            self.status.show_error("Nothing was sent: see the fields marked above.")
            return
        self._media_sending = True
        self._read_and_send_media()

    _media_sending = False  # a media send is under way, from reading its file to the gateway's answer

    # A check and a send are workers of two groups: a check (the path field left, a file chosen) never cancels a
    # send. It did: the send covering the form moved the focus off the path field just chosen in the picker, the
    # check that started cancelled the send's worker, and the send it awaited with it ("Send document: cancelled").

    @work(group="media-check", exclusive=True, exit_on_error=False, description="read and check the media file")
    async def _check_media(self) -> None:
        await self._media_checked(send=False)

    @work(group="media-send", exclusive=True, exit_on_error=False, description="read, check and send the media file")
    async def _read_and_send_media(self) -> None:
        try:
            await self._media_checked(send=True)
        finally:
            self._media_sending = False

    async def _media_checked(self, *, send: bool) -> None:
        """Have the form read the file and check it for the account's media family; then send when asked."""
        from tui.gateways.media import media_request
        from tui.ui.sections.chats.media import MediaForm
        from tui.ui.sections.chats.model_form import RECIPIENT_FIELDS

        form = self.query_one(MediaForm)
        problem = self._media_problem()
        family = self._media_family()
        if problem is not None or family is None:
            form.forget()
            self.status.show_error(problem or "")
            return
        media = await form.read(family, sending=send)
        if media is None:
            if send:
                self.status.show_error("Nothing was sent: see the file's line above.")
            return
        if not send:
            return
        try:
            op, request = media_request(media, family, self.text("recipient") or "0", form.caption)
        except ValidationError as error:
            form.finished(None)
            apply_field_errors(self.rows(), {RECIPIENT_FIELDS[0]: next(iter(field_errors(error).values()))})
            return
        if not isinstance(request, Sendable):
            form.finished(media)
            return
        title = f"Send {media.kind.value}"
        form.sending(media)
        worker = self.run_operation(
            op, request, title=title, busy=form, status=self.status, group="send",
            done=lambda result: self._sent(title.removeprefix("Send "), op.id, request, result),
            confirm_repeat=f"Send the same file to {self.text('recipient')} again?",
        )
        if worker is not None:
            try:
                # Shielded: whatever ends this worker, the send runs to its answer or to the user's cancel.
                waiting = asyncio.ensure_future(worker.wait())
                waiting.add_done_callback(_retrieved)
                await asyncio.shield(waiting)
            except Exception:  # noqa: BLE001 - the call's own status line says what failed
                pass
        form.finished(media)

    def action_copy_id(self) -> None:
        value = self.query_one("#sent-id", CopyableValue).value
        if value:
            self.copy(value, "Message id")

    # -- chat actions ------------------------------------------------------------------------------

    @on(Button.Pressed, "#apply-action")
    def action_chat_action(self) -> None:
        action = self.query_one(ChatActions).action
        self._answering()
        recipient_row = self.recipient_row()
        request = validated(
            [recipient_row],
            lambda: ModifyChat(phone=self.text("recipient"), action=action),
            status=self.action_status,
        )
        if request is None:
            return
        if action in DESTRUCTIVE_CHAT_ACTIONS:
            verb = "Clear the whole history of" if action is ChatAction.CLEAR else "Delete"
            self.app.push_screen(
                ConfirmScreen(
                    f"{verb} the chat with {request.phone}?",
                    "This cannot be undone.",
                    confirm_label=CHAT_ACTION_TITLES[action].split()[0],
                ),
                lambda yes: self._modify_chat(request) if yes else None,
            )
            return
        self._modify_chat(request)

    def _modify_chat(self, request: ModifyChat) -> None:
        self.run_operation(
            MODIFY_CHAT,
            request,
            title=CHAT_ACTION_TITLES[request.action],
            busy=self.query_one("#chat-actions"),
            status=self.action_status,
            done=lambda result: self._chat_modified(request, result),
        )

    def _chat_modified(self, request: ModifyChat, result: Any) -> None:
        title = CHAT_ACTION_TITLES[request.action]
        if result.ok and request.action is ChatAction.DELETE:
            self._forget_chat(request.phone)
        if result.ok:
            self.action_status.show_ok(f"{title}: done for {request.phone}.")
        else:
            self.action_status.show_error(f"{title}: the gateway answered {result.refusal} for {request.phone}; not done.")

    @work(group="forget-chat", exit_on_error=False, description="take a deleted chat out of the inbox")
    async def _forget_chat(self, recipient: str) -> None:
        """Deleted on the gateway: out of the inbox too (its events stay in Events)."""
        try:
            await self.inbox.forget_chat(recipient)
        except Exception as error:  # a failing store: say so, the gateway's delete stands
            self.status.show_error(f"Deleted on the gateway, but the inbox still lists it: {error}")

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        """Enter moves on to the next field: a message form is sent only with ctrl+s or the Send button."""
        event.stop()
        self.screen.focus_next()


def _retrieved(task: asyncio.Future[Any]) -> None:
    """The wait for a send ended: its outcome is the call's own status line's to tell, not a loop warning."""
    if not task.cancelled():
        task.exception()
