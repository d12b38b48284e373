"""The Account section (issue 23) against the sandbox in the Z-API and WuzAPI dialects, started logged out: the QR
code is read back from the screen's characters and decoded (zxing-cpp) as a phone's camera would, then scanned
through `/sandbox/scan`; the phone code is typed in its field and "typed on the phone" the same way; a wedged
session (`/sandbox/disconnect` stuck) shows the contradiction in words, and its recovery key brings it back."""

from __future__ import annotations

import json

import httpx
import pytest
from textual.widgets import Input

from tests.api.qr_readback import codes_on_screen
from tests.harness import screen_text, wait_ready, wait_until
from tui.api.operations import Family
from tui.ui.app import GatewayApp, build_app
from tui.ui.sections.account.section import AccountSection
from tui.ui.sections.account.family_state import FamilyState
from tui.ui.widgets.forms import set_cursor_blink
from tui.ui.widgets.header import GatewayHeader
from tui.ui.widgets.section import ConfirmScreen

DIALECTS = ("zapi", "wuzapi")


def account_app(*, logged_out: bool = True) -> GatewayApp:
    set_cursor_blink(False)
    return build_app(sandbox=True, deterministic=True, sandbox_dialects=DIALECTS, sandbox_logged_out=logged_out)


async def sandbox_post(app: GatewayApp, path: str, body: dict[str, str]) -> httpx.Response:
    assert app.runtime.sandbox is not None
    async with httpx.AsyncClient(trust_env=False) as client:
        return await client.post(f"{app.runtime.sandbox.url.rstrip('/')}{path}", content=json.dumps(body))


async def open_account(pilot, family: Family) -> AccountSection:
    app = pilot.app
    await pilot.press("f9")  # the events panel hidden: the section has the room for the code
    await pilot.press("alt+8")
    section = app.screen.query_one(AccountSection)
    await wait_until(pilot, lambda: section.family is not None, what="the account in the section")
    if section.family is not family:
        await pilot.press("f")
    assert section.family is family
    return section


def connected(app: GatewayApp, family: Family) -> bool:
    account = app.runtime.current
    state = account.watch.state(family) if account is not None else None
    return state is not None and state.connected


@pytest.mark.parametrize("family", [Family.INSTANCE, Family.SESSION])
async def test_pair_by_the_qr_code_read_from_the_screen(family: Family) -> None:
    app = account_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(pilot)
        await open_account(pilot, family)
        assert "not logged in" in screen_text(app)
        await pilot.press("q")
        await wait_until(pilot, lambda: bool(codes_on_screen(screen_text(app))), what="a QR code that decodes")
        shown = screen_text(app)
        assert "code 1 of 3" in shown and "s left" in shown
        [payload] = codes_on_screen(shown)
        assert payload.count(",") == 3 and len(payload) > 200  # whatsmeow's ref,noise,identity,adv
        answer = await sandbox_post(app, "/sandbox/scan", {"code": payload})
        assert answer.status_code == 200, answer.text
        await wait_until(pilot, lambda: "connected as" in screen_text(app), what="paired")
        assert connected(app, family)
        assert not codes_on_screen(screen_text(app))  # the code is gone once paired


@pytest.mark.parametrize("family", [Family.INSTANCE, Family.SESSION])
async def test_pair_by_a_phone_code_typed_in_its_field(family: Family) -> None:
    app = account_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(pilot)
        section = await open_account(pilot, family)
        await pilot.press("p")
        await wait_until(pilot, lambda: getattr(app.focused, "id", None) == "account-phone", what="the phone field")
        await pilot.press(*"5511999999999", "q", "r", "l")  # letters in the field are text, never commands
        assert section._run is None  # nothing asked yet: typing is not a command
        assert not isinstance(app.screen, ConfirmScreen)  # l did not ask to log out
        assert app.screen.query_one("#account-phone", Input).value == "5511999999999"  # the field takes digits
        await pilot.press("enter")
        await wait_until(pilot, lambda: "Type this code on the phone:" in screen_text(app), what="the phone code")
        line = next(line for line in screen_text(app).splitlines() if "Type this code on the phone:" in line)
        code = line.split("Type this code on the phone:")[1].split()[0]
        assert len(code) == 9 and code[4] == "-"  # XXXX-XXXX
        answer = await sandbox_post(app, "/sandbox/scan", {"code": code})
        assert answer.status_code == 200, answer.text
        await wait_until(pilot, lambda: "connected as" in screen_text(app), what="paired")
        assert connected(app, family)


@pytest.mark.parametrize("family", [Family.INSTANCE, Family.SESSION])
async def test_a_stuck_session_is_said_and_its_recovery_key_brings_it_back(family: Family) -> None:
    app = account_app(logged_out=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(pilot)
        await open_account(pilot, family)
        await wait_until(pilot, lambda: connected(app, family), what="connected first")
        answer = await sandbox_post(app, "/sandbox/disconnect", {"family": family.value, "reason": "stuck"})
        assert answer.status_code == 200, answer.text
        app.screen.query_one(GatewayHeader).poll_status()  # the 10 s read, now
        await wait_until(pilot, lambda: "The gateway contradicts itself" in screen_text(app),
                         what="the contradiction in words")
        shown = " ".join(screen_text(app).split())
        recovery = "restart the instance" if family is Family.INSTANCE else "disconnect, then connect again"
        assert f"press r to {recovery}" in shown
        await pilot.press("r")
        await wait_until(pilot, lambda: "Recovered: the " in screen_text(app), what="recovered")
        assert connected(app, family)
        assert app.runtime.current is not None and app.runtime.current.watch.contradiction(family) is None
        assert "contradicts" not in screen_text(app)


async def test_log_out_asks_first() -> None:
    app = account_app(logged_out=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(pilot)
        await open_account(pilot, Family.SESSION)
        await wait_until(pilot, lambda: connected(app, Family.SESSION), what="connected first")
        await pilot.press("l")
        await wait_until(pilot, lambda: "Log the phone out of the session" in screen_text(app), what="the question")
        await pilot.press("n")
        await wait_until(pilot, lambda: "Nothing was logged out." in screen_text(app), what="no")
        assert connected(app, Family.SESSION)
        await pilot.press("l")
        await wait_until(pilot, lambda: "Log the phone out of the session" in screen_text(app), what="the question")
        await pilot.press("y")
        await wait_until(pilot, lambda: "Logged out: the session" in screen_text(app), what="logged out")
        await wait_until(pilot, lambda: not connected(app, Family.SESSION), what="not connected")


async def test_the_z_api_number_is_shown_and_its_device_read_on_demand() -> None:
    """Z-API's status says no number: the watch reads GET /device once connected, and the section shows it; the
    palette's "Paired phone's number and device (Z-API)" reads it again and says what the phone is."""
    app = account_app(logged_out=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(pilot)
        section = await open_account(pilot, Family.INSTANCE)
        assert app.runtime.sandbox is not None
        number = app.runtime.sandbox.state.own_phone
        panel = next(panel for panel in section.query(FamilyState) if panel.family is Family.INSTANCE)
        await wait_until(pilot, lambda: f"number {number}" in str(panel.render()),
                         what="the instance's number")
        section.open_operation("device")
        await wait_until(pilot, lambda: f"Paired phone: {number} (Acme Store (sandbox), business, smba)"
                         in screen_text(app), what="the device said")


class SandboxClock:
    """The sandbox's time, moved by the test: WuzAPI's websocket comes up when the test says, not when the machine
    got round to it."""

    def __init__(self) -> None:
        from datetime import UTC, datetime

        self.now = datetime(2026, 12, 7, 9, 0, 0, tzinfo=UTC)

    def __call__(self):
        return self.now


@pytest.mark.parametrize("release", ["older", "newer"])
async def test_a_wuzapi_user_never_paired_is_connected_waited_for_and_shown_the_code(release: str) -> None:
    from datetime import timedelta

    from tui.sandbox.dialect import WuzapiRelease

    app = account_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(pilot)
        sandbox = app.runtime.sandbox
        assert sandbox is not None and hasattr(sandbox, "context")
        clock = SandboxClock()
        sandbox.context.clock = clock
        sandbox.context.wuzapi_release = WuzapiRelease(release)
        sandbox.context.connect_delay = timedelta(seconds=5)
        section = await open_account(pilot, Family.SESSION)
        await pilot.press("q")
        await wait_until(pilot, lambda: "asking again" in screen_text(app),
                         what="the wait for the session said, with its countdown")
        shown = " ".join(screen_text(app).split())
        assert "starting the session" in shown and "s left" in shown and "would not" not in shown
        assert sandbox.state.session_link.client  # POST /session/connect was sent
        clock.now += timedelta(seconds=5)  # the websocket comes up
        await wait_until(pilot, lambda: bool(codes_on_screen(screen_text(app))), what="the QR code")
        section.refresh_state()
        await wait_until(pilot, lambda: "connected, waiting for a scan" in screen_text(app),
                         what="the session's state: connected, waiting for a scan")
        [payload] = codes_on_screen(screen_text(app))
        assert (await sandbox_post(app, "/sandbox/scan", {"code": payload})).status_code == 200
        await wait_until(pilot, lambda: "connected as" in screen_text(app), what="paired")


async def test_the_phone_code_field_offers_the_accounts_own_number_not_the_contacts() -> None:
    """Issue 38 item 12: the number a phone code pairs is the account's own phone's, never a contact's."""
    from tui.sandbox.state import OWN_PHONE

    app = account_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(pilot)
        await wait_until(pilot, lambda: getattr(app.screen, "all_sections_mounted", False), what="every section")
        await open_account(pilot, Family.INSTANCE)
        await pilot.press("p")
        field = app.screen.query_one("#account-phone", Input)
        await wait_until(pilot, lambda: OWN_PHONE in field.placeholder, what="the own number offered")
        contacts = app.runtime.sandbox_host.samples().contacts
        assert not any(phone in field.placeholder for phone, _name in contacts)
        assert field.suggester is not None
        assert await field.suggester.get_suggestion("55") == OWN_PHONE


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])
async def test_the_phone_code_fields_offer_is_read_whole(size: tuple[int, int]) -> None:
    """Issue 38 item 12: the field says whose number it wants, whole: at 28 columns it read "5511912345678 (this"."""
    from tui.sandbox.state import OWN_PHONE

    app = account_app()
    async with app.run_test(size=size) as pilot:
        await wait_ready(pilot)
        await wait_until(pilot, lambda: getattr(app.screen, "all_sections_mounted", False), what="every section")
        await open_account(pilot, Family.INSTANCE)
        await pilot.press("p")
        field = app.screen.query_one("#account-phone", Input)
        await wait_until(pilot, lambda: OWN_PHONE in field.placeholder, what="the own number offered")
        await wait_until(pilot, lambda: f"{OWN_PHONE} (your own phone)" in screen_text(app),
                         what="the offer read whole")


async def test_a_wuzapi_phone_code_counts_to_the_gateways_expiry_and_is_said_expired_when_it_closes() -> None:
    """Issue 38 item 12: WuzAPI's phone code lasts as long as its pairing websocket (whatsmeow's 160 s), and the
    section says it expired as soon as WuzAPI's status says the pairing closed; then a new code comes."""
    from datetime import timedelta

    app = account_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(pilot)
        sandbox = app.runtime.sandbox
        assert sandbox is not None and hasattr(sandbox, "context")
        clock = SandboxClock()
        sandbox.context.clock = clock
        section = await open_account(pilot, Family.SESSION)
        section.clock = clock
        said: list[str] = []
        say = section.say
        section.say = lambda words, *, code=False: (said.append(words), say(words, code=code))[1]  # type: ignore[method-assign]
        await pilot.press("p")
        await wait_until(pilot, lambda: getattr(app.focused, "id", None) == "account-phone", what="the phone field")
        await pilot.press(*"5511912345678", "enter")
        await wait_until(pilot, lambda: "Type this code on the phone:" in screen_text(app), what="the phone code")
        assert "160 s left" in " ".join(screen_text(app).split())  # whatsmeow's limit, not 20 s
        clock.now += timedelta(seconds=160)  # WuzAPI's QR codes ran out: its pairing websocket closes
        await wait_until(pilot, lambda: "code 2 of 3" in screen_text(app), what="a new code")
        assert any("has expired: WuzAPI closed its pairing" in words for words in said)


async def test_the_app_starts_on_a_logged_out_sandbox_in_the_specs_dialect() -> None:
    """`--sandbox --logged-out` in the spec's dialects did not start ("Could not start … 409 instance not
    connected"): setting the delivery webhook wanted a paired phone. A gateway's webhook settings are set before
    any phone is paired; the app starts, says it is not connected, and points the webhook at its listener."""
    app = build_app(sandbox=True, deterministic=True, sandbox_dialects=("spec", "spec"), sandbox_logged_out=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(pilot)
        assert not app.runtime_error, app.runtime_error
        sandbox = app.runtime.sandbox
        assert sandbox is not None
        assert sandbox.state.delivery_url.endswith("/delivery") and not sandbox.state.instance_link.paired
