"""Start `gateway-tui listen` as a real subprocess for the headless tests; the key travels only in its environment."""

from __future__ import annotations

import asyncio
import os
import re
import sys
from pathlib import Path

from tui.webhooks.listener import HMAC_KEY_ENV

started: list[asyncio.subprocess.Process] = []
"""Every listener started here; tests/webhooks/conftest.py kills the ones a failed test left running."""


async def start_headless(
    db: Path, *options: str, key: str | None = None, stdout=asyncio.subprocess.DEVNULL, preexec_fn=None
):
    """(process, url) once the listener has printed where it listens; `preexec_fn` runs in the child (limits)."""
    env = {k: v for k, v in os.environ.items() if k != HMAC_KEY_ENV}
    if key is not None:
        env[HMAC_KEY_ENV] = key
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "tui", "listen", "--port", "0", "--db", str(db), *options,
        env=env, stdout=stdout, stderr=asyncio.subprocess.PIPE, preexec_fn=preexec_fn,
    )
    started.append(process)
    try:
        line = (await asyncio.wait_for(process.stderr.readline(), timeout=30)).decode()
    except BaseException:
        process.kill()
        await process.wait()
        raise
    match = re.search(r"listening on (http://\S+?);", line)
    if match is None:
        process.kill()
        await process.wait()
        raise AssertionError(f"unexpected first line from the listener: {line!r}")
    return process, match.group(1)
