"""Snapshots of the Fleet board at 80×24 and 120×40: three profiles (fixed names and numbers) on three sandbox
gateways served from a thread of their own (the snapshot runs the app on its own event loop), shop-1 current."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator

import pytest

from tests.fleet.fleet_harness import sandbox_fleet
from tests.harness import settle, wait_until
from tui.ui.app import build_app
from tui.ui.sections.fleet.section import FleetSection
from tui.ui.widgets.forms import set_cursor_blink

NAMES = ("shop-1", "shop-2", "shop-3")


@pytest.fixture
def fleet_in_a_thread() -> Iterator[None]:
    ready, done = threading.Event(), None
    loop = asyncio.new_event_loop()

    async def serve() -> None:
        nonlocal done
        done = asyncio.Event()
        async with sandbox_fleet(3):
            ready.set()
            await done.wait()

    thread = threading.Thread(target=loop.run_until_complete, args=(serve(),), daemon=True)
    thread.start()
    assert ready.wait(20), "the sandboxes did not start"
    yield
    loop.call_soon_threadsafe(done.set)  # type: ignore[union-attr]
    thread.join(20)


async def _board(pilot) -> None:
    app = pilot.app
    await wait_until(pilot, lambda: app.runtime_ready or bool(app.runtime_error), timeout=120, what="start")
    await wait_until(pilot, lambda: getattr(app.screen, "all_sections_mounted", False), timeout=120, what="sections")
    await pilot.press("alt+9")
    await wait_until(pilot, lambda: [row.profile for row in app.screen.query_one(FleetSection).rows] == list(NAMES)
                     and all(row.connected for row in app.screen.query_one(FleetSection).rows), what="the board")
    await settle(pilot)


def _app():
    set_cursor_blink(False)
    return build_app(profiles=NAMES, deterministic=True, insecure_storage=True)


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])
def test_fleet_board(snap_compare, fleet_in_a_thread, size) -> None:
    assert snap_compare(_app(), terminal_size=size, run_before=_board)
