"""The real thing in a real terminal: tmux runs `gateway-tui --sandbox`, keys are typed as a user would, and
the captured screen shows a poll sent from Chats and its verified events in the panel."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = [
    pytest.mark.tmux,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed (.ci/run installs it)"),
]

KEY_PAUSE = 0.25  # a person's pace: tmux would otherwise deliver a burst the app reads as one paste


class Terminal:
    def __init__(self, socket: str) -> None:
        self.socket = socket

    def tmux(self, *args: str) -> str:
        return subprocess.run(
            ["tmux", "-L", self.socket, *args], capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL
        ).stdout

    def keys(self, *keys: str, literal: bool = False) -> None:
        self.tmux("send-keys", "-t", "app", *(["-l"] if literal else []), *keys)
        time.sleep(KEY_PAUSE)

    def type(self, text: str) -> None:
        self.keys(text, literal=True)

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p", "-t", "app")

    def wait_for(self, *needles: str, timeout: float = 30.0) -> str:
        deadline = time.monotonic() + timeout
        while True:
            shown = self.screen()
            if all(needle in shown for needle in needles):
                return shown
            if time.monotonic() > deadline:
                raise AssertionError(f"never showed {needles!r}; the screen was:\n{shown}")
            time.sleep(0.2)


@pytest.fixture
def terminal():
    app = Path(sys.executable).with_name("gateway-tui")
    term = Terminal(f"gateway-tui-test-{os.getpid()}")
    # Without COLUMNS/LINES from the test runner, so the app sizes itself from the pane like in a real terminal.
    term.tmux("new-session", "-d", "-s", "app", "-x", "120", "-y", "40", f"env -u COLUMNS -u LINES {app} --sandbox")
    try:
        yield term
    finally:
        term.tmux("kill-server")


def test_send_a_poll_and_see_its_events(terminal):
    terminal.wait_for("sandbox · connected", "listener 127.0.0.1:")
    terminal.keys("Tab")  # from the section into its first field, the recipient
    terminal.type("5511999999999")
    terminal.keys("Tab")  # the message kind
    terminal.keys("Enter")
    for _ in range(4):  # Text, Quick-reply buttons, Button list, Link with preview, Poll
        terminal.keys("Down")
    terminal.keys("Enter")
    terminal.wait_for("Question")
    terminal.keys("Tab")
    terminal.type("Lunch?")
    terminal.keys("Tab")
    terminal.type("Pizza")
    terminal.keys("Enter")
    terminal.type("Sushi")
    terminal.keys("Tab")
    terminal.type("1")
    terminal.keys("C-s")
    shown = terminal.wait_for("Sent, message id:", "your send-poll", "✓ valid")
    assert "(poll to 5511999999999)" in shown
    assert "Delivery to 5511999999999" in shown


def test_a_sent_text_is_in_the_inbox_after_a_restart(terminal):
    """Send a text, quit, start again: the conversation is listed and opens with the text (same data dir)."""
    terminal.wait_for("sandbox · connected", "listener 127.0.0.1:")
    terminal.keys("Tab")  # the recipient
    terminal.type("5511999999999")
    terminal.keys("Tab")  # the message kind (Text)
    terminal.keys("Tab")  # the message
    terminal.type("Is the blue case back in stock?")
    terminal.keys("C-s")
    terminal.wait_for("Sent, message id:", "(text to 5511999999999)")
    terminal.keys("Escape")  # out of any field (after a send the focus may not be back in the form)
    terminal.keys("1")  # Chats, its section focused: ctrl+l is its key
    terminal.keys("C-l")  # the inbox, while this run is still up: the sandbox contact answers
    terminal.wait_for("Inbox ·", "Is the blue case back in stock?")
    terminal.keys("C-q")
    deadline = time.monotonic() + 30
    while "app" in terminal.tmux("list-sessions") and time.monotonic() < deadline:
        time.sleep(0.2)  # the app quits, its session ends
    assert "app" not in terminal.tmux("list-sessions")

    app = Path(sys.executable).with_name("gateway-tui")
    terminal.tmux("new-session", "-d", "-s", "app", "-x", "100", "-y", "30", f"env -u COLUMNS -u LINES {app} --sandbox")
    terminal.wait_for("sandbox · connected", "listener 127.0.0.1:")
    terminal.keys("C-l")
    shown = terminal.wait_for("Inbox ·", "5511999999999 ", "Is the blue case back in stock?", "✓✓ read")
    first_chat = next(line for line in shown.splitlines() if "│" in line and "Search" not in line)
    assert "5511999999999" in first_chat  # newest first, and opened
