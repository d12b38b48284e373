"""The Campaigns section in a real terminal (issue 34's acceptance): tmux (80×24) runs the app on a profile of a
sandbox; beside it, `gateway-tui campaign start` sends a 30-recipient campaign at a fast test pace. The section
(alt+0) shows the progress bar and the counts moving; `p` pauses the run in that other process (it ends, exit 0,
"paused"); `s` resumes it from the app, and the section follows it to the end.

The sandbox runs in this test's event loop; the terminal is driven from a thread (its waits sleep). The tokens
reach the app and the campaign processes through the environment, never their arguments."""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import sys
import uuid
from pathlib import Path

import pytest

from tests.app.test_tmux import Terminal
from tests.harness import run_gateway_tui, sandbox_for_env_tokens
from tui.local import config

pytestmark = [
    pytest.mark.tmux,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed (.ci/run installs it)"),
]

APP = Path(sys.executable).with_name("gateway-tui")
TOKENS = {
    "GATEWAY_TUI_INSTANCE_TOKEN": "campaign-tmux-instance-token-SECRET",
    "GATEWAY_TUI_CLIENT_TOKEN": "campaign-tmux-client-token-SECRET",
    "GATEWAY_TUI_SESSION_TOKEN": "campaign-tmux-session-token-SECRET",
}
RECIPIENTS = 30
PACE = ("--pace", "0.4-0.5", "--daily-cap", "none")  # about 13 s for all: time to see it move, and to pause it
COUNTS = re.compile(r"spring: (\d+)/30")


def settled(screen: str) -> int:
    found = COUNTS.search(screen)
    return int(found.group(1)) if found else -1


async def wait_screen(terminal: Terminal, *needles: str, timeout: float = 40.0) -> str:
    return await asyncio.to_thread(terminal.wait_for, *needles, timeout=timeout)


async def moved_past(terminal: Terminal, at_least: int, timeout: float = 40.0) -> str:
    """The screen once its count of settled recipients reaches `at_least` (bounded by `timeout`)."""
    loop = asyncio.get_running_loop()
    ends = loop.time() + timeout
    while True:
        screen = await asyncio.to_thread(terminal.screen)
        if settled(screen) >= at_least:
            return screen
        if loop.time() > ends:
            raise AssertionError(f"the count never reached {at_least}; the screen was:\n{screen}")
        await asyncio.sleep(0.2)


@pytest.fixture
async def sandbox(monkeypatch):
    for name, value in TOKENS.items():
        monkeypatch.setenv(name, value)  # the tmux server, so the app and what it starts, inherit them
    async with sandbox_for_env_tokens("campinst", TOKENS) as gateway:
        config.save_profile(config.Profile(name="shop", base_url=gateway.url.rstrip("/"), instance_id="campinst",
                                           session_url=gateway.url.rstrip("/"), listener_port=0))
        yield gateway


async def test_the_section_follows_a_run_beside_it_pauses_it_by_key_and_resumes_it(sandbox, tmp_path):
    people = tmp_path / "people.csv"
    people.write_text("phone,name\n" + "".join(f"5511987{index:06d},P{index}\n" for index in range(RECIPIENTS)),
                      encoding="utf-8")
    code, _out, err = await run_gateway_tui("campaign", "create", "spring", "--recipients", str(people), "--text",
                                            "Hi {name}", "--profile", "shop", env=TOKENS)
    assert code == 0, err

    terminal = Terminal(f"gateway-tui-test-{uuid.uuid4().hex[:12]}")
    await asyncio.to_thread(
        terminal.tmux, "-f", "/dev/null", "new-session", "-d", "-s", "app", "-x", "80", "-y", "24",
        f"env -u COLUMNS -u LINES {APP} --profile shop", ";", "set-option", "-t", "app", "remain-on-exit", "on")
    run = None
    try:
        await wait_screen(terminal, "shop", "connected")
        # alt+0 as tmux sends it is ESC 0, which Textual reads as "º", typed into Chats' search field (as it
        # should be in a field): the palette reaches the section from anywhere.
        await asyncio.to_thread(terminal.keys, "C-p")
        await asyncio.to_thread(terminal.type, "Go to Campaigns")
        await wait_screen(terminal, "section 0")
        await asyncio.to_thread(terminal.keys, "Enter")
        await wait_screen(terminal, "spring", "ready", "0/30")

        run = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "tui", "campaign", "start", "spring", *PACE, stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env={**os.environ, **TOKENS})
        first = await moved_past(terminal, 2)
        assert "running" in first and "Pause" in first.splitlines()[-1]
        later = await moved_past(terminal, settled(first) + 3)  # the bar and the counts move while it runs
        assert "━" in later  # the progress bar is drawn

        await asyncio.to_thread(terminal.keys, "p")
        out, err_bytes = await asyncio.wait_for(run.communicate(), timeout=30)
        assert run.returncode == 0, err_bytes.decode()
        assert "spring paused: paused from the app" in out.decode()
        paused = await wait_screen(terminal, "paused from the app", "Resume")
        stopped_at = settled(paused)
        assert 0 < stopped_at < RECIPIENTS

        await asyncio.to_thread(terminal.keys, "s")  # resume: from the app this time
        await moved_past(terminal, stopped_at + 2)
        done = await wait_screen(terminal, "spring: 30/30", "done", timeout=60)
        assert "Pause" not in done.splitlines()[-1]
        assert sandbox.state.sends_by_recipient.total() == RECIPIENTS  # each one message: none lost, none twice
    finally:
        if run is not None and run.returncode is None:
            run.kill()
            await run.wait()
        await asyncio.to_thread(terminal.tmux, "kill-server")
