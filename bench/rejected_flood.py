"""The store's growth under a flood of rejected posts (issue 37): a real `gateway-tui listen` with a key, flooded for
--seconds with unsigned 4 KB WuzAPI-style posts (401) and posts to an account it does not serve (404).

    uv run python bench/rejected_flood.py [--seconds 20] [--senders 16] [--repo PATH]

Reports the posts answered, their rate, and the growth of the store's files (database and WAL) from the listener's
start to its stop, with the rows it holds. `--repo` runs another checkout's `listen` (an export of an older commit:
the "before" figure). Bounded: the flood stops at --seconds or --max-posts, whichever comes first.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import signal
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

import aiohttp

KEY = "bench-hmac-key-0123456789abcdefghijkl"
BODY_SIZE = 4096
UNKNOWN_EVERY = 20  # one post in this many goes to /a/nobody/session (404)


def body(number: int) -> bytes:
    head = ('{"event":{"Info":{"Chat":"5491155553934@s.whatsapp.net","ID":"3EB0%08d","IsFromMe":false,'
            '"Sender":"5491155553934@s.whatsapp.net"},"Message":{"conversation":"' % number)
    tail = '"}},"type":"Message"}'
    return (head + "x" * (BODY_SIZE - len(head) - len(tail)) + tail).encode()


def files_size(db: Path) -> int:
    return sum(path.stat().st_size for path in (db, db.with_name(db.name + "-wal")) if path.exists())


async def run(args: argparse.Namespace) -> None:
    repo = Path(args.repo).resolve()
    with tempfile.TemporaryDirectory() as scratch:
        db = Path(scratch) / "events.sqlite3"
        env = {**os.environ, "GATEWAY_TUI_HMAC_KEY": KEY, "PYTHONPATH": str(repo),
               "XDG_DATA_HOME": scratch, "XDG_CONFIG_HOME": scratch, "XDG_STATE_HOME": scratch}
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "tui", "listen", "--port", "0", "--db", str(db),
            env=env, cwd=repo, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE)
        assert process.stderr is not None
        line = (await asyncio.wait_for(process.stderr.readline(), 30)).decode()
        match = re.search(r"listening on (http://\S+?);", line)
        if match is None:
            process.kill()
            raise SystemExit(f"unexpected first line: {line!r}")
        url = match.group(1)
        before = files_size(db)
        statuses: dict[int, int] = {}
        counter = iter(range(args.max_posts))
        deadline = time.monotonic() + args.seconds

        async def send(http: aiohttp.ClientSession) -> None:
            for number in counter:
                if time.monotonic() >= deadline:
                    return
                path = "/a/nobody/session" if number % UNKNOWN_EVERY == 0 else "/session"
                async with http.post(url + path, data=body(number), headers={"Content-Type": "application/json"}) as answer:
                    await answer.read()
                    statuses[answer.status] = statuses.get(answer.status, 0) + 1

        started = time.monotonic()
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=30)) as http:
            await asyncio.gather(*(send(http) for _ in range(args.senders)))
        elapsed = time.monotonic() - started
        process.send_signal(signal.SIGINT)
        _stdout, stderr = await asyncio.wait_for(process.communicate(), 60)
        growth = files_size(db) - before
        with sqlite3.connect(db) as connection:
            rows = connection.execute("SELECT count(*) FROM events").fetchone()[0]
        posts = sum(statuses.values())
        stopped = [text for text in stderr.decode().splitlines() if text.startswith("stopped:")]
        print(f"repo {repo}")
        print(f"posts answered: {posts} in {elapsed:.1f} s ({posts / elapsed:,.0f}/s); statuses {dict(sorted(statuses.items()))}")
        print(f"store files (database + WAL) grew by {growth / 2**20:.1f} MiB ({growth / elapsed / 2**20:.2f} MiB/s); "
              f"{rows} rows")
        print(stopped[0] if stopped else "(no stop line)")
        print(f"load average after: {os.getloadavg()[0]:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--senders", type=int, default=16)
    parser.add_argument("--max-posts", type=int, default=500_000)
    parser.add_argument("--repo", default=str(Path(__file__).resolve().parents[1]))
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
