"""Loopback throughput and p99 latency: the full webhook listener (verify + store + 200) against a bare aiohttp 200.

    uv run python bench/listener.py [--seconds 10] [--runs 3] [--connections 16] [--with-normal] [--with-no-store]
                                    [--with-lines] [--bodies 1000]

Each server runs in its own process pinned to CPU 0; the load generator runs here, pinned to CPU 1 (as the first
baselines, measured with wrk, were). The generator is a raw asyncio protocol, not an HTTP client
library, so that it outruns the bare server on one core. Each request is a POST of a ~1 KB WuzAPI-style Message
body, signed; bodies vary so the full-text index sees realistic distinct text. The generator cycles through
--bodies distinct bodies (1,000 by default), so from the 1,001st request on each event is a delivery received again:
stored and flagged as a duplicate, which changes no conversation (the inbox's tables are not written). With
--bodies at least the number of requests a run sends, every event is a new message and the inbox is written for
each (the costlier case a flood of new messages gives). After the full listener's runs
the store's row count is checked against the 200s received. Bounded: every run stops at --seconds or
--max-requests, whichever comes first.

Besides events/s and latency, each run reports the server process's CPU time (all threads) per answered request:
the per-event cost, which moves far less than events/s when other work shares the machine. It is split between
the event loop's thread (HTTP, verify, parse, classify, answer) and the other threads (the store's writer and
checkpointer: SQLite and its fsyncs). The load average is printed before and after: the machine may be shared.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

KEY = "k" * 32
TARGET_RATIO = 0.4  # issue 13: the full listener at ≥ 0.4 × the bare handler's events/s, same run
TARGET_P99_MS = 5.0
SERVER_CPU, CLIENT_CPU = 0, 1


# -- servers (run in a child process) -------------------------------------------------------------------------


async def serve(variant: str, db: Path) -> None:
    from aiohttp import web

    stopped = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stopped.set)
    if variant == "bare":

        async def ok(_request: web.Request) -> web.Response:
            return web.Response(text="ok")

        app = web.Application()
        app.router.add_route("*", "/{path:.*}", ok)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", 0).start()
        print(runner.addresses[0][1], flush=True)
        await stopped.wait()
        await runner.cleanup()
        return

    from tui.webhooks import store as store_module
    from tui.webhooks.listener import Listener

    if variant == "no-store":
        from tui.webhooks.events import stored

        class NoStore:
            """Acknowledges at once: what the listener's own request path costs, without SQLite or fsync."""

            path = db
            count = 0

            async def append(self, record):  # noqa: ANN001, ANN201
                self.count += 1
                return stored(record, self.count)

        listener = Listener(NoStore(), hmac_key=KEY)  # type: ignore[arg-type]
        await listener.start()
        print(listener.port, flush=True)
        await stopped.wait()
        await listener.stop()
        return

    store_module.SYNCHRONOUS = "NORMAL" if variant == "full-normal" else "FULL"
    printer = None
    if variant == "full-lines":  # `listen`'s default output: a line per event on stdout (a pipe the bench drains)
        from tui.cli.listen import LinePrinter

        printer = LinePrinter(asyncio.get_running_loop())
    with store_module.EventStore(db) as store:
        listener = Listener(store, hmac_key=KEY, on_event=printer)
        await listener.start()
        print(listener.port, flush=True)
        await stopped.wait()
        await listener.stop()
        if printer is not None:
            printer.flush()


# -- load generator -------------------------------------------------------------------------------------------


def make_requests(count: int) -> list[bytes]:
    from tui.api.signing import sign

    requests = []
    for n in range(count):
        payload = {
            "type": "Message",
            "instanceName": "bench",
            "userID": "0123456789abcdef0123456789abcdef",
            "event": {
                "Info": {
                    "Chat": "5491155553934@s.whatsapp.net",
                    "Sender": "5491155553934@s.whatsapp.net",
                    "IsFromMe": False,
                    "IsGroup": False,
                    "ID": f"3EB0{n:016X}",
                    "Type": "text",
                    "PushName": "John",
                    "Timestamp": "2026-05-19T10:40:13-03:00",
                    "MediaType": "",
                },
                "Message": {"conversation": f"hello number {n}, how are you doing today? " + "lorem ipsum " * 40},
                "IsEphemeral": False,
                "IsViewOnce": False,
            },
        }
        body = json.dumps(payload, separators=(",", ":")).encode()
        head = (
            "POST /webhook HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            f"x-hmac-signature: {sign(KEY, body)}\r\nContent-Length: {len(body)}\r\n\r\n"
        )
        requests.append(head.encode() + body)
    return requests


class Load:
    def __init__(self, requests: list[bytes], warmup_until: float, stop_at: float, max_requests: int) -> None:
        self.requests = requests
        self.warmup_until = warmup_until
        self.stop_at = stop_at
        self.max_requests = max_requests
        self.sent = 0
        self.latencies: list[float] = []
        self.completed_total = 0
        self.ok_total = 0
        self.non_ok = 0
        self.measure_started: float | None = None
        self.measure_ended: float | None = None
        self.done = asyncio.get_running_loop().create_future()
        self.open_connections = 0


class Connection(asyncio.Protocol):
    def __init__(self, load: Load) -> None:
        self.load = load
        self.buffer = b""
        self.started = 0.0
        self.index = 0

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        self.load.open_connections += 1
        self.send()

    def send(self) -> None:
        load = self.load
        now = time.perf_counter()
        if now >= load.stop_at or load.sent >= load.max_requests:
            self.transport.close()
            return
        load.sent += 1
        self.started = now
        self.transport.write(load.requests[load.sent % len(load.requests)])

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        end = self.buffer.find(b"\r\n\r\n")
        if end < 0:
            return
        head = self.buffer[:end]
        length = 0
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
        if len(self.buffer) < end + 4 + length:
            return
        self.buffer = self.buffer[end + 4 + length :]
        finished = time.perf_counter()
        load = self.load
        status = int(head.split(b" ", 2)[1])
        load.completed_total += 1
        if status == 200:
            load.ok_total += 1
        else:
            load.non_ok += 1
        if self.started >= load.warmup_until:
            if load.measure_started is None:
                load.measure_started = self.started
            load.measure_ended = finished
            load.latencies.append(finished - self.started)
        self.send()

    def connection_lost(self, exc: Exception | None) -> None:
        self.load.open_connections -= 1
        if self.load.open_connections == 0 and not self.load.done.done():
            self.load.done.set_result(None)


async def drive(port: int, requests: list[bytes], connections: int, warmup: float, seconds: float, max_requests: int):
    start = time.perf_counter()
    load = Load(requests, start + warmup, start + warmup + seconds, max_requests)
    loop = asyncio.get_running_loop()
    for _ in range(connections):
        await loop.create_connection(lambda: Connection(load), "127.0.0.1", port)
    await asyncio.wait_for(load.done, timeout=warmup + seconds + 60)
    return load


def run_one(variant: str, args: argparse.Namespace, requests: list[bytes], workdir: Path) -> dict:
    db = workdir / f"{variant}-{time.monotonic_ns()}.sqlite3"
    server = subprocess.Popen(
        [sys.executable, __file__, "--serve", variant, "--db", str(db)],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)},
    )
    printed = [0]
    try:
        port = int(server.stdout.readline())
        if variant == "full-lines":  # drained as a terminal would read it, lines counted against the 200s
            drain = threading.Thread(target=lambda: printed.__setitem__(0, sum(1 for _ in server.stdout)), daemon=True)
            drain.start()
        pin(server.pid, SERVER_CPU)
        cpu_before = process_cpu_seconds(server.pid)
        loop_before = thread_cpu_seconds(server.pid, server.pid)
        load = asyncio.run(drive(port, requests, args.connections, args.warmup, args.seconds, args.max_requests))
        cpu_used = process_cpu_seconds(server.pid) - cpu_before
        loop_used = thread_cpu_seconds(server.pid, server.pid) - loop_before
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=60)
    elapsed = (load.measure_ended or 0) - (load.measure_started or 0)
    latencies = sorted(load.latencies)
    result = {
        "variant": variant,
        "rps": len(latencies) / elapsed if elapsed > 0 else 0.0,
        "p50_ms": percentile(latencies, 0.50) * 1000,
        "p99_ms": percentile(latencies, 0.99) * 1000,
        "requests": load.completed_total,
        "non_200": load.non_ok,
        # Server CPU (all threads, user + system) per answered request, warm-up included: the per-event cost,
        # which unlike events/s hardly depends on what else the machine is doing.
        "cpu_us": cpu_used / load.completed_total * 1e6 if load.completed_total else float("nan"),
        # ... of which the event loop's thread (the rest: the store's writer and checkpointer threads).
        "loop_cpu_us": loop_used / load.completed_total * 1e6 if load.completed_total else float("nan"),
    }
    if variant not in ("bare", "no-store"):
        with sqlite3.connect(db) as raw:
            rows = raw.execute("SELECT count(*) FROM events").fetchone()[0]
        result["rows_match_200s"] = rows == load.ok_total
        if variant == "full-lines":
            drain.join(timeout=60)
            result["rows_match_200s"] = result["rows_match_200s"] and printed[0] == rows
        for suffix in ("", "-wal", "-shm"):
            Path(str(db) + suffix).unlink(missing_ok=True)
    return result


def process_cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far, from /proc (all its threads)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def thread_cpu_seconds(pid: int, tid: int) -> float:
    """User + system CPU time of one thread of a process so far (the main thread's id is the process id)."""
    fields = Path(f"/proc/{pid}/task/{tid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def percentile(sorted_values: list[float], fraction: float) -> float:
    if not sorted_values:
        return float("nan")
    return sorted_values[min(len(sorted_values) - 1, int(fraction * len(sorted_values)))]


def pin(pid: int, cpu: int) -> bool:
    if not hasattr(os, "sched_setaffinity") or (os.cpu_count() or 1) < 2:
        return False
    os.sched_setaffinity(pid, {cpu})
    return True


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=10.0, help="measured seconds per run")
    parser.add_argument("--warmup", type=float, default=2.0)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--max-requests", type=int, default=2_000_000, help="hard cap per run")
    parser.add_argument("--bodies", type=int, default=1000, help="distinct request bodies the load cycles through")
    parser.add_argument("--with-normal", action="store_true", help="also run the full listener with synchronous=NORMAL")
    parser.add_argument("--with-no-store", action="store_true", help="also run the listener with a no-op store")
    parser.add_argument("--with-lines", action="store_true",
                        help="also run the full listener printing `listen`'s default line per event to a drained pipe")
    parser.add_argument("--serve", choices=("bare", "full", "full-normal", "no-store", "full-lines"),
                        help=argparse.SUPPRESS)
    parser.add_argument("--db", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        asyncio.run(serve(args.serve, args.db))
        return 0

    pinned = pin(0, CLIENT_CPU)
    requests = make_requests(args.bodies)
    load_before = os.getloadavg()
    variants = (["bare", "full"] + (["full-normal"] if args.with_normal else [])
                + (["no-store"] if args.with_no_store else []) + (["full-lines"] if args.with_lines else []))
    results: dict[str, list[dict]] = {variant: [] for variant in variants}
    with tempfile.TemporaryDirectory(prefix="bench-listener-") as scratch:
        for run in range(args.runs):
            for variant in variants:
                result = run_one(variant, args, requests, Path(scratch))
                results[variant].append(result)
                extra = f", rows match 200s: {result['rows_match_200s']}" if "rows_match_200s" in result else ""
                print(
                    f"run {run + 1} {variant:12} {result['rps']:9.0f} events/s  p50 {result['p50_ms']:6.2f} ms  "
                    f"p99 {result['p99_ms']:6.2f} ms  CPU {result['cpu_us']:5.0f} µs/event "
                    f"(loop {result['loop_cpu_us']:.0f})  "
                    f"non-200: {result['non_200']}{extra}",
                    flush=True,
                )

    print()
    print(f"{args.connections} connections, {args.seconds:g} s per run after {args.warmup:g} s warm-up, "
          f"median of {args.runs} runs; server on CPU {SERVER_CPU}, load on CPU {CLIENT_CPU}"
          f"{'' if pinned else ' (not pinned: fewer than 2 CPUs)'}; Python {sys.version.split()[0]}, "
          f"SQLite {sqlite3.sqlite_version}, {os.cpu_count()} CPUs; {args.bodies:,} distinct bodies; load average "
          f"{load_before[0]:.1f} before, {os.getloadavg()[0]:.1f} after")
    print()
    print("| Handler | events/s (median, min–max) | p50 | p99 (median, min–max) | events/s ÷ bare | server CPU per event (loop thread + other threads) |")
    print("|---|---|---|---|---|---|")
    bare_rps = statistics.median(r["rps"] for r in results["bare"])
    labels = {
        "bare": "bare aiohttp 200 (body not read)",
        "full": "full listener: verify + store (synchronous=FULL) + 200",
        "full-normal": "full listener, synchronous=NORMAL",
        "no-store": "listener with a no-op store (request path only)",
        "full-lines": "full listener + `listen`'s default line per event on stdout (a drained pipe)",
    }
    for variant in variants:
        rows = results[variant]
        rps = [r["rps"] for r in rows]
        p99 = [r["p99_ms"] for r in rows]
        cpu = statistics.median(r["cpu_us"] for r in rows)
        loop = statistics.median(r["loop_cpu_us"] for r in rows)
        print(
            f"| {labels[variant]} | {statistics.median(rps):,.0f} ({min(rps):,.0f}–{max(rps):,.0f}) "
            f"| {statistics.median(r['p50_ms'] for r in rows):.2f} ms "
            f"| {statistics.median(p99):.2f} ms ({min(p99):.2f}–{max(p99):.2f}) "
            f"| {statistics.median(rps) / bare_rps:.2f} "
            f"| {cpu:.0f} µs ({loop:.0f} + {cpu - loop:.0f}) |"
        )
    full = results["full"]
    ratio = statistics.median(r["rps"] for r in full) / bare_rps
    p99 = statistics.median(r["p99_ms"] for r in full)
    print()
    print(f"ratio full / bare = {ratio:.2f} (target ≥ {TARGET_RATIO}): {'met' if ratio >= TARGET_RATIO else 'NOT met'}")
    print(f"full listener p99 = {p99:.2f} ms (target ≤ {TARGET_P99_MS} ms): {'met' if p99 <= TARGET_P99_MS else 'NOT met'}")
    mismatched = [r for v in variants if v not in ("bare", "no-store") for r in results[v] if not r["rows_match_200s"]]
    if mismatched:
        print("store row count did not match the 200s answered in some runs", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
