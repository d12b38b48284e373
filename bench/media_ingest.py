"""Incoming media's cost to the listener (issue 25): N signed WuzAPI `Message` events, each with a 1 MiB image
inline (base64, as WuzAPI's media delivery `base64` sends it: wmiau.go's top-level `base64`, `mimeType`,
`fileName`), posted to a real `gateway-tui listen`, against the same N events without the file.

    uv run python bench/media_ingest.py [--events 200] [--size 1048576] [--connections 4] [--seconds 120] [--repo PATH]

Each variant runs its own `listen` process (`python -m tui listen --port 0 --db <scratch>`, the key only in its
environment) on a fresh store in a scratch directory. Each image is distinct (the PNG signature then random
bytes: the sniffer names it image/png; random bytes are what a photo's compressed data looks like to SQLite), so
every file is kept, none deduplicated; the bodies are made before the clock starts. Reported per variant: the ingest rate (events answered 200 per second of
wall time, from the first request to the last answer), the bytes posted, the store's size on disk (the database,
its WAL and shared memory after the listener stopped), the media folder's size and file count. Bounded: at most
--events requests per variant, and --seconds per variant (then it stops and says so). The load average is printed
before and after: the machine may be shared. `--repo` runs another checkout's listener (e.g. an earlier commit
exported with `git archive`) under this bench, for side-by-side runs; its media / plain ratio is less sensitive to a
busy machine than either rate.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import os
import platform
import re
import signal
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tui.webhooks.listener import HMAC_KEY_ENV  # noqa: E402
from tui.api.signing import SIGNATURE_HEADER, sign  # noqa: E402

KEY = "media-bench-key-0123456789abcdef0123"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def message(index: int, image: bytes | None) -> bytes:
    """A WuzAPI json-mode `Message` (docs/gateways/wuzapi.md §4.3), with the image inline or without it."""
    peer = f"55119{index % 50:08d}@s.whatsapp.net"
    payload: dict[str, object] = {
        "type": "Message", "instanceName": "bench", "userID": "0123456789abcdef0123456789abcdef",
        "event": {"Info": {"Chat": peer, "Sender": peer, "IsFromMe": False, "IsGroup": False,
                           "ID": f"3EB0BENCH{index:06d}", "Type": "media", "PushName": f"Peer {index % 50}",
                           "Timestamp": "2026-11-27T05:00:00Z", "MediaType": "image"},
                  "Message": {"imageMessage": {"caption": f"photo {index}", "mimetype": "image/png",
                                               "fileLength": len(image) if image is not None else 1048576}}},
    }
    if image is not None:
        payload.update({"base64": base64.b64encode(image).decode("ascii"), "mimeType": "image/png",
                        "fileName": f"photo-{index}.png"})
    return json.dumps(payload, separators=(",", ":")).encode()


def image(size: int) -> bytes:
    return PNG_SIGNATURE + os.urandom(size - len(PNG_SIGNATURE))


async def start_listener(workdir: Path, repo: Path) -> tuple[asyncio.subprocess.Process, str]:
    env = {k: v for k, v in os.environ.items() if k != HMAC_KEY_ENV}
    env[HMAC_KEY_ENV] = KEY
    env["PYTHONPATH"] = str(repo)
    for name in ("XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME"):
        env[name] = str(workdir / name.lower())
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "tui", "listen", "--port", "0", "--db", str(workdir / "events.db"),
        "--media-limit", "4G", env=env, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE, cwd=repo)
    assert process.stderr is not None
    line = (await asyncio.wait_for(process.stderr.readline(), timeout=60)).decode()
    found = re.search(r"listening on (http://\S+?);", line)
    if found is None:
        process.kill()
        await process.wait()
        raise SystemExit(f"unexpected first line from the listener: {line!r}")
    return process, found.group(1)


def cpu_seconds(pid: int) -> tuple[float, float]:
    """A process's (user, system) CPU time so far, in seconds (Linux's /proc; zeros elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except OSError:
        return 0.0, 0.0
    tick = os.sysconf("SC_CLK_TCK")
    return int(fields[11]) / tick, int(fields[12]) / tick


def folder_size(path: Path) -> tuple[int, int]:
    """(bytes, files) in a folder, 0 when it does not exist."""
    if not path.is_dir():
        return 0, 0
    files = [entry for entry in path.iterdir() if entry.is_file()]
    return sum(entry.stat().st_size for entry in files), len(files)


async def run(variant: str, args: argparse.Namespace) -> dict[str, object]:
    with tempfile.TemporaryDirectory(prefix="media-bench-") as scratch:
        workdir = Path(scratch)
        # Made before the clock starts (about 1.4 MB each with media: 280 MB for 200), so only the posting is timed.
        bodies = [message(index, image(args.size) if variant == "media" else None) for index in range(args.events)]
        process, url = await start_listener(workdir, Path(args.repo).resolve())
        answered = posted = 0
        statuses: dict[int, int] = {}
        next_index = 0
        listener_cpu, bench_cpu = cpu_seconds(process.pid), os.times()
        started = time.perf_counter()
        deadline = started + args.seconds

        async def worker(client: httpx.AsyncClient) -> None:
            nonlocal answered, posted, next_index
            while next_index < args.events and time.perf_counter() < deadline:
                index = next_index
                next_index += 1
                body = bodies[index]
                headers = {"Content-Type": "application/json", SIGNATURE_HEADER: sign(KEY, body)}
                response = await client.post(url + "/session", content=body, headers=headers)
                statuses[response.status_code] = statuses.get(response.status_code, 0) + 1
                posted += len(body)
                if response.status_code == 200:
                    answered += 1

        try:
            async with httpx.AsyncClient(timeout=args.seconds, trust_env=False) as client:
                await asyncio.gather(*(worker(client) for _ in range(args.connections)))
            elapsed = time.perf_counter() - started
            listener_after, bench_after = cpu_seconds(process.pid), os.times()
            listener_cpu = (listener_after[0] - listener_cpu[0], listener_after[1] - listener_cpu[1])
            bench_cpu = (bench_after.user - bench_cpu.user, bench_after.system - bench_cpu.system)
        finally:
            process.send_signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(process.wait(), timeout=30)
            except TimeoutError:
                process.kill()
                await process.wait()
        db = workdir / "events.db"
        store = sum(path.stat().st_size for path in workdir.glob("events.db*") if path.is_file())
        with sqlite3.connect(db) as connection:
            stored = connection.execute("SELECT count(*) FROM events").fetchone()[0]
            messages = connection.execute("SELECT count(*) FROM chat_messages").fetchone()[0]
        media_bytes, media_files = folder_size(workdir / "events.db.media")
        return {"variant": variant, "answered": answered, "statuses": statuses, "elapsed": elapsed,
                "rate": answered / elapsed if elapsed else 0.0, "posted": posted, "store": store, "stored": stored,
                "messages": messages, "media_bytes": media_bytes, "media_files": media_files,
                "stopped_early": next_index < args.events, "listener_cpu": listener_cpu, "bench_cpu": bench_cpu}


def cpu_per_event(result: dict[str, object], which: str) -> str:
    """A process's CPU time while posting, per event answered: "8.1 ms (5.0 + 3.1)"."""
    user, system = result[which]  # type: ignore[misc]
    per_event = 1000 / max(int(result["answered"]), 1)  # type: ignore[call-overload]
    return f"{(user + system) * per_event:.2f} ms ({user * per_event:.2f} + {system * per_event:.2f})"


def mib(value: object) -> str:
    assert isinstance(value, int)
    return f"{value / 1048576:,.1f} MiB"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, default=200)
    parser.add_argument("--size", type=int, default=1024 * 1024, help="bytes per image (default 1 MiB)")
    parser.add_argument("--connections", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=120.0, help="at most this long per variant")
    parser.add_argument("--repo", default=str(REPO), help="the checkout whose listener runs (default: this one)")
    args = parser.parse_args()
    print(f"repo {Path(args.repo).resolve()}")
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
          f"SQLite {sqlite3.sqlite_version}; load average before: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    results = [asyncio.run(run(variant, args)) for variant in ("plain", "media")]
    print(f"{args.events} signed WuzAPI Message events, {args.connections} connections, image {args.size:,} bytes")
    print(f"{'variant':<8} {'200s':>5} {'events/s':>9} {'posted':>12} {'store':>12} {'media folder':>14} {'files':>6}")
    for result in results:
        print(f"{result['variant']:<8} {result['answered']:>5} {result['rate']:>9.1f} {mib(result['posted']):>12} "
              f"{mib(result['store']):>12} {mib(result['media_bytes']):>14} {result['media_files']:>6}"
              + ("  (stopped at --seconds)" if result["stopped_early"] else ""))
        if set(result["statuses"]) - {200}:  # type: ignore[arg-type]
            print(f"  answers: {result['statuses']}")
        print(f"  stored events {result['stored']}, inbox messages {result['messages']}, wall {result['elapsed']:.1f} s")
        print(f"  CPU per event while posting (user + system): listener {cpu_per_event(result, 'listener_cpu')}, "
              f"this bench (the sender) {cpu_per_event(result, 'bench_cpu')}")
    plain, media = results
    if plain["rate"] and media["rate"]:
        print(f"media / plain ingest rate: {media['rate'] / plain['rate']:.3f}")  # type: ignore[operator]
    print(f"load average after: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
