"""Every command against the one table of exit codes (README, "Exit codes"; tui/cli/exit_codes.py): each command is run
in each situation of the table it can meet, and must end with that situation's code, whichever command met it.

0 done; 1 the gateway or the store said no, a finding remains, or what was asked for was not found; 2 bad input
(usage, validation, an unknown profile or operation, a missing secret, a file that cannot be read); 3 refused by a
read-only profile. And a reader that leaves early (`| head -1`) is no error and no traceback."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests import media_files
from tests.harness import sandbox_for_env_tokens
from tests.webhooks.conftest import record
from tui.local import config
from tui.api.dialects import InstanceDialect, SessionDialect
from tui.cli.main import main
from tui.cli.exit_codes import Exit
from tui.local.paths import profile_events_path
from tui.webhooks.conversations import Inbox
from tui.webhooks.inbox_changes import NewMessage
from tui.webhooks.store import EventStore

TOKENS = {
    "GATEWAY_TUI_INSTANCE_TOKEN": "exit-instance-token-SECRET",
    "GATEWAY_TUI_CLIENT_TOKEN": "exit-client-token-SECRET",
    "GATEWAY_TUI_SESSION_TOKEN": "exit-session-token-SECRET",
}
SENT_ID = "3EB0EXIT01"
PHONE = "5511999999999"
RECEIPT = {"type": "ReadReceipt", "event": {"MessageIDs": [SENT_ID]}}


@dataclass(frozen=True)
class World:
    """What the commands run against: the profiles, a file to send, an address where nothing answers, one taken."""

    tmp: Path
    nothing_there: int  # a port bound but not listening: a connection is refused
    taken: int  # a port something listens on: a server cannot take it


@pytest.fixture
async def world(tmp_path, monkeypatch) -> AsyncIterator[World]:
    for name, value in TOKENS.items():
        monkeypatch.setenv(name, value)
    async with sandbox_for_env_tokens("exitinst", TOKENS) as sandbox:
        base = sandbox.url.rstrip("/")
        with socket.socket() as closed, socket.socket() as listening:
            closed.bind(("127.0.0.1", 0))
            listening.bind(("127.0.0.1", 0))
            listening.listen()
            gone = f"http://127.0.0.1:{closed.getsockname()[1]}"
            for name, url, read_only in (("box", base, False), ("ro", base, True), ("gone", gone, False)):
                config.save_profile(config.Profile(
                    name=name, base_url=url, instance_id="exitinst", session_url=url, listener_port=0,
                    instance_dialect=InstanceDialect.SPEC, session_dialect=SessionDialect.SPEC, read_only=read_only))
            with EventStore(profile_events_path("box")) as store:
                Inbox(store).record(NewMessage(PHONE, True, "text", "hello", SENT_ID), 1_790_000_000_000_000)
                await store.append(record(RECEIPT, kind="ReadReceipt", summary="ReadReceipt read"))
            media_files.write(tmp_path, "invoice.pdf", media_files.pdf())
            yield World(tmp_path, closed.getsockname()[1], listening.getsockname()[1])


def text(phone: str = PHONE) -> str:
    return json.dumps({"phone": phone, "message": "hi"})


# (what, argv, code). `{tmp}`, `{nothing_there}` and `{taken}` are filled from the World.
CASES: list[tuple[str, list[str], Exit]] = [
    # 0: done
    ("call reads", ["call", "status", "--profile", "box"], Exit.OK),
    ("call sends", ["call", "send-text", "--profile", "box", "--data", text()], Exit.OK),
    ("call --list", ["call", "--list"], Exit.OK),
    ("call --list --json", ["call", "--list", "--json"], Exit.OK),
    ("send", ["send", "--to", PHONE, "{tmp}/invoice.pdf", "--profile", "box", "--family", "instance"], Exit.OK),
    ("status (the spec's session family has no status read: no failure)", ["status", "--profile", "box"], Exit.OK),
    ("status --json", ["status", "--json", "--profile", "box"], Exit.OK),
    ("connect, paired already", ["connect", "--profile", "box"], Exit.OK),
    ("fleet", ["fleet", "--profiles", "box", "--json"], Exit.OK),
    ("message", ["message", SENT_ID, "--profile", "box"], Exit.OK),
    ("events list", ["events", "list", "--profile", "box"], Exit.OK),
    ("events show", ["events", "show", "1", "--profile", "box"], Exit.OK),
    ("locate", ["locate"], Exit.OK),
    ("profile list", ["profile", "list"], Exit.OK),
    ("campaign list", ["campaign", "list"], Exit.OK),
    # 1: the gateway or the store said no, a finding remains, not found
    ("call, the gateway unreachable", ["call", "status", "--profile", "gone"], Exit.REFUSED),
    ("send, the gateway unreachable", ["send", "--to", PHONE, "{tmp}/invoice.pdf", "--profile", "gone",
                                       "--family", "instance"], Exit.REFUSED),
    ("status, the gateway unreachable", ["status", "--json", "--profile", "gone"], Exit.REFUSED),
    ("doctor, a finding remains (no webhook set)", ["doctor", "--profile", "box"], Exit.REFUSED),
    ("message not found", ["message", "3EB0NOPE", "--profile", "box"], Exit.REFUSED),
    ("events show not found", ["events", "show", "99", "--profile", "box"], Exit.REFUSED),
    # a profile with nothing stored yet has no store: what was asked for is not found (no file was given)
    ("message, nothing stored yet", ["message", SENT_ID, "--profile", "ro"], Exit.REFUSED),
    ("events show, nothing stored yet", ["events", "show", "1", "--profile", "ro"], Exit.REFUSED),
    ("events list, nothing stored yet", ["events", "list", "--profile", "ro"], Exit.REFUSED),
    ("events replay not found", ["events", "replay", "99", "--to", "http://127.0.0.1:{nothing_there}/",
                                 "--profile", "box"], Exit.REFUSED),
    ("events replay, no answer", ["events", "replay", "1", "--to", "http://127.0.0.1:{nothing_there}/",
                                  "--profile", "box"], Exit.REFUSED),
    ("trigger, no answer", ["trigger", "Message", "--to", "http://127.0.0.1:{nothing_there}/"], Exit.REFUSED),
    ("profile remove not found", ["profile", "remove", "nope"], Exit.REFUSED),
    ("campaign not found", ["campaign", "status", "nope"], Exit.REFUSED),
    ("listen, the port taken", ["listen", "--port", "{taken}", "--profile", "box"], Exit.REFUSED),
    ("sandbox, the port taken", ["sandbox", "--port", "{taken}"], Exit.REFUSED),
    # 2: bad input
    ("usage", ["call", "--data"], Exit.BAD_INPUT),
    ("call, validation", ["call", "send-text", "--profile", "box", "--data", text("hi")], Exit.BAD_INPUT),
    ("call, unknown operation", ["call", "nope"], Exit.BAD_INPUT),
    ("call, --data file unreadable", ["call", "status", "--profile", "box", "--data", "@{tmp}/none.json"],
     Exit.BAD_INPUT),
    ("send, file unreadable", ["send", "--to", PHONE, "{tmp}/none.pdf", "--profile", "box"], Exit.BAD_INPUT),
    ("status, unknown profile", ["status", "--profile", "nope"], Exit.BAD_INPUT),
    ("connect, unknown profile", ["connect", "--profile", "nope"], Exit.BAD_INPUT),
    ("doctor, unknown profile", ["doctor", "--profile", "nope"], Exit.BAD_INPUT),
    ("fleet, unknown profile", ["fleet", "--profiles", "nope"], Exit.BAD_INPUT),
    ("message, empty id", ["message", " ", "--profile", "box"], Exit.BAD_INPUT),
    ("events, bad --limit", ["events", "list", "--limit", "0", "--profile", "box"], Exit.BAD_INPUT),
    ("events, store file missing", ["events", "list", "--db", "{tmp}/none.sqlite3"], Exit.BAD_INPUT),
    ("message, store file missing", ["message", SENT_ID, "--db", "{tmp}/none.sqlite3"], Exit.BAD_INPUT),
    ("trigger, unknown kind", ["trigger", "Nope", "--to", "http://127.0.0.1:{nothing_there}/"], Exit.BAD_INPUT),
    ("locate, unknown profile", ["locate", "--profile", "nope"], Exit.BAD_INPUT),
    ("campaign, recipients unreadable", ["campaign", "create", "c", "--recipients", "{tmp}/none.csv", "--text", "hi",
                                         "--profile", "box"], Exit.BAD_INPUT),
    ("profile add, no gateway", ["profile", "add", "new"], Exit.BAD_INPUT),
    ("listen, remote forward target", ["listen", "--forward-to", "http://203.0.113.9/hook", "--profile", "box"],
     Exit.BAD_INPUT),
    ("sandbox, bad --accounts", ["sandbox", "--accounts", "0"], Exit.BAD_INPUT),
    ("fleet import, bad URL", ["fleet", "import", "--session-url", "not a url"], Exit.BAD_INPUT),
    # 3: refused by a read-only profile
    ("call writes on a read-only profile", ["call", "send-text", "--profile", "ro", "--data", text()],
     Exit.READ_ONLY),
    ("send on a read-only profile", ["send", "--to", PHONE, "{tmp}/invoice.pdf", "--profile", "ro",
                                     "--family", "instance"], Exit.READ_ONLY),
]


def run_main(argv: list[str]) -> int:
    try:
        return main(argv)
    except SystemExit as done:  # argparse's usage errors
        return int(done.code or 0)


@pytest.mark.parametrize(("argv", "code"), [
    # doctor waits out its probe of the events (~15 s): slow, out of the quick loop
    pytest.param(argv, code, id=what, marks=[pytest.mark.slow] if argv[0] == "doctor" else []) for what, argv, code in CASES])
async def test_every_command_ends_with_the_tables_code(world: World, argv: list[str], code: Exit,
                                                       monkeypatch) -> None:
    monkeypatch.setattr(sys, "stdin", open(os.devnull))  # no terminal: nothing is asked
    places = {"{tmp}": str(world.tmp), "{nothing_there}": str(world.nothing_there), "{taken}": str(world.taken)}
    filled = [arg for arg in argv]
    for place, value in places.items():
        filled = [arg.replace(place, value) for arg in filled]
    assert await asyncio.to_thread(run_main, filled) == code


def test_every_command_is_in_the_table() -> None:
    """A command added later is held to the table too: each subcommand has a case of its own."""
    from tui.cli.main import build_parser

    parser = build_parser()
    [commands] = [action for action in parser._actions if action.dest == "command"]
    tested = {argv[0] for _, argv, _ in CASES}
    assert set(commands.choices) <= tested


# -- a reader that leaves early ---------------------------------------------------------------------------------


@pytest.fixture
def reader_gone() -> Iterator[int]:
    """The write end of a pipe whose reader has already gone, as after `| head -1` read its line: the first write
    fails (EPIPE), whatever the size of the output and however fast the reader was."""
    read, write = os.pipe()
    os.close(read)
    yield write
    os.close(write)


def run_into(write: int, *argv: str) -> tuple[int, str]:
    done = subprocess.run([sys.executable, "-m", "tui", *argv], stdout=write, stderr=subprocess.PIPE,
                          env={**os.environ, **TOKENS}, timeout=60, check=False)
    return done.returncode, done.stderr.decode()


@pytest.mark.parametrize("argv", [["call", "--list"], ["call", "--list", "--json"], ["profile", "list"],
                                  ["locate"], ["events", "list", "--profile", "box"],
                                  ["message", SENT_ID, "--profile", "box"]], ids=" ".join)
async def test_a_reader_that_leaves_early_is_no_error_and_no_traceback(world, reader_gone, argv) -> None:
    code, err = await asyncio.to_thread(run_into, reader_gone, *argv)
    assert (code, err) == (Exit.OK, "")


async def test_what_the_command_decided_stands_when_the_reader_leaves(world, reader_gone) -> None:
    """`message NOPE | head -1`: not found is still 1 (its words are on stderr, which is still there)."""
    code, err = await asyncio.to_thread(run_into, reader_gone, "message", "3EB0NOPE", "--profile", "box")
    assert code == Exit.REFUSED and err.startswith("gateway-tui message: no message with id 3EB0NOPE")


def test_call_list_json_names_every_operation(capsys) -> None:
    from tui.api.operations import all_operations

    assert main(["call", "--list", "--json"]) == Exit.OK
    listed = json.loads(capsys.readouterr().out)
    assert [entry["id"] for entry in listed] == [op.id.value for op in all_operations()]
    send_text = next(entry for entry in listed if entry["id"] == "send-text")
    assert set(send_text) == {"id", "number", "family", "method", "writes", "title"}
    assert send_text["writes"] is True and send_text["family"] == "instance" and send_text["method"] == "POST"
