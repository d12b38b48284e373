"""Onboarding: sandbox fields offer ids that exist there; set-up problems show at the top with the way out (no
keyring → a private file, in place); the palette reopens set-up; Settings warns when the webhooks no longer point
at the listener or the gateway's key disagrees with the profile's, each with the button that fixes it."""

from __future__ import annotations

import keyring
from keyring.backends import fail
from textual.widgets import Input, Static

from tests.app.test_snapshots import send_text
from tests.harness import (
    READY_TIMEOUT,
    SIZE,
    fill_first_profile,
    open_chat_form,
    running_sandbox_app,
    screen_text,
    settle,
    setup_screen_shown,
    show_section,
    wait_until,
)
from tests.sandbox.conftest import CLIENT_TOKEN, INSTANCE_TOKEN, SESSION_TOKEN
from tui.local import config
from tui.ui.app import build_app
from tui.gateways.sandbox import SandboxGateway
from tui.local.secrets import InsecureFileSecrets, SecretName
from tui.ui.textual_compat import notifications_of


def shown_text(screen, selector: str) -> str:
    return str(screen.query_one(selector, Static).render())


async def test_sandbox_fields_show_and_complete_ids_that_exist():
    async with running_sandbox_app() as pilot:
        app = pilot.app
        state = app.runtime.sandbox.state
        await show_section(pilot, "catalog")
        field = app.screen.query_one("#product-id", Input)
        first = next(iter(state.products.values()))
        assert field.placeholder.startswith(f"{first.product_id} ({first.name})")
        field.focus()
        await pilot.pause()
        for character in first.product_id[:5]:
            await pilot.press(character)
        await wait_until(pilot, lambda: bool(field._suggestion), what="a completion")
        await pilot.press("right")
        assert field.value == first.product_id
        app.screen.query_one("#lookup-product").press()
        await settle(pilot)
        assert first.name in screen_text(app) and "Not found" not in screen_text(app)

        await show_section(pilot, "groups")
        lookup = app.screen.query_one("#lookup-id", Input)
        digits = lookup.placeholder.split("-group")[0]
        assert digits in state.groups
        await show_section(pilot, "communities")
        assert app.screen.query_one("#community-id", Input).placeholder.split(" ")[0] in state.communities
        await show_section(pilot, "chats")
        await open_chat_form(pilot)  # Chats opens on the conversations
        phone = app.screen.query_one("#recipient", Input).placeholder.split(" ")[0]
        assert phone in state.contacts


async def test_no_keyring_shows_at_the_top_and_a_private_file_saves_in_place():
    keyring.set_keyring(fail.Keyring())
    gateway = SandboxGateway(instance_id="first", instance_token=INSTANCE_TOKEN, client_token=CLIENT_TOKEN,
                             session_token=SESSION_TOKEN)
    await gateway.start()
    try:
        app = build_app()
        async with app.run_test(size=(80, 24)) as pilot:
            await wait_until(pilot, lambda: setup_screen_shown(app), what="the set-up screen")
            fill_first_profile(app.screen, gateway.url)
            await pilot.press("ctrl+s")
            await wait_until(pilot, lambda: "No OS keyring" in shown_text(app.screen, "#setup-status"),
                             what="the keyring message")
            status = app.screen.query_one("#setup-status")
            assert 0 <= status.region.y < 24, "the message is on screen, at the top"
            assert status.region.y < app.screen.query_one("#setup-form").region.y
            way_out = app.screen.query_one("#setup-insecure")
            assert way_out.region.height and app.screen.focused is way_out
            assert config.load_profiles() == []

            await pilot.press("enter")
            await wait_until(pilot, lambda: app.runtime_ready or bool(app.runtime_error), timeout=READY_TIMEOUT,
                             what="the runtime on the new profile")
            assert not app.runtime_error, app.runtime_error
            assert app.insecure_storage and [p.name for p in config.load_profiles()] == ["first"]
            assert InsecureFileSecrets().get("first", SecretName.CLIENT_TOKEN) == CLIENT_TOKEN
            assert app.screen.query("#header-insecure")
    finally:
        await gateway.stop()


async def test_after_cancelling_the_palette_reopens_set_up():
    app = build_app()
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: setup_screen_shown(app), what="the set-up screen")
        await pilot.press("escape")
        await wait_until(pilot, lambda: bool(app.runtime_error), what="the cancel message")
        assert "Set up a profile" in app.runtime_error
        await pilot.press("ctrl+p")
        await pilot.pause()
        for character in "Set up a profile":
            await pilot.press("space" if character == " " else character)
        await pilot.pause()
        await pilot.press("enter")
        await wait_until(pilot, lambda: setup_screen_shown(app), what="set-up again")


async def test_settings_warns_when_the_listener_moved_and_points_the_webhooks_in_one_press():
    async with running_sandbox_app() as pilot:
        app = pilot.app
        await show_section(pilot, "settings")
        assert not app.screen.query_one("#webhook-warning").has_class("-shown")
        app.screen.query_one("#listener-port", Input).value = "0"
        app.screen.query_one("#listener-apply").press()
        await settle(pilot)
        warning = shown_text(app.screen, "#webhook-warning-text")
        # deterministic mode names the old listener's random port
        assert "The webhooks still point at http://old-listener.test, but the listener is now at http://listener.test" in warning
        assert "sends produce no events here" in warning
        assert any("sends produce no events" in n.message for n in notifications_of(app))

        app.screen.query_one("#health-point").press()
        await settle(pilot)
        assert not app.screen.query_one("#webhook-warning").has_class("-shown")
        await send_text(pilot)
        assert app.runtime.store.newest(1), "events reach the moved listener again"


async def test_settings_warns_when_the_gateway_lacks_the_profiles_key_and_sets_it_in_one_press():
    async with running_sandbox_app() as pilot:
        app = pilot.app
        state = app.runtime.sandbox.state
        key = state.hmac_key
        state.hmac_key = None  # the gateway forgot the key (restarted, or set up elsewhere)
        await show_section(pilot, "settings")
        app.screen.query_one("#hmac-status").press()
        await settle(pilot)
        assert "the gateway has none" in shown_text(app.screen, "#hmac-warning-text")
        assert "does not sign with it" in shown_text(app.screen, "#hmac-state")
        assert str(app.screen.query_one("#health-hmac").label) == "Set this key on the gateway"

        app.screen.query_one("#health-hmac").press()
        await settle(pilot)
        assert state.hmac_key == key
        assert not app.screen.query_one("#hmac-warning").has_class("-shown")


async def test_while_running_the_palette_adds_a_profile_and_says_how_to_start_it():
    async with running_sandbox_app() as pilot:
        app = pilot.app
        app.action_setup()
        await wait_until(pilot, lambda: setup_screen_shown(app), what="set-up")
        assert "Add another gateway account" in screen_text(app)
        for field, value in {"name": "work", "base_url": "https://api.example.com", "instance_id": "1",
                             "session_url": "https://wuz.example.com", "client-token": "c" * 20,
                             "instance-token": "i" * 20, "session-token": "s" * 20}.items():
            app.screen.query_one(f"#setup-{field}", Input).value = value
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: type(app.screen).__name__ == "MainScreen", what="back to the app")
        assert [p.name for p in config.load_profiles()] == ["work"]
        assert any("Start it with: gateway-tui --profile work" in n.message for n in notifications_of(app))
