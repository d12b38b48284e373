"""`gateway-tui listen --print-unit` (issue 32): a systemd user unit that runs `listen --all` as a long-running
service, printed, nothing started; what it runs is the installed program with the port and host asked for."""

from __future__ import annotations

import configparser
import shlex
import subprocess
import sys


def print_unit(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tui", "listen", "--print-unit", *args], capture_output=True,
                          text=True, timeout=60, stdin=subprocess.DEVNULL)


def test_the_unit_runs_listen_all_and_starts_nothing():
    done = print_unit("--port", "18787")
    assert done.returncode == 0, done.stderr
    assert "listening on" not in done.stderr
    unit = configparser.ConfigParser(interpolation=None)
    unit.read_string(done.stdout)
    command = shlex.split(unit["Service"]["ExecStart"])
    assert command[0] == sys.executable and command[1:3] == ["-m", "tui"]
    assert command[3:] == ["listen", "--port", "18787", "--all"]  # the flags given, serving every profile
    assert unit["Service"]["Restart"] == "on-failure"
    assert unit["Service"]["ExecReload"] == "/bin/kill -HUP $MAINPID"  # SIGHUP: the profiles as they are now
    assert unit["Service"]["KillSignal"] == "SIGTERM"
    assert unit["Install"]["WantedBy"] == "default.target"


def test_the_unit_keeps_the_insecure_storage_flag():
    done = print_unit("--insecure-storage")
    assert done.returncode == 0, done.stderr
    unit = configparser.ConfigParser(interpolation=None)
    unit.read_string(done.stdout)
    assert "--insecure-storage" in shlex.split(unit["Service"]["ExecStart"])
