"""After adding a profile, running the sandbox flows and exporting events, no secret is anywhere it could leak:
files under the config and data dirs, log records, snapshots, the request log (texts and curl), or the
argument list of a running gateway-tui process."""

from __future__ import annotations

import io
import logging
import os
import re
import subprocess
import sys
import time
from pathlib import Path


from tests.harness import running_sandbox_app
from tui.api.models import SendText
from tui.cli import main
from tui.paths import config_dir, data_dir
from tui.runtime import DETERMINISTIC_HMAC_KEY, DETERMINISTIC_TOKENS

PROFILE_SECRETS = {
    "GATEWAY_TUI_CLIENT_TOKEN": "leakcheck-client-7f3a91",
    "GATEWAY_TUI_INSTANCE_TOKEN": "leakcheck-instance-52be07",
    "GATEWAY_TUI_SESSION_TOKEN": "leakcheck-session-c4d218",
    "GATEWAY_TUI_HMAC_KEY": "leakcheck-hmac-9e61f0-0123456789abcdef",
}
NEW_HMAC_KEY = "leakcheck-new-hmac-key-aa55aa55aa55aa55"
SECRETS = [*PROFILE_SECRETS.values(), *DETERMINISTIC_TOKENS.values(), DETERMINISTIC_HMAC_KEY, NEW_HMAC_KEY]
REPO = Path(__file__).resolve().parents[2]


def leaks_in(text: str) -> list[str]:
    return [secret for secret in SECRETS if secret in text]


def files_under(*roots: Path) -> list[Path]:
    return [path for root in roots if root.exists() for path in root.rglob("*") if path.is_file()]


async def test_no_secret_leaks_anywhere(monkeypatch, caplog):
    caplog.set_level(logging.DEBUG)
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    for name, value in PROFILE_SECRETS.items():
        monkeypatch.setenv(name, value)
    assert main(["profile", "add", "leaky", "--base-url", "https://api.example.com", "--instance-id", "3C01",
                 "--session-url", "https://wuz.example.com"]) == 0
    for name in PROFILE_SECRETS:
        monkeypatch.delenv(name)

    async with running_sandbox_app() as pilot:
        runtime = pilot.app.runtime
        await runtime.instance.send_text(SendText(phone="5511999999999", message="leak check"))
        await runtime.set_hmac_key(NEW_HMAC_KEY)
        await runtime.instance.send_text(SendText(phone="5511999999999", message="signed with the new key"))
        await runtime.sandbox.wait_for_deliveries()
        export = data_dir() / "export.jsonl"
        assert runtime.store.export_jsonl(export) > 0
        request_log = [(exchange.summary(), exchange.as_curl(), repr(exchange)) for exchange in runtime.request_log]
        screen_text = pilot.app.export_screenshot()

    assert request_log, "the flows made no requests"
    assert not leaks_in("\n".join(map(str, request_log)))
    assert not leaks_in(screen_text)
    for path in files_under(config_dir(), data_dir()):
        assert not leaks_in(path.read_bytes().decode("utf-8", "replace")), path
    assert not leaks_in("\n".join(record.getMessage() for record in caplog.records))
    assert not leaks_in(caplog.text)


def test_no_secret_in_any_snapshot():
    snapshots = [path for path in (REPO / "tests").rglob("__snapshots__/**/*") if path.is_file()]
    snapshots += list((REPO / "assets").glob("*.svg"))  # the README's screenshots
    for path in snapshots:
        assert not leaks_in(path.read_text("utf-8", "replace")), path


def test_secrets_never_reach_a_process_argument_list(tmp_path):
    env = dict(os.environ, **PROFILE_SECRETS)
    process = subprocess.Popen(
        [sys.executable, "-m", "tui", "sandbox", "--port", "0", "--instance-id", "leaky"],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        banner = ""
        deadline = time.monotonic() + 30
        while "listening" not in banner and time.monotonic() < deadline:
            line = process.stdout.readline()
            if not line:
                break
            banner += line
        assert "listening" in banner, banner
        assert not leaks_in(banner), "the banner printed a secret taken from the environment"
        cmdline = Path(f"/proc/{process.pid}/cmdline").read_bytes().decode("utf-8", "replace")
        assert re.search("sandbox", cmdline)
        assert not leaks_in(cmdline)
    finally:
        process.terminate()
        process.wait(timeout=10)


