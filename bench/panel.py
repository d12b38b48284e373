"""The Events section over a large history: 1,000,000 stored events, time to open the section and to page,
and the process's peak memory.

    uv run python bench/panel.py [--events 1000000] [--pages 10]

A child process fills the sandbox profile's event store (bulk insert, varied kinds, verdicts and ~400-byte
bodies), so the fill's own memory is not counted. Then this process runs the real app (`--sandbox`, headless,
120×40) on that store and measures, each until the rows are on screen:
- open: switch to Events and load the newest page with its total count;
- page: `]` (older) repeatedly, then `[` (newer) back;
then reads the peak resident set size (ru_maxrss). Targets: under 200 ms and under 200 MB.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from waiting import until, workers_done  # bench/waiting.py: run as `uv run python bench/...`

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

TARGET_MS = 200.0
TARGET_MB = 200.0
STORE_FILE = "events-sandbox.sqlite3"  # the store the sandbox runtime opens in the data dir


def fill(data_dir: Path, count: int) -> None:
    from tui.webhooks.events import EventRecord
    from tui.api.signing import Verdict
    from tui.webhooks.store import EventStore

    kinds = ("Message", "ReadReceipt", "ChatPresence", "Delivery")
    verdicts = (Verdict.VALID, Verdict.VALID, Verdict.VALID, Verdict.UNSIGNED, Verdict.INVALID)
    start = datetime(2025, 1, 1, tzinfo=UTC)

    def records():
        for n in range(count):
            kind = kinds[n % len(kinds)]
            payload = {"type": kind, "event": {"Info": {"ID": f"3EB0{n:016X}", "Sender": f"55119{n % 10**8:08d}"},
                                               "Message": {"conversation": f"message {n} " + "lorem ipsum " * 25}}}
            yield EventRecord(
                received_at=start + timedelta(seconds=n), path="/session", headers={"content-type": "application/json"},
                body=json.dumps(payload).encode(), payload=payload, kind=kind, summary=f"{kind} 55119{n % 10**8:08d}",
                verdict=verdicts[n % len(verdicts)], rejected=False, message_ids=(f"3EB0{n:016X}",),
            )

    with EventStore(data_dir / STORE_FILE) as store:
        store.bulk_insert_for_bench(records())


async def measure(pages: int) -> tuple[float, list[float], list[float], int]:
    from tui.ui.app import build_app
    from tui.ui.sections.events import EventsSection
    from tui.ui.widgets.forms import set_cursor_blink

    set_cursor_blink(False)
    app = build_app(sandbox=True)

    async with app.run_test(size=(120, 40)) as pilot:
        await until(lambda: app.runtime_ready, "runtime start")
        await workers_done(app)
        section = app.screen.query_one(EventsSection)

        def frame() -> None:
            # Lay out and render one full frame now, as the terminal would get it (pilot.pause() alone idles
            # ~50 ms in Textual 8 and would swamp the figure).
            app.screen._refresh_layout(size=app.size)
            app.screen._compositor.render_update(full=True)
        total = app.runtime.store.count()

        started = time.perf_counter()
        app.show_section("events")
        section.total = None
        section.reload()
        await until(lambda: section.total is not None and section.rows, "first page")
        frame()
        open_ms = (time.perf_counter() - started) * 1000


        async def page(action, what: str) -> float:
            first = section.rows[0].id
            started = time.perf_counter()
            action()
            await until(lambda: section.rows and section.rows[0].id != first, what)
            frame()
            return (time.perf_counter() - started) * 1000

        older = [await page(section.action_older, "older page") for _ in range(pages)]
        newer = [await page(section.action_newer, "newer page") for _ in range(pages)]
    return open_ms, older, newer, total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--pages", type=int, default=10)
    parser.add_argument("--fill", metavar="DIR", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.fill:
        fill(Path(args.fill), args.events)
        return
    with tempfile.TemporaryDirectory() as scratch:
        data = Path(scratch) / "data"
        data.mkdir()
        began = time.perf_counter()
        subprocess.run([sys.executable, __file__, "--fill", str(data), "--events", str(args.events)], check=True,
                       timeout=1800, stdin=subprocess.DEVNULL)
        fill_s = time.perf_counter() - began
        os.environ["GATEWAY_TUI_DATA_DIR"] = str(data)
        os.environ["GATEWAY_TUI_CONFIG_DIR"] = str(Path(scratch) / "config")
        size_mb = (data / STORE_FILE).stat().st_size / 2**20
        open_ms, older, newer, total = asyncio.run(measure(args.pages))
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    page_ms = older + newer
    print(f"{total:,} stored events ({size_mb:,.0f} MB on disk, filled in {fill_s:.0f} s); Python "
          f"{sys.version.split()[0]}, {os.cpu_count()} CPUs\n")
    print("| Measurement | Result | Target |")
    print("|---|---|---|")
    print(f"| open the Events section (newest page + total count) | {open_ms:.0f} ms | < {TARGET_MS:.0f} ms |")
    print(f"| page older/newer, median of {len(page_ms)} (max) | {statistics.median(page_ms):.0f} ms "
          f"({max(page_ms):.0f} ms) | < {TARGET_MS:.0f} ms |")
    print(f"| peak memory of the app process (ru_maxrss) | {peak_mb:.0f} MB | < {TARGET_MB:.0f} MB |")
    met = open_ms < TARGET_MS and max(page_ms) < TARGET_MS and peak_mb < TARGET_MB
    print(f"\ntargets {'met' if met else 'NOT met'}")


if __name__ == "__main__":
    main()
