"""No keyring at all (keyring.backends.fail.Keyring) and the secrets in GATEWAY_TUI_* variables: `profile add`,
the app, `call` and `events trigger` work, as the no-keyring message and the README promise."""

from __future__ import annotations

import asyncio
import json

import keyring
import pytest
from keyring.backends import fail

from tests.harness import run_gateway_tui, sandbox_for_env_tokens, wait_until
from tui.local import config
from tui.ui.app import build_app
from tui.cli.main import main
from tui.local.secrets import InsecureFileSecrets, KeyringUnavailable, SecretName

TOKENS = {
    "GATEWAY_TUI_INSTANCE_TOKEN": "env-instance-token-SECRET",
    "GATEWAY_TUI_CLIENT_TOKEN": "env-client-token-SECRET",
    "GATEWAY_TUI_SESSION_TOKEN": "env-session-token-SECRET",
}
NO_KEYRING = "keyring.backends.fail.Keyring"


@pytest.fixture
def no_keyring(monkeypatch):
    keyring.set_keyring(fail.Keyring())
    for name, value in TOKENS.items():
        monkeypatch.setenv(name, value)


@pytest.fixture
async def sandbox():
    async with sandbox_for_env_tokens("envinst", TOKENS) as gateway:
        yield gateway


def add_profile(base: str) -> list[str]:
    return ["profile", "add", "box", "--base-url", base, "--instance-id", "envinst", "--session-url", base]


async def test_profile_add_saves_the_profile_and_no_secret(no_keyring, sandbox, capsys):
    assert await asyncio.to_thread(main, add_profile(sandbox.url.rstrip("/"))) == 0
    out = capsys.readouterr().out
    assert "no secret was stored (no OS keyring)" in out and "GATEWAY_TUI_CLIENT_TOKEN" in out
    assert [profile.name for profile in config.load_profiles()] == ["box"]
    assert not InsecureFileSecrets().path.exists()
    for value in TOKENS.values():
        assert value not in config.profiles_path().read_text() and value not in out


async def test_the_app_runs_on_the_environments_secrets(no_keyring, sandbox):
    base = sandbox.url.rstrip("/")
    config.save_profile(
        config.Profile(name="box", base_url=base, instance_id="envinst", session_url=base, listener_port=0)
    )
    app = build_app(profile="box", deterministic=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.runtime_ready or bool(app.runtime_error), timeout=20, what="start")
        assert not app.runtime_error, app.runtime_error
        assert app.runtime.secrets.kind == "environment"
        status = await app.runtime.instance.status()  # the gateway accepted the environment's tokens
        assert status is not None
        with pytest.raises(KeyringUnavailable, match="No OS keyring"):  # saving one says why, nothing pretends
            await asyncio.to_thread(app.runtime.secrets.set, "box", SecretName.SESSION_TOKEN, "x")


async def test_call_and_trigger_use_the_environment_with_no_keyring(sandbox):
    base = sandbox.url.rstrip("/")
    config.save_profile(config.Profile(name="box", base_url=base, instance_id="envinst", session_url=base))
    code, out, err = await run_gateway_tui(
        "call", "send-text", "--profile", "box", "--data", '{"phone": "5511999999999", "message": "from env"}',
        env={**TOKENS, "PYTHON_KEYRING_BACKEND": NO_KEYRING},
    )
    assert code == 0, err
    assert json.loads(out)["messageId"]
    assert [sent.text for sent in sandbox.state.sent] == ["from env"]
