"""Time from process start to *interactive*: `gateway-tui --sandbox` until its first field accepts input and the
header shows the connection, against a bare Textual app's first frame (the same baseline as bench/startup.py).

    uv run python bench/start_interactive.py [--runs 9]

"Interactive" means all of: the section on screen is mounted and the keys typed so far have been replayed
(`MainScreen.sections_ready`; the other six sections are mounted after, one at a time, and a key that chooses
one before then is kept for it), a text field of that section has the focus, and the header's connection reads
"sandbox · connected" (the clients have read the gateway's status; the store, the listener and the webhook set-up
come after). The child starts as `gateway-tui --sandbox` does (`tui.cli.main.prepare_app`: the command line's
imports, the sandbox gateway spawned in a process of its own before Textual is imported). It checks every 2 ms
after its first frame (a plain timer: nothing forces a repaint in between, which would slow the app being
measured), and once it holds waits for the next frame to be drawn, then prints the wall clock. The CPU time
column includes the sandbox process (the child waits for it at exit): the work the start costs the machine; the
main-thread CPU time printed after the table is the start's own work alone (each child prints it beside the clock),
which a busy machine disturbs far less than the wall clock.
Otherwise as bench/startup.py: headless, alternating, one warm-up run each, both variants
with a bytecode cache unless `--no-bytecode-cache`. Target: interactive ≤ 1.5 × bare.

`--with-floor` also measures, in the same run, what any start of this product pays before its own work: the bare
app's first frame after importing httpx and validating a one-field pydantic model (pydantic loads most of itself
at the first model class), and after importing the operations table instead (its request and result models: the
client, the CLI and the sandbox derive from it), each without building a screen or reading the gateway; and a
process that imports aiohttp and starts an HTTP server on a port, which is what the sandbox gateway must do before
the header can read the connection.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from startup import (  # noqa: E402  (same runner)
    TARGET_RATIO, THREAD_TIMES, bench_env, bytecode_note, load_average, one_run, table,
)

CHILD_STARTED = time.time()  # --timeline's zero: this module's first line (the interpreter's start is before it)
TIMELINE = bool(os.environ.get("START_TIMELINE"))
"""Set in the environment: each child prints, on stderr, when the section was ready, the field focused, the sandbox
answered and the header said connected, in ms after CHILD_STARTED (which of them bounds the start)."""
POLL = 0.002
LIMIT = 30.0


FLOOR_VARIANTS = {
    "floor-libraries": "bare app after importing httpx and validating one pydantic model: first frame",
    "floor-table": "bare app after importing httpx and the operations table: first frame",
    "floor-server": "a process importing aiohttp until its server takes connections",
}


def floor_child(variant: str) -> None:
    """One of FLOOR_VARIANTS: the bare app of bench/startup.py after the imports every start needs."""
    if variant == "floor-server":
        from aiohttp import web

        async def serve() -> None:
            runner = web.AppRunner(web.Application())
            await runner.setup()
            await web.TCPSite(runner, "127.0.0.1", 0).start()
            print(f"{time.time():.6f} {time.thread_time() * 1000:.1f}", flush=True)
            await runner.cleanup()

        asyncio.run(serve())
        return
    import httpx  # noqa: F401

    if variant == "floor-table":
        sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        import tui.api.operations  # noqa: F401
    else:
        import pydantic

        class Status(pydantic.BaseModel):
            connected: bool

        Status.model_validate({"connected": True})
    from startup import child

    child("bare")


def interactive_child(source: str | None = None) -> None:
    sys.path.insert(0, source or os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    try:  # as `gateway-tui --sandbox` starts: the command line's imports, the sandbox's own process first
        from tui.cli.main import build_parser, prepare_app
    except ImportError:  # --compare with sources from before prepare_app: the app with its sandbox in-process
        try:
            from tui.ui.app import build_app
        except ImportError:  # sources from before the house (issue 36): the app's module at the top of `tui`
            from tui.app import build_app  # type: ignore[import-not-found,no-redef]

        app, process = build_app(sandbox=True), None
    else:
        import tui.cli.main

        # The command line as `gateway-tui` reads it (sources from before parse_arguments: the whole parser).
        parse = getattr(tui.cli.main, "parse_arguments", None) or build_parser().parse_args
        app, process = prepare_app(parse(["--sandbox"]))
    from textual.widgets import Input  # after the sandbox is spawned, as `gateway-tui --sandbox` does

    def text_field(widget: object) -> bool:
        """An Input, or a TextArea once Textual has imported one: importing it here would charge the start ~5 ms
        the app itself does not pay (its first field is an Input)."""
        text_area = sys.modules.get("textual.widgets._text_area")
        return isinstance(widget, Input) or (text_area is not None and isinstance(widget, text_area.TextArea))

    def interactive() -> bool:
        try:
            from tui.ui.main_screen import MainScreen
            from tui.ui.widgets.header import GatewayHeader
        except ImportError:  # --compare with sources from before the house (issue 36)
            from tui.screens.main import MainScreen  # type: ignore[import-not-found,no-redef]
            from tui.widgets.header import GatewayHeader  # type: ignore[import-not-found,no-redef]

        screen = app.screen
        if not isinstance(screen, MainScreen) or not screen.sections_ready:
            return False
        if not text_field(app.focused):
            return False
        headers = [header for header in screen.query(GatewayHeader) if header.is_mounted]
        return bool(headers) and "connected" in headers[0].connection and "not" not in headers[0].connection

    def milestones() -> dict[str, bool]:
        """What `--timeline` reports, each the first time it holds."""
        from tui.ui.main_screen import MainScreen

        screen = app.screen
        return {"section ready": isinstance(screen, MainScreen) and screen.sections_ready,
                "field focused": text_field(app.focused),
                "sandbox answered": process is not None and bool(process.port),
                "connected": interactive()}

    async def until_interactive(pilot) -> None:
        deadline = time.monotonic() + LIMIT
        seen: dict[str, float] = {}
        while not interactive():
            if time.monotonic() > deadline:
                raise SystemExit("never became interactive")
            if TIMELINE:
                seen |= {name: time.time() for name, holds in milestones().items() if holds and name not in seen}
            await asyncio.sleep(POLL)
        if TIMELINE:
            seen |= {name: time.time() for name in milestones() if name not in seen}
            print(" ".join(f"{name}={1000 * (at - CHILD_STARTED):.0f}" for name, at in sorted(
                seen.items(), key=lambda item: item[1])), file=sys.stderr, flush=True)
        drawn = asyncio.Event()
        app.call_after_refresh(drawn.set)  # the frame that shows it
        await drawn.wait()
        print(f"{time.time():.6f} {time.thread_time() * 1000:.1f}", flush=True)
        pilot.app.exit()

    try:
        app.run(headless=True, auto_pilot=until_interactive)
    finally:
        if process is not None:
            process.stop_now()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--no-bytecode-cache", action="store_true", help="compile every module on every start")
    parser.add_argument("--compare", metavar="DIR", help="also measure the gateway-tui sources in DIR (another "
                        "checkout, e.g. `git worktree add /tmp/before HEAD~3`), alternating with these")
    parser.add_argument("--with-floor", action="store_true", help="also measure the start's floor (see above)")
    parser.add_argument("--child", choices=("interactive", *FLOOR_VARIANTS), help=argparse.SUPPRESS)
    parser.add_argument("--source", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child in FLOOR_VARIANTS:
        floor_child(args.child)
        return
    if args.child:
        interactive_child(args.source)
        return
    here = os.path.abspath(__file__)
    load_before = load_average()
    with tempfile.TemporaryDirectory() as scratch:
        env = bench_env(scratch, bytecode_cache=not args.no_bytecode_cache)
        runs = {"bare": lambda: one_run("bare", env), "interactive": lambda: _own_run(here, env)}
        if args.compare:
            compare = os.path.abspath(args.compare)
            runs["compare"] = lambda: _own_run(here, env, "compare", compare)
        if args.with_floor:
            for floor in FLOOR_VARIANTS:
                runs[floor] = lambda floor=floor: one_run(floor, env, [sys.executable, here, "--child", floor])
        for run in runs.values():  # warm-up
            run()
        times: dict[str, list[float]] = {name: [] for name in runs}
        for _ in range(args.runs):
            for name, run in runs.items():
                times[name].append(run())
    print(f"process start → interactive, {args.runs} runs each, headless, {bytecode_note(not args.no_bytecode_cache)}; "
          f"Python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load average before {load_before}\n")
    table(times, {"bare": "bare Textual app, one label: first frame",
                  "interactive": "gateway-tui --sandbox: first field takes keys, header connected",
                  "compare": f"the same, sources in {args.compare}", **FLOOR_VARIANTS})
    if args.compare:
        compared = statistics.median(times["compare"]) / statistics.median(times["bare"])
        print(f"\nratio with the sources in {args.compare}: {compared:.2f}")
    if args.with_floor:
        print("\nthe floor, as multiples of the bare app's first frame:")
        for floor, label in FLOOR_VARIANTS.items():
            print(f"  {label}: {statistics.median(times[floor]) / statistics.median(times['bare']):.2f}")
    if THREAD_TIMES:
        print("\nmain-thread CPU time when each printed (median, min–max; less disturbed by a busy machine than the "
              "wall clock):")
        spent = {name: THREAD_TIMES.get(name, [])[-len(values):] for name, values in times.items()}  # not the warm-up
        for name, values in spent.items():
            if values:
                print(f"  {name}: {statistics.median(values):.0f} ms ({min(values):.0f}–{max(values):.0f})")
        if args.with_floor and spent["interactive"] and spent["floor-table"]:
            print(f"  interactive / floor (the operations table's), main-thread CPU = "
                  f"{statistics.median(spent['interactive']) / statistics.median(spent['floor-table']):.2f}")
    ratio = statistics.median(times["interactive"]) / statistics.median(times["bare"])
    verdict = "met" if ratio <= TARGET_RATIO else "NOT met"
    if args.with_floor:  # issue 22's target: against the floor measured in the same run
        floor = statistics.median(times["interactive"]) / statistics.median(times["floor-table"])
        print(f"\nratio interactive / floor (the operations table's) = {floor:.2f} (target ≤ {TARGET_RATIO}): "
              f"{'met' if floor <= TARGET_RATIO else 'NOT met'}")
    print(f"\nratio interactive / bare = {ratio:.2f} (target ≤ {TARGET_RATIO}): {verdict}; "
          f"load average after {load_average()}")


def _own_run(script: str, env: dict[str, str], variant: str = "interactive", source: str | None = None) -> float:
    command = [sys.executable, script, "--child", "interactive"] + (["--source", source] if source else [])
    return one_run(variant, env, command)


if __name__ == "__main__":
    main()
