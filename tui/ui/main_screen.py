"""The main screen: header, section bar, the eight sections in a ContentSwitcher, the docked events panel
and the footer.

Sections are imported and mounted after the first frame (their modules pull in pydantic and the API models),
each into a slot whose id is the section id: chats, groups, communities, privacy, catalog, settings, events,
account.
Only the section shown at start is mounted before the app is interactive; the others follow one by one once the
runtime has started (or at once when visited first): building all seven at start cost more than the rest of the
start-up together (bench/start_interactive.py). Keys typed while the shown section is not mounted yet are kept
and replayed into it. Each section is a `tui.ui.widgets.section_api.Section` (help, its own palette entries,
`open_operation`, `build_deferred`, `action_cancel`), registered by class in `SECTIONS` and imported on demand.

A section module that is missing or fails to import leaves a plain placeholder, never a crash.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from textual import events
from textual.app import ComposeResult
from textual.containers import Container
from textual.content import Content
from textual.widget import Widget
from textual.widgets import ContentSwitcher, Input, Static

from tui.ui.keymap import bindings_for
from tui.ui.widgets.events_panel import EventsPanel
from tui.ui.widgets.focus import first_field, first_field_set_up, focus_first, in_form
from tui.ui.widgets.footer import GatewayFooter
from tui.ui.widgets.gateway_app import gateway_app
from tui.ui.widgets.header import GatewayHeader
from tui.ui.widgets.section_api import Section, SectionHost

if TYPE_CHECKING:
    from tui.api.dialects import InstanceDialect, SessionDialect

log = logging.getLogger(__name__)

CONNECTION_READ_WAIT = 10.0
"""Seconds the sections not shown at start wait for the header's first status read before they are mounted."""
START_STEP_WAIT = 1.0
"""Seconds, at most, the first section's import waits for the runtime's start to set its threads going, and its
mount for the clients (`Runtime.start_beside_loop`, `Runtime.clients_coming`: each is a few ms of the event loop)."""


# Each section's class, imported when it is first built (their modules pull in pydantic and the API models).


def _chats() -> type[Section]:
    from tui.ui.sections.chats.section import ChatsSection

    return ChatsSection


def _groups() -> type[Section]:
    from tui.ui.sections.groups import GroupsSection

    return GroupsSection


def _communities() -> type[Section]:
    from tui.ui.sections.communities import CommunitiesSection

    return CommunitiesSection


def _privacy() -> type[Section]:
    from tui.ui.sections.privacy import PrivacySection

    return PrivacySection


def _catalog() -> type[Section]:
    from tui.ui.sections.catalog import CatalogSection

    return CatalogSection


def _settings() -> type[Section]:
    from tui.ui.sections.settings.section import SettingsSection

    return SettingsSection


def _account() -> type[Section]:
    from tui.ui.sections.account.section import AccountSection

    return AccountSection


def _fleet() -> type[Section]:
    from tui.ui.sections.fleet.section import FleetSection

    return FleetSection


def _campaigns() -> type[Section]:
    from tui.ui.sections.campaigns import CampaignsSection

    return CampaignsSection


def _events() -> type[Section]:
    from tui.ui.sections.events import EventsSection

    return EventsSection


@dataclass(frozen=True)
class SectionInfo:
    id: str
    key: str
    title: str
    load: Callable[[], type[Section]]
    """Imports the section's module and returns its class."""


SECTIONS: tuple[SectionInfo, ...] = (
    SectionInfo("chats", "1", "Chats", _chats),
    SectionInfo("groups", "2", "Groups", _groups),
    SectionInfo("communities", "3", "Communities", _communities),
    SectionInfo("privacy", "4", "Privacy", _privacy),
    SectionInfo("catalog", "5", "Catalog", _catalog),
    SectionInfo("settings", "6", "Settings", _settings),
    SectionInfo("events", "7", "Events", _events),
    SectionInfo("account", "8", "Account", _account),
    SectionInfo("fleet", "9", "Fleet", _fleet),
    SectionInfo("campaigns", "0", "Campaigns", _campaigns),
)
REBOUND_ON_SWITCH = ("account", "settings")
"""The sections that read the current account's profile and watch when they are built: built again after a switch
(the others ask the runtime for the current account's clients at each call)."""
SECTIONS_BY_ID = {section.id: section for section in SECTIONS}
BAR_ALWAYS = 9
"""The section bar always shows the first nine; the tenth (alt+0, the palette) where the width leaves room."""


def section_class(section_id: str) -> type[Section] | None:
    """The section's widget class, imported on demand; None when its module is not available."""
    try:
        return SECTIONS_BY_ID[section_id].load()
    except ImportError as error:
        log.warning("section %s unavailable: %s", section_id, error)
        return None


def operations_help(section_id: str, dialects: tuple[InstanceDialect, SessionDialect],
                    account: Sequence[str] = ()) -> str:
    """The section's gateway operations, from the one table (`tui.api.operations`), with the dialect each is
    written in and the `gateway-tui call` that runs it from the command line, `account` naming the app's account
    there (`--profile NAME`, or the sandbox's flags: tui.core.suggested_commands) so that it runs as printed."""
    import shlex

    from tui.api.operations import Family, Section, in_section

    try:
        operations = in_section(Section(section_id))
    except ValueError:
        return ""
    if not operations:
        return ""
    instance, session = dialects
    lines = ["", "", "### Gateway operations here", ""]
    for op in operations:
        dialect = instance if op.family is Family.INSTANCE else session
        number = f" (spec #{op.number})" if op.number else ""
        lines.append(f"- **{op.title}**{number}: `{op.method} {op.path_template}`, written as {dialect.value}; "
                     f"`{shlex.join(['gateway-tui', 'call', op.id.value, *account])}`"
                     + (" — destructive, asks first" if op.destructive else ""))
        if dialect in op.notes:
            lines.append(f"  - in {dialect.value}: {op.notes[dialect]}")
    return "\n".join(lines) + "\n"


class SectionSlot(Container):
    """Holds one section; its id is the section id."""

    DEFAULT_CSS = """
    SectionSlot { height: 1fr; }
    SectionSlot > .section-placeholder { padding: 1 2; color: $text-muted; }
    """

    @property
    def content(self) -> Widget | None:
        """What the slot holds once mounted: the section, or the placeholder left when it could not be built."""
        return self.children[0] if self.children else None

    @property
    def section(self) -> Section | None:
        content = self.content
        return content if isinstance(content, Section) else None


class SectionBar(Static):
    """`1 Chats  2 Groups ...` with the current section highlighted; each name is clickable."""

    DEFAULT_CSS = """
    SectionBar { height: 1; background: $boost; padding: 0; }
    """

    current = "chats"

    def on_resize(self) -> None:
        self.show(self.current)

    def show(self, current: str) -> None:
        self.current = current
        width = self.size.width or self.app.size.width
        always, extra = SECTIONS[:BAR_ALWAYS], SECTIONS[BAR_ALWAYS:]
        # The widest form that fits the first nine: each name padded and spaced; padded only; neither; at 80 columns
        # the digit against its name, in the accent colour (the nine names take 79 columns as `1Chats 2Groups ...`).
        padded = sum(len(section.key) + len(section.title) + 3 for section in always)
        plain = sum(len(section.key) + len(section.title) + 1 for section in always) + len(always) - 1
        space = " "
        if 1 + padded + len(always) - 1 <= width:
            lead, pad, gap = " ", " ", " "
        elif 1 + padded <= width:
            lead, pad, gap = " ", " ", ""
        elif plain <= width:
            lead, pad, gap = "", "", " "
        else:
            lead, pad, gap, space = "", "", " ", ""
        # (section, its title shown, its padding)
        entries = [(section, True, pad) for section in always]
        used = len(lead) + sum(2 * len(pad) + len(s.key) + len(space) + len(s.title) for s in always) + \
            len(gap) * (len(always) - 1)
        for section in extra:
            # A section past the ninth shows where it fits; where it does not (80 and 120 columns), only while it
            # is the current one, unpadded, the titles at the right of the bar giving way to their digits.
            fits = len(gap) + 2 * len(pad) + len(section.key) + len(space) + len(section.title)
            if used + fits <= width:
                entries.append((section, True, pad))
                used += fits
            elif section.id == current:
                entries.append((section, True, ""))
                used += len(gap or " ") + len(section.key) + len(space) + len(section.title)
                for index in range(len(always) - 1, -1, -1):
                    if used <= width:
                        break
                    if always[index].id != current:
                        entries[index] = (always[index], False, pad)
                        used -= len(space) + len(always[index].title)
        parts: list[Content | str] = [lead]
        for index, (section, titled, padding) in enumerate(entries):
            style = "reverse bold" if section.id == current else ""
            key = "$key" if space or section.id == current else "[$accent]$key[/]"
            shown = "$space$title" if titled else ""
            label = Content.from_markup(
                f"[{style} @click=screen.show_section('{section.id}')]$pad{key}{shown}$pad",
                key=section.key, title=section.title, pad=padding, space=space,
            )
            if index:
                parts.append(gap if padding or gap else " ")
            parts.append(label)
        self.update(Content.assemble(*parts))


async def _at_most(event: asyncio.Event, seconds: float) -> None:
    """Wait for `event`, for `seconds` at most (not even a turn of the loop when it is set)."""
    if event.is_set():
        return
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(event.wait(), seconds)


REPLAY_TRIES = 50
"""Refreshes the replay of kept keys waits, at most, for the section's first field to be set up."""


class MainScreen(SectionHost):
    """Everything: sections (alt+1..8, or 1-8 outside forms), the docked events panel (F9 or `e`), help
    (F1 or `?`), palette (ctrl+p).

    Keys typed before the sections are mounted are kept and replayed into the first field once it has the
    focus, so nothing typed during start-up is lost or taken as a command."""

    BINDINGS = bindings_for("main")  # rows of tui.ui.keymap.ACTIONS: alt+1..8 / 1-8, F9 / e, ?, escape
    AUTO_FOCUS = ""  # never the app's "first focusable widget": the sections place the focus themselves

    DEFAULT_CSS = """
    MainScreen #sections { height: 1fr; }
    """

    def __init__(self) -> None:
        super().__init__()
        self.current_section = "chats"
        self.sections_ready = False
        """The section shown at start is mounted, has the focus and got the keys typed before (the app takes keys)."""
        self.all_sections_mounted = False
        """Every section is mounted (the ones not shown at start follow after the runtime has started)."""
        self._early_keys: list[tuple[str, str | None]] = []
        self._mounts: dict[str, asyncio.Future[None]] = {}
        self._waiting_for_section = False  # a section shown before it was mounted: keys are kept until it is
        self._holding = 0  # parts asked for and being built (hold_keys_while): their end replays the keys
        self._replay_tries = 0  # replays put off because the section had no field to focus yet

    def on_key(self, event: events.Key) -> None:
        """While the section on screen is not mounted yet, keep what is typed (replayed by `_replay_early_keys`);
        after, text that reaches this screen without having gone through the focused field goes into it."""
        if self.sections_ready and not self._waiting_for_section:
            if self._taken_by_field(event) and self._type_now(event.key, event.character):
                # Forwarded here while nothing had the focus (start-up, a section still setting up) and handled only
                # after the replay focused the field: it goes into that field, as the keys kept before it did. A
                # field takes such keys itself, so one that reaches this screen never went through it.
                event.stop()
                event.prevent_default()
            return
        self._early_keys.append((event.key, event.character))
        event.stop()
        event.prevent_default()

    def action_next_field(self) -> None:
        self._field_key("tab")

    def action_previous_field(self) -> None:
        self._field_key("shift+tab")

    def _field_key(self, key: str) -> None:
        """Tab, acted on as it arrives (a priority binding): while keys are being kept it is kept with them, in
        order, and replayed (`_replay_early_keys`)."""
        if not self.sections_ready or self._waiting_for_section:
            self._early_keys.append((key, None))
            return
        self._type_now(key, None)

    def compose(self) -> ComposeResult:
        app = gateway_app(self)  # the composition: the header and the panel are handed what they show
        yield GatewayHeader(app.services, app.state)
        yield SectionBar(id="section-bar")
        with ContentSwitcher(initial="chats", id="sections"):
            for section in SECTIONS:
                yield SectionSlot(id=section.id)
        yield EventsPanel(app.services, app.state, id="events-panel")
        yield GatewayFooter()

    def on_mount(self) -> None:
        self.query_one(SectionBar).show(self.current_section)
        self.call_after_refresh(self._mount_sections)
        self.watch(self.app, "runtime_ready", self._offer_samples, init=False)

    def _offer_samples(self, ready: bool = True) -> None:
        """Sandbox mode: identifier fields show and complete ids that exist in the sandbox."""
        if ready:
            self._offer_samples_in(self.query_one("#sections"))

    def _offer_samples_in(self, root: Widget) -> None:
        app = gateway_app(self)
        if app.runtime_ready:
            from tui.ui.widgets.samples import apply_samples

            apply_samples(root, app.runtime.sandbox_host.samples())

    async def _mount_sections(self) -> None:
        """At start: the section on screen only, then the focus and the keys typed so far; the other sections
        follow in the background.

        With the sandbox in a process of its own, the runtime's start goes first at each step: it takes the sandbox
        on before the section is imported, and builds the clients before the section is mounted, so the header's
        first status read is answered while the section mounts and one frame shows both (before, the clients waited
        for the mount: ~40 ms later, and a frame more)."""
        runtime = gateway_app(self).runtime
        await _at_most(runtime.start_beside_loop, START_STEP_WAIT)
        await self._mount_section(self.current_section, after_import=runtime.clients_coming)
        self.call_after_refresh(self._offer_samples)
        # The replay gives the field the focus, not this method: a key arriving in between then reaches this screen
        # and is kept after the others, where a focused field would have taken it first ("5511" typed under load
        # became "1551"). At once, not after the section's first layout: the focus chain is built from the DOM and
        # the styles (both there once the section is mounted), and the focus then shows in that first layout's
        # frame instead of one more (~15 ms and a refresh tick before the app took keys).
        self.call_next(self._replay_early_keys)
        self.run_worker(self._mount_the_rest(), group="sections", exit_on_error=False,
                        description="mount the sections not shown yet")

    async def _mount_the_rest(self) -> None:
        """Once the runtime has started and the header has read the connection (before, they would compete for
        the same event loop, and the app would take longer to say it is connected), one section at a time."""
        app = gateway_app(self)
        await app.runtime_settled.wait()
        if app.runtime_ready:
            header = self.query_one(GatewayHeader)
            connection_read = asyncio.Event()

            def read(state: str) -> None:
                if state != "starting":
                    connection_read.set()

            self.watch(header, "connection", read)
            with contextlib.suppress(TimeoutError):  # a status read that never answers must not keep them away
                await asyncio.wait_for(connection_read.wait(), CONNECTION_READ_WAIT)
            # Let the frame that shows the connection be drawn first: mounting the next section takes the event
            # loop for a while (Groups ~100 ms), and the header would say "connected" only after it.
            drawn = asyncio.Event()
            self.call_after_refresh(drawn.set)
            await drawn.wait()
        await self._build_deferred(self.current_section)  # the rest of the section on screen first (Chats' form)
        for info in SECTIONS:
            if self._stop_mounting:
                return
            await self._mount_section(info.id)
            await self._build_deferred(info.id)
        self.all_sections_mounted = True
        app.keep_start_up_out_of_collections()

    async def _build_deferred(self, section_id: str) -> None:
        """A section may build parts the first frame does not show later (`Section.build_deferred`)."""
        section = self.section(section_id)
        if section is not None and not self._stop_mounting:
            pending = self._mounts[section_id] = asyncio.get_running_loop().create_future()
            try:
                await section.build_deferred()
            finally:
                pending.set_result(None)

    def hold_keys_while(self, work: Awaitable[object], then: Callable[[], object]) -> None:
        """A part of the section on screen is not built yet (Chats' form asked for before it was): keep the keys
        typed until `work` is done, call `then` (which places the focus), then replay them, in order, as at start."""
        self._waiting_for_section = True
        self._holding += 1
        self.set_focus(None)

        async def hold() -> None:
            try:
                await work
                then()
            finally:
                self._holding -= 1
                self.call_after_refresh(self._replay_early_keys)

        self.run_worker(hold(), group="hold-keys", exit_on_error=False, description="build what was asked for")

    _stop_mounting = False

    @property
    def mounting(self) -> bool:
        """A section is being mounted right now."""
        return any(not pending.done() for pending in self._mounts.values())

    async def finish_mounting(self) -> None:
        """Mount nothing more, and wait for a section being mounted now (the app calls this before it exits)."""
        self._stop_mounting = True
        for pending in list(self._mounts.values()):
            await asyncio.shield(pending)

    async def _mount_section(self, section_id: str, *, after_import: asyncio.Event | None = None) -> None:
        """Import, build and mount one section into its slot, once; a second caller waits for the first.
        `after_import`: what its build waits for once its module is imported (for START_STEP_WAIT at most)."""
        pending = self._mounts.get(section_id)
        if pending is not None:
            await asyncio.shield(pending)
            return
        pending = self._mounts[section_id] = asyncio.get_running_loop().create_future()
        try:
            info = SECTIONS_BY_ID[section_id]
            slot = self.slot(section_id)
            cls = section_class(info.id)
            if after_import is not None:
                await _at_most(after_import, START_STEP_WAIT)
            widget: Widget
            if cls is None:
                widget = Static(f"{info.title}: not available in this build.", classes="section-placeholder")
            else:
                try:
                    app = gateway_app(self)
                    widget = cls.with_services(app.services, app.state)
                except Exception:
                    log.exception("section %s failed to build", info.id)
                    widget = Static(f"{info.title}: failed to start (see the log).", classes="section-placeholder")
            await slot.mount(widget)  # composed and mounted, children included: its first field exists now
            self._offer_samples_in(slot)
        finally:
            pending.set_result(None)

    async def _open_when_mounted(self, section_id: str) -> None:
        """A section shown before it was mounted: mount it, then focus it and hand it the keys kept meanwhile."""
        await self._mount_section(section_id)
        if section_id == self.current_section:
            self.call_after_refresh(self._replay_early_keys)  # which focuses it, once its parts are set up

    async def _replay_early_keys(self) -> None:
        """What was typed during start-up goes where it would have gone: text into the first field, Tab to the
        next one. Editing keys are applied here, in order, at once (posting them as key events would race: a
        Tab acts only after its key event has bubbled up, and the text after it would already be in the old
        field). So is a key bound where the focus is (ctrl+n, Enter in a one-line field, ...), and the keys
        behind it wait for what it did to settle (a form opened, the focus moved). From the first other key on,
        the rest is posted as key events, in order."""
        section = self.slot(self.current_section).content
        if self._holding or section is None:
            return  # something asked for is still being built, or another section chosen meanwhile is still
            # being mounted: it replays when it is
        if not first_field_set_up(section) and self._replay_tries < REPLAY_TRIES:
            # Its first field is not set up yet (a TabbedContent's first moments): keep the keys until it is. Let
            # go now, and the focus would go to a tab or the section, where a digit typed next switches sections.
            self._replay_tries += 1
            self._waiting_for_section = True
            self.call_after_refresh(self._replay_early_keys)
            return
        self._replay_tries = 0
        self._focus_section()
        self._waiting_for_section = False
        if not self.sections_ready:
            self.sections_ready = True
            app = gateway_app(self)
            app.report_keymap_problems()
            self.call_after_refresh(app.first_section_shown.set)
        early, self._early_keys = self._early_keys, []
        for index, (key, character) in enumerate(early):
            if self._type_now(key, character):
                continue
            self._waiting_for_section = True  # keys typed while a bound key acts are kept behind the rest
            if await self._act_on_binding(key):
                # The rest waits until what the key did has settled (a form opened, the focus moved).
                self._early_keys[:0] = early[index + 1:]
                self.call_after_refresh(self._replay_early_keys)
                return
            self._waiting_for_section = False
            for later_key, later_character in early[index:]:
                replayed = events.Key(later_key, later_character)
                # Sent by the app, as a key from the terminal is: made here, it would name this screen as its
                # sender and stop bubbling at it, before the app's bindings run.
                replayed.set_sender(self.app)
                self.app.post_message(replayed)
            return

    async def _act_on_binding(self, key: str) -> bool:
        """A kept key bound where the focus is acts now. Posted, it would act only once it had bubbled up to the
        app, after the keys typed behind it had already reached the field (ctrl+n then a number: the number went
        into the search)."""
        active = self.active_bindings.get(key)
        if active is None or not active.enabled:
            return False
        return bool(await self.app.run_action(active.binding.action, active.node))

    def _taken_by_field(self, event: events.Key) -> bool:
        """The focused field would have taken this key itself (text; Enter in a box)."""
        focused = self.focused
        if isinstance(focused, Input):
            return event.is_printable
        from textual.widgets import TextArea  # imported once a key meets another widget (tui.ui.widgets.focus: why)

        if isinstance(focused, TextArea):
            return not focused.read_only and (event.is_printable or event.key == "enter")
        return False

    def _type_now(self, key: str, character: str | None) -> bool:
        focused = self.focused
        if key == "tab":
            self.focus_next()
        elif key == "shift+tab":
            self.focus_previous()
        elif isinstance(focused, Input) and character is not None and character.isprintable():
            focused.insert_text_at_cursor(character)
        elif isinstance(focused, Input) and key == "backspace":
            focused.action_delete_left()
        else:
            from textual.widgets import TextArea  # imported once a key meets another widget (tui.ui.widgets.focus: why)

            if isinstance(focused, TextArea) and (key == "enter" or (character is not None and character.isprintable())):
                focused.insert("\n" if key == "enter" else character or "")
            elif isinstance(focused, TextArea) and key == "backspace":
                focused.action_delete_left()
            else:
                return False
        return True

    # -- navigation ------------------------------------------------------------------------------------------

    def slot(self, section_id: str) -> SectionSlot:
        return self.query_one(f"#{section_id}", SectionSlot)

    def section(self, section_id: str) -> Section | None:
        return self.slot(section_id).section

    def _mounted(self, section_id: str) -> Widget | None:
        """The section or its placeholder; None while not mounted yet."""
        return self.slot(section_id).content

    def action_show_section(self, section_id: str) -> None:
        self.show_section(section_id)

    def show_section(self, section_id: str, *, focus: bool = True) -> None:
        """Switch to a section and focus its first field (`focus=False`: the caller places the focus)."""
        if section_id not in SECTIONS_BY_ID:
            return
        self.current_section = section_id
        self.query_one("#sections", ContentSwitcher).current = section_id
        self.query_one(SectionBar).show(section_id)
        section = self._mounted(section_id)
        if section is None:
            # Not mounted yet: what is typed now is kept (not sent to the field of the section just left) and
            # replayed once it is, into its first field.
            self._waiting_for_section = True
            self.set_focus(None)
            self.run_worker(self._open_when_mounted(section_id), group=f"open-{section_id}", exit_on_error=False,
                            description=f"mount the {section_id} section")
            return
        if focus and not first_field_set_up(section):
            # Mounted in the background a moment ago, its first field not set up yet (Groups' tabs): focusing now
            # would pick a table or a tab, where a digit typed next switches sections. Keep the keys until the
            # field is there, as at start; the replay focuses it and hands them over.
            self._waiting_for_section = True
            self.set_focus(None)
            self.call_after_refresh(self._replay_early_keys)
            return
        if focus:
            self._focus_section()  # at once: the next key typed goes to the new section's first field
            self.call_after_refresh(self._focus_section)  # (a no-op unless the section was not mounted yet)

    def _focus_section(self) -> None:
        """The current section's first field, unless the focus is already on a field inside the section."""
        slot = self.slot(self.current_section)
        focused = self.focused
        if focused is not None and slot in focused.ancestors and focused is not slot.content:
            return
        if slot.content is not None:
            focus_first(slot.content)

    def open_operation(self, section_id: str, op_id: str) -> None:
        """Switch to the section and open one of its operations (the palette calls this).

        While the palette is still on top, wait until this screen is back: resuming restores the focus it had
        before the palette, which would otherwise undo the operation's own focus and scroll.
        """
        if self.app.screen is not self:
            self._pending_operation = (section_id, op_id)
            return
        if self._mounted(section_id) is None:  # not mounted yet: show it (which mounts it), then open
            self.show_section(section_id)
            self.run_worker(self._operation_when_mounted(section_id, op_id), exit_on_error=False,
                            description=f"open {op_id}")
            return
        section = self.section(section_id)
        self.show_section(section_id, focus=section is None)  # the operation places the focus itself
        if section is not None:
            self.call_after_refresh(section.open_operation, op_id)

    async def _operation_when_mounted(self, section_id: str, op_id: str) -> None:
        await self._mount_section(section_id)
        self.call_after_refresh(self.open_operation, section_id, op_id)

    _pending_operation: tuple[str, str] | None = None

    def on_screen_resume(self) -> None:
        pending, self._pending_operation = self._pending_operation, None
        if pending is not None:
            self.call_after_refresh(self.open_operation, *pending)

    def action_toggle_panel(self) -> None:
        panel = self.query_one(EventsPanel)
        panel.display = not panel.display
        if not panel.display and self.focused is not None and panel in self.focused.ancestors_with_self:
            self._focus_section()

    _before_panel: Widget | None = None
    """The widget that had the focus before the events panel took it: Escape in the panel goes back there."""

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        panel = self.query_one(EventsPanel)
        if panel not in event.widget.ancestors_with_self:
            self._before_panel = event.widget

    def action_leave(self) -> None:
        """Escape: leave the events panel for where the user was; leave a form's field, picker, checkbox or button
        for its section (so 1-7, e and ? work and the section's keys still do); else ask the section to cancel its
        work."""
        focused = self.focused
        panel = self.query_one(EventsPanel)
        if focused is not None and panel in focused.ancestors_with_self:
            back = self._before_panel
            if back is None or not back.is_attached or not back.focusable or not back.region.area:
                mounted = self._mounted(self.current_section)
                back = first_field(mounted) if mounted is not None else None
            panel.leave(_out_of_the_conversations_fields(back))
            return
        if focused is not None and in_form(focused):
            mounted = self._mounted(self.current_section)
            if mounted is not None and mounted.can_focus and mounted in focused.ancestors:
                mounted.focus(scroll_visible=False)
            else:
                self.set_focus(None)
            return
        section = self.section(self.current_section)
        if section is not None:
            section.action_cancel()

    # -- several accounts (issue 26) ---------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "pick_account":  # the picker's key, in the footer too, only while there is a choice
            return len(gateway_app(self).runtime.accounts) > 1
        return True

    def action_pick_account(self) -> None:
        from tui.core.runtime import Opening
        from tui.ui.sections.fleet.picker import AccountPicker

        runtime = gateway_app(self).runtime
        if len(runtime.accounts) < 2:
            return
        current = runtime.current.name if runtime.current is not None else ""

        def chosen(name: str | None) -> None:
            if name:
                self.run_worker(self.make_current(name), group="switch-account", exclusive=True,
                                exit_on_error=False, description="switch the current account")

        opening = {account.name: account.opening.value for account in runtime.accounts if account.opening is not Opening.OPEN}
        self.app.push_screen(AccountPicker([account.name for account in runtime.accounts], current, opening), chosen)

    async def make_current(self, name: str) -> None:
        """Another open account becomes current: the header says it, the sections that show its profile are built
        again for it, the others act on it from their next call."""
        from tui.core.runtime import Opening

        runtime = gateway_app(self).runtime
        before = runtime.current
        chosen = runtime.open_accounts.named(name)
        if chosen is not None and chosen.opening is Opening.READING:
            self.notify(f"{name} is still opening (its secrets are being read): it becomes current when they are.",
                        title="Account", markup=False, timeout=4)
        try:
            account = await runtime.open_accounts.switch(name)
        except LookupError as error:
            self.notify(str(error), severity="warning", markup=False)
            return
        if account is before:
            return
        self.query_one(GatewayHeader).show_account()
        for section_id in REBOUND_ON_SWITCH:
            await self._rebuild_section(section_id)
        from tui.ui.sections.events import EventsSection
        from tui.ui.sections.chats.inbox import InboxView

        events = self.section("events")
        if isinstance(events, EventsSection) and gateway_app(self).runtime_ready:
            events.reload()  # the new current account's events
        for inbox in self.query(InboxView):  # and its conversations
            inbox.account_changed()
        for panel in self.query(EventsPanel):  # the live panel follows the current account too
            panel.account_changed()
        self.refresh_bindings()
        self.notify(f"Now on {account.name}: the sections act on this account.", title="Account", markup=False,
                    timeout=4)

    async def _rebuild_section(self, section_id: str) -> None:
        """Build a mounted section again (a section not mounted yet is built for the current account anyway)."""
        pending = self._mounts.get(section_id)
        if pending is None or not pending.done():
            return
        slot = self.slot(section_id)
        had_focus = self.focused is not None and slot in self.focused.ancestors
        await slot.remove_children()
        del self._mounts[section_id]
        await self._mount_section(section_id)
        await self._build_deferred(section_id)
        if had_focus:
            self._focus_section()

    def action_help(self) -> None:
        from tui.ui.screens.help import HelpScreen

        info = SECTIONS_BY_ID[self.current_section]
        section = self.section(self.current_section)
        markdown = (section.HELP if section is not None else "") or ""
        from tui.ui.widgets.section import account_flags_of

        accounts = gateway_app(self).runtime.open_accounts
        markdown += operations_help(info.id, accounts.dialects, account_flags_of(accounts))
        self.app.push_screen(HelpScreen(title=info.title, markdown=markdown, bindings_of=self.focused))


def _out_of_the_conversations_fields(back: Widget | None) -> Widget | None:
    """Where Escape from the events panel goes: back where the user was, except the reply line, for which it is the
    conversations' list: a key typed next landed in a reply line the user no longer had in mind."""
    from tui.ui.sections.chats.inbox import InboxList, InboxView, ReplyLine

    view = next((node for node in back.ancestors if isinstance(node, InboxView)), None) if back is not None else None
    if isinstance(back, ReplyLine) and view is not None:
        return view.query_one(InboxList)
    return back
