"""Time to render the sandbox's 1,024-participant group in the Groups section's participants table.

Measures, 7 times (median, min–max): the session-family answer (`data` of GET /group/info, as the sandbox builds it)
parsed into `GroupInfo` → participant rows → `ParticipantsTable.set_participants` (one `add_rows`) →
Textual processes the resulting messages → the whole screen is composed and rendered once.
Target: under 150 ms. Usage: `uv run python bench/groups_render.py`
"""

from __future__ import annotations

import asyncio
import statistics
import time

from textual.app import App, ComposeResult

from tui.api.models import GroupInfo
from tui.sandbox.state import ALL_HANDS_ID, seed_demo_state, user_jid
from tui.ui.sections.groups import GroupsSection, ParticipantsTable, participant_rows
from tui.core.runtime import Runtime
from tui.ui.widgets import forms
from tui.ui.widgets.gateway_app import AppState

TARGET_MS = 150.0
RUNS = 7


def group_info_payload() -> dict:
    group = seed_demo_state().groups[ALL_HANDS_ID]
    return {
        "JID": group.jid,
        "Name": group.name,
        "Participants": [
            {"JID": user_jid(p.phone), "IsAdmin": p.is_admin, "IsSuperAdmin": p.is_super_admin}
            for p in group.participants.values()
        ],
    }


class BenchApp(App[None]):
    def __init__(self) -> None:
        super().__init__()
        self.runtime = Runtime()  # never started: the section reaches no gateway here

    def compose(self) -> ComposeResult:
        yield GroupsSection.with_services(self.runtime.services, AppState(self, insecure_storage=False))


async def measure() -> tuple[float, int]:
    forms.set_cursor_blink(False)
    payload = group_info_payload()
    app = BenchApp()
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        table = app.query_one(ParticipantsTable)
        started = time.perf_counter()
        info = GroupInfo.model_validate(payload)
        table.set_participants(participant_rows(None, info))
        for _ in range(10):  # let Textual handle the messages the update posted (no idle wait)
            await asyncio.sleep(0)
        # Lay out and render one full frame, as a terminal would get it. (pilot.pause() would add Textual 8's
        # ~50 ms idle wait, which is not rendering time.)
        app.screen._refresh_layout(size=app.size)
        app.screen._compositor.render_update(full=True)
        elapsed_ms = (time.perf_counter() - started) * 1000
        rows = len(table.visible_rows())
        first = table.visible_rows()[0][0]
        assert first.encode() in app.export_screenshot().replace("&#160;", " ").encode(), "table not on screen"
    return elapsed_ms, rows


def main() -> None:
    runs = [asyncio.run(measure()) for _ in range(RUNS)]
    times = sorted(elapsed for elapsed, _ in runs)
    median = statistics.median(times)
    verdict = "OK" if median < TARGET_MS else "SLOW"
    print(f"groups_render: {runs[0][1]} participants rendered in {median:.1f} ms median of {RUNS} "
          f"({times[0]:.1f}–{times[-1]:.1f} ms) (target < {TARGET_MS:.0f} ms) {verdict}")


if __name__ == "__main__":
    main()
