"""Time from process start to *interactive*: `gateway-tui --sandbox` until its first field accepts input and the
header shows the connection, against a bare Textual app's first frame (the same baseline as bench/startup.py).

    uv run python bench/start_interactive.py [--runs 9]

"Interactive" means all of: the sections are mounted and the keys typed so far have been replayed
(`MainScreen.sections_ready`), a text field of the first section has the focus, and the header's connection
reads "sandbox · connected" (the runtime — sandbox, listener, store, clients — has started and the status has
been read). The child polls for that every 2 ms after its first frame and prints the wall clock when it holds;
otherwise as bench/startup.py (headless, alternating, one warm-up run each). Target: interactive ≤ 1.5 × bare.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from startup import TARGET_RATIO, one_run  # noqa: E402  (the same parent/child runner and baseline)

POLL = 0.002
LIMIT = 30.0


def interactive_child() -> None:
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from textual.widgets import Input, TextArea

    from tui.app import build_app

    app = build_app(sandbox=True)

    def interactive() -> bool:
        from tui.screens.main import MainScreen
        from tui.widgets.header import GatewayHeader

        screen = app.screen
        if not isinstance(screen, MainScreen) or not screen.sections_ready:
            return False
        if not isinstance(app.focused, (Input, TextArea)):
            return False
        headers = [header for header in screen.query(GatewayHeader) if header.is_mounted]
        return bool(headers) and "connected" in headers[0].connection and "not" not in headers[0].connection

    async def until_interactive(pilot) -> None:
        deadline = time.monotonic() + LIMIT
        while not interactive():
            if time.monotonic() > deadline:
                raise SystemExit("never became interactive")
            await pilot.pause(POLL)
        print(f"{time.time():.6f}", flush=True)
        pilot.app.exit()

    app.run(headless=True, auto_pilot=until_interactive)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--child", choices=("interactive",), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        interactive_child()
        return
    here = os.path.abspath(__file__)
    with tempfile.TemporaryDirectory() as scratch:
        env = dict(os.environ, GATEWAY_TUI_CONFIG_DIR=f"{scratch}/config", GATEWAY_TUI_DATA_DIR=f"{scratch}/data")
        runs = {"bare": lambda: one_run("bare", env), "interactive": lambda: _own_run(here, env)}
        for run in runs.values():  # warm-up
            run()
        times: dict[str, list[float]] = {name: [] for name in runs}
        for _ in range(args.runs):
            for name, run in runs.items():
                times[name].append(run())
    print(f"process start → interactive, {args.runs} runs each, headless; Python {sys.version.split()[0]}, "
          f"{os.cpu_count()} CPUs\n")
    print("| Variant | median | min–max |")
    print("|---|---|---|")
    labels = {"bare": "bare Textual app, one label: first frame",
              "interactive": "gateway-tui --sandbox: first field takes keys, header connected"}
    for name, values in times.items():
        print(f"| {labels[name]} | {statistics.median(values):.0f} ms | {min(values):.0f}–{max(values):.0f} ms |")
    ratio = statistics.median(times["interactive"]) / statistics.median(times["bare"])
    verdict = "met" if ratio <= TARGET_RATIO else "NOT met"
    print(f"\nratio interactive / bare = {ratio:.2f} (target ≤ {TARGET_RATIO}): {verdict}")


def _own_run(script: str, env: dict[str, str]) -> float:
    import subprocess

    started = time.time()
    result = subprocess.run([sys.executable, script, "--child", "interactive"], capture_output=True, text=True,
                            env=env, timeout=120, stdin=subprocess.DEVNULL)
    if result.returncode != 0 or not result.stdout.strip():
        raise RuntimeError(f"interactive run failed: {result.stderr[-2000:]}")
    return (float(result.stdout.split()[0]) - started) * 1000


if __name__ == "__main__":
    main()
