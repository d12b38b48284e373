"""The footer follows a running call: `esc Cancel call` while a section's call runs, gone when it ends (the
snapshots capture after the call, and under load they caught a stale `Cancel call`)."""

from __future__ import annotations

import asyncio

from textual.widgets._footer import FooterKey

from tests.harness import running_sandbox_app, settle, show_section
from tui.sandbox.state import LAUNCH_ID


def footer_keys(app) -> list[str]:
    return [key.description for key in app.screen.query(FooterKey)]


async def test_the_footer_drops_cancel_when_the_call_ends(monkeypatch):
    async with running_sandbox_app() as pilot:
        app = pilot.app
        release = asyncio.Event()
        real = app.runtime.instance.group_metadata

        async def held(group_id: str):
            await release.wait()
            return await real(group_id)

        monkeypatch.setattr(app.runtime.instance, "group_metadata", held)
        await show_section(pilot, "groups")
        app.screen.query_one("#lookup-id").value = f"{LAUNCH_ID}-group"
        app.screen.query_one("#lookup").press()
        for _ in range(50):  # bounded: the worker starts within a few frames
            await pilot.pause()
            if any(worker.is_running for worker in app.workers if worker.name == "Look up group"):
                break
        assert any(worker.is_running for worker in app.workers if worker.name == "Look up group")
        # While the call covers the form the focus waits outside it (tests/app/test_focus_after_calls.py gives it
        # back after), so the section's keys are not in the footer then; what must never happen is the section's
        # "Cancel call" staying once the call is over.
        release.set()
        await settle(pilot)
        assert "Cancel call" not in footer_keys(app)
