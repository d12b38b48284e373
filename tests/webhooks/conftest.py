"""Fixtures for the webhook tests: a private store per test and listeners on 127.0.0.1, port 0."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import time
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime
from typing import Any

import aiohttp
import pytest

from tests.webhooks import headless
from tui.webhooks.events import EventRecord, StoredEvent
from tui.webhooks.listener import Listener
from tui.api.signing import Verdict
from tui.webhooks.store import EventStore

# 32+ characters, as the gateway requires (spec §8); the signature vectors in the tests were made with it.
KEY = "test-key-0123456789abcdef0123456789"


async def until(condition: Callable[[], bool], what: str, *, timeout: float = 30.0) -> None:
    """Wait for `condition`, checking every 10 ms; fail naming `what` after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.01)


@pytest.fixture(autouse=True)
def no_listener_left_running():
    """A test that fails before stopping the `listen` it started must not leave it running after the run."""
    yield
    while headless.started:
        process = headless.started.pop()
        if process.returncode is None:  # by its pid: the test's event loop, which started it, is closed by now
            with contextlib.suppress(ProcessLookupError, ChildProcessError):
                os.kill(process.pid, signal.SIGKILL)
                os.waitpid(process.pid, 0)


@pytest.fixture
def store(tmp_path) -> EventStore:
    with EventStore(tmp_path / "events.sqlite3") as opened:
        yield opened


@pytest.fixture
async def start_listener(store) -> AsyncIterator[Callable[..., Any]]:
    started: list[Listener] = []

    async def start(**options: Any) -> Listener:
        listener = Listener(store, **options)
        await listener.start()
        started.append(listener)
        return listener

    yield start
    for listener in started:
        await listener.stop()


@pytest.fixture
async def http() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=10)) as session:
        yield session


def record(
    payload: Any = None,
    *,
    body: bytes | None = None,
    kind: str = "Message",
    summary: str = "summary",
    verdict: Verdict = Verdict.VALID,
    rejected: bool = False,
    message_ids: tuple[str, ...] = (),
    path: str = "/hook",
) -> EventRecord:
    if body is None:
        body = json.dumps(payload, separators=(",", ":")).encode() if payload is not None else b""
    return EventRecord(
        received_at=datetime.now(UTC),
        path=path,
        headers={"content-type": "application/json"},
        body=body,
        payload=payload,
        kind=kind,
        summary=summary,
        verdict=verdict,
        rejected=rejected,
        reason="test rejection" if rejected else None,
        message_ids=message_ids,
    )


def ids(events: list[StoredEvent]) -> list[int]:
    return [event.id for event in events]
