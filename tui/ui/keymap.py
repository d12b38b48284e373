"""Every key of the app in one table (Harlequin style): each row is a binding id, its default keys, the action
and the words the footer, the buttons and the help show. Screens and sections take their `BINDINGS` from here
(`bindings_for(scope)`); the help's key list and the buttons' "(ctrl+s)" labels are derived from it too, so
they say what the key really does.

A user keymap remaps keys by binding id: `keymap.toml` in the config dir (`gateway-tui locate` or
`tui.local.paths.config_dir()`), one line per binding id:

    "chats.send" = "ctrl+s,f5"
    "app.request_log" = "f2"

`load_user_keymap()` checks it (unknown ids, key names, two bindings of one scope on one key) and returns the
keymap to give `App.set_keymap()` plus a plain message per entry it refused.

Rules the defaults keep (tests/app/test_keys.py checks them):
- Section switching, help, the request log and the events panel have keys that work while typing (alt+1..7,
  F1, F2, F9, priority bindings); their letter and digit twins (`1`-`7`, `?`, `e`) act only outside forms
  (lists, tables, the events panel). Inside a form, whatever part of it has the focus (a field, a picker, a
  checkbox, a button), a printable key is never a command: `typed_in_a_form` says which keys, and the sections and
  forms consume them (`tui.ui.widgets.focus.TypingInForms`, Textual's `check_consume_key`).
- Within one scope, and between a scope and the scopes that are active with it, a key has one meaning.
"""

from __future__ import annotations

import functools
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from textual.binding import Binding, BindingType
from textual.keys import Keys

from tui.ui.textual_compat import character_key_name

KEYMAP_FILE = "keymap.toml"


@dataclass(frozen=True)
class KeyAction:
    id: str
    keys: str  # comma-separated Textual key names, the first one is shown
    action: str
    description: str
    scope: str  # which screen or section binds it (see SCOPES)
    show: bool = True  # in the footer
    priority: bool = False  # checked before the focused widget (keys that must work while typing)
    key_display: str | None = None
    help: str = ""  # a longer phrase for the help screen; the description when empty
    footer_drop: int = 0  # when the footer is too narrow (80 columns), the highest goes first (tui.ui.widgets.footer)
    instead_of: str = ""  # the id of a binding on the same key that this one replaces in another state (`f`: only
    # this message / all events): the node's check_action enables one of the two, never both


SECTION_ORDER = ("chats", "groups", "communities", "privacy", "catalog", "settings", "events", "account", "fleet",
                 "campaigns")
_SECTION_TITLES = ("Chats", "Groups", "Communities", "Privacy", "Catalog", "Settings", "Events", "Account", "Fleet",
                   "Campaigns")
# The footer's one entry for the section keys says "1…9": the tenth section's key is 0 (alt+0), as on the keyboard's
# row of digits, and is listed in the help and the palette.
_DIGITS_SHOWN = "1…9"


def section_key(number: int) -> str:
    """The digit of the section at `number` (1-based): 1..9, then 0 for the tenth."""
    return str(number % 10)


# Textual reads alt+0 as most terminals send it (ESC 0) as the character "º" (macOS's option+0), never as alt+0.
# So "º" goes to the tenth section too, but only where the digits do (outside forms): in a form it is typed, as
# Portuguese and Spanish writers type it ("nº 5"). alt+0 itself works where the terminal reports it as such.
ALT_ZERO_AS_TYPED = "º"


def _digit_keys(number: int) -> str:
    return section_key(number) + (f",{ALT_ZERO_AS_TYPED}" if section_key(number) == "0" else "")


# Scopes, and the scopes that are active at the same time (for the one-meaning check).
SCOPES: dict[str, str] = {
    "app": "everywhere",
    "main": "main screen",
    "section": "every operation section",
    "chats": "Chats (the new-message form)",
    "inbox": "Chats (the conversations)",
    "inbox_list": "the conversation list",
    "thread": "the open thread",
    "timeline": "a message's timeline",
    "groups": "Groups",
    "communities": "Communities",
    "privacy": "Privacy",
    "catalog": "Catalog",
    "settings": "Settings",
    "events": "Events",
    "account": "Account",
    "fleet": "Fleet (the board)",
    "fleet_filter": "Fleet's filter",
    "campaigns": "Campaigns",
    "picker": "the account picker",
    "panel": "events panel",
    "confirm": "confirmation dialog",
    "help": "help",
    "detail": "event detail",
    "requests": "request log",
    "export": "export dialog",
    "media_save": "the save-a-file dialog",
    "media_preview": "an image preview",
    "account_qr": "the QR code on the whole screen",
}
ACTIVE_TOGETHER: dict[str, tuple[str, ...]] = {
    **{name: ("app", "main", "section", name) for name in ("chats", "groups", "communities", "privacy", "catalog",
                                                           "settings")},
    # Chats shows one view at a time: the conversations or the form. The form's keys (scope "chats", on the section)
    # are switched off while the conversations show (ChatsSection.check_action), so the two are never active together.
    "inbox": ("app", "main", "section", "inbox", "inbox_list"),
    "inbox_list": ("app", "main", "section", "inbox", "inbox_list"),
    "thread": ("app", "main", "section", "inbox", "thread"),
    "timeline": ("app", "timeline"),
    "events": ("app", "main", "events"),
    "account": ("app", "main", "account"),
    "fleet": ("app", "main", "fleet"),
    "fleet_filter": ("app", "main", "fleet_filter"),
    "campaigns": ("app", "main", "campaigns"),
    "picker": ("app", "picker"),
    "panel": ("app", "main", "panel"),
    "confirm": ("app", "confirm"),
    "help": ("app", "help"),
    "detail": ("app", "detail"),
    "requests": ("app", "requests"),
    "export": ("app", "export"),
    "media_save": ("app", "media_save"),
    "media_preview": ("app", "media_preview"),
    "account_qr": ("app", "account_qr"),
}

ACTIONS: tuple[KeyAction, ...] = (
    # -- everywhere (priority: they work while a field has the focus) ----------------------------------------
    KeyAction("app.quit", "ctrl+q", "app.quit", "Quit", "app", show=False, priority=True),
    # The keys shown everywhere give way first in a narrow footer (the section's own keys are what changes; F1's
    # help lists every key, so it goes last).
    KeyAction("app.help", "f1", "app.help", "Help", "app", priority=True, footer_drop=1,
              help="help for the current section and the keys that work where the focus is"),
    KeyAction("app.request_log", "f2", "app.request_log", "Requests", "app", priority=True, footer_drop=3,
              help="request log: every HTTP exchange, copy as curl"),
    KeyAction("app.palette", "ctrl+p", "app.command_palette", "Palette", "app", show=False, priority=True,
              help="command palette: every operation by name"),
    # -- main screen -------------------------------------------------------------------------------------------
    # The footer shows the section keys as one entry, on the first section's binding: "1…8 Sections" where the
    # digits work, "alt+1…8 Sections" inside a form (the digits first: the footer keeps the first binding of an
    # action that is active). Kept in a narrow footer before the section's own keys (footer_drop -1).
    *(
        KeyAction(f"section.{section}.digit", _digit_keys(number), f"screen.show_section('{section}')",
                  "Sections" if number == 1 else title, "main", show=number == 1,
                  key_display=_DIGITS_SHOWN if number == 1 else None, footer_drop=-1,
                  help=f"go to {title} outside forms (lists, tables, the events panel)")
        for number, (section, title) in enumerate(zip(SECTION_ORDER, _SECTION_TITLES, strict=True), 1)
    ),
    *(
        KeyAction(f"section.{section}", f"alt+{section_key(number)}", f"screen.show_section('{section}')",
                  "Sections" if number == 1 else title, "main", show=number == 1, priority=True,
                  key_display=f"alt+{_DIGITS_SHOWN}" if number == 1 else None, footer_drop=-1,
                  help=f"go to {title} (works everywhere, inside forms too)")
        for number, (section, title) in enumerate(zip(SECTION_ORDER, _SECTION_TITLES, strict=True), 1)
    ),
    # Shown only while several accounts are open (MainScreen.check_action); F3, not ctrl+a: a field's ctrl+a moves
    # to its start.
    KeyAction("accounts.pick", "f3", "screen.pick_account", "Accounts", "main", priority=True, footer_drop=-1,
              help="switch the current account: a fuzzy picker over the open accounts (the sections act on it)"),
    # Tab acts before the key typed after it reaches a field: bound without priority it acted only once its key
    # had gone through the focused field and bubbled back up, and on a busy machine the next letter typed had
    # already gone into the field being left (a recipient "5511987654321h"). A box that takes Tab itself still does.
    KeyAction("main.next_field", "tab", "screen.next_field", "Next field", "main", show=False, priority=True,
              help="the next field (or list); keys typed after it go there, however quickly"),
    KeyAction("main.previous_field", "shift+tab", "screen.previous_field", "Previous field", "main", show=False,
              priority=True, help="the previous field (or list)"),
    KeyAction("panel.toggle", "f9", "screen.toggle_panel", "Panel", "main", priority=True, footer_drop=2,
              help="show or hide the live events panel"),
    KeyAction("panel.toggle.letter", "e", "screen.toggle_panel", "Panel", "main", show=False,
              help="show or hide the live events panel, outside forms"),
    KeyAction("help.letter", "question_mark", "app.help", "Help", "main", show=False, key_display="?",
              help="help, outside forms"),
    KeyAction("leave", "escape", "screen.leave", "Leave field", "main", show=False,
              help="leave a form's field, picker or button for its section (then the letter and digit keys work); "
                   "cancel a call"),
    # -- every operation section -----------------------------------------------------------------------------
    KeyAction("section.cancel", "escape", "cancel", "Cancel call", "section", help="cancel the running call"),
    # -- Chats ----------------------------------------------------------------------------------------------------
    KeyAction("chats.send", "ctrl+s", "send", "Send", "chats", help="send the message of the chosen kind"),
    # ctrl+t has one meaning in Chats, the full form for the open chat: a second ctrl+t there must not act on the chat.
    KeyAction("chats.chat_action", "ctrl+g", "chat_action", "Chat action", "chats",
              help="apply the chosen chat action to the recipient's chat"),
    KeyAction("chats.copy_id", "ctrl+o", "copy_id", "Copy id", "chats", help="copy the sent message's id"),
    KeyAction("chats.browse", "ctrl+b", "browse_media", "Browse", "chats",
              help="choose the media file to send in a folder tree (the Media kind)"),
    KeyAction("chats.inbox", "ctrl+l", "inbox", "Conversations", "chats",
              help="back to the conversations (the list, the open thread and its reply line)"),
    # -- Chats: the conversations (the view Chats opens on) ------------------------------------------------------
    KeyAction("inbox.compose", "ctrl+n", "compose", "New chat", "inbox",
              help="write to a new number: the full form (a number typed in the search is filled in)"),
    KeyAction("inbox.full_form", "ctrl+t", "full_form", "All kinds", "inbox",
              help="the full form for the open chat: any message kind, the chat actions"),
    KeyAction("inbox.open", "enter", "open_chat", "Reply", "inbox_list", help="reply to the chosen chat"),
    KeyAction("inbox.search", "slash", "search", "Search", "inbox_list", key_display="/",
              help="search conversations and messages"),
    KeyAction("inbox.mark_read", "m", "mark_read", "Mark read", "inbox_list",
              help="mark the chosen chat read on the gateway (modify-chat read)"),
    KeyAction("inbox.full_form.letter", "k", "full_form", "All kinds", "inbox_list", show=False,
              help="the full form for the chosen chat, when the list has the focus"),
    KeyAction("inbox.compose.letter", "n", "compose", "New chat", "inbox_list", show=False,
              help="write to a new number, when the list has the focus"),
    # Enter, not a letter: a letter typed on the thread writes the reply.
    KeyAction("thread.timeline", "enter", "timeline", "Timeline", "thread",
              help="the timeline of the newest sent message in view: sent, handed to the network, delivered, read, "
                   "played or failed, each with its time"),
    # Ctrl keys, not letters (a letter typed on the thread writes the reply); shown while the thread holds media.
    KeyAction("thread.open_media", "ctrl+o", "open_media", "Open", "thread",
              help="open the newest media message in view with the system viewer (other than an image, audio or "
                   "video: after a yes)"),
    KeyAction("thread.save_media", "ctrl+s", "save_media", "Save", "thread",
              help="save the newest media message in view to a path (asked; an existing file only with confirmation)"),
    KeyAction("thread.preview_media", "ctrl+e", "preview_media", "Preview", "thread", footer_drop=2,
              help="preview the newest image in view in the terminal (Kitty or Sixel graphics, else block characters)"),
    # -- Groups ---------------------------------------------------------------------------------------------------
    KeyAction("groups.run", "ctrl+s", "submit", "Run", "groups", help="run the form of the open tab"),
    # The footer names the tabs as the tab bar does (short: at 80 columns they fit beside "alt+1…8 Sections").
    KeyAction("groups.tab_lookup", "ctrl+l", "open('lookup-group')", "Look up", "groups", help="the Look-up tab"),
    KeyAction("groups.tab_create", "ctrl+n", "open('create-group')", "Create", "groups", help="the Create tab"),
    KeyAction("groups.tab_add", "ctrl+g", "open('add-participants')", "Add", "groups",
              help="the Add participants tab"),
    KeyAction("groups.tab_rename", "ctrl+r", "open('rename-group')", "Rename", "groups", help="the Rename tab"),
    KeyAction("groups.filter", "ctrl+f", "filter", "Filter", "groups", show=False,
              help="filter the participants of the group looked up"),
    # -- Communities ---------------------------------------------------------------------------------------------
    KeyAction("communities.promote", "ctrl+s", "promote", "Promote", "communities",
              help="promote the numbers to administrators"),
    KeyAction("communities.reset_link", "ctrl+n", "reset_link", "New invite link", "communities",
              help="reset the invite link (asks first; the old link stops working)"),
    KeyAction("communities.copy_link", "ctrl+o", "copy_link", "Copy link", "communities",
              help="copy the new invite link"),
    # -- Privacy, Catalog -----------------------------------------------------------------------------------------
    KeyAction("privacy.apply", "ctrl+s", "apply", "Apply", "privacy", help="apply the setting of the panel you are in"),
    KeyAction("catalog.lookup", "ctrl+s", "lookup", "Look up", "catalog", help="look the product up"),
    # -- Settings -------------------------------------------------------------------------------------------------
    KeyAction("settings.apply", "ctrl+s", "apply_block", "Apply", "settings",
              help="the first button of the block you are in (Set, Replace, Save, ...)"),
    # The webhook doctor's panel (issue 24): a key to check again and one per fix; a fix's key shows in the footer
    # only while a finding it cures is listed (SettingsSection.check_action), and is kept there at 80 columns.
    KeyAction("settings.doctor_check", "f5", "doctor_check", "Check webhooks", "settings",
              help="run the webhook doctor for this account (the doctor panel lists what it finds, each with its fix)"),
    KeyAction("settings.fix_point", "ctrl+t", "doctor_fix('point-webhooks')", "Point webhooks", "settings", footer_drop=-1,
              help="the doctor's fix: point the webhooks at the listener, then check again"),
    KeyAction("settings.fix_subscribe", "ctrl+n", "doctor_fix('subscribe')", "Subscribe", "settings", footer_drop=-1,
              help="the doctor's fix: subscribe the event kinds the app needs, then check again"),
    KeyAction("settings.fix_activate", "ctrl+g", "doctor_fix('activate')", "Activate", "settings", footer_drop=-1,
              help="the doctor's fix: switch the session webhook's delivery on (sent whole again), then check again"),
    KeyAction("settings.fix_key", "ctrl+l", "doctor_fix('set-key')", "Set key", "settings", footer_drop=-1,
              help="the doctor's fix: set the profile's HMAC key on the gateway (only when it has none), then check "
                   "again"),
    # -- Account (issue 23): one key per action, on the family chosen (the focused family's panel) ---------------
    KeyAction("account.qr", "q", "show_qr", "Show QR", "account",
              help="show the QR code to pair the chosen family (refreshed before it expires; stops after three)"),
    KeyAction("account.phone", "p", "phone_code", "Phone code", "account",
              help="pair with a code typed on the phone: asks the number in a field, Enter asks for the code"),
    KeyAction("account.reconnect", "r", "reconnect", "Reconnect", "account",
              help="the recovery that works: Z-API restart; WuzAPI disconnect, then connect; then the state is read"),
    KeyAction("account.logout", "l", "logout", "Log out", "account",
              help="unpair the phone from the chosen family (asks first)"),
    KeyAction("account.family", "f", "next_family", "Family", "account",
              help="choose the other family (instance, session) for the keys above"),
    # -- Fleet (issue 26): the board's table; `/` filters, Esc in the filter clears it -------------------------
    KeyAction("fleet.current", "enter", "make_current", "Make current", "fleet",
              help="make the account under the cursor the current one (the other sections act on it)"),
    KeyAction("fleet.mark", "space", "mark", "Mark", "fleet", help="mark or unmark the account (bulk actions act on the marked)"),
    KeyAction("fleet.filter", "slash", "filter", "Filter", "fleet", key_display="/",
              help="filter the board: rows with the words in any column (Esc clears)"),
    KeyAction("fleet.sort", "s", "sort", "Sort", "fleet", help="sort by the next column (the board's line says which)"),
    KeyAction("fleet.point", "w", "bulk('point')", "Point webhooks", "fleet", footer_drop=1,
              help="point the marked accounts' webhooks at this app's listener (asks first, naming the count)"),
    KeyAction("fleet.fix", "d", "bulk('fix')", "Doctor fixes", "fleet", footer_drop=1,
              help="the doctor's check and its fixes on the marked accounts (asks first, naming the count)"),
    KeyAction("fleet.reconnect", "r", "bulk('reconnect')", "Reconnect", "fleet", footer_drop=1,
              help="reconnect the marked accounts (asks first, naming the count)"),
    KeyAction("fleet.clear", "escape", "clear_filter", "Clear filter", "fleet_filter",
              help="clear the filter and go back to the board"),
    KeyAction("fleet.to_board", "down,enter", "to_board", "Board", "fleet_filter", show=False,
              help="keep the filter and go to the board"),
    KeyAction("picker.choose", "enter", "choose", "Make current", "picker"),
    KeyAction("picker.close", "escape", "dismiss", "Close", "picker"),
    KeyAction("picker.down", "down", "move(1)", "Next", "picker", show=False),
    KeyAction("picker.up", "up", "move(-1)", "Previous", "picker", show=False),
    # -- Events section and panel --------------------------------------------------------------------------------
    KeyAction("events.older", "right_square_bracket,n", "older", "Older", "events", key_display="]"),
    KeyAction("events.newer", "left_square_bracket,p", "newer", "Newer", "events", key_display="["),
    KeyAction("events.newest", "g", "newest", "Newest", "events"),
    KeyAction("events.export", "x", "export", "Export", "events"),
    KeyAction("events.message", "m", "message", "This message", "events"),
    KeyAction("events.search", "slash", "search", "Search", "events", key_display="/"),
    KeyAction("events.accounts", "a", "all_accounts", "All accounts", "events", show=False),
    KeyAction("panel.detail", "enter", "select_cursor", "Detail", "panel"),
    KeyAction("panel.filter", "f", "filter_message", "Only this message", "panel",
              help="show only the events of the highlighted (or last sent) message"),
    KeyAction("panel.unfilter", "f", "all_events", "All events", "panel", instead_of="panel.filter",
              help="show every event again (while only one message's are shown)"),
    KeyAction("panel.newest", "g", "newest", "Newest", "panel",
              help="jump to the newest event and follow new ones again (after moving in the panel)"),
    KeyAction("panel.leave", "escape", "screen.leave", "Leave panel", "panel",
              help="leave the events panel for where you were; it follows the newest event again"),
    # -- dialogs ----------------------------------------------------------------------------------------------------
    # -- Campaigns ------------------------------------------------------------------------------------------------
    # One key, one meaning at a time: `s` starts a campaign never started, resumes a paused one (check_action enables
    # the one that applies); `p` only while it runs.
    KeyAction("campaigns.start", "s", "start", "Start", "campaigns",
              help="start the chosen campaign (asks first: it sends real messages)"),
    KeyAction("campaigns.resume", "s", "resume", "Resume", "campaigns", instead_of="campaigns.start",
              help="go on with the chosen paused campaign"),
    KeyAction("campaigns.pause", "p", "pause", "Pause", "campaigns",
              help="pause the chosen campaign after its send in flight (also one run by `gateway-tui campaign start`)"),
    KeyAction("confirm.yes", "y", "answer(True)", "Yes", "confirm"),
    KeyAction("confirm.no", "n,escape", "answer(False)", "No", "confirm"),
    KeyAction("help.close", "escape,q,question_mark", "dismiss", "Close", "help"),  # F1 too: app.help closes it
    KeyAction("detail.close", "escape,q", "dismiss", "Close", "detail"),
    KeyAction("detail.copy", "c", "copy", "Copy JSON", "detail"),
    KeyAction("detail.replay", "r", "replay", "Replay to app", "detail"),
    KeyAction("timeline.older", "up,left_square_bracket", "move(-1)", "Older", "timeline", key_display="↑",
              help="the timeline of the sent message before this one"),
    KeyAction("timeline.newer", "down,right_square_bracket", "move(1)", "Newer", "timeline", key_display="↓",
              help="the timeline of the sent message after this one"),
    KeyAction("timeline.close", "escape,q", "dismiss", "Close", "timeline"),
    KeyAction("requests.back", "escape,q", "app.pop_screen", "Back", "requests"),  # F2 too: app.request_log
    KeyAction("requests.curl", "c", "copy_curl", "Copy as curl", "requests"),
    KeyAction("export.cancel", "escape", "cancel", "Cancel", "export"),
    KeyAction("media_save.cancel", "escape", "cancel", "Cancel", "media_save"),
    KeyAction("media_preview.close", "escape,q", "dismiss", "Close", "media_preview"),
    # The QR code on the whole screen (80×24: it fits nowhere else): Escape stops the codes, as in the section.
    KeyAction("account_qr.stop", "escape", "stop", "Stop codes", "account_qr",
              help="stop showing codes and go back to the Account section"),
    KeyAction("account_qr.phone", "p", "phone_code", "Phone code instead", "account_qr",
              help="stop the QR codes and pair with a code typed on the phone instead"),
)
ACTIONS_BY_ID: dict[str, KeyAction] = {action.id: action for action in ACTIONS}


def twins(one: KeyAction, other: KeyAction) -> bool:
    """One of the two replaces the other in another state (`instead_of`): they may share a key."""
    return one.instead_of == other.id or other.instead_of == one.id

_current: dict[str, str] = {}  # binding id -> keys, the user's keymap in force (set by the app)


def bindings_for(scope: str) -> list[BindingType]:
    """The `BINDINGS` of one scope, with their ids (so a user keymap can remap them)."""
    return [
        Binding(a.keys, a.action, a.description, show=a.show, key_display=a.key_display, priority=a.priority,
                id=a.id, tooltip=a.help)
        for a in ACTIONS
        if a.scope == scope
    ]


def use_keymap(keymap: dict[str, str]) -> None:
    """The user's keymap in force from now on (labels and help read it)."""
    _current.clear()
    _current.update(keymap)
    _typed_in_a_form.cache_clear()


def keys_of(binding_id: str) -> str:
    """The keys of a binding now, the user's keymap applied ("ctrl+s" or "ctrl+s,f5")."""
    return _current.get(binding_id) or ACTIONS_BY_ID[binding_id].keys


def shown_key(binding_id: str) -> str:
    """The first key of a binding as the user reads it: `ctrl+s`, `?`, `]`."""
    action = ACTIONS_BY_ID[binding_id]
    if action.key_display and binding_id not in _current:
        return action.key_display
    return _first_key(binding_id)


def _first_key(binding_id: str) -> str:
    """The first key of a binding, readable, whatever its footer shows (`alt+1`, not "alt+1…8")."""
    first = keys_of(binding_id).split(",")[0].strip()
    return _READABLE.get(first, first)


def label(text: str, binding_id: str) -> str:
    """A button's label with the key that does the same: `Send (ctrl+s)`."""
    return f"{text} ({shown_key(binding_id)})"


_READABLE = {"question_mark": "?", "slash": "/", "right_square_bracket": "]", "left_square_bracket": "["}


def help_table(scopes: tuple[str, ...] = ("app", "main")) -> str:
    """Markdown: the keys of these scopes, each binding once, for the help screen."""
    lines = ["| Key | Does |", "| --- | --- |"]
    if "main" in scopes:  # the seven section keys as two rows
        for suffix, when in (("", "(work everywhere, inside forms too)"), (".digit", "(outside forms)")):
            keys = ", ".join(f"`{_first_key(f'section.{section}{suffix}')}`" for section in SECTION_ORDER)
            lines.append(f"| {keys} | {', '.join(_SECTION_TITLES)} {when} |")
    for action in ACTIONS:
        if action.scope not in scopes or action.id.startswith("section.") and action.scope == "main":
            continue
        keys = " / ".join(f"`{_READABLE.get(key.strip(), key.strip())}`" for key in keys_of(action.id).split(","))
        lines.append(f"| {keys} | {action.help or action.description} |")
    return "\n".join(lines) + "\n"


def reference_table(ids: tuple[str, ...] | None = None) -> str:
    """Markdown for the docs, with the default keys: every binding (id, keys, where, does) for docs/keys.md, or the
    bindings `ids` without their ids (keys, where, does) for the README's short table; the first section key
    stands there for all seven. docs/make_keys.py writes both; tests/app/test_keys.py checks they are current."""
    chosen = ACTIONS if ids is None else tuple(ACTIONS_BY_ID[binding_id] for binding_id in ids)
    lines = ["| Binding id | Keys | Where | Does |" if ids is None else "| Keys | Where | Does |"]
    lines.append("|---" * (4 if ids is None else 3) + "|")
    for action in chosen:
        keys = " / ".join(f"`{_READABLE.get(key, key)}`" for key in action.keys.split(","))
        does = action.help or action.description
        if ids is not None and action.key_display and action.id.startswith("section."):
            keys, does = f"`{action.key_display}`", does.replace(_SECTION_TITLES[0], ", ".join(_SECTION_TITLES), 1)
        row = [f"`{action.id}`"] if ids is None else []
        lines.append("| " + " | ".join([*row, keys, SCOPES[action.scope], does]) + " |")
    return "\n".join(lines) + "\n"


# -- the user's keymap ---------------------------------------------------------------------------------------------

_MODIFIERS = {"ctrl", "alt", "shift", "super", "meta", "hyper"}
_KEY_NAMES = (
    {key.value for key in Keys}
    | {character_key_name(chr(code)) for code in range(32, 127)}
    | {"space", "tab", "enter", "escape", "backspace", "delete"}
)


_KEY_CHARACTERS = {character_key_name(chr(code)): chr(code) for code in range(32, 127)}


def typed_character(key: str) -> str | None:
    """The character a key types (`slash` -> "/", `space` -> " ", `7` -> "7"), or None for keys that cannot be text
    (alt+1, ctrl+s, f5, enter). Textual's `key_to_character` misses some (`slash`)."""
    if len(key) == 1:
        return key if key.isprintable() else None
    return _KEY_CHARACTERS.get(key)


def typed_in_a_form(key: str, binding_ids: Iterable[str | None]) -> bool:
    """Whether the bindings `binding_ids` on `key` are typing inside a form, never a command. `key` is the key as
    written in `BINDINGS` (Textual offers it to `check_consume_key` before it applies the user's keymap), the ids
    those of the bindings on it (None: a binding the keymap cannot move). It is typing when the key, or a key the
    user's keymap moved one of them onto, types a character (`ctrl+s` -> `s`); a binding the keymap moved from a
    character onto keys that type nothing (`e` -> ctrl+e) stays a command."""
    return _typed_in_a_form(key, tuple(binding_ids))


@functools.cache
def _typed_in_a_form(key: str, binding_ids: tuple[str | None, ...]) -> bool:
    """`typed_in_a_form`, remembered until the keymap changes: Textual asks it for every key above the focus each
    time it works out the keys in force (every key typed, every footer update)."""
    keys_now = [new for binding_id in binding_ids for new in (_current.get(binding_id or "") or key).split(",")]
    return any(typed_character(new.strip()) is not None for new in keys_now or [key])


def key_problem(key: str) -> str | None:
    """Why `key` is not a key name Textual knows (`ctrl+s`, `f5`, `alt+1`, `question_mark`), or None."""
    parts = key.strip().split("+")
    name = parts[-1]
    if not name or any(modifier not in _MODIFIERS for modifier in parts[:-1]):
        return f"{key!r} is not a key: use names like ctrl+s, alt+1, f5, question_mark"
    if (len(name) == 1 and name.isprintable()) or name in _KEY_NAMES:
        return None
    return f"{key!r} is not a key Textual knows: use names like ctrl+s, alt+1, f5, question_mark"


def check_keymap(entries: dict[str, object]) -> tuple[dict[str, str], list[str]]:
    """The valid entries as a keymap, and one plain message per refused entry (its default stays)."""
    keymap: dict[str, str] = {}
    problems: list[str] = []
    for binding_id, value in entries.items():
        if binding_id not in ACTIONS_BY_ID:
            problems.append(f"{KEYMAP_FILE}: {binding_id!r} is not a binding id (docs/keys.md lists them); "
                            "ignored.")
            continue
        if not isinstance(value, str) or not value.strip():
            problems.append(f"{KEYMAP_FILE}: {binding_id} must be a string of keys like \"ctrl+s\" or \"f5,ctrl+s\"; "
                            "ignored.")
            continue
        keys = ",".join(part.strip() for part in value.split(",") if part.strip())
        bad = next((problem for part in keys.split(",") if (problem := key_problem(part))), None)
        if bad is not None:
            problems.append(f"{KEYMAP_FILE}: {binding_id}: {bad}; ignored.")
            continue
        keymap[binding_id] = keys
    # One meaning per key where scopes are active together: refuse a remapped entry that collides.
    for binding_id in list(keymap):
        scope = ACTIONS_BY_ID[binding_id].scope
        together = {s for s, active in ACTIVE_TOGETHER.items() if scope in active} | set(ACTIVE_TOGETHER.get(scope, ()))
        for key in keymap[binding_id].split(","):
            for other in ACTIONS:
                if other.id == binding_id or other.scope not in together:
                    continue
                if other.action == ACTIONS_BY_ID[binding_id].action:
                    continue  # the same action under another id (a letter twin) may share keys
                if twins(ACTIONS_BY_ID[binding_id], other):
                    continue  # one replaces the other in another state: never active together
                other_keys = keymap.get(other.id, other.keys) if other.id in keymap else other.keys
                if key in other_keys.split(","):
                    problems.append(f"{KEYMAP_FILE}: {binding_id}: {key} already means "
                                    f"\"{other.description}\" ({other.id}) in {SCOPES[other.scope]}; ignored.")
                    keymap.pop(binding_id, None)
                    break
            if binding_id not in keymap:
                break
    return keymap, problems


def load_user_keymap(directory: Path) -> tuple[dict[str, str], list[str]]:
    """Read `keymap.toml` in `directory`: (keymap, problems). No file: empty keymap, no problems."""
    path = directory / KEYMAP_FILE
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}, []
    except OSError as error:
        return {}, [f"{path}: could not be read ({error.strerror or error}); the default keys are in force."]
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        return {}, [f"{path}: not valid TOML ({error}); the default keys are in force."]
    entries = data.get("keys", data) if isinstance(data.get("keys"), dict) else data
    return check_keymap(entries)
