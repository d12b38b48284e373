"""After adding profiles with the CLI, running flows through the real app (against a `gateway-tui sandbox`
process that expects the profile's own tokens, and in sandbox mode) and exporting events, no secret is anywhere
it could leak: files under the config and data dirs (the 0600 file excepted, as it was opted in), the CLI's
output, log records, snapshots, the request log (texts and curl), the screen, or a process's argument list."""

from __future__ import annotations

import contextlib
import logging
import os
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from tests.harness import running_sandbox_app, wait_ready, wait_until
from tui.api.models import SendText
from tui.ui.app import build_app
from tui.local.paths import config_dir, data_dir
from tui.core.runtime import DETERMINISTIC_HMAC_KEY, DETERMINISTIC_TOKENS
from tui.local.secrets import InsecureFileSecrets, SecretName

PROFILE_SECRETS = {
    "GATEWAY_TUI_CLIENT_TOKEN": "leakcheck-client-7f3a91",
    "GATEWAY_TUI_INSTANCE_TOKEN": "leakcheck-instance-52be07",
    "GATEWAY_TUI_SESSION_TOKEN": "leakcheck-session-c4d218",
    "GATEWAY_TUI_HMAC_KEY": "leakcheck-hmac-9e61f0-0123456789abcdef",
}
NEW_HMAC_KEY = "leakcheck-new-hmac-key-aa55aa55aa55aa55"
SECRETS = [*PROFILE_SECRETS.values(), *DETERMINISTIC_TOKENS.values(), DETERMINISTIC_HMAC_KEY, NEW_HMAC_KEY]
REPO = Path(__file__).resolve().parents[2]
GATEWAY_TUI = Path(sys.executable).with_name("gateway-tui")
INSTANCE_ID = "3C01"
START_TIMEOUT = 30.0


def leaks_in(text: str) -> list[str]:
    return [secret for secret in SECRETS if secret in text]


def files_under(*roots: Path) -> list[Path]:
    return [path for root in roots if root.exists() for path in root.rglob("*") if path.is_file()]


def argv_of(pid: int) -> str:
    return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace")


@contextlib.contextmanager
def gateway_process() -> Iterator[tuple[str, str]]:
    """`gateway-tui sandbox` expecting the profile's tokens (given, like a user would, in its environment).
    Yields its URL and its argument list, read from /proc while it runs."""
    process = subprocess.Popen(
        [str(GATEWAY_TUI), "sandbox", "--port", "0", "--instance-id", INSTANCE_ID],
        env=dict(os.environ, **PROFILE_SECRETS),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        banner = ""
        deadline = time.monotonic() + START_TIMEOUT
        while "listening on" not in banner and time.monotonic() < deadline:
            line = process.stdout.readline()
            if not line:
                break
            banner += line
        assert "listening on" in banner, banner
        assert not leaks_in(banner), "the banner printed a secret taken from the environment"
        url = banner.split("listening on ", 1)[1].split()[0]
        yield url, argv_of(process.pid)
    finally:
        process.terminate()
        process.wait(timeout=60)


def profile_add(name: str, url: str, *flags: str, keyring_backend: str | None = None) -> str:
    """`gateway-tui profile add` as a script would run it: no terminal, secrets in the environment."""
    env = dict(os.environ, **PROFILE_SECRETS)
    if keyring_backend:
        env.update(PYTHON_KEYRING_BACKEND=keyring_backend, PYTHONPATH=str(REPO))
    result = subprocess.run(
        [str(GATEWAY_TUI), *flags, "profile", "add", name, "--base-url", url, "--instance-id", INSTANCE_ID,
         "--session-url", url, "--listener-port", "0"],
        env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=START_TIMEOUT,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout + result.stderr


async def test_no_secret_leaks_anywhere(caplog):
    caplog.set_level(logging.DEBUG)
    outputs: list[str] = []
    exchanges: list[str] = []
    screens: list[str] = []

    with gateway_process() as (gateway_url, gateway_argv):
        outputs.append(gateway_argv)
        outputs.append(profile_add("kept", gateway_url, keyring_backend="tests.memory_keyring.MemoryKeyring"))
        outputs.append(profile_add("leaky", gateway_url, "--insecure-storage"))
        secrets_file = InsecureFileSecrets().path
        assert InsecureFileSecrets().get("leaky", SecretName.SESSION_TOKEN) == PROFILE_SECRETS["GATEWAY_TUI_SESSION_TOKEN"]
        assert stat.S_IMODE(secrets_file.stat().st_mode) == 0o600

        # The profile's real secrets in real requests: sends, webhooks pointed at the listener, a new HMAC key.
        app = build_app(profile="leaky", insecure_storage=True)
        async with app.run_test(size=(120, 40)) as pilot:
            await wait_ready(pilot)
            runtime = app.runtime
            await runtime.webhooks.configure_webhooks(runtime.listener.url)
            await runtime.instance.send_text(SendText(phone="5511999999999", message="leak check"))
            await runtime.webhooks.set_hmac_key(NEW_HMAC_KEY)
            await runtime.instance.send_text(SendText(phone="5511999999999", message="signed with the new key"))
            await wait_until(pilot, lambda: runtime.store.count() >= 2, what="webhooks from the gateway process")
            assert runtime.store.export_jsonl(data_dir() / "profile-export.jsonl") > 0
            exchanges += [f"{x.summary()}\n{x.as_curl()}\n{x!r}" for x in runtime.request_log]
            screens.append(app.export_screenshot())
        assert InsecureFileSecrets().get("leaky", SecretName.HMAC_KEY) == NEW_HMAC_KEY  # it really was stored

    async with running_sandbox_app() as pilot:
        runtime = pilot.app.runtime
        await runtime.instance.send_text(SendText(phone="5511999999999", message="leak check"))
        await runtime.webhooks.set_hmac_key(NEW_HMAC_KEY)
        await runtime.instance.send_text(SendText(phone="5511999999999", message="signed with the new key"))
        await runtime.sandbox.wait_for_deliveries()
        assert runtime.store.export_jsonl(data_dir() / "sandbox-export.jsonl") > 0
        exchanges += [f"{x.summary()}\n{x.as_curl()}\n{x!r}" for x in runtime.request_log]
        screens.append(pilot.app.export_screenshot())

    assert len(exchanges) > 6, "the flows made too few requests to mean anything"
    assert not leaks_in("\n".join(outputs))
    assert not leaks_in("\n".join(exchanges))
    assert not leaks_in("\n".join(screens))
    scanned = [path for path in files_under(config_dir(), data_dir()) if path != secrets_file]
    assert any(path.suffix == ".jsonl" for path in scanned) and any(path.name == "profiles.toml" for path in scanned)
    for path in scanned:
        assert not leaks_in(path.read_bytes().decode("utf-8", "replace")), path
    assert not leaks_in("\n".join(record.getMessage() for record in caplog.records))
    assert not leaks_in(caplog.text)


def test_no_secret_in_any_snapshot():
    snapshots = [path for path in (REPO / "tests").rglob("__snapshots__/**/*") if path.is_file()]
    snapshots += list((REPO / "assets").glob("*.svg"))  # the README's screenshots
    assert snapshots, "no snapshots found: the scan would prove nothing"
    for path in snapshots:
        assert not leaks_in(path.read_text("utf-8", "replace")), path
