"""Time from process start to first frame: `gateway-tui --sandbox` against a bare Textual app showing one label.

    uv run python bench/startup.py [--runs 9]

The parent notes the wall clock, spawns `python bench/startup.py --child VARIANT`, and the child prints the wall
clock when its app is ready (Textual's auto-pilot hook: the first frame has been composed and rendered), then
exits. The difference covers interpreter start, imports, app construction and the first frame. Both variants
run headless the same way, alternating, after one warm-up run each. Target: app ≤ 1.5 × bare.

Bytecode: an installed app runs from compiled `.pyc` files (pip compiles on install, uv with
`--compile-bytecode`, and any Python writes them on first import). So both variants run with a bytecode cache in
the scratch directory (`PYTHONPYCACHEPREFIX`, filled by the warm-up run), even where the environment sets
`PYTHONDONTWRITEBYTECODE` (this development machine does). `--no-bytecode-cache` measures the other case: every
module compiled from source on every start, for both variants.
"""

from __future__ import annotations

import argparse
import os
import resource
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
        from tui.ui.app import build_app

        app = build_app(sandbox=True)

    async def first_frame(pilot) -> None:  # called by Textual once the app is ready (first frame done)
        print(f"{time.time():.6f} {time.thread_time() * 1000:.1f}", flush=True)
        pilot.app.exit()

    app.run(headless=True, auto_pilot=first_frame)  # type: ignore[attr-defined]


def bench_env(scratch: str, *, bytecode_cache: bool = True) -> dict[str, str]:
    """The children's environment: private config and data dirs, and the same bytecode condition for both."""
    env = dict(os.environ, GATEWAY_TUI_CONFIG_DIR=f"{scratch}/config", GATEWAY_TUI_DATA_DIR=f"{scratch}/data")
    env.pop("PYTHONPYCACHEPREFIX", None)
    if bytecode_cache:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = f"{scratch}/pycache"
    else:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        env["PYTHONPYCACHEPREFIX"] = f"{scratch}/no-pycache"  # never written; ignores any __pycache__ present
    return env


def load_average() -> str:
    """How busy the machine is (1-minute load average), to print beside the figures."""
    try:
        return f"{os.getloadavg()[0]:.2f}"
    except OSError:  # pragma: no cover - not on every platform
        return "unknown"


def bytecode_note(bytecode_cache: bool) -> str:
    return "with a bytecode cache (.pyc)" if bytecode_cache else "without a bytecode cache (compiled on every start)"


CPU_TIMES: dict[str, list[float]] = {}
"""CPU time (user + system, ms) of each run by variant: the work done, which a busy machine hardly changes."""
THREAD_TIMES: dict[str, list[float]] = {}
"""The child's main-thread CPU time (ms) when it printed, by variant (the second number it prints, when it does): the
start's own work, without the sandbox process or other threads."""


def one_run(variant: str, env: dict[str, str], command: list[str] | None = None) -> float:
    """Wall-clock ms from spawning the child to the time it prints; its CPU time goes to CPU_TIMES[variant]."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.time()
    result = subprocess.run(
        command or [sys.executable, __file__, "--child", variant], capture_output=True, text=True, env=env,
        timeout=120, stdin=subprocess.DEVNULL,
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if result.returncode != 0 or not result.stdout.strip():
        raise RuntimeError(f"{variant} run failed: {result.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    CPU_TIMES.setdefault(variant, []).append(cpu * 1000)
    printed = result.stdout.split()
    if len(printed) > 1:
        THREAD_TIMES.setdefault(variant, []).append(float(printed[1]))
    return (float(printed[0]) - started) * 1000


def table(times: dict[str, list[float]], labels: dict[str, str]) -> None:
    """Median and range of the wall-clock times, with the median CPU time beside them."""
    print("| Variant | median | min–max | CPU time (median) |")
    print("|---|---|---|---|")
    for name, values in times.items():
        cpu = CPU_TIMES.get(name, [])[-len(values):]
        print(f"| {labels[name]} | {statistics.median(values):.0f} ms | {min(values):.0f}–{max(values):.0f} ms "
              f"| {statistics.median(cpu):.0f} ms |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--no-bytecode-cache", action="store_true", help="compile every module on every start")
    parser.add_argument("--child", choices=("app", "bare"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child)
        return
    load_before = load_average()
    with tempfile.TemporaryDirectory() as scratch:
        env = bench_env(scratch, bytecode_cache=not args.no_bytecode_cache)
        for variant in ("bare", "app"):  # warm-up: write the .pyc cache, fill the page cache
            one_run(variant, env)
        times: dict[str, list[float]] = {"bare": [], "app": []}
        for _ in range(args.runs):
            for variant in ("bare", "app"):
                times[variant].append(one_run(variant, env))
    print(f"process start → first frame, {args.runs} runs each, headless, {bytecode_note(not args.no_bytecode_cache)}; "
          f"Python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load average before {load_before}\n")
    table(times, {"bare": "bare Textual app, one label", "app": "gateway-tui --sandbox"})
    ratio = statistics.median(times["app"]) / statistics.median(times["bare"])
    verdict = "met" if ratio <= TARGET_RATIO else "NOT met"
    print(f"\nratio app / bare = {ratio:.2f} (target ≤ {TARGET_RATIO}): {verdict}; load average after {load_average()}")


if __name__ == "__main__":
    main()
