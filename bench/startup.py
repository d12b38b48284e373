"""Time from process start to first frame: `gateway-tui --sandbox` against a bare Textual app showing one label.

    uv run python bench/startup.py [--runs 9]

The parent notes the wall clock, spawns `python bench/startup.py --child VARIANT`, and the child prints the wall
clock when its app is ready (Textual's auto-pilot hook: the first frame has been composed and rendered), then
exits. The difference covers interpreter start, imports, app construction and the first frame. Both variants
run headless the same way, alternating, after one warm-up run each (so .pyc files exist). Target: app ≤ 1.5 × bare.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

TARGET_RATIO = 1.5


def child(variant: str) -> None:
    if variant == "bare":
        from textual.app import App, ComposeResult
        from textual.widgets import Label

        class Bare(App[None]):
            def compose(self) -> ComposeResult:
                yield Label("hello")

        app: object = Bare()
    else:
        sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        from tui.app import build_app

        app = build_app(sandbox=True)

    async def first_frame(pilot) -> None:  # called by Textual once the app is ready (first frame done)
        print(f"{time.time():.6f}", flush=True)
        pilot.app.exit()

    app.run(headless=True, auto_pilot=first_frame)  # type: ignore[attr-defined]


def one_run(variant: str, env: dict[str, str]) -> float:
    started = time.time()
    result = subprocess.run(
        [sys.executable, __file__, "--child", variant], capture_output=True, text=True, env=env, timeout=60,
        stdin=subprocess.DEVNULL,
    )
    if result.returncode != 0 or not result.stdout.strip():
        raise RuntimeError(f"{variant} run failed: {result.stderr[-2000:]}")
    return (float(result.stdout.split()[0]) - started) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--child", choices=("app", "bare"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child)
        return
    with tempfile.TemporaryDirectory() as scratch:
        env = dict(os.environ, GATEWAY_TUI_CONFIG_DIR=f"{scratch}/config", GATEWAY_TUI_DATA_DIR=f"{scratch}/data")
        for variant in ("bare", "app"):  # warm-up: compile .pyc, fill the page cache
            one_run(variant, env)
        times: dict[str, list[float]] = {"bare": [], "app": []}
        for _ in range(args.runs):
            for variant in ("bare", "app"):
                times[variant].append(one_run(variant, env))
    print(f"process start → first frame, {args.runs} runs each, headless; Python {sys.version.split()[0]}, "
          f"{os.cpu_count()} CPUs\n")
    print("| Variant | median | min–max |")
    print("|---|---|---|")
    labels = {"bare": "bare Textual app, one label", "app": "gateway-tui --sandbox"}
    for variant in ("bare", "app"):
        values = times[variant]
        print(f"| {labels[variant]} | {statistics.median(values):.0f} ms | {min(values):.0f}–{max(values):.0f} ms |")
    ratio = statistics.median(times["app"]) / statistics.median(times["bare"])
    verdict = "met" if ratio <= TARGET_RATIO else "NOT met"
    print(f"\nratio app / bare = {ratio:.2f} (target ≤ {TARGET_RATIO}): {verdict}")


if __name__ == "__main__":
    main()
