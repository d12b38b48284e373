"""The inbox, shown by Chats when it opens: conversations on the left (newest first, unread counts, "typing…"),
the open thread on the right, a one-line text reply under it, and the search field above the list (the
section's first field: typing at once filters the conversations).

Everything comes from the event store through `InboxService.inbox` (indexed reads of about a millisecond, made on
the event loop; a search of the messages' text in a thread worker): received messages,
receipts and presence as the listener stored them, and the account's own sends (this app's and
`gateway-tui call`'s). It follows the store live while it is shown: each stored event and each recorded send
refreshes the list and the open thread; hidden, it catches up in the switch that shows it again.

Keys (`tui.ui.keymap`, scopes "inbox" and "inbox_list"): on the list, enter opens a chat's reply line, `/`
searches, `m` marks the chat read on the gateway (modify-chat `read`), `k` opens the full send form (any kind,
the recipient filled in, with the chat actions), `n` composes to a new number; ctrl+n composes and ctrl+t opens
the full form from any field of the inbox; in the reply field enter sends the text; in the search field ↓ or enter
goes to the list, or, when no chat matches a phone number typed there, enter opens the form with that number; on
the thread enter shows the timeline of the newest sent message in view (`tui.ui.screens.timeline`).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.message import Message
from textual.containers import Horizontal, Vertical
from textual.widget import Widget
from textual.widgets import ContentSwitcher, Input, Static

from tui.api.models import ChatAction, ModifyChat, SendText, is_phone, normalized_phone
from tui.api.operations import MODIFY_CHAT, SEND_TEXT, OperationId
from tui.ui.keymap import bindings_for
from tui.ui.messages import MessageSent
from tui.core.accounts.account import ClientsNotReady
from tui.local.config import MissingFamily
from tui.core.feed.bus import InboxChanged
from tui.local.preferences import STUCK_MINUTES_DEFAULT, PreferencesError, load_stuck_minutes
from tui.core.runtime import ConversationRow
from tui.ui.widgets.conversation_list import ConversationList
from tui.ui.widgets.feedback import ErrorLine, explain_error
from tui.ui.widgets.forms import TextInput
from tui.ui.screens.timeline import TimelineScreen
from tui.ui.widgets.thread_view import ThreadView
from tui.ui.widgets.timefmt import inbox_time_text

if TYPE_CHECKING:  # pragma: no cover
    from tui.api.client import InstanceClient
    from tui.core.services import Services
    from tui.ui.widgets.gateway_app import AppState

LIST_PAGE = 200  # chats listed at first; reaching the last one lists this many more (search reaches all)
THREAD_PAGE = 200  # messages per page of a thread
REFRESH_DELAY = 0.05  # a burst of events refreshes the inbox once
TICK_INTERVAL = 5.0  # "typing…" expires without an event, a sent message becomes stuck


class InboxList(ConversationList):
    """The conversation list with the inbox's letter keys (they act only while the list has the focus)."""

    BINDINGS = [*ConversationList.BINDINGS, *bindings_for("inbox_list")]

    @property
    def inbox_view(self) -> InboxView:
        return self.query_ancestor(InboxView)

    def action_open_chat(self) -> None:
        self.inbox_view.action_open_chat()

    def action_search(self) -> None:
        self.inbox_view.query_one("#inbox-search", Input).focus()

    def action_mark_read(self) -> None:
        self.inbox_view.action_mark_read()

    def action_full_form(self) -> None:
        self.inbox_view.action_full_form()

    def action_compose(self) -> None:
        self.inbox_view.action_compose()


class SearchField(TextInput):
    """The search line: ↓ goes down to the list, on the chat shown (so enter there replies to it, and what is
    typed next is the reply, not the list's letter keys)."""

    BINDINGS = [Binding("down", "to_list", "To the list", show=False)]

    def action_to_list(self) -> None:
        self.query_ancestor(InboxView).query_one(ConversationList).focus()


class ReplyLine(TextInput):
    """The one-line reply. A paste of several lines is not cut to its first (Textual's Input keeps only that): the
    whole text, with what was typed around it, goes to the full form's message box (`MovedToForm`, handled by
    ChatsSection), unsent."""

    class MovedToForm(Message):
        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

    def on_paste(self, event: events.Paste) -> None:
        pasted = event.text.replace("\r\n", "\n").replace("\r", "\n")
        if "\n" not in pasted.strip("\n"):
            return  # one line: the Input inserts it
        event.prevent_default()
        event.stop()
        start, end = sorted(self.selection)
        text = self.value[:start] + pasted.strip("\n") + self.value[end:]
        self.value = ""
        self.post_message(self.MovedToForm(text))


class InboxView(Widget):
    """Conversations and the open thread (Chats composes it; it is built with the sections, after the first
    frame, so showing it is a switch)."""

    BINDINGS = bindings_for("inbox")

    DEFAULT_CSS = """
    InboxView { height: 1fr; }
    InboxView #inbox-title { height: 1; background: $boost; padding: 0 1; text-style: bold; }
    InboxView #inbox-note { height: auto; padding: 0 1; color: $text-muted; display: none; }
    InboxView #inbox-body { height: 1fr; }
    InboxView #inbox-left { width: 36%; min-width: 28; max-width: 48; border-right: solid $panel-lighten-2; }
    InboxView #inbox-search { height: 1; border: none; padding: 0 1; }
    InboxView #inbox-search:focus { background: $boost; }
    InboxView #conversations { height: 1fr; }
    InboxView #thread-title { height: 1; padding: 0 1; text-style: bold; color: $accent; }
    InboxView #reply { height: 1; border: none; padding: 0 1; background: $boost; }
    InboxView #inbox-status { height: auto; padding: 0 1; }
    """

    def __init__(self, services: Services, state: AppState, chat_id: str | None = None, *,
                 ask_for_form: Callable[[str | None, bool], None], id: str | None = None) -> None:
        super().__init__(id=id)
        self.accounts = services.accounts
        self.inbox_service = services.inbox
        self.bus = services.bus
        self.run_display = services.display
        self.state = state
        self.initial_chat = chat_id
        # Chats' send form, to a recipient (None: a new number), True: the full form for the open chat. A call,
        # not a message: keys typed right after ctrl+n (a burst from the terminal, or the start-up replay) are
        # already queued at the app, and would reach the search before a message was handled.
        self.ask_for_form = ask_for_form
        self.rows: list[ConversationRow] = []
        self.open_chat_id: str | None = None
        self.refreshes = 0  # completed refreshes (tests wait on it)
        self._unsubscribe: list[Any] = []
        self._refresh_timer: Any = None
        self._shown: Any = None
        self.list_limit = LIST_PAGE
        self._generation = 0
        self._stale = False  # something happened while hidden: refresh when shown
        # Each chat's reply draft, by (account, chat): the reply line holds the open chat's (`_draft_for`), the
        # others wait here. One line for every chat sent a draft typed for one chat to the next one opened.
        self._drafts: dict[tuple[str, str], str] = {}
        self._draft_for: tuple[str, str] | None = None
        self._catch_up_shown: list[str] = []  # the catch-up's lines under the title, as last drawn

    def compose(self) -> ComposeResult:
        yield Static("Chats", id="inbox-title")
        yield Static("", id="inbox-note")  # what the catch-up after a gap recovered, or could not (tui.core.catchup)
        with Horizontal(id="inbox-body"):
            with Vertical(id="inbox-left"):
                yield SearchField(placeholder="Search chats, or type a new number (/)", id="inbox-search")
                yield InboxList(time_text=self._time_text, id="conversations")
            with Vertical(id="inbox-right"):
                yield Static("", id="thread-title")
                yield ThreadView(time_text=self._time_text, clock=self._now_us, id="thread")
                yield ReplyLine(placeholder="Reply: enter sends · ctrl+t other kinds", id="reply")
                yield ErrorLine(id="inbox-status")

    # -- life cycle ------------------------------------------------------------------------------------------

    def on_mount(self) -> None:
        self.state.event_received.subscribe(self, self._on_events)
        self._unsubscribe.append(self.bus.subscribe(InboxChanged, self._on_recorded))
        self.inbox_service.ask_names()  # the inbox opens: its chats named from the gateway's lists (the first time)
        self.set_interval(TICK_INTERVAL, self._tick)
        try:
            self.query_one(ThreadView).stuck_after_minutes = load_stuck_minutes()
        except PreferencesError:  # the theme's reading says so at start; the default holds here
            self.query_one(ThreadView).stuck_after_minutes = STUCK_MINUTES_DEFAULT
        for node in self.ancestors:  # the section switch and Chats' form/inbox switch
            if isinstance(node, ContentSwitcher):
                self.watch(node, "current", self._switched, init=False)
        self.watch(self.app, "runtime_ready", self._runtime_ready, init=True)

    def _runtime_ready(self, ready: bool) -> None:
        if ready:  # the store is open (already at mount, or now): read it
            self.reload(select=self.initial_chat)

    def on_unmount(self) -> None:
        for unsubscribe in self._unsubscribe:
            unsubscribe()
        self._unsubscribe.clear()

    @property
    def shown(self) -> bool:
        """On the current screen and not inside a hidden part (another section, the form view)."""
        return self.screen.is_current and all(
            node.display for node in self.ancestors_with_self if isinstance(node, Widget))

    def _switched(self) -> None:
        """A switch made it visible: catch up with what happened meanwhile at once, in the switch itself, so
        the frame that shows it is current (its Show event comes a layout and a frame later)."""
        if self.shown:
            self._catch_up()

    def on_show(self) -> None:
        self._catch_up()  # shown some other way (a screen on top closed)

    def _catch_up(self) -> None:
        """Shown again: the list and the open thread as the store has them now. Not only when an event or a send
        of this app came meanwhile (`_stale`): another process writes the same store with no word to this app
        (`gateway-tui call` records its sends, `gateway-tui listen` its receipts), and a mark the window already
        held is read again, so what Chats shows when opened is never older than the store."""
        if self.refreshes:
            self._stale = False
            self.reload(reread=True)

    def _on_events(self, events: tuple[Any, ...]) -> None:
        """Only events for this inbox's account change it (with 100 accounts open, one event in a hundred)."""
        account = self.accounts.shown
        if account is None or any(event.account == account for event in events):
            self._changed(background=True)

    def _on_recorded(self, _changed: InboxChanged) -> None:
        self.call_later(self._changed)

    def _changed(self, *, background: bool = False) -> None:
        if self.shown:
            self.schedule_refresh(background=background)
        else:
            self._stale = True

    def _tick(self) -> None:
        if self.shown:
            self.schedule_refresh(background=True)

    _for_user = False
    """The refresh pending shows something the user did (a search typed, a send): never held for the next key."""
    _refresh_held = False

    def schedule_refresh(self, *, background: bool = False) -> None:
        """A refresh in REFRESH_DELAY. `background`: for events that came or the clock, not for what the user did;
        such a refresh waits for the moment after a key while the user types (tui.ui.widgets.typing_pace)."""
        if not background:
            self._for_user = True
            if self._refresh_held:  # the events' refresh waits for the next key: the user's own does not
                self._refresh_timer = None
        if self._refresh_timer is None:
            self._refresh_timer = self.set_timer(REFRESH_DELAY, self._timed_refresh)

    def _timed_refresh(self) -> None:
        if not self._for_user and self.state.pace.holds(self, self._timed_refresh):
            self._refresh_held = True  # events' refresh while the user types: after their key's frame (not idle)
            return
        self._refresh_timer = None
        self._refresh_held = self._for_user = False
        self.reload()

    @property
    def idle(self) -> bool:
        """No refresh pending or running (tests wait for this before they look)."""
        return self._refresh_timer is None and not any(
            worker.node is self and worker.is_running for worker in self.app.workers
        )
    # -- loading ---------------------------------------------------------------------------------------------

    @property
    def inbox(self) -> Any:
        return self.inbox_service.inbox

    def _time_text(self, at_us: int) -> str:
        return inbox_time_text(at_us, deterministic=self.run_display.deterministic)

    def _now_us(self) -> int:
        return self.run_display.now_us()

    def _step_time_text(self, at_us: int) -> str:
        """A timeline step's time, to the second (deterministic mode: the thread's fixed times)."""
        if self.run_display.deterministic:
            return inbox_time_text(at_us, deterministic=True)
        moment = datetime.fromtimestamp(at_us / 1_000_000).astimezone()
        today = moment.date() == datetime.now().astimezone().date()
        return moment.strftime("%H:%M:%S" if today else "%Y-%m-%d %H:%M:%S")

    def reload(self, select: str | None = None, *, reread: bool = False) -> None:
        """Read the list (and the chosen thread, or what is new in the open one) and show it. `reread`: the marks
        of every sent message in the open thread's window, not only those an event may still change.

        The reads are indexed queries of about a millisecond (the list, a thread's newest page, what is new in
        it), so they run here, on the event loop, and are shown in the same turn: a thread worker's round trip
        cost tens of milliseconds more than the read under load. Only a search of the messages' text (a scan of
        every stored message, 50–100 ms on a large history) is read in a thread worker."""
        inbox = self.inbox
        if inbox is None:
            self._show_not_ready()
            return
        if self._not_ready_shown:  # it has started since: the line no longer holds
            self._not_ready_shown = False
            self.query_one(ErrorLine).clear()
        self._generation += 1
        view = self.query_one(ThreadView)
        chat = select or self.open_chat_id
        if chat is not None and chat != self.open_chat_id:
            self._open_thread(chat)  # on screen at once, whatever the list's read costs
        elif chat is not None:
            new = inbox.thread_after(chat, view.newest_id)
            if new:
                view.recovered = self.inbox_service.recovered_in(chat)
                view.extend(new)
            pending = view.sent_ids() if reread else view.pending_ids()
            if pending:
                statuses = inbox.statuses(pending)
                if statuses:
                    view.set_statuses(statuses)
        search = self.query_one("#inbox-search", Input).value.strip() or None
        if search is None:
            self._apply(inbox.conversations(self.list_limit), self._generation)
        else:
            self._search_list(search, self.list_limit, self._generation)

    def account_changed(self) -> None:
        """Another account became current: its conversations, and the open chat's thread read again from its inbox
        (shown now if visible, else when shown)."""
        if self.inbox is None:
            return
        self.query_one(ErrorLine).clear()  # its answer ("Sent, message id …") was the other account's
        if self.open_chat_id is not None:
            self._open_thread(self.open_chat_id)
        if self.shown:
            self.reload()
        else:
            self._stale = True

    def _open_thread(self, chat: str) -> None:
        """Show a chat's newest page (one indexed read)."""
        inbox = self.inbox
        if inbox is None:
            return
        page = inbox.thread(chat, THREAD_PAGE + 1)
        if chat != self.open_chat_id and not self._not_ready_shown:
            self.query_one(ErrorLine).clear()  # its answer ("Marked read", "Sent") was about the chat left
        self.open_chat_id = chat
        self._keep_draft_of(chat)
        view = self.query_one(ThreadView)
        view.recovered = self.inbox_service.recovered_in(chat)
        view.show(page[-THREAD_PAGE:], len(page) > THREAD_PAGE, placeholder="No messages yet.")
        self._show_title()

    def _draft_key(self, chat: str) -> tuple[str, str]:
        account = self.accounts.current
        return (account.name if account is not None else "", chat)

    def _keep_draft_of(self, chat: str) -> None:
        """The reply line holds `chat`'s draft (of the current account): the one it held waits for its chat."""
        key = self._draft_key(chat)
        if key == self._draft_for:
            return
        reply = self.query_one("#reply", Input)
        if self._draft_for is not None:
            if reply.value:
                self._drafts[self._draft_for] = reply.value
            else:
                self._drafts.pop(self._draft_for, None)
        self._draft_for = key
        reply.value = self._drafts.pop(key, "")

    def _sent_draft(self, key: tuple[str, str], text: str) -> None:
        """A reply was sent: its draft goes, in the reply line if its chat is still open there, else where it waits."""
        reply = self.query_one("#reply", Input)
        if key == self._draft_for:
            if reply.value == text:
                reply.value = ""
        elif self._drafts.get(key) == text:
            del self._drafts[key]

    @work(thread=True, group="inbox-load", exclusive=True, exit_on_error=False, description="search the inbox")
    def _search_list(self, search: str, limit: int, generation: int) -> None:
        rows = self.inbox.conversations(limit, search=search)
        self.app.call_from_thread(self._apply, rows, generation)

    _not_ready_shown = False

    def _show_not_ready(self) -> None:
        self._not_ready_shown = True
        self.query_one(ErrorLine).show_error("The inbox opens once the app has started (see the header).")

    def _apply(self, rows: list[ConversationRow], generation: int) -> None:
        if generation != self._generation:
            return  # a newer read was asked for meanwhile: its answer is the one to show
        self.rows = rows
        searched = self.query_one("#inbox-search", Input).value.strip()
        chat = self.open_chat_id
        if chat is not None and all(row.chat_id != chat for row in rows) and self.inbox.conversation(chat) is None:
            # deleted on the gateway (the inbox forgot it): nothing of it stays on screen
            self.open_chat_id = chat = None
            self.query_one(ThreadView).show([], False, placeholder="Choose a conversation.")
            self._show_title()
        if rows and (chat is None or (searched and all(row.chat_id != chat for row in rows))):
            # nothing open yet, or a search left the open chat out: the first one listed
            self._open_thread(rows[0].chat_id)
        self._fill_table(rows, self.open_chat_id)
        self._show_title()
        title = f"Chats · {len(rows)} conversation{'s' if len(rows) != 1 else ''}"
        if searched:
            title += f" matching “{searched}”"
        unread = sum(1 for row in rows if row.unread)
        if unread:
            title += f" · {unread} with unread"
        # One line of fixed size (its CSS): no layout of the whole screen for it, as Static.update does by default
        # (the screen's full layouts were a third of the main thread under a flood of events: bench/README.md).
        self.query_one("#inbox-title", Static).update(Text(title), layout=False)
        self._show_catch_up()
        self.refreshes += 1

    def _show_catch_up(self) -> None:
        """The newest catch-up's line(s) under the title ("12 messages recovered from 03:10–03:42", or the gap
        named); hidden when there was none or nothing was missed."""
        lines = self.inbox_service.catch_up_lines()
        note = self.query_one("#inbox-note", Static)
        if lines != self._catch_up_shown:
            self._catch_up_shown = lines
            note.update(Text("\n".join(f"↺ {line}" for line in lines)))
            note.display = bool(lines)

    def _fill_table(self, rows: list[ConversationRow], selected: str | None) -> None:
        table = self.query_one(ConversationList)
        now = self.run_display.now_us()
        shown = (rows, [row.typing(now) for row in rows])
        if shown != self._shown:  # redrawn only when a row changed, not when the choice moves
            self._shown = shown
            table.set_rows(*shown)
        if not rows:
            return
        index = next((i for i, row in enumerate(rows) if row.chat_id == selected), None)
        if index is not None and index != table.cursor_row:
            table.move_cursor(row=index, notify=False)

    def _show_title(self) -> None:
        title = self.query_one("#thread-title", Static)
        chat = self.open_chat_id
        if chat is None:
            title.update("")
            return
        row = next((r for r in self.rows if r.chat_id == chat), None)
        name = row.title if row else chat
        # A LID chat's title already says its number (or that it is unknown, with the LID): the LID follows a known one.
        extra = f" · {chat}" if row and (row.name or row.phone) and chat not in name else ""
        typing = " · typing…" if row and row.typing(self.run_display.now_us()) else ""
        title.update(Text(f"{name}{extra}{typing}"), layout=False)  # one line of fixed size, as the inbox's title

    @on(ThreadView.NeedOlder)
    def _older(self) -> None:
        self._load_older()

    @on(ThreadView.ShowTimeline)
    def _show_timeline(self, event: ThreadView.ShowTimeline) -> None:
        inbox = self.inbox
        if inbox is None:
            return
        view = self.query_one(ThreadView)
        self.app.push_screen(TimelineScreen(
            event.message_ids, event.index, read=inbox.timeline, time_text=self._step_time_text,
            clock=self._now_us, stuck_after_minutes=view.stuck_after_minutes))

    @on(ThreadView.MediaAsked)
    def _media_asked(self, event: ThreadView.MediaAsked) -> None:
        """Open, save or preview a media message's file (tui.ui.screens.media)."""
        from tui.ui.screens.media import act_on_media

        line = self.query_one(ErrorLine)

        def say(words: str, ok: bool) -> None:
            line.show_ok(words) if ok else line.show_error(words)

        if event.row is None:
            say("No media message in this thread: the file keys act on a received image, video, audio or "
                "document.", False)
            return
        self.run_worker(act_on_media(self, self.inbox_service, event.row, event.action, say), group="inbox-media",
                        exclusive=True, exit_on_error=False, description="the media message's file")

    @on(ThreadView.Typed)
    def _typed_on_thread(self, event: ThreadView.Typed) -> None:
        """Typing while the thread has the focus writes the reply (or, with no chat open, the search)."""
        field = self.query_one("#reply" if self.open_chat_id is not None else "#inbox-search", Input)
        field.focus()
        field.insert_text_at_cursor(event.character)

    def _load_older(self) -> None:
        """The page before the oldest message held (one indexed read, as `reload`'s)."""
        view = self.query_one(ThreadView)
        chat, key, inbox = self.open_chat_id, view.oldest_key, self.inbox
        if chat is None or key is None or inbox is None:
            return
        page = inbox.thread(chat, THREAD_PAGE + 1, key)
        view.prepend(page[-THREAD_PAGE:], len(page) > THREAD_PAGE)

    # -- choosing a chat -------------------------------------------------------------------------------------

    @on(ConversationList.Highlighted, "#conversations")
    def _highlighted(self, event: ConversationList.Highlighted) -> None:
        if event.index != event.chat_list.cursor_row:
            return  # stale: the cursor moved on since
        chat = event.chat_id
        if event.index == len(self.rows) - 1 and len(self.rows) >= self.list_limit:
            self.list_limit += LIST_PAGE  # at the last chat listed: list the next ones
            self.schedule_refresh()
        if chat and chat != self.open_chat_id:
            self._open_thread(chat)  # the list is as it was: only the thread is read

    def action_open_chat(self) -> None:
        if self.open_chat_id is not None:
            self.query_one("#reply", Input).focus()

    @on(ConversationList.Selected, "#conversations")
    def _selected(self, _event: ConversationList.Selected) -> None:
        self.action_open_chat()

    @on(Input.Changed, "#inbox-search")
    def _search(self) -> None:
        self.schedule_refresh()

    @on(Input.Submitted, "#inbox-search")
    def _search_done(self, event: Input.Submitted) -> None:
        """Enter: to the list; with no chat matching what looks like a phone number, the form to that number."""
        event.stop()
        typed = event.value.strip()
        number = normalized_phone(typed) or typed
        inbox = self.inbox
        if typed and (inbox is None or not inbox.conversations(1, search=typed)):  # one indexed query, ≈1 ms
            if is_phone(number):
                self.ask_for_form(number, False)
            else:
                self.query_one(ErrorLine).show_error(
                    f"No conversation matches “{typed}”. To write to a new number, type it with its country code "
                    "(digits only) and press enter, or press ctrl+n.")
            return
        self.query_one(ConversationList).focus()

    # -- actions ---------------------------------------------------------------------------------------------

    def action_compose(self) -> None:
        """Compose to a new number: the Chats form, the recipient empty (or the number typed in the search)."""
        searched = self.query_one("#inbox-search", Input).value.strip()
        typed = normalized_phone(searched) or searched
        self.ask_for_form(typed if typed and is_phone(typed) else None, False)

    def action_full_form(self) -> None:
        chat = self.open_chat_id
        if chat is None:
            self.query_one(ErrorLine).show_error("Choose a conversation first.")
            return
        self.ask_for_form(self._reply_address(chat), True)

    def _reply_address(self, chat: str) -> str:
        """Where a reply to `chat` goes: a LID chat's phone number once it is known, else the chat itself."""
        row = next((r for r in self.rows if r.chat_id == chat), None)
        return row.reply_to if row is not None else chat

    def action_mark_read(self) -> None:
        chat = self.open_chat_id
        if chat is None:
            self.query_one(ErrorLine).show_error("Choose a conversation first.")
            return
        self._mark_read(chat)

    @work(group="inbox-call", exclusive=True, exit_on_error=False, description="mark the chat read")
    async def _mark_read(self, chat: str) -> None:
        try:
            client = self._instance_client()
        except MissingFamily as error:
            self._answer(chat, str(error), ok=False)
            return
        except ClientsNotReady:
            self._answer(chat, "The gateway is not ready yet; nothing was sent.", ok=False)
            return
        try:
            result = await client.request(MODIFY_CHAT, ModifyChat(phone=chat, action=ChatAction.READ))
        except Exception as error:
            self._answer(chat, self.run_display.scrub(explain_error(error)), ok=False)
            return
        if not result.ok:
            self._answer(chat, f"Mark read: the gateway answered {result.refusal}; {chat} stays unread.", ok=False)
            return
        await self._in_thread(lambda: self.inbox.mark_seen(chat))
        self._answer(chat, f"Marked read on the gateway: {chat}.", ok=True)
        self.reload()

    def _instance_client(self) -> InstanceClient:
        """The current account's instance client (the inbox reads and sends through the instance family); raises
        MissingFamily for a profile without it, ClientsNotReady before the clients exist."""
        account = self.accounts.current
        if account is None:
            raise ClientsNotReady("no account yet")
        return account.instance_client()

    def _answer(self, chat: str, text: str, *, ok: bool) -> None:
        """The line under the thread answers for the chat open there; an answer about a chat left meanwhile is a
        toast instead."""
        if chat != self.open_chat_id:
            self.notify(text, severity="information" if ok else "error", markup=False)
        elif ok:
            self.query_one(ErrorLine).show_ok(text)
        else:
            self.query_one(ErrorLine).show_error(text)

    async def _in_thread(self, function: Any) -> Any:
        import asyncio

        return await asyncio.to_thread(function)

    @on(Input.Submitted, "#reply")
    def _reply(self, event: Input.Submitted) -> None:
        event.stop()
        text = event.value
        chat = self.open_chat_id
        status = self.query_one(ErrorLine)
        if chat is None:
            status.show_error("Choose a conversation first; nothing was sent.")
            return
        if not text.strip():
            status.show_error("Type a message first; nothing was sent.")
            return
        self._send_text(chat, text)

    @work(group="inbox-call", exclusive=True, exit_on_error=False, description="send a reply")
    async def _send_text(self, chat: str, text: str) -> None:
        status = self.query_one(ErrorLine)
        reply = self.query_one("#reply", Input)
        try:
            request = SendText(phone=self._reply_address(chat), message=text)
        except Exception as error:
            status.show_error(explain_error(error))
            return
        try:
            client = self._instance_client()
        except MissingFamily as error:
            status.show_error(str(error))
            return
        except ClientsNotReady:
            status.show_error("The gateway is not ready yet; nothing was sent.")
            return
        key = self._draft_key(chat)
        reply.loading = True
        try:
            result = await client.request(SEND_TEXT, request)
        except Exception as error:
            status.show_error(self.run_display.scrub(explain_error(error)))
            return
        finally:
            reply.loading = False
        self._sent_draft(key, text)
        status.show_ok(f"Sent, message id {result.message_id}.")
        self.post_message(MessageSent(result.message_id, OperationId.SEND_TEXT, chat, request, result))
        reply.focus()
