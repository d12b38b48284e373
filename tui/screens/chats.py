"""Chats: the conversations (the inbox, `tui.screens.inbox.InboxView`), and the form that sends every message
kind to a phone or group JID and acts on a chat (spec ops 1-5, 13, 23).

The section opens on the conversations, its search field focused. The form is one key away (ctrl+n for a new
number, ctrl+t or `k` for the open chat, enter on a number no chat matches) and ctrl+l goes back; one view
shows at a time, and the form's keys act only while it shows."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import ValidationError
from textual import on, work
from textual.app import ComposeResult
from textual import events
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, ContentSwitcher, Input, ProgressBar, Select, Static

from tui.api.models import (
    DESTRUCTIVE_CHAT_ACTIONS,
    ChatAction,
    ContactCard,
    ContactSent,
    ForwardMessage,
    ModifyChat,
    SendButtonActions,
    SendButtonList,
    SendLink,
    SendLocation,
    SendPoll,
    SendSticker,
    SendText,
    Sendable,
    PHONE_RULE,
    RECIPIENT_RULE,
    Request,
    field_errors,
    is_phone,
    is_recipient,
)
from tui.api.dialects import InstanceDialect
from tui.api.operations import (
    MEDIA_KINDS,
    MEDIA_OPERATIONS,
    MODIFY_CHAT,
    NAME_LISTS,
    ZAPI_LINK_PREVIEW_RULE,
    ErasedOperation,
    Family,
    OperationId,
    Section,
    SendKind,
    in_section,
    operation,
)
from tui.api.vcard import build_vcard
from tui.keymap import bindings_for, label, shown_key
from tui.messages import MessageSent
from tui.widgets.feedback import ErrorLine
from tui.widgets.forms import (
    FieldProblems,
    FieldRow,
    Form,
    PhoneValidator,
    RecipientValidator,
    TextBox,
    TextInput,
    apply_field_errors,
    lines_of,
    model_from_rows,
    model_rows,
    optional,
    validated,
    value_of,
)
from tui.widgets.media_form import LARGE_FILE, MediaPicker, PathSuggester, start_folder
from tui.widgets.section import ConfirmScreen, CopyableValue, OperationSection
from tui.widgets.section_api import SectionHost
from tui.widgets.gateway_app import gateway_app

if TYPE_CHECKING:
    from tui.screens.inbox import ReplyLine


@dataclass(frozen=True)
class Kind:
    key: str
    title: str
    op_id: OperationId

    @property
    def operation(self) -> ErasedOperation:
        return operation(self.op_id)


_KIND_ORDER = {kind: position for position, kind in enumerate(SendKind)}
MEDIA_KEY = "media"  # the form's one kind for the media rows
RECIPIENT_FIELDS = ("phone", "Phone")  # the request field the form's recipient fills (instance, session family)


def kinds() -> tuple[Kind, ...]:
    """The kinds of message the form sends: the Chats rows of the operations table that send (`sends`), in
    SendKind's order, each titled by its row ("Send poll" -> "Poll") and keyed by what it sends. The media rows
    (one per family and kind, issue 25) are one Media kind, last: the file's type picks the row, the account its
    family (`tui.api.media`)."""
    rows = [op for op in in_section(Section.CHATS) if op.sends is not None and op.sends not in MEDIA_KINDS]
    rows.sort(key=lambda op: _KIND_ORDER.get(op.sends, len(_KIND_ORDER)) if op.sends is not None else 0)
    media = [op.id for op in in_section(Section.CHATS) if op.sends in MEDIA_KINDS]
    return (*(Kind(str(op.sends), _kind_title(op.title), op.id) for op in rows if op.sends is not None),
            *((Kind(MEDIA_KEY, "Media", media[0]),) if media else ()))


def _kind_title(title: str) -> str:
    shown = title.removeprefix("Send ")
    return shown[:1].upper() + shown[1:]


def kind_of(key: str) -> Kind:
    return next(kind for kind in kinds() if kind.key == key)

CHAT_ACTION_TITLES: dict[ChatAction, str] = {
    ChatAction.READ: "Mark chat as read",
    ChatAction.ARCHIVE: "Archive chat",
    ChatAction.UNARCHIVE: "Unarchive chat",
    ChatAction.PIN: "Pin chat",
    ChatAction.UNPIN: "Unpin chat",
    ChatAction.MUTE: "Mute chat",
    ChatAction.UNMUTE: "Unmute chat",
    ChatAction.CLEAR: "Clear chat history",
    ChatAction.DELETE: "Delete chat",
}


def _row(label: str, field: str | tuple[str, ...], widget_id: str, *, placeholder: str = "", hint: str | None = None, validators=None) -> FieldRow:
    return FieldRow(
        label,
        TextInput(id=widget_id, placeholder=placeholder, validators=validators or []),
        field=field,
        hint=hint,
    )


def compose_form(with_inbox: bool) -> ComposeResult:
    """The send form's fields (ChatForm composes them)."""
    # The kind picker sits on the title line, before the recipient: Tab goes from the recipient straight to the
    # message, then the optional parts, in reading order (shift+tab from the recipient reaches the picker).
    with Horizontal(id="chat-head"):
        yield Static("Chats — new message", classes="section-title")
        yield Static("kind", classes="kind-label")
        yield Select(
            [(kind.title, kind.key) for kind in kinds()],
            value="text",
            allow_blank=False,
            compact=True,
            id="kind",
        )
        yield Static(classes="head-gap")
        if with_inbox:
            inbox = Button(label("Conversations", "chats.inbox"), id="open-inbox", compact=True)
            inbox.can_focus = False  # a mouse shortcut: tab goes from the section straight to the recipient
            yield inbox
    with Horizontal(id="chat-top"):
        yield _row(
            "Recipient (phone or group JID)",
            ("phone", "Phone"),
            "recipient",
            placeholder="5511999999999 or 120363019502650977@g.us",
            validators=[RecipientValidator()],
        )
    with ContentSwitcher(initial="form-text", id="kinds"):
        with Form(id="form-text"):
            yield FieldRow("Message", TextBox(id="text-message", soft_wrap=True), field="message")  # long text wraps
        with Form(id="form-buttons"):
            yield _row("Message", "message", "buttons-message")
            with Horizontal(classes="form-cols"):
                yield _row("Title (optional)", "title", "buttons-title")
                yield _row("Footer (optional)", "footer", "buttons-footer")
            yield FieldRow(
                "Buttons (one label per line, up to 3)", TextBox(id="buttons-labels"), field="buttons"
            )
        with Form(id="form-list"):
            yield _row("Message", "message", "list-message")
            yield FieldRow("Options (one label per line)", TextBox(id="list-labels"), field="buttonList")
        with Form(id="form-link"):
            yield _row("Message", "message", "link-message")
            yield _row("Link URL", "linkUrl", "link-url", placeholder="https://…")
            with Horizontal(classes="form-cols"):
                yield _row("Preview title (optional)", "title", "link-title")
                yield _row("Preview image URL (optional)", "image", "link-image", placeholder="https://…")
            yield _row("Preview description (optional)", "linkDescription", "link-description")
        with Form(id="form-poll"):
            yield _row("Question", "message", "poll-question")
            yield FieldRow("Options (one per line, at least 2)", TextBox(id="poll-options"), field="poll")
            yield _row("Voters may select up to", "selectableCount", "poll-count", placeholder="1")
        with Form(id="form-location"):
            with Horizontal(classes="form-cols"):
                yield _row("Place name", "title", "location-title")
                yield _row("Address", "address", "location-address")
            with Horizontal(classes="form-cols"):
                yield _row("Latitude", "lat", "location-lat", placeholder="-23.5505")
                yield _row("Longitude", "lng", "location-lng", placeholder="-46.6333")
                yield _row("Delay ms (optional)", "delayMessage", "location-delay")
        with Form(id="form-sticker"):
            yield _row("Sticker URL (WebP)", "sticker", "sticker-url", placeholder="https://…/sticker.webp")
            yield _row("Delay ms (optional)", "delayMessage", "sticker-delay")
        with Form(id="form-contact"):
            with Horizontal(classes="form-cols"):
                yield _row("Contact name", "Name", "contact-name")
                yield _row(
                    "Contact phone", "contact_phone", "contact-phone", validators=[PhoneValidator()]
                )
            with Horizontal(classes="form-cols"):
                yield _row("E-mail (optional)", "contact_email", "contact-email")
                yield _row("Organisation (optional)", "contact_organization", "contact-organization")
                yield _row("Title (optional)", "contact_title", "contact-title")
        with Form(id="form-forward"):
            yield _row("Message id to forward", "messageId", "forward-id")
            yield _row(
                "Chat it is in (phone or group JID)",
                "messagePhone",
                "forward-phone",
                validators=[RecipientValidator()],
            )
        with Form(id="form-media"):
            with Horizontal(classes="form-cols media-file"):
                yield FieldRow(
                    "File (→ completes the path)",
                    TextInput(id="media-path", placeholder="~/Documents/invoice.pdf", suggester=PathSuggester()),
                    field="file",
                )
                browse = Button(label("Browse…", "chats.browse"), id="media-browse", compact=True)
                browse.can_focus = False  # a mouse shortcut: the key is ctrl+b
                yield browse
            yield _row("Caption (optional; audio takes none)", "caption", "media-caption")
            yield Static("", id="media-info", markup=False)
            progress = ProgressBar(id="media-progress", total=None, show_eta=False, show_percentage=False)
            progress.display = False
            yield progress
        # A kind with no form written for it (and no builder in HAND_BUILT) gets one read off its request model.
        for kind in kinds():
            if kind.key == MEDIA_KEY:
                continue  # written above
            rows = None if kind.op_id in HAND_BUILT else model_rows(
                kind.operation.request, kind.key, skip=RECIPIENT_FIELDS)
            if rows is not None:
                with Form(id=f"form-{kind.key}"):
                    yield from rows
    with Horizontal(classes="actions"):
        yield Button(label("Send", "chats.send"), id="send", variant="primary")
    yield CopyableValue("Sent, message id:", id="sent-id")
    yield ErrorLine(id="chat-status")
    yield Static("Chat actions (on the recipient's chat)", classes="subtitle")
    with Horizontal(id="chat-actions", classes="actions"):
        yield Select(
            [(title, action.value) for action, title in CHAT_ACTION_TITLES.items()],
            value=ChatAction.READ.value,
            allow_blank=False,
            id="chat-action",
        )
        yield Button(label("Apply", "chats.chat_action"), id="apply-action")
    yield ErrorLine(id="chat-action-status")  # the chat action's answer, under it


class ChatForm(Vertical):
    """The send form and the chat actions (`#compose` of ChatsSection)."""

    def __init__(self, *, with_inbox: bool, id: str | None = None) -> None:
        super().__init__(id=id)
        self.with_inbox = with_inbox

    def compose(self) -> ComposeResult:
        yield from compose_form(self.with_inbox)


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
    ChatsSection .media-file > Button { margin: 1 0 0 1; }
    ChatsSection #media-info { height: auto; padding: 0 1; color: $text-muted; }
    ChatsSection #media-progress { height: 1; padding: 0 1; }
    """

    def __init__(self, *, with_inbox: bool = True, id: str | None = None) -> None:
        super().__init__(id=id)
        self.with_inbox = with_inbox

    @property
    def view(self) -> str:
        """"inbox" (the conversations) or "compose" (the form)."""
        return "inbox" if self.with_inbox and self.query_one("#chat-views", ContentSwitcher).current == "inbox" \
            else "compose"

    def compose(self) -> ComposeResult:
        from tui.screens.inbox import InboxView

        with ContentSwitcher(initial="inbox" if self.with_inbox else "compose", id="chat-views",
                             classes="-inbox" if self.with_inbox else ""):
            if self.with_inbox:
                yield InboxView(id="inbox", ask_for_form=self._form_for_inbox)
            else:
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
                form = ChatForm(with_inbox=self.with_inbox, id="compose")
                form.display = False  # the switcher shows the conversations
                await self.query_one("#chat-views", ContentSwitcher).mount(form)
                app = gateway_app(self)
                if app.runtime_ready:
                    from tui.widgets.samples import apply_samples

                    apply_samples(form, app.runtime.sandbox_samples())
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

    @on(Input.Changed, "#recipient")
    def _recipient_changed(self) -> None:
        self.clear_results()

    def text(self, widget_id: str) -> str:
        return value_of(self.query_one(f"#{widget_id}"))

    @property
    def kind(self) -> Kind:
        return kind_of(str(self.query_one("#kind", Select).value))

    def active_form(self) -> Form:
        return self.query_one(f"#form-{self.kind.key}", Form)

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
        zapi = self.dialects()[0] is InstanceDialect.ZAPI
        preview = " (required by Z-API)" if zapi else " (optional)"
        for widget_id, title in (("link-title", "Preview title"), ("link-image", "Preview image URL"),
                                 ("link-description", "Preview description")):
            self._row_of(widget_id).set_label(title + preview)
        delay = "Delay s, 1-15 (optional, Z-API)" if zapi else "Delay ms (optional)"
        for widget_id in ("location-delay", "sticker-delay"):
            self._row_of(widget_id).set_label(delay)

    def _row_of(self, widget_id: str) -> FieldRow:
        return self.query_one(f"#{widget_id}").parent  # type: ignore[return-value]

    def _delay_ms(self, widget_id: str) -> int | str | None:
        """The delay field as the spec's milliseconds; in the Z-API dialect the field holds whole seconds."""
        text = optional(self.text(widget_id))
        if text is None or self.dialects()[0] is not InstanceDialect.ZAPI:
            return text
        if not text.isdigit() or not 1 <= int(text) <= 15:
            raise FieldProblems({"delayMessage": "Z-API waits whole seconds: a number from 1 to 15"})
        return int(text) * 1000

    # -- the two views -------------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("send", "chat_action", "copy_id", "browse_media") and self.view != "compose":
            return False  # the form's keys act only while the form shows
        if action == "browse_media" and (not self.form_ready or self.kind.key != MEDIA_KEY):
            return False  # the file picker belongs to the Media kind
        if action == "inbox" and self.view != "compose":
            return False
        return super().check_action(action, parameters)

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
        from tui.screens.inbox import InboxList, InboxView

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
        from tui.screens.inbox import InboxView

        event.stop()
        text = event.text
        chat = self.query_one(InboxView).open_chat_id

        def fill() -> None:
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
            from tui.screens.inbox import InboxList

            self.screen.set_focus(self.query_one(InboxList))

    def open_operation(self, op_id: str) -> None:
        if op_id == "inbox":
            self.action_inbox()
            return
        if op_id in NAME_LISTS:  # the lists name the inbox's chats: read them again, and show the conversations
            gateway_app(self).runtime.refresh_names()
            self.action_inbox()
            return
        if op_id == "compose":
            self.show_form()
            return
        if not self.form_ready:
            self._with_form(lambda: self.open_operation(op_id))
            return
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
            self.query_one("#chat-action", Select).value = ChatAction(op_id.removeprefix("chat-")).value
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

    def build_request(self) -> Any:
        """The request for the active kind, or None with errors shown inline."""
        kind = self.kind
        recipient = self.text("recipient")
        builder = HAND_BUILT.get(kind.op_id)
        if builder is not None:
            return validated(self.rows(), lambda: builder(self, recipient), status=self.status)
        model = kind.operation.request
        to = next(name for name in RECIPIENT_FIELDS if name in model.model_fields)
        return validated(self.rows(), lambda: model_from_rows(model, self.active_form().rows(), {to: recipient}),
                         status=self.status)

    # The builders below hand the form's text to model_validate: the models turn "12" into 12 and "-23.5" into a
    # float by their own rules, and name the field when they cannot.

    def _build_text(self, phone: str) -> SendText:
        return SendText(phone=phone, message=self.text("text-message"))

    def _build_buttons(self, phone: str) -> SendButtonActions:
        labels = lines_of(self.query_one("#buttons-labels", TextBox).text)
        return SendButtonActions.model_validate({
            "phone": phone,
            "message": self.text("buttons-message"),
            "title": optional(self.text("buttons-title")),
            "footer": optional(self.text("buttons-footer")),
            "buttons": [{"id": str(index), "text": label} for index, label in enumerate(labels, 1)],
        })

    def _build_list(self, phone: str) -> SendButtonList:
        labels = lines_of(self.query_one("#list-labels", TextBox).text)
        return SendButtonList.model_validate({
            "phone": phone,
            "message": self.text("list-message"),
            "buttonList": {"buttons": [{"id": str(index), "label": label} for index, label in enumerate(labels, 1)]},
        })

    def _build_link(self, phone: str) -> SendLink:
        if self.dialects()[0] is InstanceDialect.ZAPI:
            missing = {
                field: f"is required: {ZAPI_LINK_PREVIEW_RULE}"
                for field, widget_id in (("title", "link-title"), ("image", "link-image"),
                                         ("linkDescription", "link-description"))
                if not self.text(widget_id)
            }
            if missing:
                raise FieldProblems(missing)
        return SendLink(
            phone=phone,
            message=self.text("link-message"),
            linkUrl=self.text("link-url"),
            image=optional(self.text("link-image")),
            title=optional(self.text("link-title")),
            linkDescription=optional(self.text("link-description")),
        )

    def _build_poll(self, phone: str) -> SendPoll:
        options = lines_of(self.query_one("#poll-options", TextBox).text)
        count = optional(self.text("poll-count"))
        return SendPoll.model_validate({
            "phone": phone,
            "message": self.text("poll-question"),
            "poll": [{"name": option} for option in options],
            **({"selectableCount": count} if count is not None else {}),
        })

    def _build_location(self, phone: str) -> SendLocation:
        return SendLocation.model_validate({
            "phone": phone,
            "title": self.text("location-title"),
            "address": self.text("location-address"),
            "lat": self.text("location-lat"),
            "lng": self.text("location-lng"),
            "delayMessage": self._delay_ms("location-delay"),
        })

    def _build_sticker(self, phone: str) -> SendSticker:
        return SendSticker.model_validate(
            {"phone": phone, "sticker": self.text("sticker-url"), "delayMessage": self._delay_ms("sticker-delay")}
        )

    def _build_contact(self, phone: str) -> ContactCard:
        name = self.text("contact-name")
        contact_phone = self.text("contact-phone")
        problems: dict[str, str] = {}
        if not name:
            problems["Name"] = "must not be empty"
        if not is_phone(contact_phone):
            problems["contact_phone"] = f"must be {PHONE_RULE}"
        email = optional(self.text("contact-email"))
        if email is not None and ("@" not in email or email.startswith("@") or email.endswith("@")):
            problems["contact_email"] = "must be an e-mail address like name@example.com"
        if problems:
            # Check the rest of the card too, so every problem shows at once.
            try:
                ContactCard(Phone=phone, Name=name or "-", Vcard="BEGIN:VCARD\nEND:VCARD")
            except ValidationError as error:
                problems = {**field_errors(error), **problems}
            raise FieldProblems(problems)
        vcard = build_vcard(
            name,
            contact_phone,
            email=email,
            organization=optional(self.text("contact-organization")),
            title=optional(self.text("contact-title")),
        )
        return ContactCard(Phone=phone, Name=name, Vcard=vcard)

    def _build_forward(self, phone: str) -> ForwardMessage:
        return ForwardMessage(phone=phone, messageId=self.text("forward-id"), messagePhone=self.text("forward-phone"))

    @on(Button.Pressed, "#send")
    def action_send(self) -> None:
        self.query_one("#sent-id", CopyableValue).clear()  # a new attempt: the last one's id no longer answers
        if self.kind.key == MEDIA_KEY:
            self._send_media()
            return
        request = self.build_request()
        if request is None:
            return  # errors are shown inline; nothing is sent
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

    # -- media (issue 25): the file is checked by tui.api.media before anything is sent ---------------------

    def _media_family(self) -> Family | None:
        from tui.api.media import media_family

        account = gateway_app(self).runtime.current
        if account is None:
            return None
        return media_family(account.families, account.dialects[1])

    def _media_problem(self) -> str | None:
        """Why no media can be sent from this account, in words; None when it can."""
        if gateway_app(self).runtime.current is None:
            return "The gateway is not ready yet; nothing was sent."
        if self._media_family() is None:
            return ("This profile cannot send media: the instance family (Z-API) or the session family in WuzAPI's "
                    "dialect can, the spec's session family has no media call. Nothing was sent.")
        return None

    @on(Input.Blurred, "#media-path")
    def _media_path_left(self) -> None:
        """Leaving the path field says what the file is and how big, or why it cannot be sent, before any send."""
        if self.text("media-path"):
            self._check_media(send=False)

    _media_checked: str | None = None  # the path the info line speaks of

    @on(Input.Changed, "#media-path")
    def _media_path_changed(self, event: Input.Changed) -> None:
        if event.value != self._media_checked:  # another file: the line spoke of the one before
            self._media_checked = None
            self.query_one("#media-info", Static).update("")
            self._row_of("media-path").set_error(None)

    def action_browse_media(self) -> None:
        self.app.push_screen(MediaPicker(start_folder(self.text("media-path"))), self._media_chosen)

    @on(Button.Pressed, "#media-browse")
    def _browse_pressed(self) -> None:
        self.action_browse_media()

    def _media_chosen(self, path: Path | None) -> None:
        field = self.query_one("#media-path", Input)
        if path is not None:
            field.value = str(path)
            self._check_media(send=False)
        self.screen.set_focus(field)

    def _send_media(self) -> None:
        recipient = self.text("recipient")
        problems: dict[str, str] = {}
        if not is_recipient(recipient):
            problems[RECIPIENT_FIELDS[0]] = f"must be {RECIPIENT_RULE}"
        if not self.text("media-path"):
            problems["file"] = "type the file's path (→ completes it) or choose it with ctrl+b"
        if problems:
            apply_field_errors(self.rows(), problems)
            self.status.show_error("Nothing was sent: see the fields marked above.")
            return
        self._check_media(send=True)

    @work(group="media-check", exclusive=True, exit_on_error=False, description="read and check the media file")
    async def _check_media(self, *, send: bool) -> None:
        """Read the file and check it for the account's media family; show what it is, then send when asked."""
        from tui.api.media import MediaRefused, described, media_request, read_media

        info = self.query_one("#media-info", Static)
        path_row = self._row_of("media-path")
        problem = self._media_problem()
        if problem is not None:
            info.update("")
            self.status.show_error(problem)
            return
        family = self._media_family()
        assert family is not None
        self._media_checked = self.text("media-path")
        path = Path(os.path.expanduser(self._media_checked))
        caption = self.text("media-caption")
        progress = self.query_one("#media-progress", ProgressBar)
        large = _size_of(path) >= LARGE_FILE
        if send and large:
            info.update(f"Reading {path.name}…")
            progress.display = True
        try:
            media = await asyncio.to_thread(read_media, path, family)
            op, request = media_request(media, family, self.text("recipient") or "0", caption or None) if send \
                else (None, None)
        except MediaRefused as refused:
            progress.display = False
            info.update("")
            path_row.set_error(f"{str(refused).rstrip('.')}. Nothing was sent.")
            if send:
                self.status.show_error("Nothing was sent: see the file's line above.")
            return
        except ValidationError as error:
            progress.display = False
            apply_field_errors(self.rows(), {RECIPIENT_FIELDS[0]: next(iter(field_errors(error).values()))})
            return
        path_row.set_error(None)
        info.update(described(media))
        if not send or op is None or not isinstance(request, Sendable):
            return
        title = f"Send {media.kind.value}"
        if large:
            info.update(f"{described(media)} — sending…")
        worker = self.run_operation(
            op, request, title=title, busy=self.active_form(), status=self.status, group="send",
            done=lambda result: self._sent(title.removeprefix("Send "), op.id, request, result),
            confirm_repeat=f"Send the same file to {self.text('recipient')} again?",
        )
        if worker is not None:
            try:
                await worker.wait()
            except Exception:  # noqa: BLE001 - the call's own status line says what failed
                pass
        progress.display = False
        info.update(described(media))

    def action_copy_id(self) -> None:
        value = self.query_one("#sent-id", CopyableValue).value
        if value:
            self.copy(value, "Message id")

    # -- chat actions ------------------------------------------------------------------------------

    @on(Button.Pressed, "#apply-action")
    def action_chat_action(self) -> None:
        action = ChatAction(str(self.query_one("#chat-action", Select).value))
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
            await gateway_app(self).runtime.forget_chat(recipient)
        except Exception as error:  # a failing store: say so, the gateway's delete stands
            self.status.show_error(f"Deleted on the gateway, but the inbox still lists it: {error}")

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        """Enter moves on to the next field: a message form is sent only with ctrl+s or the Send button."""
        event.stop()
        self.screen.focus_next()


def _size_of(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


# The kinds with a form written for them in `compose_form` and their builders; any other kind of the table gets a
# form and a builder read off its request model (`tui.widgets.forms.model_rows`).
HAND_BUILT: dict[OperationId, Callable[[ChatsSection, str], Request]] = {
    OperationId.SEND_TEXT: ChatsSection._build_text,
    OperationId.SEND_BUTTON_ACTIONS: ChatsSection._build_buttons,
    OperationId.SEND_BUTTON_LIST: ChatsSection._build_list,
    OperationId.SEND_LINK: ChatsSection._build_link,
    OperationId.SEND_POLL: ChatsSection._build_poll,
    OperationId.SEND_LOCATION: ChatsSection._build_location,
    OperationId.SEND_STICKER: ChatsSection._build_sticker,
    OperationId.SEND_CONTACT: ChatsSection._build_contact,
    OperationId.FORWARD_MESSAGE: ChatsSection._build_forward,
}
