"""Set-up with one gateway (issue 22): the form takes Z-API's part, WuzAPI's, or both; a part left blank is not in
the profile and none of its secrets is asked for; a part half filled in names what it lacks; nothing filled in says
which parts there are. The app then starts on the one-family profile."""

from __future__ import annotations

from tests.harness import SIZE, setup_screen_shown, wait_until
from tests.sandbox.conftest import CLIENT_TOKEN, INSTANCE_TOKEN, SESSION_TOKEN
from tests.settings.test_setup import errors, fill
from tui.local import config
from tui.api.dialects import Family
from tui.ui.app import build_app
from tui.gateways.sandbox import SandboxGateway


def status_text(screen) -> str:
    return str(screen.query_one("#setup-status").render())


async def test_only_wuzapi_filled_in_saves_a_session_only_profile_and_starts(memory_keyring):
    gateway = SandboxGateway(instance_id="first", instance_token=INSTANCE_TOKEN, client_token=CLIENT_TOKEN,
                             session_token=SESSION_TOKEN)
    await gateway.start()
    try:
        app = build_app()
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: setup_screen_shown(app), what="the set-up screen")
            fill(app.screen, {"name": "wuz", "listener_port": "0", "session_url": gateway.url,
                              "session-token": SESSION_TOKEN})
            await pilot.press("ctrl+s")
            await wait_until(pilot, lambda: app.runtime_ready or bool(app.runtime_error), timeout=20,
                             what="the runtime on the new profile")
            assert not app.runtime_error, app.runtime_error
            [profile] = config.load_profiles()
            assert profile.families == (Family.SESSION,) and profile.session_url == gateway.url.rstrip("/")
            assert set(memory_keyring.entries) == {("gateway-tui", "wuz:session-token")}
            assert (await app.runtime.session.hmac_status()) is not None  # the session client works
    finally:
        await gateway.stop()


async def test_only_z_api_filled_in_saves_an_instance_only_profile_and_starts(memory_keyring):
    gateway = SandboxGateway(instance_id="first", instance_token=INSTANCE_TOKEN, client_token=CLIENT_TOKEN,
                             session_token=SESSION_TOKEN)
    await gateway.start()
    try:
        app = build_app()
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: setup_screen_shown(app), what="the set-up screen")
            fill(app.screen, {"name": "z", "listener_port": "0", "base_url": gateway.url, "instance_id": "first",
                              "client-token": CLIENT_TOKEN, "instance-token": INSTANCE_TOKEN})
            await pilot.press("ctrl+s")
            await wait_until(pilot, lambda: app.runtime_ready or bool(app.runtime_error), timeout=20,
                             what="the runtime on the new profile")
            assert not app.runtime_error, app.runtime_error
            [profile] = config.load_profiles()
            assert profile.families == (Family.INSTANCE,)
            assert set(memory_keyring.entries) == {("gateway-tui", "z:client-token"), ("gateway-tui", "z:instance-token")}
            assert (await app.runtime.instance.status()).connected
    finally:
        await gateway.stop()


async def test_half_a_gateway_names_what_it_lacks_and_nothing_filled_in_names_the_gateways(memory_keyring):
    app = build_app()
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: setup_screen_shown(app), what="the set-up screen")
        fill(app.screen, {"name": "w"})
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: "Z-API" in status_text(app.screen), what="the gateways named")
        assert "WuzAPI" in status_text(app.screen) and errors(app.screen) == {}

        fill(app.screen, {"session-token": SESSION_TOKEN})  # a WuzAPI secret alone: WuzAPI's URL is missing
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert errors(app.screen) == {"session_url": "required for the session family (WuzAPI)"}

        fill(app.screen, {"session-token": "", "instance_id": "3C01"})  # Z-API's id alone
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert errors(app.screen) == {"base_url": "required for the instance family (Z-API)",
                                      "client-token": "required", "instance-token": "required"}
        assert config.load_profiles() == [] and memory_keyring.entries == {}
