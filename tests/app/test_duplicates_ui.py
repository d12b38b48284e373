"""A delivery received twice shows "duplicate of #N" in the events panel, the Events section and the event
detail, and the header counts it once."""

from __future__ import annotations

import aiohttp

from tests.harness import running_sandbox_app, screen_text, settle, show_section, wait_until
from tui.core.runtime import DETERMINISTIC_HMAC_KEY
from tui.ui.screens.event_detail import EventDetailScreen
from tui.api.signing import SIGNATURE_HEADER, sign

BODY = b'{"type":"Message","event":{"Info":{"ID":"DUP1","Sender":"5511900000000"},"Message":{"conversation":"again"}}}'


async def test_a_delivery_received_again_is_flagged_everywhere_and_counted_once():
    async with running_sandbox_app() as pilot:
        app = pilot.app
        runtime = app.runtime
        headers = {"Content-Type": "application/json", SIGNATURE_HEADER: sign(DETERMINISTIC_HMAC_KEY, BODY)}
        before = runtime.feed.stats.received
        ids = []
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=30)) as http:
            for _ in range(2):
                async with http.post(runtime.listener.url + "/session", data=BODY, headers=headers) as response:
                    assert response.status == 200
                    ids.append((await response.json())["id"])
        first, again = ids
        await wait_until(pilot, lambda: f"duplicate of #{first}" in screen_text(app), what="the panel's flag")
        assert runtime.feed.stats.received == before + 1  # counted once
        assert runtime.store.get(again).duplicate_of == first

        await show_section(pilot, "events")
        await settle(pilot)
        await wait_until(pilot, lambda: f"duplicate of #{first}" in screen_text(app), what="the section's flag")

        app.push_screen(EventDetailScreen(runtime.store.get(again), app.services, app.state))
        await settle(pilot)
        assert f"duplicate of #{first}: the same delivery received again" in screen_text(app)
