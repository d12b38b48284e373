"""A rejected event whose body was cut (it keeps only the first 4 KiB) says so in the events panel, the Events
section and the event detail, with the size it arrived with; the detail never replays it."""

from __future__ import annotations

import aiohttp

from tests.harness import running_sandbox_app, screen_text, settle, show_section, wait_until
from tui.ui.screens.event_detail import EventDetailScreen
from tui.webhooks.listener import REJECTED_BODY_KEPT

SIZE = 200_000
HEAD = b'{"type":"Message","event":{"Info":{"ID":"CUT1","Sender":"5511900000000"},"Message":{"conversation":"'
BODY = HEAD + b"z" * (SIZE - len(HEAD) - 4) + b'"}}}'


async def test_a_cut_body_is_named_everywhere_with_its_size():
    async with running_sandbox_app() as pilot:
        app = pilot.app
        runtime = app.runtime
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=30)) as http:
            async with http.post(runtime.listener.url + "/session", data=BODY,
                                 headers={"Content-Type": "application/json"}) as response:
                assert response.status == 401  # unsigned: the sandbox's listener has a key
                event_id = (await response.json())["id"]
        event = runtime.store.get(event_id)
        assert (len(event.body), event.cut_from) == (REJECTED_BODY_KEPT, SIZE)
        await wait_until(pilot, lambda: "body cut" in screen_text(app), what="the panel's flag")

        await show_section(pilot, "events")
        await settle(pilot)
        await wait_until(pilot, lambda: "body cut" in screen_text(app), what="the section's flag")

        app.push_screen(EventDetailScreen(event, app.services, app.state))
        await settle(pilot)
        text = screen_text(app)
        assert f"body cut: the first {REJECTED_BODY_KEPT} of {SIZE} bytes kept" in text
        assert f"Body (cut: the first {REJECTED_BODY_KEPT} of {SIZE} bytes)" in text
