"""Every command the doctor suggests runs as printed (issue 38: its `listen --profile sandbox --forward-to …` did
not). For each situation that makes it suggest a command, the command is taken from the doctor's own output,
split as a shell splits it, and run: `listen` as a real process until it says where it listens (and kept running
when the next suggestion needs it), the app in-process as `gateway-tui` builds it until its runtime is up, the
others as real processes to their end."""

from __future__ import annotations

import asyncio
import os
import re
import shlex
import signal
import sys

import pytest

from tests.harness import run_gateway_tui, running_sandbox_app, wait_until
from tests.test_doctor import KEY, TOKENS, make_sandbox, profile_for
from tests.webhooks import headless
from tui.local import config
from tui.api.dialects import InstanceDialect, SessionDialect
from tui.cli.exit_codes import Exit
from tui.local.listener_record import running

SUGGESTION = re.compile(r"`(gateway-tui [^`]*)`")
ENV = {**TOKENS, "GATEWAY_TUI_HMAC_KEY": KEY}
THEIR_APP = "http://127.0.0.1:9/their-app"


@pytest.fixture
async def real_dialects():
    gateway = await make_sandbox(InstanceDialect.ZAPI, SessionDialect.WUZAPI)
    yield gateway
    await gateway.stop()


@pytest.fixture
async def spec_dialects():
    gateway = await make_sandbox(InstanceDialect.SPEC, SessionDialect.SPEC)
    yield gateway
    await gateway.stop()


def suggested(text: str) -> list[str]:
    return SUGGESTION.findall(text)


def words_of(command: str) -> list[str]:
    words = shlex.split(command)
    assert words[0] == "gateway-tui", command
    return words[1:]


async def start_listen_as_printed(command: str, env: dict[str, str] = ENV):
    """The suggested `listen`, as typed: a real process that must say where it listens (`env`: the variables the
    user has set)."""
    words = words_of(command)
    assert "listen" in words, command
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "tui", *words, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE,
        env={**os.environ, **env}, cwd=headless.REPO)
    headless.started.append(process)
    line = (await asyncio.wait_for(process.stderr.readline(), timeout=30)).decode()
    assert line.startswith("listening on "), (command, line)
    return process


async def stop(process) -> int:
    process.send_signal(signal.SIGINT)
    return await process.wait()


async def run_app_as_printed(command: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The suggested app command, parsed and built as `gateway-tui` does; its runtime must start (and listen)."""
    from tui.cli.main import build_parser, prepare_app

    for name, value in ENV.items():
        monkeypatch.setenv(name, value)
    args = build_parser().parse_args(words_of(command))
    assert getattr(args, "command", None) is None, command  # the app itself, no subcommand
    app, process = prepare_app(args)
    assert process is None
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: app.runtime_ready or bool(app.runtime_error), timeout=20, what="the start")
        assert not app.runtime_error, app.runtime_error
        assert app.runtime.listener is not None and running("doc") is not None


async def test_nothing_listens_each_suggestion_runs_and_the_last_says_healthy(real_dialects, monkeypatch):
    """Neither the app nor `listen` runs, and the session webhook feeds another app: the doctor suggests the app,
    `listen` (forwarding to that app) and itself again; each runs as printed, the `listen` takes the gateway's events
    where the doctor pointed them, and with it running the suggested `doctor --fix` ends healthy."""
    profile_for(real_dialects)
    real_dialects.state.session_webhook.url = THEIR_APP
    code, out, err = await run_gateway_tui("doctor", "--profile", "doc", "--fix", env=ENV)
    assert code == 1 and "listener-not-running" in out, (out, err)
    commands = suggested(out)
    apps = [c for c in commands if words_of(c)[:1] == ["--profile"]]
    listens = [c for c in commands if "listen" in words_of(c)]
    doctors = [c for c in commands if "doctor" in words_of(c)]
    assert len(apps) == 1 and len(doctors) == 1 and len(listens) == 2, commands
    assert any(THEIR_APP in c for c in listens), listens

    await run_app_as_printed(apps[0], monkeypatch)
    for command in listens:  # the one that forwards, then the plain one, which stays for the doctor's last look
        process = await start_listen_as_printed(command)
        if THEIR_APP in command:
            assert await stop(process) == 0
    try:
        # The `listen` as printed takes what the gateway was pointed at by the first --fix: nothing to re-point.
        code, out, err = await run_gateway_tui("doctor", "--profile", "doc", "--json", env=ENV)
        assert '"webhook-url-mismatch"' not in out, out
        code, out, err = await run_gateway_tui(*words_of(doctors[0]), env=ENV)
        assert code == 0 and out.rstrip().endswith("healthy"), (out, err)
    finally:
        await stop(process)


async def test_a_read_only_profile_is_made_writable_as_printed(spec_dialects):
    profile_for(spec_dialects, read_only=True)
    code, out, _ = await run_gateway_tui("doctor", "--profile", "doc", env=ENV)
    [command] = [c for c in suggested(out) if "--no-read-only" in c]
    code, out, err = await run_gateway_tui(*words_of(command), env=ENV)
    assert code == 0, (out, err)
    assert not next(p for p in config.load_profiles() if p.name == "doc").read_only


async def test_the_apps_doctor_in_the_sandbox_names_no_command_that_fails():
    """The sandbox in the app, its session webhook pointed at another app: the fix keeps that app fed through the
    app's own forwarding (Settings), not a `listen --profile sandbox` that no profile answers to."""
    from tui.api.models import WebhookUpdate

    async with running_sandbox_app() as pilot:
        runtime = pilot.app.runtime
        assert runtime.session is not None and runtime.current is not None
        await runtime.session.update_webhook(WebhookUpdate(webhook=THEIR_APP, events=["All"], active=True))
        lines = await runtime.webhooks.fix_webhooks(runtime.current)
        kept = [line for line in lines if THEIR_APP in line and "another app" in line]
        assert kept and "Settings > Forward events to your app" in kept[0], lines
        assert not any("--profile sandbox" in line for line in lines), lines
        for command in (c for line in lines for c in suggested(line)):
            assert "--profile sandbox" not in command, command


async def test_a_sandbox_started_for_the_doctor_suggests_the_app_whose_sandbox_the_next_doctor_finds_healthy():
    """`doctor --sandbox` with no app running examines a sandbox started for it, which ends with it, as the doctor's
    own listener does: a `listen` beside it feeds no sandbox (each command starts another), so `listen` then
    `doctor --fix` never got healthy. It suggests the app, whose sandbox the next `doctor --sandbox` uses: run as
    printed (in the dialects of the sandbox it examined), that doctor says healthy."""
    from tui.cli.main import build_parser, prepare_app

    dialects = ("--instance-dialect", "zapi", "--session-dialect", "wuzapi")
    code, out, err = await run_gateway_tui("doctor", "--sandbox", *dialects, "--fix", env={})
    assert code == Exit.REFUSED and "listener-not-running" in out, (out, err)
    commands = suggested(out)
    assert not any("listen" in words_of(command) for command in commands), commands
    [app_command] = [command for command in commands if "doctor" not in words_of(command)]
    assert words_of(app_command) == ["--sandbox", *dialects], app_command  # the sandbox the doctor examined
    [doctor_command] = [command for command in commands if "doctor" in words_of(command)]

    app, process = prepare_app(build_parser().parse_args(words_of(app_command)))
    assert process is not None, app_command  # the app with its sandbox, shared with this user's commands
    try:
        async with app.run_test(size=(80, 24)) as pilot:
            await wait_until(pilot, lambda: app.runtime_ready or bool(app.runtime_error), timeout=20, what="the start")
            assert not app.runtime_error, app.runtime_error
            code, out, err = await run_gateway_tui(*words_of(doctor_command), env={})
            assert code == Exit.OK and out.rstrip().endswith("healthy"), (doctor_command, out, err)
    finally:
        process.stop_now()
