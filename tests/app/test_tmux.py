"""The real thing in a real terminal: tmux (default settings) runs `gateway-tui --sandbox`, keys are typed one at
a time at a person's pace with no preparatory Tab, and the captured screen shows what happened: a poll sent from
Chats and its verified events in the panel; Groups reached with alt+2 while typing, a look-up with ctrl+s, and the
focus still in the field afterwards."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import httpx
import pytest

pytestmark = [
    pytest.mark.tmux,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed (.ci/run installs it)"),
]

KEY_PAUSE = 0.25  # after a named key (Tab, Enter, ctrl+s): a person's pace
CHAR_PAUSE = 0.08  # between typed characters: a quick typist, one key at a time
READ_PAUSE = 2.0  # a look at a newly shown section before the next key


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
        for character in text:
            self.tmux("send-keys", "-t", "app", "-l", character)
            time.sleep(CHAR_PAUSE)

    def app_ended(self) -> bool:
        return self.tmux("display-message", "-p", "-t", "app", "#{pane_dead}").strip() == "1"

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


def descendants(pid: int) -> list[int]:
    """Every process below `pid` (from /proc: Linux, like tmux here)."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # ended meanwhile
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def app_command() -> str:
    """The app as a user starts it, without COLUMNS/LINES from the test runner, so it sizes itself from the pane
    like in a real terminal."""
    return f"env -u COLUMNS -u LINES {Path(sys.executable).with_name('gateway-tui')} --sandbox"


def start(size: tuple[int, int]) -> Terminal:
    # A server of its own per test: `kill-server` returns before the old server is gone, and a next test reusing its
    # socket name could start its session on the server that is shutting down (an empty screen for 30 s).
    term = Terminal(f"gateway-tui-test-{uuid.uuid4().hex[:12]}")
    # remain-on-exit keeps the pane (and what the app printed) when the app ends, so a failure shows why.
    term.tmux("-f", "/dev/null", "new-session", "-d", "-s", "app", "-x", str(size[0]), "-y", str(size[1]),
              app_command(), ";", "set-option", "-t", "app", "remain-on-exit", "on")
    return term


@pytest.fixture
def terminal():
    term = start((160, 48))
    try:
        yield term
    finally:
        term.tmux("kill-server")


@pytest.fixture
def small_terminal():
    term = start((80, 24))
    try:
        yield term
    finally:
        term.tmux("kill-server")


def test_send_a_poll_and_see_its_events(terminal):
    terminal.wait_for("gateway-tui")  # the first frame: typing starts now, before the connection is up
    terminal.type("5511999999999")  # the conversation search has the focus from the start: no Tab first
    terminal.wait_for("5511999999999", "sandbox · connected")
    terminal.keys("Enter")  # no chat matches the number: the form to it, its message field focused
    terminal.wait_for("Recipient", "Send (ctrl+s)")
    terminal.keys("C-p")  # the palette (ctrl+p is one byte: no escape sequence to split under load)
    terminal.type("Send poll")
    terminal.wait_for("Send poll")
    terminal.keys("Enter")  # the poll form, for the recipient typed above
    terminal.wait_for("Question")
    terminal.type("Lunch?")
    terminal.keys("Enter")  # Enter moves to the next field; it does not send
    terminal.type("Pizza")
    terminal.keys("Enter")  # a new line in the options box
    terminal.type("Sushi")
    terminal.keys("Tab")
    terminal.type("1")
    assert "Sent, message id:" not in terminal.screen()
    terminal.keys("C-s")
    shown = terminal.wait_for("Sent, message id:", "your send-poll", "✓ valid")
    assert "(poll to 5511999999999)" in shown
    assert "Delivery to 5511999999999" in shown


def test_alt_digits_switch_sections_while_typing_and_focus_stays_after_a_call(terminal):
    terminal.wait_for("sandbox · connected")
    terminal.type("55119")
    terminal.keys("M-2")  # alt+2 as tmux sends it (ESC 2): Groups, even with the focus in a field
    terminal.wait_for("Look up (ctrl+s)", "Group id")
    terminal.type("120363041982375610-group")
    terminal.keys("C-s")
    terminal.wait_for("Product Launch Q3", "7 participants")
    terminal.type("7")  # still in the field after the call: a digit is typed, not a section switch
    shown = terminal.wait_for("120363041982375610-group7")
    assert "Look up (ctrl+s)" in shown and "Recipient" not in shown
    terminal.keys("M-1")
    shown = terminal.wait_for("matching “55119”")  # what was typed in Chats (its search) is still there
    terminal.keys("F2")  # the request log, from a field
    terminal.wait_for("Request log")
    terminal.keys("F2")
    terminal.wait_for("matching “55119”")


def test_typing_at_80x24(small_terminal):
    small_terminal.wait_for("Chats")  # the first frame (the header is in its short form at 80 columns)
    small_terminal.type("5511999999999")  # into the conversation search
    small_terminal.wait_for("● connected")  # the header's short form at 80 columns
    small_terminal.keys("Enter")  # no chat matches the number: the form to it, its message box focused
    small_terminal.wait_for("Send (ctrl+s)")
    small_terminal.type("hi 1234 e?")  # digits, e and ? are text here
    small_terminal.keys("C-s")
    shown = small_terminal.wait_for("Sent, message id:")
    assert "hi 1234 e?" in shown


def test_a_sent_text_is_in_the_inbox_after_a_restart(terminal):
    """Send a text, quit, start again: the conversation is listed and opens with the text (same data dir)."""
    terminal.wait_for("sandbox · connected", "listener 127.0.0.1:")
    terminal.type("5511999999999")  # Chats opens on the conversation search
    terminal.keys("Enter")  # no chat matches the number: the form to it, its message box focused
    terminal.wait_for("Send (ctrl+s)")
    terminal.type("Is the blue case back in stock?")
    terminal.keys("C-s")
    terminal.wait_for("Sent, message id:", "(text to 5511999999999)")
    terminal.keys("Escape")  # out of any field (after a send the focus may not be back in the form)
    terminal.keys("1")  # Chats, its form focused: ctrl+l is its key
    terminal.keys("C-l")  # the conversations, while this run is still up: the sandbox contact answers
    terminal.wait_for("Chats ·", "Is the blue case back in stock?")
    sandbox = [pid for pid in descendants(int(terminal.tmux("display", "-p", "-t", "app", "#{pane_pid}")))
               if b"tui.cli.sandbox" in Path(f"/proc/{pid}/cmdline").read_bytes()]
    assert len(sandbox) == 1  # --sandbox runs the sandbox gateway in a process of its own
    terminal.keys("C-q")
    deadline = time.monotonic() + 30
    while not terminal.app_ended() and time.monotonic() < deadline:
        time.sleep(0.2)  # the app quits (its pane stays, dead, on the same tmux server)
    assert terminal.app_ended()
    while Path(f"/proc/{sandbox[0]}").exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not Path(f"/proc/{sandbox[0]}").exists(), "the sandbox process outlived the app"

    terminal.tmux("resize-window", "-t", "app", "-x", "100", "-y", "30")
    terminal.tmux("respawn-pane", "-t", "app", app_command())
    terminal.wait_for("● connected")  # the header's short form below 110 columns
    shown = terminal.wait_for("Chats ·", "5511999999999 ", "Is the blue case back in stock?", "✓✓ read")
    first_chat = next(line for line in shown.splitlines() if "│" in line and "Search" not in line)
    assert "5511999999999" in first_chat  # newest first, and opened


def listening_port(pid: int) -> int:
    """The TCP port process `pid` listens on (from /proc: its socket inodes, and the table's LISTEN rows)."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    for row in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = row.split()
        if fields[3] == "0A" and fields[9] in inodes:  # 0A: LISTEN
            return int(fields[1].split(":")[1], 16)
    raise AssertionError(f"process {pid} listens on no TCP port")


def test_the_doctor_panel_shows_a_finding_and_fixes_it_with_one_key_at_80x24(small_terminal):
    """Issue 24: the sandbox unsubscribes Message (/sandbox/fault); Settings' doctor panel lists the finding with its
    key; that one key fixes it and the check after it says healthy, and so does the header."""
    small_terminal.wait_for("● connected", "✓ hooks")  # the header's first check: healthy
    pane = int(small_terminal.tmux("display", "-p", "-t", "app", "#{pane_pid}"))
    sandbox = [pid for pid in [pane, *descendants(pane)]
               if b"tui.cli.sandbox" in Path(f"/proc/{pid}/cmdline").read_bytes()]
    port = listening_port(sandbox[0])
    answer = httpx.post(f"http://127.0.0.1:{port}/sandbox/fault", json={"kind": "unsubscribe"}, trust_env=False)
    assert answer.status_code == 200, answer.text
    small_terminal.keys("M-6")  # Settings, from its top: the doctor panel, its button focused
    # (Not the next block's title: when the header's own check has already found the fault, the panel's findings
    # fill the 24 rows.)
    small_terminal.wait_for("Settings", "Webhook doctor", "f5 Check webhooks")
    # A person looks at the section before pressing F5. (Pressed in its first moments, the section's first field
    # can take the focus after F5 did and keep it, and the findings end above the view: a known race, reported.)
    time.sleep(READ_PAUSE)
    small_terminal.keys("F5")  # checks, and brings the panel into view
    shown = small_terminal.wait_for("event-not-subscribed", "fix (ctrl+n): Subscribe Message.", "^n Subscribe",
                                    "✗ hooks failing")
    assert "Webhook doctor" in shown and "not healthy" in shown
    small_terminal.keys("C-n")  # the one key of that fix
    shown = small_terminal.wait_for("✓ healthy", "✓ hooks", "Fixed: session webhook: subscribed to")
    assert "✗ event-not-subscribed" not in shown, shown  # the panel lists it no more (its toast may still show)
