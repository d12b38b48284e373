"""The app points a Z-API profile's callbacks at its secret URL (`/delivery/secret/<secret>`: Z-API cannot sign, so
the unguessable segment is what the listener believes), shows that URL masked in the request log, and its doctor
agrees (no `webhook-url-mismatch`). A message the sandbox speaking Z-API posts there is `path-secret-ok` and in the
inbox even with an HMAC key set."""

from __future__ import annotations

import httpx

from tests.harness import set_cursor_blink, wait_ready, wait_until
from tui.api.signing import Verdict
from tui.gateways.zapi.sandbox import CALLBACK_ROUTES
from tui.ui.app import build_app
from tui.webhooks.conversations import Inbox

ANA = "5511987654321"


async def test_zapi_callbacks_carry_the_secret_and_it_is_masked_wherever_shown() -> None:
    set_cursor_blink(False)
    app = build_app(sandbox=True, deterministic=True, sandbox_dialects=("zapi", "wuzapi"))
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_ready(pilot)
        runtime = app.runtime
        state = runtime.sandbox.state
        kinds = {kind for kinds in CALLBACK_ROUTES.values() for kind in kinds}
        await wait_until(pilot, lambda: set(state.zapi_callback_urls) >= kinds, what="every Z-API callback set")
        name = runtime.open_accounts.current.name
        secret = runtime.open_accounts.path_secrets[name]
        assert secret and len(secret) >= 22
        wanted = runtime.webhooks.listener_base() + f"/delivery/secret/{secret}"
        assert set(state.zapi_callback_urls.values()) == {wanted} and state.delivery_url == wanted
        shown = [exchange for exchange in runtime.request_log if exchange.request_body and "delivery" in exchange.request_body]
        assert shown and all("/delivery/secret/***" in e.request_body and secret not in e.request_body for e in shown)
        assert all(secret not in (e.response_body or "") and secret not in e.url for e in runtime.request_log)
        await runtime.webhooks.check_webhooks(runtime.open_accounts.current)
        report = runtime.webhooks.doctor_record_of(name).report
        assert report is not None and "webhook-url-mismatch" not in report.ids()
        async with httpx.AsyncClient(trust_env=False) as client:
            answer = await client.post(f"{runtime.sandbox.url}/sandbox/incoming",
                                       json={"from": ANA, "text": "lunch at noon", "family": "instance", "lid": False})
        assert answer.status_code == 200, answer.text
        store = runtime.store
        await wait_until(pilot, lambda: store.count(search="lunch at noon") >= 1, what="the Z-API message stored")
        event = store.newest(1, kind="ReceivedCallback")[0]
        assert event.verdict is Verdict.PATH_SECRET_OK and event.path.endswith("/delivery/secret/***")
        assert runtime.webhooks.hmac_key_set  # the sandbox signs its session events: a key is set
        await wait_until(pilot, lambda: any("lunch at noon" in (row.last_body or "")
                                            for row in Inbox(store).conversations()), what="in the inbox")
