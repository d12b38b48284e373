"""Account section (8): each family's connection, live (tui.core.watch), and pairing from here (tui.core.pairing): the QR
code drawn to scan, or a code to type on the phone, refreshed before it expires and stopped after three unanswered;
reconnect (the recovery that works when the gateway contradicts itself, then checked); log out (asked first).

The keys act on the chosen family (`f` chooses the other). The QR code needs about 65×33 cells beside the state
(`tui.api.qr.needed_size`). When the section is smaller it says whether hiding the events panel makes room; when
even that would not, the code goes on the whole screen (`qr_screen.py`), in sextants where half blocks do not fit
there (33×22 at 80×24); only a terminal too small even for that is told the size it needs and offered the phone
code, never a code cut short a phone cannot read. The run of codes is a task of this section (not a worker: it lasts
until a phone pairs), stopped by Escape, a new action, or leaving the app.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Mapping
from datetime import datetime
from enum import StrEnum
from typing import TYPE_CHECKING, ClassVar, Self

from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Input, Static

from tui.api.operations import Family, OperationId
from tui.api.qr import CompactQRText, QRError, QRText, compact_size, needed_size, render, render_compact
from tui.core.accounts.accounts import Accounts
from tui.core.alerts.service import PairingCodeGone, PairingCodeShown
from tui.core.feed.bus import EventBus
from tui.core.services import Services
from tui.ui.widgets.gateway_app import AppState
from tui.ui.keymap import bindings_for
from tui.core.pairing import (
    GATEWAY_NAMES,
    RECOVERY_WORDS,
    UNANSWERED_LIMIT,
    Code,
    CodeKind,
    PairingActions,
    PairingRefused,
    Waiting,
    connected_words,
    gateway_name,
    run_codes,
)
from tui.core.watch import utc_now
from tui.ui.sections.account.family_state import FAMILY_TITLES, FamilyState
from tui.ui.sections.account.phone_field import PhoneField
from tui.ui.sections.account.qr_screen import QRScreen, QRScreenClosed
from tui.ui.sections.account.qr_view import QRView
from tui.ui.widgets.events_panel import EventsPanel
from tui.ui.widgets.section import ConfirmScreen
from tui.ui.widgets.section_api import Section

if TYPE_CHECKING:
    from tui.core.accounts.account import Account
    from tui.api.connection import ConnectionState
    from tui.core.watch import Change

log = logging.getLogger(__name__)

INFO_MIN_WIDTH = 40
"""Columns the state and the words keep beside a drawn QR code."""
RECOVERY_CHECKS = 10
RECOVERY_CHECK_EVERY = 0.5
"""After a recovery, the state is read again this many times, this far apart, until it says connected."""
WHERE_QR = "WhatsApp › Linked devices › Link a device"
QR_SCREEN_LINES = 2
"""Rows the whole-screen QR code leaves for its words and the footer."""


class AccountCommand(StrEnum):
    """The Account section's own palette commands (its gateway operations come from tui.api.operations)."""

    SHOW_QR = "account-show-qr"
    PHONE_CODE = "account-phone-code"
    RECONNECT = "account-reconnect"
    LOGOUT = "account-logout"


class AccountSection(VerticalScroll, Section):
    """The state of each family, the code on show, one key per action."""

    OPERATIONS: ClassVar[Mapping[str, str]] = {
        AccountCommand.SHOW_QR: "Pair a phone: show the QR code",
        AccountCommand.PHONE_CODE: "Pair a phone: a code to type on it",
        AccountCommand.RECONNECT: "Reconnect the account (the recovery of a stuck session)",
        AccountCommand.LOGOUT: "Log the account's phone out",
    }

    HELP = """\
## Account

Each family of the account (instance: Z-API; session: WuzAPI) with its live connection: connected, logged in
(a phone is paired), the number, since when, and the gateway's reason. When the gateway's answers contradict each
other (a status that says connected beside a QR call that says not), it says so and names the recovery that works.

The keys act on the family marked ◂ (**f** chooses the other):

- **q** — show the QR code to scan (WhatsApp › Linked devices › Link a device). It is asked again before it
  expires (every 20 s), with a countdown; after three unanswered codes it stops and says so. When the section is
  too small to draw it beside the state it says whether hiding the events panel (**F9**) makes room; where even
  that would not, the code takes the whole screen (at 80×24 in smaller block characters that phones read as
  well); there **Escape** stops the codes and **p** asks for a phone code instead.
- **p** — a code to type on the phone instead: type the number (country code and number) in the field, Enter.
- **r** — reconnect: Z-API restarts the instance; WuzAPI disconnects, then connects (with the event kinds the
  app subscribes). Then the state is read until it says connected, or says what is still wrong.
- **l** — log out: unpairs the phone (asks first); pairing again needs a code.
- **Escape** — stop showing codes.
"""

    BINDINGS = bindings_for("account")

    DEFAULT_CSS = """
    AccountSection { height: 1fr; }
    AccountSection .section-title { text-style: bold; padding: 0 1; color: $accent; }
    AccountSection #account-body { height: auto; }
    AccountSection #account-info { width: 1fr; min-width: 40; height: auto; }
    AccountSection #account-words { height: auto; padding: 0 1; }
    AccountSection #account-words.-code { text-style: bold; }
    """

    def __init__(self, accounts: Accounts, bus: EventBus | None = None, *, deterministic: bool = False) -> None:
        """`deterministic`: the run's fixed times (tests, screenshots), for the pairing's countdown."""
        super().__init__()
        self.accounts = accounts
        self.bus = bus
        """Where a code on show and its end are told (the alerts' `code-expiring`)."""
        self.deterministic = deterministic
        self.clock: Callable[[], datetime] = utc_now
        """The pairing's clock (the countdown, the refresh); tests may fix it."""
        self.can_focus = True
        self.family: Family | None = None
        """The family the keys act on (the first the account has, until `f` chooses another)."""
        self._run: asyncio.Task[None] | None = None
        self._code: Code | None = None
        self._unsubscribe: Callable[[], None] | None = None
        self._account: Account | None = None
        self._words = ""
        self._qr_screen: QRScreen | None = None
        """The code on the whole screen, while it is open (tui.ui.sections.account.qr_screen)."""

    @classmethod
    def with_services(cls, services: Services, state: AppState) -> Self:
        return cls(services.accounts, services.bus, deterministic=services.display.deterministic)

    def compose(self) -> ComposeResult:
        yield Static("Account", classes="section-title", id="account-title")
        with Horizontal(id="account-body"):
            with Vertical(id="account-info"):
                yield FamilyState(Family.INSTANCE)
                yield FamilyState(Family.SESSION)
                yield PhoneField(id="account-phone-field")
                yield Static("", id="account-words")
            yield QRView(id="account-qr")

    # -- life cycle ----------------------------------------------------------------------------------------

    def on_mount(self) -> None:
        self.watch(self.app, "clients_ready", self._clients_ready, init=True)
        self.set_interval(1.0, self._tick)

    def on_unmount(self) -> None:
        run, self._run = self._run, None
        if run is not None:
            run.cancel()
        if self._unsubscribe is not None:
            self._unsubscribe()

    def _clients_ready(self, ready: bool) -> None:
        account = self.accounts.current if ready else None
        if account is None or account is self._account:
            self.show_state()
            return
        if self._unsubscribe is not None:
            self._unsubscribe()
        self._account = account
        self._unsubscribe = account.watch.subscribe(self._on_change)
        if self.family is None or not account.has(self.family):
            self.family = next((family for family in Family if account.has(family)), None)
        self.show_state()

    def _on_change(self, _change: Change) -> None:
        self.show_state()

    def on_resize(self) -> None:
        self._show_code()

    # -- what is shown -------------------------------------------------------------------------------------

    def show_state(self) -> None:
        account = self._account
        title = self.query_one("#account-title", Static)
        for panel in self.query(FamilyState):
            has = account is not None and account.has(panel.family)
            panel.display = account is None or has
            if account is None or not has:
                continue
            watch = account.watch
            panel.show(watch.state(panel.family), problem=watch.problem(panel.family),
                       contradiction=watch.contradiction(panel.family), flapping=watch.flapping(panel.family),
                       chosen=panel.family is self.family and len(account.families) > 1,
                       speaks=account.dialects[0 if panel.family is Family.INSTANCE else 1].value,
                       deterministic=self.deterministic)
        title.update(f"Account · {account.name}" if account is not None else "Account · starting")

    def say(self, words: str, *, code: bool = False) -> None:
        self._words = words
        shown = self.query_one("#account-words", Static)
        shown.set_class(code, "-code")
        shown.update(words)
        self.call_after_refresh(shown.scroll_visible, animate=False)

    def _tick(self) -> None:
        if self._code is not None:
            self._show_code()

    def _gateway(self, family: Family) -> str:
        """The gateway the account's family really is ("Evolution API"), by its dialect."""
        account = self._account
        if account is None:
            return GATEWAY_NAMES[family]
        return gateway_name(family, account.dialects[0 if family is Family.INSTANCE else 1].value)

    def _show_code(self) -> None:
        """The code on show: the QR drawn when it fits (beside the state, else on the whole screen, else the size it
        needs), or the phone code; its countdown."""
        code, view = self._code, self.query_one(QRView)
        if code is None or self.family is None:
            self._hide_code()
            return
        family = self.family
        gateway = self._gateway(family)
        left = code.seconds_left(self.clock())
        if code.expired:
            expired = (f"Code {code.number} of {UNANSWERED_LIMIT} has expired: {gateway} closed its "
                       "pairing. Asking for a new one…")
            if self._qr_screen is not None:
                self._qr_screen.say(expired)  # the next code replaces it there: no flicker back to the section
            else:
                view.show_code(None)
            self.say(expired)
            return
        counted = (f"code {code.number} of {UNANSWERED_LIMIT}, " + (f"{left} s left" if left else "expired")
                   + f" ({FAMILY_TITLES[family].lower()}, {gateway})")
        if code.kind is CodeKind.PHONE:
            self._hide_code()
            self.say(f"Type this code on the phone: {code.text}  ({counted})\n"
                     f"{WHERE_QR} › Link with phone number instead.", code=True)
            return
        try:
            needed = needed_size(code.text)
            whole_screen = self._whole_screen_drawing(code.text)
        except QRError as error:
            self._hide_code()
            self.say(f"The QR code cannot be drawn: {error}. Press p for a phone code instead.")
            return
        room_columns, room_rows = self.size.width - INFO_MIN_WIDTH, self.size.height - 1  # the title line
        scan = f"Scan with the phone ({WHERE_QR}); {counted}."
        if needed.fits(room_columns, room_rows):
            self._close_qr_screen()
            view.show_code(render(code.text))
            self.say(scan)
            return
        view.show_code(None)
        panel_makes_room = needed.fits(room_columns, room_rows + self._panel_rows())
        if whole_screen is not None and not panel_makes_room:
            self.say(f"The QR code is on the whole screen (it does not fit beside the state here); {counted}.")
            # One line under the code at 80 columns (the footer says the keys).
            self._show_qr_screen(whole_screen, f"Scan it: {WHERE_QR} · code {code.number} of {UNANSWERED_LIMIT}, "
                                               + (f"{left} s left" if left else "expired"))
            return
        self._close_qr_screen()
        larger = ("Press F9 to hide the events panel: then it fits. Or press p for a phone code."
                  if panel_makes_room
                  else "Make the terminal larger, or press p for a phone code.")
        self.say(f"The QR code needs {needed.columns + INFO_MIN_WIDTH}×{needed.rows + 1} cells here (the code "
                 f"{needed}, the state beside it) and this section is {self.size.width}×{self.size.height}: "
                 f"a code cut short cannot be scanned. {larger}")

    def _whole_screen_drawing(self, payload: str) -> QRText | CompactQRText | None:
        """The code as the whole screen shows it (its words and the footer below): half blocks where they fit, else
        sextants (33×22 cells for a typical code: 80×24 has room), else None."""
        columns, rows = self.app.size.width, self.app.size.height - QR_SCREEN_LINES
        if needed_size(payload).fits(columns, rows):
            return render(payload)
        if compact_size(payload).fits(columns, rows):
            return render_compact(payload)
        return None

    def _show_qr_screen(self, drawn: QRText | CompactQRText, words: str) -> None:
        screen = self._qr_screen
        if screen is not None:
            screen.show(drawn, words)
            return
        self._qr_screen = QRScreen(drawn, words)
        self.app.push_screen(self._qr_screen, callback=self._qr_screen_closed)

    def _close_qr_screen(self) -> None:
        screen, self._qr_screen = self._qr_screen, None
        if screen is not None and screen.is_current:
            screen.dismiss(QRScreenClosed.ENDED)

    def _qr_screen_closed(self, why: QRScreenClosed | None) -> None:
        self._qr_screen = None
        if why is QRScreenClosed.STOP:
            self.action_cancel()
        elif why is QRScreenClosed.PHONE:
            self.action_phone_code()

    def _hide_code(self) -> None:
        """No code on show: neither beside the state nor on the whole screen."""
        self.query_one(QRView).show_code(None)
        self._close_qr_screen()

    def _panel_rows(self) -> int:
        """The rows the events panel takes below the section (0 when hidden): F9 gives them to the section."""
        return sum(panel.outer_size.height for panel in self.screen.query(EventsPanel) if panel.display)

    # -- the run of codes ----------------------------------------------------------------------------------

    def _actions(self) -> PairingActions | None:
        account, family = self._account, self.family
        if account is None or family is None:
            self.say("The gateway is not ready yet; nothing was asked. Try again in a moment.")
            return None
        return PairingActions(account, family, clock=self.clock)

    def _stop_run(self) -> None:
        run, self._run = self._run, None
        if run is not None and not run.done():
            run.cancel()
        self._code = None
        if self.is_mounted:
            self._hide_code()

    def _start_run(self, phone: str | None) -> None:
        actions = self._actions()
        if actions is None:
            return
        self._stop_run()
        what = "a phone code" if phone else "a QR code"
        self.say(f"Asking {actions.gateway} for {what}…")
        self._run = asyncio.create_task(self._run_codes(actions, phone))

    async def _run_codes(self, actions: PairingActions, phone: str | None) -> None:
        account, family = actions.account.name, actions.family.value

        def shown(code: Code) -> None:
            self._code = code
            self._show_code()
            # Only the last code of the run is alerted before it expires: the ones before it are replaced on their own.
            if self.bus is not None and not code.expired and code.number >= UNANSWERED_LIMIT:
                self.bus.publish(PairingCodeShown(account, family, f"last {code.kind.value}", code.expires_at))

        try:
            await self._run_codes_shown(actions, phone, shown)
        finally:  # paired, given up, refused or cancelled: no code is on show any more
            if self.bus is not None:
                self.bus.publish(PairingCodeGone(account, family, "the pairing run ended"))

    async def _run_codes_shown(self, actions: PairingActions, phone: str | None,
                               shown: Callable[[Code], None]) -> None:

        def waiting(wait: Waiting) -> None:
            self._code = None
            self._hide_code()
            self.say(f"{actions.gateway} is starting the session (it says \"{wait.said}\"): asking again, "
                     f"{wait.seconds_left} s left.")

        try:
            result = await run_codes(actions, on_code=shown, phone=phone, on_wait=waiting)
        except PairingRefused as refused:
            self._code = None
            self._hide_code()
            self.say(str(refused))
            return
        except Exception as error:  # a profile without the family, clients not built: said, never a crash
            log.warning("pairing stopped: %s", error)
            self._code = None
            self._hide_code()
            self.say(f"Pairing stopped: {error}")
            return
        self._code = None
        self._hide_code()
        self.say(result.words())
        self.show_state()

    # -- the actions -----------------------------------------------------------------------------------------

    def action_show_qr(self) -> None:
        self.query_one(PhoneField).close()
        self._start_run(None)

    def action_phone_code(self) -> None:
        self._stop_run()
        self.query_one(PhoneField).open()
        self.say("Type the phone's number (country code and number, e.g. 5511999999999), then Enter.")

    @on(Input.Submitted, "#account-phone")
    def _phone_typed(self, event: Input.Submitted) -> None:
        event.stop()
        phone = "".join(character for character in event.value if character.isdigit())
        if not phone:
            self.say("Type the phone's number first (country code and number); nothing was asked.")
            return
        self.focus()
        self._start_run(phone)

    def action_next_family(self) -> None:
        account = self._account
        if account is None:
            return
        families = [family for family in Family if account.has(family)]
        if len(families) < 2:
            self.say(f"This profile has only the {families[0].value} family." if families else "No family.")
            return
        self._stop_run()
        self.family = families[(families.index(self.family) + 1) % len(families)] if self.family else families[0]
        self.show_state()

    def action_reconnect(self) -> None:
        actions = self._actions()
        if actions is None:
            return
        self._stop_run()
        self.say(f"Reconnecting the {actions.family.value}: {RECOVERY_WORDS[actions.family]}…")
        self.run_worker(self._recover(actions), group="account-action", exclusive=True, exit_on_error=False)

    async def _recover(self, actions: PairingActions) -> None:
        """The recovery, then the state read until it says connected (or what is still wrong)."""
        done, state = await self._act(actions.reconnect)
        if not done:
            return
        for _ in range(RECOVERY_CHECKS):
            if state is not None and _connected(state, actions):
                break
            await asyncio.sleep(RECOVERY_CHECK_EVERY)
            state = await actions.check()
        family = actions.family.value
        if state is not None and _connected(state, actions):
            self.say(f"Recovered: the {family} is {connected_words(state.number)}.")
        elif state is not None and not state.logged_in:
            self.say(f"Reconnected, but no phone is paired to the {family}: press q for a QR code or p for a "
                     "phone code.")
        else:
            still = actions.account.watch.contradiction(actions.family) or (state.reason if state else None)
            self.say(f"The {family} is still not connected after the recovery" + (f": {still}" if still else "")
                     + ". Try r again in a moment, or log out (l) and pair again.")

    async def _act(self, call: Callable[[], Awaitable[ConnectionState | None]]) -> tuple[bool, ConnectionState | None]:
        """(done, the state read after it); a refusal is said, in the gateway's words."""
        try:
            return True, await call()
        except PairingRefused as refused:
            self.say(str(refused))
            return False, None

    def action_logout(self) -> None:
        actions = self._actions()
        if actions is None:
            return
        family = actions.family

        def answered(yes: bool | None) -> None:
            if yes:
                self._stop_run()
                self.say(f"Logging the {family.value} out…")
                self.run_worker(self._logout(actions), group="account-action", exclusive=True, exit_on_error=False)
            else:
                self.say("Nothing was logged out.")

        self.app.push_screen(ConfirmScreen(
            f"Log the phone out of the {family.value} ({actions.gateway})?",
            "The phone is unpaired from the gateway: messages stop until it is paired again with a new code.",
            confirm_label="Log out"), answered)

    async def _logout(self, actions: PairingActions) -> None:
        done, _state = await self._act(actions.logout)
        if not done:
            return
        self.say(f"Logged out: the {actions.family.value} has no phone paired now. Press q or p to pair one.")

    def action_cancel(self) -> None:
        if self._run is not None:
            self._stop_run()
            self.say("Stopped showing codes; nothing is paired.")
        self.query_one(PhoneField).close()

    # -- the palette -----------------------------------------------------------------------------------------

    def open_operation(self, op_id: str) -> None:
        acts: dict[str, Callable[[], object]] = {
            AccountCommand.SHOW_QR: self.action_show_qr, AccountCommand.PHONE_CODE: self.action_phone_code,
            AccountCommand.RECONNECT: self.action_reconnect, AccountCommand.LOGOUT: self.action_logout,
            # the gateway's pairing calls (tui.api.operations) are the steps of these actions
            OperationId.QR_CODE: self.action_show_qr, OperationId.QR_CODE_IMAGE: self.action_show_qr,
            OperationId.SESSION_CONNECT: self.action_show_qr, OperationId.SESSION_QR: self.action_show_qr,
            OperationId.PHONE_CODE: self.action_phone_code, OperationId.SESSION_PAIRPHONE: self.action_phone_code,
            OperationId.RESTART: self.action_reconnect, OperationId.SESSION_DISCONNECT: self.action_reconnect,
            OperationId.DISCONNECT: self.action_logout, OperationId.SESSION_LOGOUT: self.action_logout,
            OperationId.SESSION_STATUS: self.refresh_state, OperationId.DEVICE: self.read_device,
        }
        act = acts[op_id]
        family = _family_of(op_id)
        if family is not None and self._account is not None and self._account.has(family):
            self.family = family
        self.focus()
        self.call_after_refresh(act)

    def refresh_state(self) -> None:
        account = self._account
        if account is not None:
            self.run_worker(account.watch.poll(account, force=True), group="account-read", exclusive=True,
                            exit_on_error=False)


    def read_device(self) -> None:
        """Z-API's `GET /device`, read now and said: the paired phone's number, name and device."""
        account = self._account
        if account is None or not account.has(Family.INSTANCE):
            self.say("No instance account is open; nothing was asked.")
            return
        self.say("Reading the paired phone (Z-API GET /device)…")
        self.run_worker(self._read_device(account), group="account-read", exclusive=True, exit_on_error=False)

    async def _read_device(self, account: Account) -> None:
        from tui.api.errors import GatewayError
        from tui.api.models import NoBody
        from tui.api.operations import DEVICE

        try:
            device = await account.instance_client().request(DEVICE, NoBody())
        except GatewayError as error:
            self.say(f"The paired phone was not read: {error.message}")
            return
        kind = "business" if device.isBusiness else "personal" if device.isBusiness is False else ""
        about = ", ".join(part for part in (device.name, kind, device.originalDevice) if part)
        self.say(f"Paired phone: {device.number or 'no number in the answer'}" + (f" ({about})" if about else ""))


def _connected(state: ConnectionState, actions: PairingActions) -> bool:
    return state.connected and actions.account.watch.contradiction(actions.family) is None


def _family_of(op_id: str) -> Family | None:
    from tui.api.operations import OPERATIONS

    with contextlib.suppress(ValueError, KeyError):
        return OPERATIONS[OperationId(op_id)].family
    return None
