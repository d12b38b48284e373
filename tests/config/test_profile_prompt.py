"""`gateway-tui profile add` on a real terminal (a pty): each secret is asked for with echo off, so what is typed
never appears on the screen, and a too-short HMAC key is asked for again."""

from __future__ import annotations

import fcntl
import os
import select
import subprocess
import sys
import termios
import time
from pathlib import Path

from tui.local import config
from tui.local.secrets import InsecureFileSecrets, SecretName

GATEWAY_TUI = Path(sys.executable).with_name("gateway-tui")
TYPED = {
    "Client-Token": "typed-client-5e1f",
    "instance token": "typed-instance-77aa",
    "session token": "typed-session-0c3d",
}
HMAC_TOO_SHORT = "typed-short"
HMAC_KEY = "typed-hmac-" + "h" * 30
# Generous: a cold start of the program on a machine busy with a parallel test run can take many seconds. Every
# wait below ends as soon as its condition holds.
DEADLINE_SECONDS = 120


def _controlling_terminal() -> None:
    # The pty becomes the child's terminal, so getpass talks to it (not to the terminal running pytest).
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)
    # (SIGINT starts at its default even when the test run ignores it: tests/conftest.py.)


class Terminal:
    def __init__(self, argv: list[str]) -> None:
        self.master, slave = os.openpty()
        self.process = subprocess.Popen(
            argv, stdin=slave, stdout=slave, stderr=slave, start_new_session=True, preexec_fn=_controlling_terminal
        )
        os.close(slave)
        self.screen = ""
        self.seen = 0  # what earlier waits consumed: each wait looks only at what came after

    def wait_for(self, text: str) -> None:
        """Until `text` appears after everything earlier waits matched.

        Type only after the prompt itself has appeared: getpass turns echo off with TCSAFLUSH, which throws away
        whatever was typed before it, so a line typed on an earlier message (e.g. "try again") can be lost and
        the program then waits forever for it."""
        deadline = time.monotonic() + DEADLINE_SECONDS
        while text not in self.screen[self.seen:]:
            remaining = deadline - time.monotonic()
            assert remaining > 0, f"timed out waiting for {text!r}; screen so far:\n{self.screen}"
            ready, _, _ = select.select([self.master], [], [], remaining)
            if ready:
                try:
                    chunk = os.read(self.master, 4096)
                except OSError:  # the child closed the terminal
                    chunk = b""
                assert chunk, f"the program ended before showing {text!r}; screen:\n{self.screen}"
                self.screen += chunk.decode("utf-8", "replace")
        self.seen = self.screen.index(text, self.seen) + len(text)

    def type(self, line: str) -> None:
        os.write(self.master, (line + "\n").encode())

    def finish(self) -> int:
        try:
            code = self.process.wait(timeout=DEADLINE_SECONDS)
            while select.select([self.master], [], [], 0.2)[0]:
                try:
                    chunk = os.read(self.master, 4096)
                except OSError:
                    break
                if not chunk:
                    break
                self.screen += chunk.decode("utf-8", "replace")
            return code
        finally:
            if self.process.poll() is None:
                self.process.kill()
                self.process.wait(timeout=DEADLINE_SECONDS)
            os.close(self.master)


def test_hidden_prompts_on_a_terminal():
    terminal = Terminal([str(GATEWAY_TUI), "--insecure-storage", "profile", "add", "work", "--base-url",
                         "https://api.example.com", "--instance-id", "3C01", "--session-url", "https://wuz.example.com"])
    for label, value in TYPED.items():
        terminal.wait_for(f"{label} (required): ")
        terminal.type(value)
    terminal.wait_for("HMAC key (Enter to skip): ")
    terminal.type(HMAC_TOO_SHORT)
    terminal.wait_for("try again")
    terminal.wait_for("HMAC key (Enter to skip): ")  # asked again: only now is the terminal listening
    terminal.type(HMAC_KEY)
    assert terminal.finish() == 0, terminal.screen
    assert "4 secret(s) stored" in terminal.screen
    for value in [*TYPED.values(), HMAC_TOO_SHORT, HMAC_KEY]:
        assert value not in terminal.screen  # echo was off
    store = InsecureFileSecrets()
    assert store.get("work", SecretName.CLIENT_TOKEN) == TYPED["Client-Token"]
    assert store.get("work", SecretName.SESSION_TOKEN) == TYPED["session token"]
    assert store.get("work", SecretName.HMAC_KEY) == HMAC_KEY
    assert [profile.name for profile in config.load_profiles()] == ["work"]


def test_ctrl_c_at_a_prompt_saves_nothing():
    terminal = Terminal([str(GATEWAY_TUI), "--insecure-storage", "profile", "add", "work", "--base-url",
                         "https://api.example.com", "--instance-id", "3C01", "--session-url", "https://wuz.example.com"])
    terminal.wait_for("Client-Token (required): ")
    terminal.type(TYPED["Client-Token"])
    terminal.wait_for("instance token (required): ")
    os.write(terminal.master, b"\x03")  # Ctrl+C, through the terminal as a person would
    assert terminal.finish() == 130, terminal.screen
    assert "cancelled; nothing was saved" in terminal.screen
    assert not config.profiles_path().exists()
    assert not InsecureFileSecrets().path.exists()


def test_no_gateway_flags_on_a_terminal_asks_which_gateway_then_only_its_secrets():
    terminal = Terminal([str(GATEWAY_TUI), "--insecure-storage", "profile", "add", "wuz"])
    terminal.wait_for("Gateway [1/2/3]: ")
    terminal.type("4")
    terminal.wait_for("answer 1, 2 or 3; try again")
    terminal.wait_for("Gateway [1/2/3]: ")
    terminal.type("2")
    terminal.wait_for("WuzAPI URL (session family): ")
    terminal.type("wuzapi.example.com")  # no scheme: asked again
    terminal.wait_for("try again")
    terminal.wait_for("WuzAPI URL (session family): ")
    terminal.type("https://wuzapi.example.com")
    terminal.wait_for("session token (required): ")
    terminal.type(TYPED["session token"])
    terminal.wait_for("HMAC key (Enter to skip): ")
    terminal.type("")
    assert terminal.finish() == 0, terminal.screen
    assert "Client-Token" not in terminal.screen and "instance token" not in terminal.screen  # never asked
    assert "1 secret(s) stored" in terminal.screen and TYPED["session token"] not in terminal.screen
    [profile] = config.load_profiles()
    assert (profile.instance, profile.session_url) == (None, "https://wuzapi.example.com")
    assert InsecureFileSecrets().get("wuz", SecretName.SESSION_TOKEN) == TYPED["session token"]
    assert InsecureFileSecrets().get("wuz", SecretName.CLIENT_TOKEN) is None


def test_choosing_z_api_on_a_terminal_asks_its_address_and_tokens_only():
    terminal = Terminal([str(GATEWAY_TUI), "--insecure-storage", "profile", "add", "z"])
    terminal.wait_for("Gateway [1/2/3]: ")
    terminal.type("1")
    terminal.wait_for("Z-API base URL (instance family): ")
    terminal.type("https://api.z-api.io")
    terminal.wait_for("Z-API instance id: ")
    terminal.type("3C01")
    for label in ("Client-Token", "instance token"):
        terminal.wait_for(f"{label} (required): ")
        terminal.type(TYPED[label])
    assert terminal.finish() == 0, terminal.screen
    assert "session token" not in terminal.screen and "HMAC key" not in terminal.screen
    [profile] = config.load_profiles()
    assert (profile.base_url, profile.instance_id, profile.session) == ("https://api.z-api.io", "3C01", None)
