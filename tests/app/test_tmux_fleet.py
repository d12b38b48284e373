"""Many sandbox accounts in a real terminal (issue 26): tmux runs `gateway-tui --sandbox --accounts 20` at 120×40;
at a person's pace the Fleet board (alt+9) is filtered with `/`, Enter makes the account found current, Chats sends
a text from it, and that send's events show under that account: on its board row, in Events (its own), and in the
store with its name (`gateway-tui events list --sandbox --json`, the same data directory)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from tests.app.test_tmux import Terminal

pytestmark = [
    pytest.mark.tmux,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed (.ci/run installs it)"),
]

APP = Path(sys.executable).with_name("gateway-tui")


def data_env(data: Path) -> dict[str, str]:
    return {f"XDG_{name}_HOME": str(data / name.lower()) for name in ("DATA", "CONFIG", "STATE")}


@pytest.fixture
def fleet_terminal(tmp_path):
    term = Terminal(f"gateway-tui-test-{uuid.uuid4().hex[:12]}")
    dirs = " ".join(f"{name}={value}" for name, value in data_env(tmp_path).items())
    command = f"env -u COLUMNS -u LINES {dirs} {APP} --sandbox --accounts 20"
    term.tmux("-f", "/dev/null", "new-session", "-d", "-s", "app", "-x", "120", "-y", "40",
              command, ";", "set-option", "-t", "app", "remain-on-exit", "on")
    try:
        yield term, tmp_path
    finally:
        term.tmux("kill-server")


def board_row(screen: str, name: str) -> str:
    return next(line for line in screen.splitlines() if f" {name} " in line and "spec/spec" in line)


def stored_events(data: Path) -> list[dict]:
    done = subprocess.run([str(APP), "events", "list", "--sandbox", "--json"], capture_output=True, text=True,
                          timeout=30, env={**os.environ, **data_env(data)}, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_filter_the_board_switch_account_send_and_see_its_events_under_it(fleet_terminal):
    terminal, data = fleet_terminal
    terminal.wait_for("profile sandbox-01", "sandbox · connected", timeout=40)
    terminal.keys("M-9")  # the Fleet board (alt+9 as tmux sends it)
    shown = terminal.wait_for("20 accounts", "sandbox-20")
    assert "sandbox-01 ◀" in shown  # the current account's mark
    terminal.keys("/")  # the board's filter
    terminal.type("17")
    shown = terminal.wait_for("1 match “17”")
    assert "sandbox-16" not in shown and "sandbox-17" in shown
    terminal.keys("Enter")  # out of the filter, onto the rows
    terminal.keys("Enter")  # the row under the cursor becomes current
    terminal.wait_for("profile sandbox-17", "sandbox-17 ◀")

    terminal.keys("M-1")  # Chats, on the new current account
    terminal.wait_for("Search chats")
    terminal.type("5511912345678")
    terminal.keys("Enter")  # no chat matches: the form to that number, its message box focused
    terminal.wait_for("Send (ctrl+s)")
    terminal.type("hi from seventeen")
    terminal.keys("C-s")
    terminal.wait_for("Sent, message id:", "(text to 5511912345678)", "Delivery to 5511912345678")

    terminal.keys("Escape")
    terminal.keys("M-9")
    deadline = time.monotonic() + 20
    row = board_row(terminal.wait_for("sandbox-17 ◀"), "sandbox-17")
    while "msg" not in row and time.monotonic() < deadline:  # the board refreshes its row once a second
        time.sleep(0.3)
        row = board_row(terminal.screen(), "sandbox-17")
    cells = row.split()
    assert "msg" in row, row  # its last event: a message (the contact's answer), seconds ago
    assert cells[cells.index("healthy") + 3] == "1", row  # unread, events/min, then sent today: 1
    terminal.keys("M-7")  # Events: the current account's, the line above the table says so
    terminal.wait_for("sandbox-17's events · a: all accounts", "Delivery to 5511912345678")

    terminal.keys("C-q")
    deadline = time.monotonic() + 30
    while not terminal.app_ended() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert terminal.app_ended()
    events = stored_events(data)
    mine = [event for event in events if "5511912345678" in json.dumps(event)]
    assert mine and {event["account"] for event in mine} == {"sandbox-17"}
    assert {event["account"] for event in events} == {"sandbox-17"}  # no other account had traffic
