"""Issue 38 in a real terminal, at 80×24 and 120×40: tmux runs the app, keys are typed one at a time at a person's
pace (tests/app/test_tmux.py's Terminal), and the captured screen shows what happened. Every wait is for something
on the screen, bounded in time.

4. A file chosen with Browse (ctrl+b) is sent by ctrl+s, once, and shows in the thread; a send the gateway never
   answers, cancelled, stays in its thread as one that may have been sent, and sending it again asks first.
10. After F3 to another account, the header counts that account's events and the reply line says nothing of the
    other account's send; Events with `a` names each event's account, and only the accounts open here.
11. Each chat keeps its own reply draft; Esc from the events panel goes to the conversations' list.
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import signal
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.app.test_tmux import Terminal, app_command, descendants
from tests.app.test_tmux_keys import footer, wait_until
from tests.media_files import pdf, write

pytestmark = [
    pytest.mark.tmux,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed (.ci/run installs it)"),
]

SIZES = [(80, 24), (120, 40)]


def start(command: str, size: tuple[int, int]) -> Terminal:
    term = Terminal(f"gateway-tui-newcomer-{uuid.uuid4().hex[:12]}")
    term.tmux("-f", "/dev/null", "new-session", "-d", "-s", "app", "-x", str(size[0]), "-y", str(size[1]),
              command, ";", "set-option", "-t", "app", "remain-on-exit", "on")
    return term


def app_in(home: Path) -> str:
    """The app with `home` as its home folder (where the file picker opens) and its data beside it."""
    data = " ".join(f"XDG_{name}_HOME={home.parent / 'xdg' / name.lower()}" for name in ("DATA", "CONFIG", "STATE", "CACHE"))
    return f"env HOME={home} {data} {app_command()}"


@pytest.fixture(params=SIZES, ids=lambda size: f"{size[0]}x{size[1]}")
def size(request) -> tuple[int, int]:
    return request.param


@pytest.fixture
def home(tmp_path: Path) -> Path:
    folder = tmp_path / "home"
    folder.mkdir()
    return folder


@pytest.fixture
def terminal(size, home) -> Iterator[Terminal]:
    term = start(app_in(home), size)
    try:
        yield term
    finally:
        term.tmux("kill-server")


def wait_for_open_thread(term: Terminal) -> None:
    """The chosen chat's thread is open (its title names the number)."""
    term.wait_for("● ")
    wait_until(lambda: re.search(r"│ .+ · \d{10,}", term.screen()) is not None, "the open thread's title")


def choose_the_file_with_browse(term: Terminal, name: str, described: str) -> None:
    """The chosen chat's full reply form, kind Media, and the file `name` in the home folder chosen with Browse
    (ctrl+b): the path field says it is `described`."""
    wait_for_open_thread(term)
    term.keys("Escape")  # from the search to the list
    wait_until(lambda: "⏎ Reply" in footer(term), "the list's footer")
    term.keys("Enter")  # the reply line of the chosen chat
    term.keys("C-t")  # the full form to that chat, its message focused
    term.wait_for("Send (ctrl+s)")
    term.keys("BTab")
    term.keys("BTab")  # past the recipient: the kind picker
    term.keys("Enter")
    term.keys("Up")  # Media: the last kind
    term.keys("Enter")
    term.wait_for("File (→ completes the path)", "kind Media", "^b Browse")
    term.keys("C-b")  # the picker, at the home folder
    term.wait_for("Choose a file", name)
    term.keys("Down")
    term.keys("Enter")  # the file chosen: the path field says what it is
    term.wait_for(described)


def test_a_file_chosen_with_browse_is_sent_by_ctrl_s(terminal, home: Path):
    # A large file: its send takes a while, as a real one over a real network does (a quick answer hid the defect:
    # the send ended before the check that cancelled it started).
    write(home, "menu.pdf", pdf() + b"\n" * 30_000_000)
    choose_the_file_with_browse(terminal, "menu.pdf", "(application/pdf), 30.0 MB")
    terminal.keys("C-s")
    shown = terminal.wait_for("Sent, message id", timeout=60)
    assert "cancelled" not in shown
    terminal.keys("C-l")  # the conversations: the document in the thread
    shown = terminal.wait_for("[document] menu.pdf")
    assert "may have been sent" not in shown


def sandbox_process(term: Terminal) -> int:
    """The sandbox gateway's process, which the app started (`--sandbox`)."""
    pane = int(term.tmux("display", "-p", "-t", "app", "#{pane_pid}"))
    [pid] = [pid for pid in descendants(pane) if b"tui.cli.sandbox" in Path(f"/proc/{pid}/cmdline").read_bytes()]
    return pid


def thread_words(term: Terminal) -> str:
    """The open thread's words in reading order (right of the list's edge; a narrow thread wraps a line anywhere)."""
    return " ".join(" ".join(line.split("│", 1)[1] for line in term.screen().splitlines() if "│" in line).split())


def wait_in_thread(term: Terminal, *phrases: str, timeout: float = 30.0) -> None:
    """Until each of `phrases` is in the open thread (bounded; the screen is in the failure)."""
    deadline = time.monotonic() + timeout
    while not all(phrase in thread_words(term) for phrase in phrases):
        if time.monotonic() > deadline:
            raise AssertionError(f"never showed {phrases!r}; the screen was:\n{term.screen()}")
        time.sleep(0.2)


def test_a_send_with_no_answer_stays_in_its_thread_as_maybe_sent_and_a_repeat_asks(terminal, home: Path):
    write(home, "menu.pdf", pdf())
    choose_the_file_with_browse(terminal, "menu.pdf", "(application/pdf)")
    gateway = sandbox_process(terminal)
    os.kill(gateway, signal.SIGSTOP)  # the gateway takes the request and never answers
    try:
        terminal.keys("C-s")
        wait_until(lambda: "esc Cancel" in footer(terminal), "the send under way, escape offered to cancel it")
        terminal.keys("Escape")  # the person gives up waiting
        terminal.wait_for("cancelled")
        terminal.keys("C-l")  # the conversations: the thread keeps the document as one that may have gone
        wait_in_thread(terminal, "[document] menu.pdf, 329 bytes · no answer: it may have been sent")
        terminal.keys("C-t")  # the form again, the same file in it
        terminal.wait_for("Send (ctrl+s)")
        terminal.keys("C-s")  # sent again, long after or not: it may be there already, so it asks first
        question = " ".join(terminal.wait_for("Send again (y)").replace("█", " ").split())
        assert "Send the same file to" in question
        assert "The last time it got no answer: it may have reached the gateway already." in question
        terminal.keys("Escape")  # no
        terminal.wait_for("Not sent again.")
    finally:
        os.kill(gateway, signal.SIGCONT)


def reply_line(term: Terminal) -> str:
    """The reply line under the thread (its placeholder when empty)."""
    return next((line for line in reversed(term.screen().splitlines()) if "│ " in line and "────" not in line
                 and ("Reply:" in line or "for the " in line)), "")


def test_each_chat_keeps_its_draft_and_escape_from_the_panel_goes_to_the_list(terminal):
    wait_for_open_thread(terminal)
    terminal.keys("Escape")  # from the search to the list
    wait_until(lambda: "⏎ Reply" in footer(terminal), "the list's footer")
    terminal.keys("Enter")  # the first chat's reply line
    terminal.type("for the first")
    wait_until(lambda: "for the first" in reply_line(terminal), "the draft in the reply line")
    terminal.keys("Escape")  # back to the list, unsent
    wait_until(lambda: "⏎ Reply" in footer(terminal), "the list's footer")
    terminal.keys("Down")  # the second chat
    terminal.keys("Enter")
    wait_until(lambda: "Reply: enter sends" in reply_line(terminal), "the second chat's empty reply line")
    terminal.type("for the second")
    wait_until(lambda: "for the second" in reply_line(terminal), "the second draft")
    terminal.keys("Escape")
    wait_until(lambda: "⏎ Reply" in footer(terminal), "the list's footer")
    terminal.keys("Up")  # the first chat again: its draft
    wait_until(lambda: "for the first" in reply_line(terminal), "the first chat's draft back")
    terminal.keys("Enter")
    terminal.keys("Tab")  # from the reply line to the events panel
    wait_until(lambda: "esc Leave panel" in footer(terminal), "the panel's footer")
    terminal.keys("Escape")  # out of the panel: the list, not the reply line
    wait_until(lambda: "⏎ Reply" in footer(terminal), "the list's footer")
    shown = terminal.screen()
    assert "Sent, message id" not in shown and "for the first" in reply_line(terminal)


@pytest.fixture
def fleet_terminal(size, home) -> Iterator[Terminal]:
    term = start(app_in(home) + " --accounts 3", size)
    try:
        yield term
    finally:
        term.tmux("kill-server")


def header(term: Terminal) -> str:
    return term.screen().splitlines()[0]


def test_after_f3_the_header_counts_and_the_reply_line_are_the_new_accounts(fleet_terminal):
    terminal = fleet_terminal
    wait_for_open_thread(terminal)
    terminal.wait_for("sandbox-01", timeout=40)
    terminal.keys("Escape")  # from the search to the list
    wait_until(lambda: "⏎ Reply" in footer(terminal), "the list's footer")
    terminal.keys("Enter")
    terminal.type("hi from one")
    terminal.keys("Enter")  # sent from sandbox-01: its events come
    terminal.wait_for("Sent, message id")
    wait_until(lambda: re.search(r" · [1-9]\d* ev", header(terminal)) is not None, "sandbox-01's events counted")
    terminal.keys("F3")  # the account picker
    terminal.wait_for("sandbox-02")
    terminal.keys("Down")
    terminal.keys("Enter")
    terminal.wait_for("Now on sandbox-02")  # the switch is done (its toast comes last)
    assert "sandbox-02" in header(terminal)
    wait_until(lambda: re.search(r" · 0 ev(ents)? · 0/min", header(terminal)) is not None,
               "sandbox-02's counts (none)")
    assert "Sent, message id" not in terminal.screen()  # the reply was sandbox-01's


def keep_an_event_of_an_account_not_open_here(account: str, summary: str) -> None:
    """An event in the sandbox's store for `account`, as an earlier run with more accounts (or `listen --all`)
    left it: this run does not open that account."""
    from datetime import UTC, datetime

    from tui.api.signing import Verdict
    from tui.local.paths import profile_events_path
    from tui.webhooks.events import EventRecord
    from tui.webhooks.store import EventStore

    record = EventRecord(received_at=datetime.now(UTC), path=f"/a/{account}/session", headers={}, body=b"{}",
                         payload={}, kind="ChatPresence", summary=summary, verdict=Verdict.VALID, account=account)

    async def append() -> None:
        with EventStore(profile_events_path("sandbox")) as store:
            await store.append(record)

    asyncio.run(append())


def reply_from_the_list(term: Terminal, text: str) -> None:
    """From the conversations' list: the chosen chat's reply line, `text` typed and sent."""
    wait_until(lambda: "⏎ Reply" in footer(term), "the list's footer")
    term.keys("Enter")
    term.type(text)
    wait_until(lambda: text in term.screen(), "the reply typed")
    term.keys("Enter")
    term.wait_for("Sent, message id")


def test_events_with_a_shows_the_open_accounts_events_each_with_its_account(size, home):
    keep_an_event_of_an_account_not_open_here("sandbox-09", "typing, of an account not open here")
    terminal = start(app_in(home) + " --accounts 3", size)
    try:
        wait_for_open_thread(terminal)
        terminal.wait_for("sandbox-01", timeout=40)
        terminal.keys("Escape")  # from the search to the list
        reply_from_the_list(terminal, "hi from one")  # sandbox-01's events come
        terminal.keys("F3")  # the account picker
        terminal.wait_for("sandbox-02")
        terminal.keys("Down")
        terminal.keys("Enter")
        terminal.wait_for("Now on sandbox-02")
        wait_for_open_thread(terminal)
        terminal.keys("Escape")
        reply_from_the_list(terminal, "hi from two")  # and sandbox-02's
        terminal.keys("M-7")  # Events: the current account's, no Account column
        terminal.wait_for("Events")
        wait_until(lambda: "Receipt" in terminal.screen() or "Read" in terminal.screen(), "sandbox-02's events")
        assert not re.search(r"│ *Account *│|\bAccount\b.*\bReceived\b", terminal.screen())
        terminal.keys("a")  # all accounts
        shown = terminal.wait_for("sandbox-01")
        wait_until(lambda: re.search(r"\bAccount\b.*\bReceived\b", terminal.screen()) is not None,
                   "the Account column")
        shown = terminal.screen()
        assert "sandbox-02" in shown and "sandbox-09" not in shown and "not open here" not in shown
        terminal.keys("a")  # the current account's again: the column goes
        wait_until(lambda: re.search(r"\bAccount\b.*\bReceived\b", terminal.screen()) is None, "the column gone")
    finally:
        terminal.tmux("kill-server")
