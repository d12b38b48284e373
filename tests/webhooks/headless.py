"""Start `gateway-tui listen` as a real subprocess for the headless tests; the key travels only in its environment."""

from __future__ import annotations

import asyncio
import os
import re
import sys
from pathlib import Path

from tui.webhooks.listener import HMAC_KEY_ENV

REPO = Path(__file__).resolve().parents[2]  # so `-c` scripts can import tests.*
started: list[asyncio.subprocess.Process] = []
"""Every listener started here; tests/webhooks/conftest.py kills the ones a failed test left running."""


async def start_headless(
    db: Path | None,
    *options: str,
    key: str | None = None,
    stdout=asyncio.subprocess.DEVNULL,
    preexec_fn=None,
    launcher: tuple[str, ...] = ("-m", "tui"),
    extra_env: dict[str, str] | None = None,
    before: tuple[str, ...] = (),
):
    """(process, url) once the listener has printed where it listens; `preexec_fn` runs in the child (limits).
    `db` None: the profile's store; `before`: arguments before `listen` (`--insecure-storage`); `launcher`: how
    Python runs the program (`-c` with a script that calls tui.cli.main, e.g. with a test keyring)."""
    env = {k: v for k, v in os.environ.items() if k != HMAC_KEY_ENV}
    if key is not None:
        env[HMAC_KEY_ENV] = key
    env.update(extra_env or {})
    store = ("--db", str(db)) if db is not None else ()
    process = await asyncio.create_subprocess_exec(
        sys.executable, *launcher, *before, "listen", "--port", "0", *store, *options,
        env=env, stdout=stdout, stderr=asyncio.subprocess.PIPE, preexec_fn=preexec_fn, cwd=REPO,
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
    process.first_line = line  # type: ignore[attr-defined]  # what it says about signing, for the tests to read
    return process, match.group(1)
