"""Pairing from the command line and the pairing actions (issue 23), against the sandbox in both real dialects:
`gateway-tui connect` as a real process (stdout a pipe: plain characters) whose QR code is read back from its
output and scanned through `/sandbox/scan`; `--phone`; three unanswered codes and `--timeout` exit 1; `status
--json`; each disconnect reason, its recovery, and the subscriptions after it."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
from datetime import UTC, datetime, timedelta

import httpx
import pytest

from tests.api import qr_readback
from tests.harness import run_gateway_tui
from tui.local import config
from tui.core.accounts.account import Tokens, new_account
from tui.api.dialects import InstanceDialect, SessionDialect
from tui.api.gateway_http import GatewayHttp
from tui.api.operations import Family
from tui.cli.connection import status_answer
from tui.core.pairing import Outcome, PairingActions, run_codes
from tui.gateways.sandbox import SandboxGateway
from tui.sandbox.state import OWN_PHONE
from tui.local.secrets import MemorySecrets

TOKENS = {
    "GATEWAY_TUI_INSTANCE_TOKEN": "pair-instance-token-SECRET",
    "GATEWAY_TUI_CLIENT_TOKEN": "pair-client-token-SECRET",
    "GATEWAY_TUI_SESSION_TOKEN": "pair-session-token-SECRET",
}
GLYPHS = set("█▀▄ ")


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2026, 11, 27, 9, 0, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)
        await asyncio.sleep(0)


async def start_sandbox(*, logged_out: bool, clock: Clock | None = None) -> SandboxGateway:
    gateway = SandboxGateway(
        instance_id="pairinst", instance_token=TOKENS["GATEWAY_TUI_INSTANCE_TOKEN"],
        client_token=TOKENS["GATEWAY_TUI_CLIENT_TOKEN"], session_token=TOKENS["GATEWAY_TUI_SESSION_TOKEN"],
        delivery_delay=0.0, logged_out=logged_out, clock=clock,
        instance_dialect=InstanceDialect.ZAPI, session_dialect=SessionDialect.WUZAPI,
    )
    await gateway.start()
    return gateway


def save_profile(sandbox: SandboxGateway) -> str:
    base = sandbox.url.rstrip("/")
    config.save_profile(config.Profile(name="phone", base_url=base, instance_id="pairinst", session_url=base,
                                       instance_dialect=InstanceDialect.ZAPI, session_dialect=SessionDialect.WUZAPI))
    return "phone"


def account_on(sandbox: SandboxGateway):
    base = sandbox.url.rstrip("/")
    profile = config.Profile(name="phone", base_url=base, instance_id="pairinst", session_url=base,
                             instance_dialect=InstanceDialect.ZAPI, session_dialect=SessionDialect.WUZAPI)
    account = new_account(profile, MemorySecrets(), store=lambda: None)
    http = GatewayHttp()
    account.connect(http, Tokens(TOKENS["GATEWAY_TUI_INSTANCE_TOKEN"], TOKENS["GATEWAY_TUI_CLIENT_TOKEN"],
                                 TOKENS["GATEWAY_TUI_SESSION_TOKEN"]))
    return account, http


async def phone(sandbox: SandboxGateway, path: str, body: object) -> httpx.Response:
    async with httpx.AsyncClient(trust_env=False) as client:
        return await client.post(f"{sandbox.url}{path}", content=json.dumps(body))


def decode_plain(lines: list[str]) -> list[str]:
    """A code printed plainly (inverted: the glyphs are the light modules) as a dark terminal shows it."""
    modules = qr_readback.modules_from_text(lines, glyphs_are_dark=False)
    return qr_readback.decode(qr_readback.image_of(modules, background_dark=True))


async def read_qr_block(stream: asyncio.StreamReader) -> list[str]:
    """The first QR code in a `connect`'s output: the glyph lines up to the blank line after them."""
    lines: list[str] = []
    while True:
        raw = await asyncio.wait_for(stream.readline(), timeout=30)
        assert raw, "connect ended before printing a QR code"
        line = raw.decode().rstrip("\n")
        if line and set(line) <= GLYPHS:
            lines.append(line)
        elif lines:
            return lines


async def start_connect(*args: str) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable, "-m", "tui", "connect", *args, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        env={**os.environ, **TOKENS},
    )


@pytest.mark.parametrize("family", ["instance", "session"])
async def test_connect_prints_a_qr_a_phone_scans_and_it_says_connected(family: str) -> None:
    sandbox = await start_sandbox(logged_out=True)
    try:
        profile = save_profile(sandbox)
        process = await start_connect("--profile", profile, "--family", family, "--timeout", "50")
        assert process.stdout is not None
        block = await read_qr_block(process.stdout)
        assert "\x1b" not in "".join(block)
        texts = decode_plain(block)
        assert len(texts) == 1 and texts[0].startswith("2@")
        answer = await phone(sandbox, "/sandbox/scan", {"code": texts[0]})
        assert answer.json()["family"] == family
        out, err = await asyncio.wait_for(process.communicate(), timeout=30)
        assert process.returncode == 0, err.decode()
        # Z-API's status does not say the number: the watch reads its GET /device once the instance is connected
        assert out.decode().strip().splitlines()[-1] == f"connected as {OWN_PHONE}"
    finally:
        await sandbox.stop()


@pytest.mark.parametrize("family", ["instance", "session"])
async def test_connect_with_phone_prints_the_code_and_waits(family: str) -> None:
    sandbox = await start_sandbox(logged_out=True)
    try:
        profile = save_profile(sandbox)
        process = await start_connect("--profile", profile, "--family", family, "--phone", "5511999990000",
                                      "--timeout", "50")
        assert process.stdout is not None
        code = (await asyncio.wait_for(process.stdout.readline(), timeout=30)).decode().strip()
        assert len(code) == 9 and code[4] == "-"
        assert (await phone(sandbox, "/sandbox/scan", {"code": code})).status_code == 200
        out, err = await asyncio.wait_for(process.communicate(), timeout=30)
        assert process.returncode == 0, err.decode()
        assert out.decode().strip().splitlines()[-1].startswith("connected as")
    finally:
        await sandbox.stop()


async def test_connect_gives_up_at_its_timeout_with_exit_1() -> None:
    sandbox = await start_sandbox(logged_out=True)
    try:
        code, out, err = await run_gateway_tui("connect", "--profile", save_profile(sandbox), "--timeout", "2",
                                               env=TOKENS)
        assert code == 1 and "time given ran out" in err and "connected as" not in out
    finally:
        await sandbox.stop()


@pytest.mark.slow  # three 20 s code windows stepped through with polls on the way: seconds of work
@pytest.mark.parametrize("family", [Family.INSTANCE, Family.SESSION])
async def test_codes_are_refreshed_before_expiry_and_stop_after_three_unanswered(family: Family) -> None:
    clock = Clock()
    sandbox = await start_sandbox(logged_out=True, clock=clock)
    account, http = account_on(sandbox)
    try:
        account.watch.clock = clock
        shown: list[tuple[str, datetime, datetime]] = []
        result = await run_codes(PairingActions(account, family, clock=clock), sleep=clock.sleep,
                                 on_code=lambda code: shown.append((code.text, code.shown_at, code.expires_at)))
        assert result.outcome is Outcome.UNANSWERED and result.codes == 3
        assert len({text for text, _, _ in shown}) == 3
        # each new code came as the one before expired (the sandbox's 20 s windows), never after
        for (_, _, expired), (_, shown_at, _) in zip(shown, shown[1:], strict=False):
            assert shown_at - expired <= timedelta(seconds=1)
        assert "3 codes went unanswered" in result.words()
        expired_code = shown[0][0]
        assert (await phone(sandbox, "/sandbox/scan", {"code": expired_code})).status_code == 410
    finally:
        await http.aclose()
        await sandbox.stop()


async def test_status_json_has_both_families() -> None:
    sandbox = await start_sandbox(logged_out=False)
    try:
        code, out, err = await run_gateway_tui("status", "--profile", save_profile(sandbox), "--json", env=TOKENS)
        assert (code, err) == (0, "")
        answer = json.loads(out)
        assert set(answer) == {"instance", "session"}
        for family in ("instance", "session"):
            assert set(answer[family]) == {"connected", "logged_in", "waiting_for_scan", "number", "since",
                                            "reason"}
            assert answer[family]["connected"] is True and answer[family]["logged_in"] is True
        # the instance's from Z-API's GET /device (its status never says it), the session's from its status
        assert answer["session"]["number"] == answer["instance"]["number"] == OWN_PHONE
    finally:
        await sandbox.stop()


async def test_status_names_a_family_the_profile_lacks_null() -> None:
    sandbox = await start_sandbox(logged_out=False)
    base = sandbox.url.rstrip("/")
    profile = config.Profile(name="solo", session_url=base, session_dialect=SessionDialect.WUZAPI)
    account = new_account(profile, MemorySecrets(), store=lambda: None)
    http = GatewayHttp()
    account.connect(http, Tokens(session_token=TOKENS["GATEWAY_TUI_SESSION_TOKEN"]))
    try:
        answer, read_all = await status_answer(account)
        assert read_all and answer["instance"] is None and answer["session"]["connected"] is True
        assert json.loads(json.dumps(answer))["instance"] is None
    finally:
        await http.aclose()
        await sandbox.stop()


@pytest.mark.parametrize("family", [Family.INSTANCE, Family.SESSION])
@pytest.mark.parametrize("reason", ["logged_out", "network", "stuck"])
async def test_each_disconnect_is_seen_and_recovered(family: Family, reason: str) -> None:
    sandbox = await start_sandbox(logged_out=False)
    account, http = account_on(sandbox)
    actions = PairingActions(account, family)
    try:
        state = await actions.check()
        assert state is not None and state.connected
        webhook_before = list(sandbox.state.session_webhook.events)
        assert (await phone(sandbox, "/sandbox/disconnect", {"family": family.value, "reason": reason})).status_code == 200
        state = await actions.check()
        assert state is not None and not state.connected
        if reason == "stuck":
            assert account.watch.contradiction(family) is not None
        if reason == "logged_out":
            assert not state.logged_in
            payload_or_code = await actions.qr_text()
            assert (await phone(sandbox, "/sandbox/scan", {"code": payload_or_code})).status_code == 200
            state = await actions.check()
        else:
            state = await actions.reconnect()
        assert state is not None and state.connected and state.logged_in
        assert account.watch.contradiction(family) is None
        if family is Family.SESSION and reason != "logged_out":
            # disconnect cleared WuzAPI's subscriptions; the connect that recovered sent them again
            assert set(webhook_before) <= set(sandbox.state.session_webhook.events)
            assert sandbox.state.session_webhook.events
    finally:
        await http.aclose()
        await sandbox.stop()


async def test_connect_in_a_terminal_too_small_says_so_and_draws_no_code_cut_short() -> None:
    """Issue 38 item 12: stdout a terminal of 60×20 (a pty), smaller than the code: the size it needs is said, and
    nothing is drawn (it used to draw the code anyway, cut short, after saying it did not fit)."""
    import pty

    sandbox = await start_sandbox(logged_out=True)
    leader, follower = pty.openpty()
    try:
        profile = save_profile(sandbox)
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "tui", "connect", "--profile", profile, "--family", "instance", "--timeout", "3",
            stdout=follower, stderr=asyncio.subprocess.PIPE, env={**os.environ, **TOKENS, "COLUMNS": "60", "LINES": "20"})
        os.close(follower)
        _, err = await asyncio.wait_for(process.communicate(), timeout=30)
        assert process.returncode == 1
        said = err.decode()
        assert "the QR code needs" in said and "this terminal is 60×20" in said and "--phone" in said
        drawn = b""
        with contextlib.suppress(OSError):  # the pty's other end is closed once the process ended
            while chunk := os.read(leader, 65536):
                drawn += chunk
        assert "█" not in drawn.decode(errors="replace") and "▀" not in drawn.decode(errors="replace")
    finally:
        os.close(leader)
        await sandbox.stop()


async def test_connect_in_an_80x24_terminal_draws_the_compact_code_a_phone_scans() -> None:
    """80×24 (a pty): 33 rows of half blocks do not fit, the sextants (33×22) do: drawn dark on light, read back as a
    terminal draws them, and scanned through the sandbox."""
    import pty

    sandbox = await start_sandbox(logged_out=True)
    leader, follower = pty.openpty()
    try:
        profile = save_profile(sandbox)
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "tui", "connect", "--profile", profile, "--family", "instance", "--timeout", "60",
            stdout=follower, stderr=asyncio.subprocess.PIPE, env={**os.environ, **TOKENS, "COLUMNS": "80", "LINES": "24"})
        os.close(follower)
        drawn = b""
        payloads: list[str] = []
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 60
        while not payloads and loop.time() < deadline:
            chunk = await loop.run_in_executor(None, os.read, leader, 65536)
            drawn += chunk
            screen = qr_readback.strip_ansi(drawn.decode(errors="replace")).split("\x1b[H\x1b[2J")[-1]
            if screen.count("\n") >= 22:
                payloads = qr_readback.codes_on_screen(screen)
        assert payloads, drawn.decode(errors="replace")[-2000:]
        assert (await phone(sandbox, "/sandbox/scan", {"code": payloads[0]})).status_code == 200
        _, err = await asyncio.wait_for(process.communicate(), timeout=30)
        assert process.returncode == 0, err.decode()  # paired: connect ends with success
    finally:
        os.close(leader)
        await sandbox.stop()


async def test_a_code_the_gateway_answers_again_is_renewed_not_shown_expired_and_the_run_still_ends() -> None:
    """A gateway whose code lasts longer than WhatsApp's 20 s answers the same code when asked again: it still holds,
    so its countdown starts again (it used to read "expired" while the gateway would take it); each renewal counts
    towards the three codes, so the run ends all the same."""
    clock = Clock()
    sandbox = await start_sandbox(logged_out=True, clock=clock)
    sandbox.context.codes.lifetime = timedelta(seconds=600)
    account, http = account_on(sandbox)
    try:
        account.watch.clock = clock
        shown: list[tuple[str, datetime, int]] = []
        result = await run_codes(PairingActions(account, Family.INSTANCE, clock=clock), sleep=clock.sleep,
                                 phone="5511999999999",
                                 on_code=lambda code: shown.append((code.text, code.expires_at, code.seconds_left(clock()))))
        assert result.outcome is Outcome.UNANSWERED
        assert len({text for text, _, _ in shown}) == 1 and len(shown) == 3  # one code, renewed twice
        assert [left for _, _, left in shown] == [20, 20, 20]  # each time a full countdown, never "expired"
        assert shown[1][1] > shown[0][1] and shown[2][1] > shown[1][1]
    finally:
        await http.aclose()
        await sandbox.stop()
