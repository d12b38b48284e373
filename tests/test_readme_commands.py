"""Every command the README shows in a `sh` block runs, and exits as the README says: 0, or the `exit N` its
comment names. A command added to the README later is picked up by this test without touching it.

What a reader would change, the test changes the same way, on loopback only:
- `…` (a secret or an id the reader fills in) becomes SECRET, and the GATEWAY_TUI_* variables hold SECRET too
  (no terminal: `profile add` reads them from there, as the README says);
- a URL on a host other than 127.0.0.1 is a real gateway: it becomes a sandbox gateway on loopback speaking the
  real gateways' dialects (Z-API, WuzAPI), with the instance id the README's command names;
- `127.0.0.1:PORT` becomes the port a server the README started on PORT really took (servers run on port 0), and
  any other loopback port is "your app": a recording server that answers 200;
- no OS keyring (PYTHON_KEYRING_BACKEND fails), private config and data dirs (tests/conftest.py).

`gateway-tui sandbox` and `gateway-tui listen` run until stopped: each is started, must say where it listens, runs
while the rest of its block runs (or until the same command starts again), and must exit 0 on Ctrl+C (SIGINT).
Commands not run at all are in NOT_RUN, each with its reason."""

from __future__ import annotations

import asyncio
import os
import queue
import re
import shlex
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.webhooks.recording_app import RecordingApp
from tui.api.dialects import InstanceDialect, SessionDialect
from tui.gateways.sandbox import SandboxGateway

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
SECRET = "readme-secret-at-least-32-characters"  # an HMAC key needs 32
TOKENS = ("GATEWAY_TUI_INSTANCE_TOKEN", "GATEWAY_TUI_CLIENT_TOKEN", "GATEWAY_TUI_SESSION_TOKEN", "GATEWAY_TUI_HMAC_KEY")

# A pattern matching the command as the README writes it -> why it is not run. Each must match a README command.
NOT_RUN: dict[str, str] = {
    r"^uv run gateway-tui --sandbox\b": "the app: a full-screen interactive program (tests/app drive it with Pilot "
                                        "and in tmux)",
    r"^uv run gateway-tui --profile \S+$": "the app on a profile: interactive, as above",
    r"^uv run gateway-tui connect\b": "waits for a phone to scan the code (tests/pairing/test_connect_cli.py pairs "
                                       "through the sandbox's /sandbox/scan)",
    r"^uv run gateway-tui doctor\b": "probes the account and waits for its events (tests/test_doctor.py runs it "
                                      "against the sandbox for every finding)",
    r"^uv run pytest\b": "the whole test suite, this test included",
    r"^uv run ruff check tui && uv run mypy$": "the lint and type checks, which .ci/run runs itself",
    r"^uv run python docs/make_keys\.py$": "writes the key tables into the repository; tests/app/test_keys.py "
                                           "checks they are current instead",
}
SERVERS = ("sandbox", "listen")  # `gateway-tui SERVER …` runs until stopped
LISTENING = re.compile(r"listening on http://127\.0\.0\.1:(\d+)")
COMMAND_TIMEOUT = 60.0
START_TIMEOUT = 30.0


@dataclass(frozen=True)
class Command:
    text: str  # as the README writes it, continuation lines joined
    comment: str
    block: int
    line: int  # in README.md

    @property
    def exit_code(self) -> int:
        said = re.search(r"\bexit (\d+)", self.comment)
        return int(said.group(1)) if said else 0

    @property
    def server(self) -> str | None:
        found = re.search(r"\bgateway-tui (\w+)", self.text)
        return found.group(1) if found and found.group(1) in SERVERS else None


def _split_comment(line: str) -> tuple[str, str]:
    """(command, comment): the comment starts at a `#` outside quotes, after a space."""
    quote = ""
    for index, char in enumerate(line):
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "#" and (index == 0 or line[index - 1].isspace()):
            return line[:index].rstrip(), line[index + 1:].strip()
    return line.rstrip(), ""


def readme_commands(text: str) -> list[Command]:
    commands: list[Command] = []
    for block, match in enumerate(re.finditer(r"^```(?:sh|bash|shell)\n(.*?)^```", text, re.S | re.M)):
        first_line = text.count("\n", 0, match.start(1)) + 1
        pending, start = "", 0
        for offset, raw in enumerate(match.group(1).splitlines()):
            if not pending:
                start = first_line + offset
            if raw.rstrip().endswith("\\"):
                pending += raw.rstrip()[:-1].rstrip() + " "
                continue
            command, comment = _split_comment(pending + raw.strip())
            pending = ""
            if command:
                commands.append(Command(" ".join(command.split()), comment, block, start))
    return commands


def not_run_reason(command: Command) -> str | None:
    return next((why for pattern, why in NOT_RUN.items() if re.search(pattern, command.text)), None)


# -- the test's own checks of the parsing -------------------------------------------------------------------------

def test_commands_are_read_from_sh_blocks_with_continuations_and_comments():
    text = ("intro\n```sh\nuv run gateway-tui call --list   # every operation\n"
            "A=… uv run gateway-tui listen \\\n    --port 8787 # '#' in a comment\n# a comment line\n```\n"
            "```toml\nx = 1\n```\n```sh\necho '# not a comment'  # exit 3: said so\n```\n")
    found = readme_commands(text)
    assert [(c.text, c.comment, c.block, c.line, c.exit_code, c.server) for c in found] == [
        ("uv run gateway-tui call --list", "every operation", 0, 3, 0, None),
        ("A=… uv run gateway-tui listen --port 8787", "'#' in a comment", 0, 4, 0, "listen"),
        ("echo '# not a comment'", "exit 3: said so", 1, 12, 3, None),
    ]


def test_every_not_run_entry_names_a_command_the_readme_shows():
    commands = readme_commands(README.read_text(encoding="utf-8"))
    for pattern in NOT_RUN:
        assert any(re.search(pattern, command.text) for command in commands), f"{pattern} matches no README command"


# -- running them -----------------------------------------------------------------------------------------------------

class Server:
    """A README command that runs until stopped, its output drained by a thread."""

    def __init__(self, command: Command, shell_text: str, env: dict[str, str], cwd: Path) -> None:
        self.command = command
        self.process = subprocess.Popen(
            ["bash", "-c", shell_text], env=env, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, text=True, start_new_session=True,
        )
        self.lines: queue.Queue[str] = queue.Queue()
        self.output: list[str] = []
        threading.Thread(target=self._drain, daemon=True).start()

    def _drain(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line)

    def port(self) -> int:
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline and self.process.poll() is None:
            try:
                line = self.lines.get(timeout=0.2)
            except queue.Empty:
                continue
            self.output.append(line)
            if found := LISTENING.search(line):
                return int(found.group(1))
        raise AssertionError(f"README line {self.command.line}: `{self.command.text}` never said where it listens:\n"
                             + "".join(self.output))

    def stop(self) -> tuple[int, str]:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGINT)  # Ctrl+C, as the README says
        try:
            code = self.process.wait(timeout=15)
        finally:
            if self.process.poll() is None:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=5)
        while not self.lines.empty():
            self.output.append(self.lines.get_nowait())
        return code, "".join(self.output)


class Reader:
    """The README's commands as a reader runs them, with this test's stand-ins."""

    def __init__(self, tmp: Path, gateway_url: str, app_port: int) -> None:
        self.tmp = tmp
        self.gateway_url = gateway_url.rstrip("/")  # the stand-in for every real gateway
        self.app_port = app_port  # "your app"
        self.ports: dict[str, int] = {}  # the port the README names -> the one its server took
        shims = tmp / "bin"
        shims.mkdir()
        shim = shims / "gateway-tui"
        shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m tui "$@"\n')
        shim.chmod(0o755)
        self.env = {
            **os.environ,
            **dict.fromkeys(TOKENS, SECRET),
            "PATH": f"{shims}{os.pathsep}{os.environ['PATH']}",
            "PYTHONPATH": str(REPO),
            "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring",
        }

    def shell_text(self, command: Command) -> str:
        text = command.text.replace("…", SECRET)
        text = re.sub(r"^uv run ", "", text)
        text = re.sub(r"(?<=[;&|] )uv run ", "", text)
        text = re.sub(r"(?<=\s)uv run (?=gateway-tui)", "", text)
        text = re.sub(r"127\.0\.0\.1:(\d+)",
                      lambda port: f"127.0.0.1:{self.ports.get(port.group(1), self.app_port)}", text)
        text = re.sub(r"https?://(?!127\.0\.0\.1[:/])[A-Za-z0-9.-]+(?::\d+)?", self.gateway_url, text)
        if command.server:
            text = re.sub(r"--port \d+", "--port 0", text) if "--port " in text else f"{text} --port 0"
        return text

    def export(self, command: Command) -> None:
        for assignment in shlex.split(self.shell_text(command))[1:]:
            name, _, value = assignment.partition("=")
            self.env[name] = value

    def run(self, command: Command) -> None:
        result = subprocess.run(
            ["bash", "-c", self.shell_text(command)], env=self.env, cwd=self.tmp, stdin=subprocess.DEVNULL,
            capture_output=True, text=True, timeout=COMMAND_TIMEOUT,
        )
        said = f"README line {command.line}: `{command.text}`\nstdout: {result.stdout}\nstderr: {result.stderr}"
        assert result.returncode == command.exit_code, said
        assert "Traceback" not in result.stderr, said

    def start(self, command: Command) -> Server:
        server = Server(command, self.shell_text(command), self.env, self.tmp)
        readme_port = re.search(r"--port (\d+)", command.text)
        port = server.port()
        if readme_port:
            self.ports[readme_port.group(1)] = port
        return server


def _check_stopped(server: Server) -> None:
    code, output = server.stop()
    said = f"README line {server.command.line}: `{server.command.text}` on Ctrl+C\n{output}"
    assert code == 0 and "Traceback" not in output, said


def _stand_in_instance_id(commands: list[Command]) -> str:
    """The instance id the README's commands for a real gateway name (as the reader fills it in)."""
    named = {found.group(1).replace("…", SECRET)
             for command in commands if re.search(r"https?://(?!127\.0\.0\.1)", command.text)
             for found in [re.search(r"--instance-id (\S+)", command.text)] if found}
    assert len(named) <= 1, f"the README's real-gateway commands name several instance ids: {named}"
    return named.pop() if named else "sandbox"


async def test_every_command_the_readme_shows_exits_as_it_says(tmp_path):
    commands = readme_commands(README.read_text(encoding="utf-8"))
    to_run = [command for command in commands if not_run_reason(command) is None]
    assert len(to_run) >= 10, [command.text for command in commands]  # the parsing found the README's commands
    gateway = SandboxGateway(
        instance_id=_stand_in_instance_id(commands), instance_token=SECRET, client_token=SECRET, session_token=SECRET,
        instance_dialect=InstanceDialect.ZAPI, session_dialect=SessionDialect.WUZAPI, delivery_delay=0.0,
    )
    await gateway.start()
    app = await RecordingApp().start()
    assert app.port is not None
    reader = Reader(tmp_path, gateway.url, app.port)
    running: list[Server] = []
    try:
        for command in to_run:
            if running and running[-1].command.block != command.block:
                while running:  # a server runs while the rest of its block runs
                    await asyncio.to_thread(_check_stopped, running.pop())
            if command.text.startswith("export "):
                reader.export(command)
            elif command.server:
                for server in [server for server in running if server.command.server == command.server]:
                    running.remove(server)
                    await asyncio.to_thread(_check_stopped, server)
                running.append(await asyncio.to_thread(reader.start, command))
            else:
                await asyncio.to_thread(reader.run, command)
        while running:
            await asyncio.to_thread(_check_stopped, running.pop())
    finally:
        for server in running:
            await asyncio.to_thread(server.stop)
        await app.stop()
        await gateway.stop()


def test_a_command_that_exits_otherwise_fails_the_test(tmp_path):
    """The runner is not blind: a README command that exits otherwise than said is reported with its line."""
    reader = Reader(tmp_path, "http://127.0.0.1:9", 9)
    with pytest.raises(AssertionError, match="README line 7"):
        reader.run(Command("uv run gateway-tui call --nonsense", "", 0, 7))
    reader.run(Command("uv run gateway-tui call --nonsense", "exit 2", 0, 7))
