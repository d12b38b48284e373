"""Pairing in a real terminal (issue 23): tmux runs `gateway-tui --sandbox --logged-out` in the Z-API and WuzAPI
dialects; at 120×40 (the events panel hidden with F9) the Account section draws the QR code, the test reads it
back from `capture-pane` and decodes it as a phone's camera would, scans it through the sandbox's `/sandbox/scan`,
for each family in turn, and the header turns connected. At 80×24 the code takes the whole screen in sextants and
scans the same way; the phone code is a key away."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import sys
import time
import urllib.request
import uuid
from pathlib import Path

import pytest

from tests.api.qr_readback import codes_on_screen
from tests.app.test_tmux import Terminal, descendants

pytestmark = [
    pytest.mark.tmux,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed (.ci/run installs it)"),
]


CODE_LIFETIME = 600
"""Seconds the sandbox's codes last here (`--code-lifetime`): far longer than any test takes to read and scan one,
however busy the machine (a phone code expired before a loaded 2-core machine scanned it, at 20 s)."""


def start(size: tuple[int, int], data: Path) -> Terminal:
    term = Terminal(f"gateway-tui-test-{uuid.uuid4().hex[:12]}")
    app = Path(sys.executable).with_name("gateway-tui")
    dirs = " ".join(f"XDG_{name}_HOME={data / name.lower()}" for name in ("DATA", "CONFIG", "STATE"))
    command = (f"env -u COLUMNS -u LINES {dirs} {app} --sandbox --logged-out --instance-dialect zapi "
               f"--session-dialect wuzapi --code-lifetime {CODE_LIFETIME}")
    term.tmux("-f", "/dev/null", "new-session", "-d", "-s", "app", "-x", str(size[0]), "-y", str(size[1]),
              command, ";", "set-option", "-t", "app", "remain-on-exit", "on")
    return term


def sandbox_url(term: Terminal) -> str:
    """The address of the sandbox process the app started (its one listening socket, from /proc: Linux, like tmux
    here), for the test's phone to scan codes at."""
    pane = int(term.tmux("display", "-p", "-t", "app", "#{pane_pid}"))
    [pid] = [pid for pid in descendants(pane) if b"tui.cli.sandbox" in Path(f"/proc/{pid}/cmdline").read_bytes()]
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        with contextlib.suppress(OSError):
            target = os.readlink(fd)
            if target.startswith("socket:["):
                inodes.add(target[8:-1])
    for table in ("tcp", "tcp6"):
        for line in Path(f"/proc/{pid}/net/{table}").read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] == "0A" and fields[9] in inodes:  # LISTEN
                return f"http://127.0.0.1:{int(fields[1].rsplit(':', 1)[1], 16)}"
    raise AssertionError("the sandbox process listens nowhere")


@pytest.fixture
def big(tmp_path):
    term = start((120, 40), tmp_path)
    try:
        yield term
    finally:
        term.tmux("kill-server")


@pytest.fixture
def small(tmp_path):
    term = start((80, 24), tmp_path)
    try:
        yield term
    finally:
        term.tmux("kill-server")


def scan(url: str, code: str) -> int:
    request = urllib.request.Request(f"{url}/sandbox/scan", data=json.dumps({"code": code}).encode(), method="POST")
    with urllib.request.urlopen(request, timeout=10) as answer:  # noqa: S310 - loopback
        return answer.status


def decoded(term: Terminal, timeout: float = 30.0) -> str:
    deadline = time.monotonic() + timeout
    while True:
        try:
            found = codes_on_screen(term.screen())
        except AssertionError:  # something drawn over the code (a toast's ▌ edge): a person waits for it to go
            found = []
        if found:
            return found[0]
        if time.monotonic() > deadline:
            raise AssertionError(f"no QR code decoded from the screen:\n{term.screen()}")
        time.sleep(0.3)


def phone_code_on_screen(term: Terminal, timeout: float = 30.0) -> str:
    """The phone code as a person reads it: whole, once nothing is drawn over it (a toast's ▌ edge can touch or
    cover its letters for a while)."""
    deadline = time.monotonic() + timeout
    while True:
        said = term.screen().split("Type this code on the phone:")
        found = re.match(r"\s*([1-9A-Z]{4}-[1-9A-Z]{4})(?![1-9A-Z])", said[1]) if len(said) > 1 else None
        if found:
            return found.group(1)
        if time.monotonic() > deadline:
            raise AssertionError(f"no whole phone code on the screen:\n{term.screen()}")
        time.sleep(0.3)


def header_says(term: Terminal, state: str, timeout: float = 30.0) -> None:
    """Wait for the header's connection to read `state`, in its long form ("● sandbox · connected") or its short
    one ("● connected"), which the header takes where the long forms do not fit its line."""
    pattern = re.compile(rf"● (?:sandbox · )?{re.escape(state)}(?: |$)")
    deadline = time.monotonic() + timeout
    while not pattern.search(term.screen().splitlines()[0] if term.screen() else ""):
        if time.monotonic() > deadline:
            raise AssertionError(f"the header never said {state!r}; the screen was:\n{term.screen()}")
        time.sleep(0.2)


def test_pair_both_families_by_the_qr_codes_on_screen(big):
    header_says(big, "both not connected")
    big.keys("F9")  # the events panel hidden: room for the code
    big.keys("M-8")  # the Account section (alt+8 as tmux sends it)
    big.wait_for("Account · sandbox", "Press q for a QR code")
    url = sandbox_url(big)
    for family in ("instance", "session"):
        if family == "session":
            big.keys("f")  # the other family
            big.wait_for("Session (WuzAPI) ◂")
        big.keys("q")
        payload = decoded(big)
        assert payload.count(",") == 3 and len(payload) > 200
        assert scan(url, payload) == 200
        big.wait_for("connected as")
    header_says(big, "connected")


def test_at_120x40_the_section_says_hiding_the_panel_makes_room_for_the_code(big):
    """Issue 38 item 12: with the events panel shown the code does not fit at 120×40, but it does once F9 hides the
    panel: the section says so, and F9 draws the code."""
    big.wait_for("both not connected")
    big.keys("M-8")
    big.wait_for("Account · sandbox", "Press q for a QR code")
    big.keys("q")
    shown = " ".join(big.wait_for("to hide the events panel").split())
    assert "The QR code needs" in shown and "Press F9 to hide the events panel: then it fits" in shown
    assert not codes_on_screen(big.screen())  # no code cut short
    big.keys("F9")
    payload = decoded(big)
    assert scan(sandbox_url(big), payload) == 200
    big.wait_for("connected as")


def test_at_80x24_the_code_takes_the_whole_screen_and_scans(small):
    """33 rows of half blocks fit nowhere at 80×24: the code goes on the whole screen in sextants (33×22), the test
    reads it back as a terminal draws it (cells twice as tall as wide) and the scan pairs."""
    small.wait_for("both not connected")
    small.keys("M-8")
    small.wait_for("Account · sandbox")
    small.keys("q")
    small.wait_for("Scan it: WhatsApp › Linked devices", "esc Stop codes", "p Phone code instead")
    payload = decoded(small)
    assert payload.count(",") == 3 and len(payload) > 200
    assert scan(sandbox_url(small), payload) == 200
    small.wait_for("connected as", "Account · sandbox")  # the screen closed by itself: the section says it
    assert not codes_on_screen(small.screen())


def test_at_80x24_escape_stops_the_codes_and_p_offers_the_phone_code(small):
    small.wait_for("both not connected")
    small.keys("M-8")
    small.wait_for("Account · sandbox")
    small.keys("q")
    small.wait_for("esc Stop codes")
    small.keys("Escape")
    small.wait_for("Stopped showing codes; nothing is paired.")
    assert not codes_on_screen(small.screen())
    small.keys("q")
    small.wait_for("p Phone code instead")
    small.keys("p")
    small.wait_for("Phone (country code")
    small.type("5511999999999")
    small.keys("Enter")
    code = phone_code_on_screen(small)
    assert scan(sandbox_url(small), code) == 200
    small.wait_for("connected as")
