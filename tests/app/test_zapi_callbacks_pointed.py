"""The app points the webhooks at its listener at start. Z-API keeps a callback URL per kind (received, delivery,
message status, presence, connected, disconnected); pointing only the delivery callback left the others empty, so the
webhook doctor found `webhook-url-mismatch` and the header said "hooks failing" on a fresh `--sandbox` in the zapi
dialect."""

from __future__ import annotations

from tests.harness import set_cursor_blink, wait_ready, wait_until
from tui.ui.app import build_app
from tui.gateways.zapi.sandbox import CALLBACK_ROUTES


async def test_every_zapi_callback_points_at_the_listener_after_start() -> None:
    set_cursor_blink(False)
    app = build_app(sandbox=True, deterministic=True, sandbox_dialects=("zapi", "wuzapi"))
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_ready(pilot)
        state = app.runtime.sandbox.state
        listener = app.runtime.webhooks.listener_base()
        kinds = {kind for kinds in CALLBACK_ROUTES.values() for kind in kinds}
        await wait_until(pilot, lambda: set(state.zapi_callback_urls) >= kinds, what="every Z-API callback set")
        assert state.delivery_url.startswith(listener)
        assert {kind: url.startswith(listener) for kind, url in state.zapi_callback_urls.items()} == dict.fromkeys(
            state.zapi_callback_urls, True)
