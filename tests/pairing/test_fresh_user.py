"""Pairing a WuzAPI user never paired (issue 38 item 1), against the sandbox playing each release over loopback HTTP.

A user never paired has no whatsmeow client. The older WuzAPI (asternic/wuzapi 79ee4cd, handlers.go GetStatus)
answers `GET /session/status` 500 "No session" until `POST /session/connect`; the newer one (71df569) answers the
status `{connected: false, loggedIn: false}`. Either way an immediate connect returns before the websocket is up
(API.md: "you will have to check shortly after"), and meanwhile `GET /session/qr` answers 500 "not connected" and
`POST /session/pairphone` 400 "websocket not connected" (whatsmeow's ErrNotConnected). The sandbox's clock is the
test's: its websocket comes up when the test moves the clock, never because the machine was fast or slow."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from datetime import UTC, datetime, timedelta

import httpx
import pytest

from tests.pairing.test_connect_cli import TOKENS, decode_plain, phone, read_qr_block
from tui.local import config
from tui.core.accounts.account import Tokens, new_account
from tui.api.connection import SessionStatus
from tui.api.dialects import InstanceDialect, SessionDialect
from tui.api.gateway_http import GatewayHttp
from tui.api.operations import Family
from tui.cli.connection import state_json, status_answer, status_line
from tui.core.pairing import Outcome, PairingActions, PairingRefused, Waiting, run_codes
from tui.sandbox.dialect import PairingOptions, WuzapiRelease
from tui.sandbox.pairing import FIRST_CODE_GAP
from tui.gateways.sandbox import SandboxGateway
from tui.local.secrets import MemorySecrets
from tui.core.watch import SESSION_SUBSCRIPTION

RELEASES = [WuzapiRelease.OLDER, WuzapiRelease.NEWER]
CONNECT_DELAY = timedelta(seconds=3)


class Clock:
    """The sandbox's and the pairing run's time: it moves only when a sleep or the test moves it."""

    def __init__(self) -> None:
        self.now = datetime(2026, 12, 7, 9, 0, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)
        await asyncio.sleep(0)


async def start(release: WuzapiRelease, clock: Clock, *, delay: timedelta = CONNECT_DELAY) -> SandboxGateway:
    gateway = SandboxGateway(
        instance_id="freshinst", instance_token=TOKENS["GATEWAY_TUI_INSTANCE_TOKEN"],
        client_token=TOKENS["GATEWAY_TUI_CLIENT_TOKEN"], session_token=TOKENS["GATEWAY_TUI_SESSION_TOKEN"],
        delivery_delay=0.0, logged_out=True, clock=clock, instance_dialect=InstanceDialect.ZAPI,
        session_dialect=SessionDialect.WUZAPI, pairing=PairingOptions(wuzapi_release=release, connect_delay=delay),
    )
    await gateway.start()
    return gateway


def profile_of(sandbox: SandboxGateway) -> config.Profile:
    base = sandbox.url.rstrip("/")
    return config.Profile(name="fresh", base_url=base, instance_id="freshinst", session_url=base,
                          instance_dialect=InstanceDialect.ZAPI, session_dialect=SessionDialect.WUZAPI)


def account_on(sandbox: SandboxGateway, clock: Clock):
    account = new_account(profile_of(sandbox), MemorySecrets(), store=lambda: None)
    http = GatewayHttp()
    account.connect(http, Tokens(TOKENS["GATEWAY_TUI_INSTANCE_TOKEN"], TOKENS["GATEWAY_TUI_CLIENT_TOKEN"],
                                 TOKENS["GATEWAY_TUI_SESSION_TOKEN"]))
    account.watch.clock = clock
    return account, http


async def wire(sandbox: SandboxGateway, method: str, path: str, body: object | None = None) -> tuple[int, object]:
    async with httpx.AsyncClient(trust_env=False) as client:
        answer = await client.request(method, f"{sandbox.url}{path}", headers={"token": TOKENS["GATEWAY_TUI_SESSION_TOKEN"]},
                                      content=None if body is None else json.dumps(body))
    return answer.status_code, answer.json()


# -- the wire, as each release answers a user never paired ---------------------------------------------------


async def test_the_older_release_answers_a_fresh_user_as_its_handlers_do() -> None:
    clock = Clock()
    sandbox = await start(WuzapiRelease.OLDER, clock)
    try:
        assert await wire(sandbox, "GET", "/session/status") == (500, {"code": 500, "error": "No session", "success": False})
        assert await wire(sandbox, "GET", "/session/qr") == (500, {"code": 500, "error": "No session", "success": False})
        status, answer = await wire(sandbox, "POST", "/session/connect", {"Subscribe": ["Message"], "Immediate": True})
        assert status == 200 and answer == {"code": 200, "data": {"details": "Connected!", "events": "Message", "jid": "",
                                                                  "webhook": ""}, "success": True}
        # returned before the websocket is up: GetStatus's two flags, GetQR "Not connected"
        assert await wire(sandbox, "GET", "/session/status") == (
            200, {"code": 200, "data": {"Connected": False, "LoggedIn": False}, "success": True})
        assert await wire(sandbox, "GET", "/session/qr") == (500, {"code": 500, "error": "Not connected", "success": False})
        assert await wire(sandbox, "POST", "/session/pairphone", {"Phone": "5511999990000"}) == (
            400, {"code": 400, "error": "websocket not connected", "success": False})
        clock.now += CONNECT_DELAY
        assert await wire(sandbox, "GET", "/session/status") == (
            200, {"code": 200, "data": {"Connected": True, "LoggedIn": False}, "success": True})
        status, answer = await wire(sandbox, "GET", "/session/qr")
        assert status == 200 and answer["data"]["QRCode"].startswith("data:image/png;base64,")
    finally:
        await sandbox.stop()


async def test_the_newer_release_answers_the_status_and_not_connected_for_a_while() -> None:
    clock = Clock()
    sandbox = await start(WuzapiRelease.NEWER, clock)
    try:
        status, answer = await wire(sandbox, "GET", "/session/status")
        assert status == 200 and (answer["data"]["connected"], answer["data"]["loggedIn"]) == (False, False)
        assert await wire(sandbox, "GET", "/session/qr") == (500, {"code": 500, "error": "no session", "success": False})
        assert (await wire(sandbox, "POST", "/session/connect", {"Subscribe": ["Message"], "Immediate": True}))[0] == 200
        assert await wire(sandbox, "GET", "/session/qr") == (500, {"code": 500, "error": "not connected", "success": False})
        clock.now += CONNECT_DELAY - timedelta(seconds=0.5)
        assert (await wire(sandbox, "GET", "/session/qr"))[0] == 500  # still starting
        clock.now += timedelta(seconds=0.5)
        status, answer = await wire(sandbox, "GET", "/session/status")
        assert (answer["data"]["connected"], answer["data"]["loggedIn"]) == (True, False)
        assert answer["data"]["qrcode"].startswith("data:image/png;base64,")
    finally:
        await sandbox.stop()


@pytest.mark.parametrize("release", RELEASES)
async def test_up_before_the_first_qr_code_answers_an_empty_one_and_is_waited_for(release: WuzapiRelease) -> None:
    # Both releases' GetQR read the code from the users table, where startClient stores each code whatsmeow emits
    # once the websocket is up (wmiau.go at 79ee4cd): connected, but no code yet, is `{"QRCode": ""}`
    # (docs/gateways/wuzapi.md §2.3: empty until a code is made). A pairing run asks again; it is no failure.
    clock = Clock()
    sandbox = await start(release, clock)
    account, http = account_on(sandbox, clock)
    try:
        assert (await wire(sandbox, "POST", "/session/connect", {"Subscribe": ["Message"], "Immediate": True}))[0] == 200
        clock.now += CONNECT_DELAY - FIRST_CODE_GAP  # the websocket is up; WhatsApp has not sent a code yet
        status, answer = await wire(sandbox, "GET", "/session/status")
        if release is WuzapiRelease.OLDER:
            assert answer == {"code": 200, "data": {"Connected": True, "LoggedIn": False}, "success": True}
        else:
            data = answer["data"]
            assert (data["connected"], data["loggedIn"], data["qrcode"]) == (True, False, "")
        assert await wire(sandbox, "GET", "/session/qr") == (200, {"code": 200, "data": {"QRCode": ""}, "success": True})

        waits: list[Waiting] = []
        codes: list[str] = []
        result = await run_codes(PairingActions(account, Family.SESSION, clock=clock), on_wait=waits.append,
                                 on_code=lambda code: (codes.append(code.text),
                                                       sandbox.state.session_link.pair("5511912345678", clock())),
                                 sleep=clock.sleep)
        assert result.outcome is Outcome.PAIRED and len(codes) == 1
        assert [(wait.said, wait.seconds_left) for wait in waits] == [("no QR code yet", 30)]
    finally:
        await http.aclose()
        await sandbox.stop()


# -- reading the state of a fresh user ----------------------------------------------------------------------


def test_connected_but_not_logged_in_is_waiting_for_a_scan() -> None:
    for answer in ({"Connected": True, "LoggedIn": False},  # GetStatus at 79ee4cd
                   {"connected": True, "loggedIn": False, "jid": "", "name": "fresh", "events": "Message",
                    "qrcode": "", "history": "0"}):  # the newer map (docs/gateways/wuzapi.md §2.3)
        state = SessionStatus.model_validate(answer).state
        assert state.waiting_for_scan and not state.logged_in
        line = status_line(state_json(state, None))
        assert line.startswith("connected, waiting for a scan") and "not connected" not in line
    idle = SessionStatus.model_validate({"Connected": False, "LoggedIn": False}).state
    assert not idle.waiting_for_scan and status_line(state_json(idle, None)).startswith("not connected")


@pytest.mark.parametrize("release", RELEASES)
async def test_status_of_a_fresh_user_is_not_connected_not_an_unknown(release: WuzapiRelease) -> None:
    clock = Clock()
    sandbox = await start(release, clock)
    account, http = account_on(sandbox, clock)
    try:
        answer, read_all = await status_answer(account)
        assert read_all, answer  # the older release's 500 "No session" is an answer: no client yet
        session = answer["session"]
        assert (session["connected"], session["logged_in"]) == (False, False)
        assert account.watch.problem(Family.SESSION) is None
        assert status_line(session).startswith("not connected")
    finally:
        await http.aclose()
        await sandbox.stop()


# -- pairing a fresh user -----------------------------------------------------------------------------------


@pytest.mark.parametrize("release", RELEASES)
@pytest.mark.parametrize("kind", ["qr", "phone"])
async def test_a_fresh_user_is_connected_then_waited_for_then_paired(release: WuzapiRelease, kind: str) -> None:
    clock = Clock()
    sandbox = await start(release, clock)
    account, http = account_on(sandbox, clock)
    waits: list[Waiting] = []
    codes: list[str] = []
    try:
        actions = PairingActions(account, Family.SESSION, clock=clock)

        def shown(code) -> None:
            codes.append(code.text)
            sandbox.state.session_link.pair("5511912345678", clock())  # the phone scans the first code

        result = await run_codes(actions, on_code=shown, on_wait=waits.append, sleep=clock.sleep,
                                 phone="5511999990000" if kind == "phone" else None)
        assert result.outcome is Outcome.PAIRED and len(codes) == 1
        # the connect was sent (with the app's subscriptions), then the code asked again until the websocket was up
        assert set(sandbox.state.session_webhook.events) == set(SESSION_SUBSCRIPTION)
        assert waits, "the gateway's first 'not connected' was taken as final"
        assert all("not connected" in wait.said.lower() for wait in waits)
        assert not any(wait.said[:1].isdigit() for wait in waits)  # the gateway's words, not the HTTP status line
        lefts = [wait.seconds_left for wait in waits]
        assert lefts == sorted(lefts, reverse=True) and lefts[0] <= 30
    finally:
        await http.aclose()
        await sandbox.stop()


async def test_a_session_that_never_comes_up_is_said_after_a_bounded_wait() -> None:
    clock = Clock()
    sandbox = await start(WuzapiRelease.NEWER, clock, delay=timedelta(hours=1))
    account, http = account_on(sandbox, clock)
    waits: list[Waiting] = []
    try:
        with pytest.raises(PairingRefused) as refused:
            await run_codes(PairingActions(account, Family.SESSION, clock=clock), on_code=lambda code: None,
                            on_wait=waits.append, sleep=clock.sleep)
        words = str(refused.value)
        assert "WuzAPI" in words and "not connected" in words and "30 s" in words
        assert waits and waits[-1].seconds_left <= 1
        assert clock.now - datetime(2026, 12, 7, 9, 0, 0, tzinfo=UTC) < timedelta(seconds=40)
    finally:
        await http.aclose()
        await sandbox.stop()


# -- `gateway-tui connect` against a fresh user ------------------------------------------------------------


@pytest.mark.parametrize("release", RELEASES)
async def test_connect_command_pairs_a_fresh_user(release: WuzapiRelease) -> None:
    clock = Clock()
    sandbox = await start(release, clock)
    try:
        config.save_profile(profile_of(sandbox))
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "tui", "connect", "--profile", "fresh", "--family", "session", "--timeout", "60",
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env={**os.environ, **TOKENS})
        assert process.stdout is not None and process.stderr is not None
        waited = b""
        while b"asking again" not in waited:  # the countdown, while the gateway still says "not connected"
            line = await asyncio.wait_for(process.stderr.readline(), timeout=30)
            assert line, f"connect ended while the session was starting: {waited.decode()}"
            waited += line
        assert b"not connected" in waited.lower() and b"s left" in waited
        clock.now += CONNECT_DELAY  # the websocket comes up
        texts = decode_plain(await read_qr_block(process.stdout))
        assert (await phone(sandbox, "/sandbox/scan", {"code": texts[0]})).status_code == 200
        out, err = await asyncio.wait_for(process.communicate(), timeout=30)
        assert process.returncode == 0, (waited + err).decode()
        last = out.decode().strip().splitlines()[-1]
        # The older release's status says no number (`{Connected, LoggedIn}`): said so, never a made-up one.
        assert last.startswith("connected as ") or last == "connected (the gateway does not say which number)"
    finally:
        await sandbox.stop()


@pytest.mark.parametrize("release", RELEASES)
async def test_a_paired_session_gets_no_code_and_no_connect(release: WuzapiRelease) -> None:
    clock = Clock()
    sandbox = await start(release, clock)
    sandbox.state.session_link.pair("5511912345678", clock())
    account, http = account_on(sandbox, clock)
    try:
        with pytest.raises(PairingRefused, match="paired and connected"):
            await PairingActions(account, Family.SESSION, clock=clock).qr_text()
    finally:
        await http.aclose()
        await sandbox.stop()
