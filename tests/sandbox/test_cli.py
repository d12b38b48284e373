"""`gateway-tui sandbox` as a user runs it: secrets from the environment, a send answered 202 with a messageId,
401 without the Client-Token header, random secrets printed when unset, Ctrl+C stops it cleanly."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time

import httpx
import pytest

ENV_SECRETS = {
    "GATEWAY_TUI_INSTANCE_TOKEN": "cli-instance-token",
    "GATEWAY_TUI_CLIENT_TOKEN": "cli-client-token",
    "GATEWAY_TUI_SESSION_TOKEN": "cli-session-token",
}


def start(env: dict[str, str], args: tuple[str, ...] = ("--instance-id", "ID"),
          last_line: str = "session webhook format") -> tuple[subprocess.Popen, str, str]:
    """The sandbox on port 0 with `args`; its banner read up to the line holding `last_line`."""
    process = subprocess.Popen(
        [sys.executable, "-m", "tui", "sandbox", "--port", "0", *args],
        env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )
    banner = ""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if not line:
            break
        banner += line
        if last_line in line:
            break
    match = re.search(r"listening on (http://127\.0\.0\.1:(\d+))", banner)
    assert match and match.group(2) != "0", banner
    return process, match.group(1), banner


def stop(process: subprocess.Popen) -> int:
    process.send_signal(signal.SIGINT)
    try:
        return process.wait(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()


def test_send_text_202_and_401_without_the_header():
    env = dict(os.environ, **ENV_SECRETS)
    process, url, banner = start(env)
    try:
        assert "cli-client-token" not in banner  # the values came from the environment: not echoed
        send = f"{url}/instances/ID/token/cli-instance-token/send-text"
        body = {"phone": "5511999999999", "message": "hi"}
        answer = httpx.post(send, json=body, headers={"Client-Token": "cli-client-token"}, timeout=10)
        assert answer.status_code == 202 and answer.json()["messageId"]
        assert httpx.post(send, json=body, timeout=10).status_code == 401
    finally:
        assert stop(process) == 0


def test_unset_secrets_are_random_and_printed():
    env = {key: value for key, value in os.environ.items() if key not in ENV_SECRETS}
    process, url, banner = start(env)
    try:
        token = re.search(r"Client-Token:\s+(\S+)", banner)
        instance = re.search(r"/instances/ID/token/([^/\s]+)/", banner)
        assert token and instance and not token.group(1).startswith("$"), banner
        answer = httpx.post(
            f"{url}/instances/ID/token/{instance.group(1)}/send-text",
            json={"phone": "5511999999999", "message": "hi"},
            headers={"Client-Token": token.group(1)},
            timeout=10,
        )
        assert answer.status_code == 202
    finally:
        assert stop(process) == 0


@pytest.mark.parametrize("port", ["70000", "http"])
def test_bad_port_is_refused_clearly(port):
    result = subprocess.run(
        [sys.executable, "-m", "tui", "sandbox", "--port", port], capture_output=True, text=True, timeout=30,
        stdin=subprocess.DEVNULL,
    )
    assert result.returncode == 2 and "port" in result.stderr


def test_port_in_use_is_a_clear_error():
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = subprocess.run(
            [sys.executable, "-m", "tui", "sandbox", "--port", str(port), "--instance-id", "ID"],
            env={**os.environ, **ENV_SECRETS}, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60,
        )
    assert result.returncode == 1
    assert f"gateway-tui sandbox: cannot listen on 127.0.0.1:{port}" in result.stderr
    assert "Traceback" not in result.stderr
