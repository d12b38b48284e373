"""Evolution API in a real terminal at 80×24 (issue 33's acceptance): tmux runs `gateway-tui --sandbox
--instance-dialect evolution`, keys typed at a person's pace. A text and a photo sent from Chats show in the thread
and their acks (Evolution's `messages.update` deliveries, posted by the sandbox to the listener's `/evolution`
paths) turn into ticks; on a logged-out sandbox the phone pairs by the QR code (on the whole screen at 80×24, read
back from `capture-pane` and scanned through `/sandbox/scan`) and by a phone code."""

from __future__ import annotations

import json
import os
import re
import shutil
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.api.qr_readback import codes_on_screen
from tests.app.test_tmux import Terminal, app_command
from tests.app.test_tmux_account import decoded, header_says, phone_code_on_screen, sandbox_url, scan
from tests.app.test_tmux_keys import footer, wait_until
from tests.app.test_tmux_newcomer import thread_words, wait_in_thread
from tests.media_files import png, write
from tui.sandbox.events import REPLY_FILES

pytestmark = [
    pytest.mark.tmux,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed (.ci/run installs it)"),
]

CODE_LIFETIME = 600
"""Seconds the sandbox's codes last (`--code-lifetime`): longer than a loaded machine takes to read and scan one."""
RECIPIENT = "5511987654321"


def start(home: Path, *options: str, path: str | None = None) -> Terminal:
    term = Terminal(f"gateway-tui-evolution-{uuid.uuid4().hex[:12]}")
    data = " ".join(f"XDG_{name}_HOME={home.parent / 'xdg' / name.lower()}" for name in ("DATA", "CONFIG", "STATE", "CACHE"))
    search = f"PATH={path} " if path is not None else ""
    command = f"env HOME={home} {search}{data} {app_command()} --instance-dialect evolution " + " ".join(options)
    term.tmux("-f", "/dev/null", "new-session", "-d", "-s", "app", "-x", "80", "-y", "24",
              command, ";", "set-option", "-t", "app", "remain-on-exit", "on")
    return term


@pytest.fixture
def home(tmp_path: Path) -> Path:
    folder = tmp_path / "home"
    folder.mkdir()
    return folder


@pytest.fixture
def connected(home: Path) -> Iterator[Terminal]:
    term = start(home)
    try:
        yield term
    finally:
        term.tmux("kill-server")


@pytest.fixture
def logged_out(home: Path) -> Iterator[Terminal]:
    term = start(home, "--logged-out", f"--code-lifetime {CODE_LIFETIME}")
    try:
        yield term
    finally:
        term.tmux("kill-server")


def new_chat_form(term: Terminal, recipient: str) -> None:
    """ctrl+n: the new-message form, the recipient typed, then on to the message."""
    term.wait_for("Chats ·")
    term.keys("C-n")
    term.wait_for("Send (ctrl+s)")
    term.type(recipient)
    term.keys("Tab")


def test_a_text_and_a_photo_sent_show_their_acks_as_ticks(connected: Terminal, home: Path) -> None:
    term = connected
    header_says(term, "connected")
    write(home, "photo.png", png())
    new_chat_form(term, RECIPIENT)
    term.type("hello from evolution")
    term.keys("C-s")
    term.wait_for("Sent, message id")
    term.keys("C-l")  # the conversations: the thread of that chat
    wait_in_thread(term, "hello from evolution")
    # The sandbox acks it as Evolution does (messages.update DELIVERY_ACK, then READ): the ticks follow.
    wait_until(lambda: re.search(r"You · \S+ ✓✓ read", thread_words(term)) is not None, "the read ticks")
    term.keys("Escape")
    wait_until(lambda: "⏎ Reply" in footer(term), "the list's footer")
    term.keys("Enter")  # the reply line of that chat
    term.keys("C-t")  # the full form, to the same chat
    term.wait_for("Send (ctrl+s)")
    term.keys("BTab")
    term.keys("BTab")  # past the recipient: the kind picker
    term.keys("Enter")
    term.keys("Up")  # Media: the last kind
    term.keys("Enter")
    term.wait_for("File (→ completes the path)", "kind Media", "^b Browse")
    term.keys("C-b")  # the picker, at the home folder: the photo is its one file
    term.wait_for("Choose a file", "photo.png")
    term.keys("Down")
    term.keys("Enter")
    term.wait_for("(image/png)")
    term.keys("C-s")
    term.wait_for("Sent, message id")
    term.keys("C-l")
    wait_in_thread(term, "[image]")
    wait_until(lambda: thread_words(term).count("✓✓") >= 2, "the photo's ticks too")


def test_a_photo_a_contact_sends_inline_opens_from_the_thread(home: Path) -> None:
    """The sandbox's contact answers a photo request with Evolution's messages.upsert carrying `message.base64`
    (webhook base64 on): the listener keeps the file, and ctrl+o in the thread hands it to the system viewer (here
    a stand-in for xdg-open that copies what it is given), where it once said the file was gone."""
    viewer_bin = home.parent / "bin"
    viewer_bin.mkdir()
    opened = home.parent / "opened.png"
    fake = viewer_bin / "xdg-open"
    fake.write_text(f'#!/bin/sh\ncp "$1" {opened}.part && mv {opened}.part {opened}\n')
    fake.chmod(0o755)
    term = start(home, path=f"{viewer_bin}:{os.environ.get('PATH', '')}")
    try:
        header_says(term, "connected")
        # Only Evolution's delivery of the photo: the sandbox's session family (WuzAPI) would deliver it too, and
        # the thread would offer that copy's file instead.
        fault = urllib.request.Request(f"{sandbox_url(term)}/sandbox/fault", method="POST",
                                       data=json.dumps({"kind": "drop-events", "events": ["Message"]}).encode())
        with urllib.request.urlopen(fault, timeout=10) as answer:  # noqa: S310 - loopback
            assert answer.status == 200
        new_chat_form(term, RECIPIENT)
        term.type("Can you send me a photo of it?")
        term.keys("C-s")
        term.wait_for("Sent, message id")
        term.keys("C-l")  # the conversations: the thread of that chat
        wait_in_thread(term, "Here it is!")
        term.keys("Tab")  # from the list to the thread: its file keys
        wait_until(lambda: "^o Open" in footer(term), "the thread's footer")
        term.keys("C-o")
        wait_until(opened.exists, f"the photo handed to the viewer; the screen was:\n{term.screen()}")
        assert "cannot be opened" not in term.screen()
        assert thread_words(term).count("Here it is!") == 1  # Evolution's copy, the one opened
        assert opened.read_bytes() == REPLY_FILES["image"].data()  # the contact's photo, byte for byte
    finally:
        term.tmux("kill-server")


def test_pair_by_the_qr_code_on_the_whole_screen(logged_out: Terminal) -> None:
    term = logged_out
    header_says(term, "not connected")
    term.keys("M-8")
    term.wait_for("Account · sandbox", "Press q for a QR code")
    term.keys("q")
    payload = decoded(term, timeout=60)  # Evolution's first connect answers no code yet: asked again
    assert payload.count(",") == 3
    assert scan(sandbox_url(term), payload) == 200
    term.wait_for("Account · sandbox")
    header_says(term, "connected")
    assert not codes_on_screen(term.screen())


def test_pair_by_a_phone_code(logged_out: Terminal) -> None:
    term = logged_out
    header_says(term, "not connected")
    term.keys("M-8")
    term.wait_for("Account · sandbox", "Press q for a QR code")
    term.keys("p")
    term.wait_for("Phone (country code")
    term.type("5511999999999")
    term.keys("Enter")
    code = phone_code_on_screen(term, timeout=60)
    assert scan(sandbox_url(term), code) == 200
    header_says(term, "connected")
