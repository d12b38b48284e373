"""Issue 21, items 5-8 in a real terminal: tmux at 80x24 runs the app, keys are typed one at a time at a person's
pace (tests/app/test_tmux.py's Terminal), and the captured screen shows what happened. Every wait is for something
on the screen, bounded in time.

5. Typing on the new-message form's kind picker is never a command; Tab from the recipient reaches the message.
6. The events panel counts events that arrive after the user moved in it, and `g` goes back to the newest.
7. A paste of several lines into the reply line moves whole to the form, unsent.
8. Set-up: Enter walks the fields to Save; a private secrets file chosen there serves the next plain start and
   `gateway-tui locate`.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.app.test_tmux import Terminal, app_command
from tests.sandbox.conftest import CLIENT_TOKEN, INSTANCE_TOKEN, SESSION_TOKEN
from tui.gateways.sandbox import SandboxGateway

pytestmark = [
    pytest.mark.tmux,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed (.ci/run installs it)"),
]


def start(command: str, size: tuple[int, int] = (80, 24), env: dict[str, str] | None = None) -> Terminal:
    """`command` in a tmux server of its own (as tests/app/test_tmux.py starts the app), with `env` added."""
    term = Terminal(f"gateway-tui-keys-{uuid.uuid4().hex[:12]}")
    prefix = " ".join(f"{name}={value}" for name, value in (env or {}).items())
    term.tmux("-f", "/dev/null", "new-session", "-d", "-s", "app", "-x", str(size[0]), "-y", str(size[1]),
              f"env {prefix} {command}" if prefix else command, ";", "set-option", "-t", "app", "remain-on-exit", "on")
    return term


@pytest.fixture
def terminal() -> Iterator[Terminal]:
    term = start(app_command())
    try:
        yield term
    finally:
        term.tmux("kill-server")


def footer(term: Terminal) -> str:
    return term.screen().rstrip("\n").splitlines()[-1]


def wait_until(condition, what: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.2)


def test_typing_on_the_kind_picker_is_not_a_command(terminal):
    terminal.wait_for("● connected")
    terminal.keys("C-n")  # the new-message form, its recipient focused
    terminal.wait_for("Chats — new message", "Send (ctrl+s)")
    terminal.type("5511999999999")
    terminal.keys("Tab")  # to the message, not the kind picker
    terminal.type("2e? ok")
    terminal.wait_for("2e? ok")
    terminal.keys("BTab")
    terminal.keys("BTab")  # past the recipient: the kind picker, on the title line
    wait_until(lambda: "alt+1…9 Sections" in footer(terminal), "the footer's alt+1…9")
    terminal.type("2e?x3")  # digits and letters on a picker: nothing happens
    shown = terminal.screen()
    assert "Chats — new message" in shown and "Look up (ctrl+s)" not in shown  # still Chats, not Groups
    assert "Events (newest first)" in shown  # `e` did not hide the panel; `?` opened no help
    assert "5511999999999" in shown and "2e? ok" in shown  # nothing typed anywhere else
    terminal.keys("M-2")  # the key that cannot be text switches
    terminal.wait_for("Look up (ctrl+s)")


def listener_port(term: Terminal) -> int:
    match = re.search(r"⇄ :(\d+)", term.wait_for("⇄ :"))
    assert match, term.screen()
    return int(match.group(1))


def deliver(port: int, message_id: str) -> None:
    body = {"type": "DeliveryCallback", "phone": "5511999999999", "messageId": message_id,
            "instanceId": "3C01A1B2C3D4E5F6", "momment": 1732700000000, "isGroup": False}
    answer = httpx.post(f"http://127.0.0.1:{port}/delivery", content=json.dumps(body).encode(),
                        headers={"content-type": "application/json"}, timeout=10)
    assert answer.status_code == 200, answer.text


def test_the_events_panel_counts_what_arrives_after_a_move_and_g_goes_back(terminal):
    terminal.wait_for("● connected")
    port = listener_port(terminal)
    for index in range(8):
        deliver(port, f"OLD{index}")
    terminal.wait_for("Delivery to 5511999999999")
    for _ in range(4):  # search, list, thread, reply, then the panel
        terminal.keys("Tab")
    wait_until(lambda: "esc Leave panel" in footer(terminal), "the panel's footer")
    for _ in range(5):
        terminal.keys("Down")
    for index in range(3):
        deliver(port, f"NEW{index}")
    shown = terminal.wait_for("▲ 3 new", "g newest")
    assert "g Newest" in footer(terminal), shown
    terminal.keys("g")
    terminal.wait_for("Events (newest first)")
    deliver(port, "FOLLOWED")
    terminal.wait_for("Events (newest first)")
    assert "new ·" not in terminal.screen()
    terminal.keys("Escape")  # leaves the panel for the conversations' list (the user was in the reply line)
    wait_until(lambda: "esc Leave panel" not in footer(terminal), "the focus out of the panel")


def test_a_multi_line_paste_into_the_reply_moves_to_the_form_unsent(terminal):
    terminal.wait_for("● connected")
    # The chosen chat's thread is open (its title names the number): Enter has a chat to reply to.
    wait_until(lambda: re.search(r"│ .+ · \d{10,}", terminal.screen()) is not None, "the open thread's title")
    terminal.keys("Escape")  # from the search to the list
    wait_until(lambda: "⏎ Reply" in footer(terminal), "the list's footer")
    terminal.keys("Enter")  # reply to the chosen chat
    wait_until(lambda: "alt+1…9 Sections" in footer(terminal), "a field's footer (the reply line)")
    terminal.type("Hi! ")
    wait_until(lambda: any("│ Hi!" in line for line in terminal.screen().splitlines()), "Hi! in the reply line")
    terminal.tmux("set-buffer", "-b", "h6", "Order 1182:\n- 2 blue cases\n- 1 charger")
    terminal.tmux("paste-buffer", "-p", "-b", "h6", "-t", "app")  # -p: bracketed, as a terminal pastes
    shown = terminal.wait_for("Hi! Order 1182:", "- 2 blue cases", "- 1 charger", "Chats — new message")
    assert "Sent, message id" not in shown  # the paste sent nothing


def run_sandbox_gateway() -> tuple[SandboxGateway, asyncio.AbstractEventLoop, threading.Thread]:
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    gateway = SandboxGateway(instance_id="first", instance_token=INSTANCE_TOKEN, client_token=CLIENT_TOKEN,
                             session_token=SESSION_TOKEN)
    asyncio.run_coroutine_threadsafe(gateway.start(), loop).result(timeout=30)
    return gateway, loop, thread


def test_set_up_walks_with_enter_and_a_private_file_serves_the_next_start_and_locate(isolated_dirs):
    gateway, loop, thread = run_sandbox_gateway()
    # No keyring in the app's process, whatever this machine has: set-up offers the private file.
    env = {"PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring"}
    plain = app_command().replace(" --sandbox", "")
    term = start(plain, env=env)
    try:
        term.wait_for("Set up gateway-tui", "Profile name")
        # In the form's order: the profile, then Z-API's part, then WuzAPI's (tui.ui.screens.setup.form_order).
        values = ["first", None, "", gateway.url, "first", CLIENT_TOKEN, INSTANCE_TOKEN, gateway.url, SESSION_TOKEN, ""]
        for value in values:
            if value is None:  # the listener port, filled in with 8787: any free port instead
                for _ in range(4):
                    term.keys("BSpace")
                value = "0"
            term.type(value)
            term.keys("Enter")  # the next field; from the last one, Save (nothing saved yet)
        assert "No OS keyring" not in term.screen()
        term.keys("Enter")  # Save, pressed
        term.wait_for("No OS keyring", "Keep secrets in a private file")
        term.keys("Enter")  # the private-file button has the focus
        term.wait_for("● connected", "insecure")
        written = (Path(os.environ["GATEWAY_TUI_CONFIG_DIR"]) / "profiles.toml").read_text(encoding="utf-8")
        assert 'base_url = "' + gateway.url in written and 'instance_id = "first"' in written  # each in its field
        assert "secrets_file = true" in written and CLIENT_TOKEN not in written
        term.keys("C-q")
        wait_until(term.app_ended, "the app to quit")

        term.tmux("respawn-pane", "-t", "app", f"env PYTHON_KEYRING_BACKEND=keyring.backends.fail.Keyring {plain}")
        shown = term.wait_for("● connected", "insecure")  # the next plain start: no set-up, no keyring error
        assert "Set up gateway-tui" not in shown and "No OS keyring" not in shown
        located = subprocess.run([sys.executable, "-m", "tui", "locate"], capture_output=True, text=True, timeout=60,
                                 env={**os.environ, **env})
        secrets = next(line for line in located.stdout.splitlines() if line.startswith("secrets"))
        assert "secrets-insecure.json (exists)" in secrets, located.stdout
    finally:
        term.tmux("kill-server")
        asyncio.run_coroutine_threadsafe(gateway.stop(), loop).result(timeout=30)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=10)
