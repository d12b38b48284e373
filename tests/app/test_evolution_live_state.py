"""The app on `--sandbox --instance-dialect evolution` (issue 33): its listener takes Evolution's deliveries on
`/evolution` with the apikey checked against the instance key and redacted, and the header follows
Evolution's connection.update and qrcode.updated as it follows the other gateways' connection events (no status
read in between: deterministic mode has no timer read)."""

from __future__ import annotations

import json

import httpx

from tests.harness import SIZE, wait_ready, wait_until
from tui.api.operations import Family
from tui.api.signing import Verdict
from tui.ui.app import build_app
from tui.ui.widgets.forms import set_cursor_blink
from tui.ui.widgets.header import GatewayHeader


async def test_evolution_deliveries_reach_the_store_redacted_and_move_the_header() -> None:
    set_cursor_blink(False)
    app = build_app(sandbox=True, deterministic=True, sandbox_dialects=("evolution", "spec"))
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        header = app.screen.query_one(GatewayHeader)
        await wait_until(pilot, lambda: header.connection == "sandbox · connected", what="connected first")
        sandbox, store = app.runtime.sandbox, app.runtime.feed.store
        assert sandbox is not None and store is not None
        key, base = sandbox.instance_token, sandbox.url.rstrip("/")
        webhook = sandbox.state.evolution_webhook
        assert webhook is not None and webhook["enabled"] and webhook["url"].endswith("/evolution")
        for event in ("MESSAGES_UPSERT", "MESSAGES_UPDATE", "SEND_MESSAGE", "CONNECTION_UPDATE", "QRCODE_UPDATED"):
            assert event in webhook["events"]
        # The doctor takes /evolution as the listener's URL for an Evolution instance: no url mismatch to report
        from tui.core.doctor import Doctor

        report = await Doctor(await app.runtime.webhooks.doctor_inputs()).examine(probe=False)
        assert [finding.id.value for finding in report.findings if "url" in finding.id.value] == []
        async with httpx.AsyncClient(base_url=base, trust_env=False) as http:
            sent = await http.post(f"/message/sendText/{sandbox.instance_id}", headers={"apikey": key},
                                   json={"number": "5511987654321", "text": "Hello from the test"})
            assert sent.status_code == 201, sent.text
            await wait_until(pilot, lambda: any(event.verdict is Verdict.APIKEY_OK and b"messages.update" in event.body
                                                for event in store.newest(20)), what="the acks stored")
            assert (await http.post("/sandbox/disconnect", content=json.dumps(
                {"family": "instance", "reason": "network"}))).status_code == 200
            await wait_until(pilot, lambda: header.connection != "sandbox · connected", what="the header to change")
            # Logged out, then a pairing: close (401), connecting, a code pushed as qrcode.updated, then open.
            assert (await http.delete(f"/instance/logout/{sandbox.instance_id}", headers={"apikey": key})).is_success
            account = app.runtime.current
            assert account is not None
            await wait_until(pilot, lambda: "logged out" in (account.watch.state(Family.INSTANCE).reason or ""),
                             what="logged out")
            for _ in range(2):  # the first connect has no code yet (Evolution's {"count": 0})
                code = (await http.get(f"/instance/connect/{sandbox.instance_id}", headers={"apikey": key})).json()
            await wait_until(pilot, lambda: "waiting for a scan" in header.connection, what="the QR code's event")
            assert (await http.post("/sandbox/scan", json={"code": code["code"]})).status_code == 200
            await wait_until(pilot, lambda: header.connection == "sandbox · connected", what="paired again")
        events = store.newest(50)
        assert events and all(key.encode() not in event.body for event in events)
        assert {event.path for event in events if event.verdict is Verdict.APIKEY_OK} == {"/evolution"}
        assert all(not event.rejected for event in events)
