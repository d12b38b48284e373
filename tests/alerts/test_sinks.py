"""Where alerts go headless (issue 35): `--alert-command` (a real program, the alert on its stdin) and
`--alert-webhook` (a POST), behind a rate limit, with a timeout, never holding up the caller."""

from __future__ import annotations

import asyncio
import json
import logging
import sys
import time
from pathlib import Path

import pytest
from aiohttp import web

from tests.alerts.events import T0
from tui.core.alerts import Alert, AlertKind, AlertState
from tui.core.alerts.sinks import AlertCommand, AlertWebhook, RateLimit
from tui.local.forward_targets import ForwardTargetRefused

APPEND_STDIN = "import sys; open(sys.argv[1], 'a').write(sys.stdin.read() + '\\n')"


def alert(n: int = 0, state: AlertState = AlertState.RAISED) -> Alert:
    return Alert("shop", "session", AlertKind.DISCONNECTED, state, T0, f"disconnected #{n}")


async def until(condition, what: str, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.01)


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line] if path.exists() else []


class FakeTime:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_rate_limit_lets_a_burst_through_then_paces() -> None:
    clock = FakeTime()
    limit = RateLimit(burst=3, per_minute=30, clock=clock)
    assert [limit.take() for _ in range(3)] == [0.0, 0.0, 0.0]
    assert limit.take() == pytest.approx(2.0)  # 30 a minute: one every 2 s
    assert limit.take() == pytest.approx(4.0)  # reserved in turn: delayed, never dropped
    clock.now = 60.0
    assert [limit.take() for _ in range(3)] == [0.0, 0.0, 0.0]  # refilled up to the burst, no more
    assert limit.take() > 0


async def test_command_gets_each_alert_as_one_json_object_on_stdin(tmp_path: Path) -> None:
    out = tmp_path / "alerts.jsonl"
    sink = AlertCommand([sys.executable, "-c", APPEND_STDIN, str(out)])
    await sink.start()
    try:
        started = time.monotonic()
        for n in range(3):
            sink.submit(alert(n))
        assert time.monotonic() - started < 0.5  # submit only queues: the listener's loop is never held
        await until(lambda: len(lines(out)) == 3, "three alerts written by the command")
    finally:
        await sink.stop()
    assert [entry["detail"] for entry in lines(out)] == ["disconnected #0", "disconnected #1", "disconnected #2"]
    assert set(lines(out)[0]) == {"account", "family", "kind", "state", "at", "detail"}


async def test_a_failing_command_is_one_line_and_the_next_alert_still_runs(tmp_path: Path, caplog) -> None:
    out = tmp_path / "alerts.jsonl"
    script = ("import sys, json; a = json.load(sys.stdin)\n"
              "if a['detail'].endswith('#0'): sys.stderr.write('pager down\\nsecond line\\n'); sys.exit(3)\n"
              f"open({str(out)!r}, 'a').write(json.dumps(a) + '\\n')")
    sink = AlertCommand([sys.executable, "-c", script])
    caplog.set_level(logging.WARNING)
    await sink.start()
    try:
        sink.submit(alert(0))
        sink.submit(alert(1))
        await until(lambda: len(lines(out)) == 1, "the second alert after the first failed")
    finally:
        await sink.stop()
    (failure,) = [record.getMessage() for record in caplog.records]
    assert "\n" not in failure and "exit 3" in failure and "second line" in failure


async def test_a_command_past_its_timeout_is_stopped(tmp_path: Path, caplog) -> None:
    out = tmp_path / "alerts.jsonl"
    script = ("import sys, json, time; a = json.load(sys.stdin)\n"
              "if a['detail'].endswith('#0'): time.sleep(60)\n"
              f"open({str(out)!r}, 'a').write(json.dumps(a) + '\\n')")
    sink = AlertCommand([sys.executable, "-c", script], timeout=1.0)
    caplog.set_level(logging.WARNING)
    await sink.start()
    try:
        sink.submit(alert(0))
        sink.submit(alert(1))
        await until(lambda: len(lines(out)) == 1, "the alert after the one that hung")
    finally:
        await sink.stop()
    assert any("did not finish within 1 s" in record.getMessage() for record in caplog.records)


async def test_a_command_that_does_not_exist_is_one_line(caplog) -> None:
    sink = AlertCommand(["/nonexistent/alert-program"])
    caplog.set_level(logging.WARNING)
    await sink.start()
    try:
        sink.submit(alert())
        await until(lambda: caplog.records, "the failure logged")
    finally:
        await sink.stop()
    assert "cannot run /nonexistent/alert-program" in caplog.records[0].getMessage()


async def test_webhook_posts_the_alert_json() -> None:
    received: list[tuple[str, dict]] = []

    async def take(request: web.Request) -> web.Response:
        received.append((request.content_type, await request.json()))
        return web.Response(status=204)

    app = web.Application()
    app.add_routes([web.post("/alerts", take)])
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    sink = AlertWebhook(f"http://127.0.0.1:{port}/alerts")
    await sink.start()
    try:
        sink.submit(alert(7, AlertState.CLEARED))
        await until(lambda: received, "the alert posted")
    finally:
        await sink.stop()
        await runner.cleanup()
    content_type, body = received[0]
    assert content_type == "application/json" and body["state"] == "cleared" and body["detail"] == "disconnected #7"


def test_webhook_to_another_host_needs_allow_remote() -> None:
    with pytest.raises(ForwardTargetRefused, match="not this machine"):
        AlertWebhook("https://alerts.example.com/hook")
    AlertWebhook("https://alerts.example.com/hook", allow_remote=True)
