"""An honest signed sender's latency while 10,000 connections are opened at once (issue 37): a real `gateway-tui
listen` with a key; a flood process opens --connections sockets to it as fast as it can and holds them (sending
nothing, as an attacker filling slots would); meanwhile honest senders post a signed WuzAPI Message, each on a fresh
connection (its first request), and the time from connect to its 200 is measured. The promise: ≤ 1 s.

    uv run python bench/connection_flood.py [--connections 10000] [--runs 3] [--honest 20] [--repo PATH]

Per run: the flood's connects, then --honest senders one after another (the first starts as the flood's connects
are issued); p50, p99 and max of their latencies, how many were over 1 s, and the SYNs the kernel dropped at a full
accept queue meanwhile (ListenOverflows, Linux, counted for the whole machine). `--repo` runs another checkout's
`listen` (an export of an older commit: the "before" figure). Bounded: --connections sockets, --honest requests of
at most 10 s each, per run. The file limit is raised with resource.setrlimit (both processes need one descriptor per
connection).
"""

from __future__ import annotations

import argparse
import hashlib
import hmac
import multiprocessing
import os
import re
import resource
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

KEY = "bench-hmac-key-0123456789abcdefghijkl"
PROMISE = 1.0
MESSAGE = (b'{"event":{"Info":{"Chat":"5491155553934@s.whatsapp.net","ID":"3EB0HONEST%04d","IsFromMe":false,'
           b'"Sender":"5491155553934@s.whatsapp.net"},"Message":{"conversation":"hello"}},"type":"Message"}')


def raise_file_limit(wanted: int) -> int:
    """Raise the soft file limit to `wanted` (at most the hard one); the limit now in force."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    if soft != resource.RLIM_INFINITY and soft < target:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def flood(port: int, count: int, ready: multiprocessing.synchronize.Event, done: multiprocessing.synchronize.Event) -> None:
    """Open `count` connections at once (non-blocking connects, nothing sent) and hold them until `done`."""
    raise_file_limit(count + 256)
    held = []
    for _ in range(count):
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setblocking(False)
        sock.connect_ex(("127.0.0.1", port))
        held.append(sock)
    ready.set()
    done.wait(120)
    for sock in held:
        sock.close()


def honest_post(port: int, number: int) -> tuple[float, int]:
    """(seconds from connect to the answer, status) of one signed post on a fresh connection."""
    body = MESSAGE % number
    signature = hmac.new(KEY.encode(), body, hashlib.sha256).hexdigest()
    request = (f"POST /session HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
               f"x-hmac-signature: {signature}\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n").encode() + body
    started = time.monotonic()
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
            sock.sendall(request)
            answer = b""
            while b"\r\n" not in answer:
                piece = sock.recv(4096)
                if not piece:
                    break
                answer += piece
    except OSError:
        return time.monotonic() - started, 0
    status = int(answer.split()[1]) if answer.startswith(b"HTTP/") else 0
    return time.monotonic() - started, status


def listen_overflows() -> int | None:
    """The kernel's count of SYNs dropped at a full accept queue (Linux, all processes: the machine may be shared);
    None where it cannot be read. A dropped SYN is sent again only after a second."""
    try:
        with open("/proc/net/netstat") as netstat:
            lines = netstat.read().splitlines()
    except OSError:
        return None
    for names, values in zip(lines[::2], lines[1::2], strict=False):
        if names.startswith("TcpExt:") and "ListenOverflows" in names.split():
            return int(values.split()[names.split().index("ListenOverflows")])
    return None


def start_listener(repo: Path, scratch: str) -> tuple[subprocess.Popen[bytes], int]:
    env = {**os.environ, "GATEWAY_TUI_HMAC_KEY": KEY, "PYTHONPATH": str(repo),
           "XDG_DATA_HOME": scratch, "XDG_CONFIG_HOME": scratch, "XDG_STATE_HOME": scratch}
    process = subprocess.Popen(
        [sys.executable, "-m", "tui", "listen", "--port", "0", "--db", str(Path(scratch) / "events.sqlite3")],
        env=env, cwd=repo, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert process.stderr is not None
    line = process.stderr.readline().decode()
    match = re.search(r"listening on http://127\.0\.0\.1:(\d+);", line)
    if match is None:
        process.kill()
        raise SystemExit(f"unexpected first line: {line!r}")
    os.set_blocking(process.stderr.fileno(), False)
    return process, int(match.group(1))


def one_run(repo: Path, connections: int, honest: int) -> tuple[list[tuple[float, int]], int | None]:
    with tempfile.TemporaryDirectory() as scratch:
        process, port = start_listener(repo, scratch)
        try:
            honest_post(port, 0)  # the listener's first request (imports, the store's first commit) is not the flood's
            before = listen_overflows()
            ready, done = multiprocessing.Event(), multiprocessing.Event()
            attacker = multiprocessing.Process(target=flood, args=(port, connections, ready, done))
            attacker.start()
            ready.wait(60)
            results = [honest_post(port, number) for number in range(1, honest + 1)]
            done.set()
            attacker.join(30)
            after = listen_overflows()
            return results, (after - before if after is not None and before is not None else None)
        finally:
            process.send_signal(signal.SIGINT)
            process.wait(30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--connections", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--honest", type=int, default=20)
    parser.add_argument("--repo", default=str(Path(__file__).resolve().parents[1]))
    args = parser.parse_args()
    limit = raise_file_limit(args.connections + 256)
    if limit < args.connections + 256:
        raise SystemExit(f"the file limit is {limit}: {args.connections} connections need {args.connections + 256}")
    repo = Path(args.repo).resolve()
    print(f"repo {repo}; {args.connections} connections at once; {args.honest} honest posts per run; "
          f"load average {os.getloadavg()[0]:.2f}")
    every: list[float] = []
    for run in range(1, args.runs + 1):
        results, overflows = one_run(repo, args.connections, args.honest)
        latencies = sorted(seconds for seconds, _ in results)
        every += latencies
        statuses = sorted({status for _, status in results})
        over = sum(seconds > PROMISE for seconds in latencies)
        print(f"run {run}: first {results[0][0] * 1000:.0f} ms, p50 {statistics.median(latencies) * 1000:.0f} ms, "
              f"p99 {latencies[min(len(latencies) - 1, int(0.99 * len(latencies)))] * 1000:.0f} ms, "
              f"max {latencies[-1] * 1000:.0f} ms; over {PROMISE:g} s: {over}; statuses {statuses}"
              + (f"; SYNs dropped at a full accept queue: {overflows}" if overflows is not None else ""))
    every.sort()
    print(f"all runs: p50 {statistics.median(every) * 1000:.0f} ms, p99 {every[min(len(every) - 1, int(0.99 * len(every)))] * 1000:.0f} ms, "
          f"over {PROMISE:g} s: {sum(seconds > PROMISE for seconds in every)} of {len(every)}; "
          f"load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
