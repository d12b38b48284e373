"""First run with no profile: the set-up screen validates inline, saves the profile and its secrets (keyring),
and the app then starts on it — here against a sandbox gateway standing in for a real account."""

from __future__ import annotations

import keyring
from keyring.backends import fail
from textual.widgets import Input

from tests.harness import SIZE, setup_screen_shown, wait_until
from tests.sandbox.conftest import CLIENT_TOKEN, INSTANCE_TOKEN, SESSION_TOKEN
from tui.local import config
from tui.ui.app import build_app
from tui.gateways.sandbox import SandboxGateway
from tui.ui.widgets.forms import FieldRow


def fill(screen, values: dict[str, str]) -> None:
    for field, value in values.items():
        screen.query_one(f"#setup-{field}", Input).value = value


def errors(screen) -> dict[str, str]:
    return {row.fields[0]: row.error for row in screen.query(FieldRow) if row.error}


async def test_first_run_sets_up_a_profile_and_starts_on_it(memory_keyring):
    gateway = SandboxGateway(instance_id="first", instance_token=INSTANCE_TOKEN, client_token=CLIENT_TOKEN,
                             session_token=SESSION_TOKEN)
    await gateway.start()
    try:
        app = build_app()
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: setup_screen_shown(app), what="the set-up screen")
            screen = app.screen
            fill(screen, {"name": "first", "base_url": "not a url", "instance_id": "first",
                          "session_url": gateway.url, "listener_port": "0", "client-token": CLIENT_TOKEN,
                          "hmac-key": "short"})
            await pilot.press("ctrl+s")
            await pilot.pause()
            problems = errors(screen)
            assert "base_url" in problems and "instance-token" in problems and "session-token" in problems
            assert "32" in problems["hmac-key"]
            assert config.load_profiles() == [] and memory_keyring.entries == {}

            fill(screen, {"base_url": gateway.url, "instance-token": INSTANCE_TOKEN, "session-token": SESSION_TOKEN,
                          "hmac-key": ""})
            await pilot.press("ctrl+s")
            await wait_until(pilot, lambda: app.runtime_ready or bool(app.runtime_error), timeout=20,
                             what="the runtime on the new profile")
            assert not app.runtime_error, app.runtime_error
            assert [p.name for p in config.load_profiles()] == ["first"]
            assert memory_keyring.entries[("gateway-tui", "first:client-token")] == CLIENT_TOKEN
            assert (await app.runtime.instance.status()).connected
            assert CLIENT_TOKEN not in config.profiles_path().read_text()
    finally:
        await gateway.stop()


async def test_no_keyring_is_explained_and_nothing_is_saved():
    keyring.set_keyring(fail.Keyring())
    app = build_app()
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: setup_screen_shown(app), what="the set-up screen")
        fill(app.screen, {"name": "w", "base_url": "https://api.example.com", "instance_id": "1",
                          "session_url": "https://wuz.example.com", "client-token": "c" * 20,
                          "instance-token": "i" * 20, "session-token": "s" * 20})
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: "No OS keyring" in str(app.screen.query_one("#setup-status").render()),
                         what="the keyring message")
        assert config.load_profiles() == []


async def test_cancel_leaves_a_clear_message():
    app = build_app()
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: setup_screen_shown(app), what="the set-up screen")
        await pilot.press("escape")
        await wait_until(pilot, lambda: bool(app.runtime_error), what="the cancel message")
        assert "cancelled" in app.runtime_error
