"""Settings against the embedded sandbox: the HMAC key drives the listener's verdicts at once, bad input is
refused inline with nothing sent, webhooks and description reach the gateway, secrets stay masked."""

from __future__ import annotations

from textual.widgets import Input, Switch

from tests.harness import running_sandbox_app, screen_text, settle, show_section, wait_until
from tui.api.models import SendText
from tui.local.secrets import SecretName
from tui.api.signing import Verdict
from tui.ui.widgets.forms import FieldRow

HELLO = SendText(phone="5511999999999", message="verdict probe")


async def newest_verdict(pilot) -> str:
    runtime = pilot.app.runtime
    await runtime.instance.send_text(HELLO)
    await settle(pilot)
    return str(runtime.store.newest(1)[0].verdict)


def press(pilot, selector: str):
    return pilot.click(selector)


async def test_hmac_key_delete_and_set_drive_the_verdicts(tmp_path):
    async with running_sandbox_app() as pilot:
        app = pilot.app
        await show_section(pilot, "settings")
        assert await newest_verdict(pilot) == str(Verdict.VALID)

        app.screen.query_one("#hmac-delete").press()
        await pilot.pause()
        await pilot.press("y")  # confirm
        await settle(pilot)
        assert not app.runtime.webhooks.hmac_key_set
        assert app.runtime.sandbox.state.hmac_key is None
        assert await newest_verdict(pilot) == str(Verdict.NO_KEY)

        key = "settings-test-key-0123456789abcdefXYZ"
        app.screen.query_one("#hmac-key", Input).value = key
        app.screen.query_one("#hmac-set").press()
        await settle(pilot)
        assert app.runtime.sandbox.state.hmac_key == key
        assert await newest_verdict(pilot) == str(Verdict.VALID)
        assert key not in app.export_screenshot()  # shown masked only
        assert app.runtime.secrets.get(app.runtime.profile_name, SecretName.HMAC_KEY) == key


async def test_generate_sets_a_long_random_key():
    async with running_sandbox_app() as pilot:
        app = pilot.app
        await show_section(pilot, "settings")
        before = app.runtime.sandbox.state.hmac_key
        app.screen.query_one("#hmac-generate").press()
        await wait_until(pilot, lambda: type(app.screen).__name__ == "ConfirmScreen", what="the question")
        await pilot.press("y")  # it replaces the key: asked first
        await settle(pilot)
        generated = app.runtime.sandbox.state.hmac_key
        assert generated and generated != before and len(generated) >= 64
        assert await newest_verdict(pilot) == str(Verdict.VALID)


async def test_short_key_and_bad_proxy_are_refused_inline_and_nothing_is_sent():
    async with running_sandbox_app() as pilot:
        app = pilot.app
        await show_section(pilot, "settings")
        # What the app reads by itself meanwhile (the header's status polls, the doctor's checks) is a GET: nothing
        # that changes the gateway. The refused forms must send nothing else.
        def writes() -> int:
            return sum(1 for exchange in app.runtime.request_log if exchange.method != "GET")

        sent_before = writes()

        app.screen.query_one("#hmac-key", Input).value = "short"
        app.screen.query_one("#hmac-set").press()
        app.screen.query_one("#proxy-enable", Switch).value = True
        app.screen.query_one("#proxy-url", Input).value = "ftp://proxy.example:21"
        app.screen.query_one("#proxy-apply").press()
        await settle(pilot)

        rows = {row.fields[0]: row for row in app.screen.query(FieldRow)}
        assert rows["hmac_key"].error and "32" in rows["hmac_key"].error
        assert rows["proxy_url"].error and "socks5://" in rows["proxy_url"].error
        assert writes() == sent_before
        assert not app.runtime.sandbox.state.proxy_enabled


async def test_proxy_description_and_webhooks_reach_the_gateway():
    async with running_sandbox_app() as pilot:
        app = pilot.app
        state = app.runtime.sandbox.state
        await show_section(pilot, "settings")
        screen = app.screen
        screen.query_one("#proxy-enable", Switch).value = True
        screen.query_one("#proxy-url", Input).value = "socks5://user:secretpw@proxy.example:1080"
        screen.query_one("#proxy-apply").press()
        screen.query_one("#description", Input).value = "Open 9-18h"
        screen.query_one("#description-apply").press()
        await settle(pilot)
        assert state.proxy_enabled and state.proxy_url.endswith("@proxy.example:1080")
        assert state.profile_description == "Open 9-18h"
        assert "secretpw" not in app.export_screenshot()

        screen.query_one("#delivery-url", Input).value = "http://127.0.0.1:9/elsewhere"
        screen.query_one("#delivery-apply").press()
        await settle(pilot)
        assert state.delivery_url == "http://127.0.0.1:9/elsewhere"
        screen.query_one("#point-webhooks").press()
        await settle(pilot)
        assert state.delivery_url == app.runtime.listener.url + "/delivery"
        assert state.session_webhook.url == app.runtime.listener.url + "/session"


async def test_secrets_are_listed_masked():
    async with running_sandbox_app() as pilot:
        app = pilot.app
        await show_section(pilot, "settings")
        await settle(pilot)
        text = app.export_screenshot()
        assert "Client-Token" in text and "••••" in text
        for name in SecretName:
            value = app.runtime.secrets.get(app.runtime.profile_name, name)
            assert value and value not in text


async def test_listener_moves_to_a_new_port_and_keeps_storing():
    async with running_sandbox_app() as pilot:
        app = pilot.app
        await show_section(pilot, "settings")
        old_port = app.runtime.listener.port
        app.screen.query_one("#listener-port", Input).value = "0"
        app.screen.query_one("#listener-apply").press()
        await settle(pilot)
        assert app.runtime.listener.port not in (None, old_port)
        app.screen.query_one("#point-webhooks").press()
        await settle(pilot)
        assert await newest_verdict(pilot) == str(Verdict.VALID)
        assert app.runtime.store.newest(1)[0].path == "/session" or app.runtime.store.newest(1)[0].path == "/delivery"


async def test_body_limit_and_signature_policy_apply_to_the_listener():
    from textual.widgets import Switch

    async with running_sandbox_app() as pilot:
        app = pilot.app
        await show_section(pilot, "settings")
        await settle(pilot)
        assert app.screen.query_one("#listener-max-body", Input).value == "150"
        port = app.runtime.listener.port
        app.screen.query_one("#listener-port", Input).value = str(port)
        app.screen.query_one("#listener-max-body", Input).value = "2"
        app.screen.query_one("#listener-require-signatures", Switch).value = True
        app.screen.query_one("#listener-apply").press()
        await settle(pilot)
        listener = app.runtime.listener
        assert (listener.port, listener.max_body, listener.require_signatures) == (port, 2 * 1024 * 1024, True)
        app.screen.query_one("#listener-max-body", Input).value = "0"
        app.screen.query_one("#listener-apply").press()
        await settle(pilot)
        assert app.runtime.listener is listener
        shown = " ".join(str(widget.render()) for widget in app.screen.query("#listener-form Static"))
        assert "1 to 4096 MiB" in shown


async def test_listener_port_in_use_keeps_the_old_listener():
    import socket

    async with running_sandbox_app() as pilot:
        app = pilot.app
        await show_section(pilot, "settings")
        blocker = socket.socket()
        blocker.bind(("127.0.0.1", 0))
        blocker.listen()
        try:
            old = app.runtime.listener
            app.screen.query_one("#listener-port", Input).value = str(blocker.getsockname()[1])
            app.screen.query_one("#listener-apply").press()
            await settle(pilot)
            assert app.runtime.listener is old
            assert "keeps running" in str(app.screen.query_one("#listener-form .block-status").render())
        finally:
            blocker.close()


async def test_replacing_a_token_applies_to_the_next_call():
    from tui.api.errors import Unauthorized
    from textual.widgets import Select

    async with running_sandbox_app() as pilot:
        app = pilot.app
        await show_section(pilot, "settings")
        good = app.runtime.secrets.get(app.runtime.profile_name, SecretName.CLIENT_TOKEN)
        app.screen.query_one("#secret-name", Select).value = SecretName.CLIENT_TOKEN.value
        app.screen.query_one("#secret-value", Input).value = "a-wrong-client-token"
        app.screen.query_one("#secret-replace").press()
        await settle(pilot)
        try:
            await app.runtime.instance.send_text(HELLO)
        except Unauthorized:
            pass
        else:
            raise AssertionError("the replaced (wrong) token was not used")
        app.screen.query_one("#secret-value", Input).value = good
        app.screen.query_one("#secret-replace").press()
        await settle(pilot)
        assert (await app.runtime.instance.send_text(HELLO)).messageId
        assert "a-wrong-client-token" not in screen_text(app) and good not in screen_text(app)
