"""Where alerts go without the app: a program of the user's (`listen --alert-command CMD`), with the alert as one
JSON object on its stdin, or a URL (`listen --alert-webhook URL`) the alert is POSTed to.

Both take alerts through `submit`, which only queues: one worker task per sink delivers them in order, one at a
time, so a slow pager or a hung script never holds up the listener's loop (nor piles up processes). Each delivery
has a timeout; a failure is one line in the log (stderr under `listen`), and the next alert goes out as usual.

The rate limit is a token bucket: a burst of ALERT_BURST at once, then ALERT_PER_MINUTE. A fleet-wide outage
raises one alert per account at the same moment, and a chat bot or pager must not be hit by hundreds of runs a
second; but an alert over the limit is delayed, never dropped, so every `raised` is followed by its `cleared`.
Only a queue of QUEUE_LIMIT undelivered alerts (a command that keeps timing out under a storm) drops, and says so.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import shlex
import time
from collections.abc import Callable, Sequence

from tui.core.alerts.model import Alert
from tui.local.forward_targets import check_target

log = logging.getLogger(__name__)

ALERT_BURST = 10
ALERT_PER_MINUTE = 30
ALERT_TIMEOUT = 10.0  # seconds a command or a POST may take before it is stopped
QUEUE_LIMIT = 1000
STOP_GRACE = 2.0  # seconds `stop` lets queued alerts go out (listen's whole stop stays within 2 s, issue 13)
STDERR_KEPT = 2000  # bytes of a failed command's stderr read for its log line


class RateLimit:
    """A token bucket that reserves: `take()` is how long to wait before this delivery (0: at once)."""

    def __init__(self, *, burst: int = ALERT_BURST, per_minute: float = ALERT_PER_MINUTE,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.burst = burst
        self.rate = per_minute / 60.0
        self.clock = clock
        self._tokens = float(burst)
        self._at = clock()

    def take(self) -> float:
        now = self.clock()
        self._tokens = min(float(self.burst), self._tokens + (now - self._at) * self.rate)
        self._at = now
        self._tokens -= 1
        return 0.0 if self._tokens >= 0 else -self._tokens / self.rate


class _AlertQueue:
    """Alerts delivered in order by one worker task, paced by the rate limit."""

    name = "alert"

    def __init__(self, *, limit: RateLimit | None = None, timeout: float = ALERT_TIMEOUT) -> None:
        self.limit = limit or RateLimit()
        self.timeout = timeout
        self.dropped = 0
        self._queue: asyncio.Queue[Alert] = asyncio.Queue(QUEUE_LIMIT)
        self._worker: asyncio.Task[None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    async def start(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._worker = self._loop.create_task(self._run())

    def submit(self, alert: Alert) -> None:
        """Queue `alert` and return at once; from any thread (an alert may come from the store's writer)."""
        if self._loop is None:
            raise RuntimeError(f"{self.name}: submit before start")
        self._loop.call_soon_threadsafe(self._put, alert)

    def _put(self, alert: Alert) -> None:
        try:
            self._queue.put_nowait(alert)
        except asyncio.QueueFull:
            self.dropped += 1
            if self.dropped == 1:
                log.warning("%s: %d alerts wait already; newer ones are dropped until they go out",
                            self.name, QUEUE_LIMIT)

    async def stop(self, grace: float = STOP_GRACE) -> None:
        """Let the queued alerts go out for up to `grace` seconds, then stop the worker."""
        if self._worker is None:
            return
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._queue.join(), grace)
        self._worker.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._worker
        self._worker = None
        left = self._queue.qsize() + self.dropped
        if left:
            log.warning("%s: %d alerts not delivered (stopped)", self.name, left)

    async def _run(self) -> None:
        while True:
            alert = await self._queue.get()
            try:
                wait = self.limit.take()
                if wait:
                    await asyncio.sleep(wait)
                await self._deliver(alert)
            except asyncio.CancelledError:
                raise
            except Exception as error:  # a sink's own bug must not end the deliveries
                log.warning("%s: %s", self.name, _one_line(f"{type(error).__name__}: {error}"))
            finally:
                self._queue.task_done()

    async def _deliver(self, alert: Alert) -> None:
        raise NotImplementedError


class AlertCommand(_AlertQueue):
    """Runs `argv` (no shell) once per alert, the alert's JSON on stdin; stdout is ignored."""

    name = "alert-command"

    def __init__(self, argv: Sequence[str], *, limit: RateLimit | None = None, timeout: float = ALERT_TIMEOUT) -> None:
        if not argv:
            raise ValueError("the alert command is empty")
        super().__init__(limit=limit, timeout=timeout)
        self.argv = list(argv)

    @classmethod
    def parse(cls, command: str) -> AlertCommand:
        """`--alert-command "notify-send 'gateway alert'"`: split as a POSIX shell would, never run by one.
        ValueError for an empty or unbalanced command."""
        return cls(shlex.split(command))

    async def _deliver(self, alert: Alert) -> None:
        try:
            process = await asyncio.create_subprocess_exec(
                *self.argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.DEVNULL,
                stderr=asyncio.subprocess.PIPE)
        except OSError as error:
            log.warning("%s: cannot run %s: %s", self.name, self.argv[0], error.strerror or error)
            return
        try:
            _, stderr = await asyncio.wait_for(process.communicate(alert.to_json_line().encode() + b"\n"),
                                               self.timeout)
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            await process.wait()
            log.warning("%s: %s did not finish within %g s; stopped (%s)", self.name, self.argv[0], self.timeout,
                        alert.line())
            return
        if process.returncode:
            said = _one_line(stderr[-STDERR_KEPT:].decode("utf-8", "replace"))
            log.warning("%s: %s: exit %d%s (%s)", self.name, self.argv[0], process.returncode,
                        f": {said}" if said else "", alert.line())


class AlertWebhook(_AlertQueue):
    """POSTs each alert's JSON to `url`: loopback only unless `allow_remote`, as `--forward-to` (an alert names
    accounts and what happened to them). ForwardTargetRefused for a URL that may not be used."""

    name = "alert-webhook"

    def __init__(self, url: str, *, allow_remote: bool = False, limit: RateLimit | None = None,
                 timeout: float = ALERT_TIMEOUT) -> None:
        self.url = check_target(url, allow_remote=allow_remote, how_to_allow="--allow-remote")
        super().__init__(limit=limit, timeout=timeout)

    async def _deliver(self, alert: Alert) -> None:
        import httpx

        from tui.webhooks.forwarder import shown_target

        try:
            async with httpx.AsyncClient(trust_env=False, timeout=self.timeout, follow_redirects=False) as client:
                response = await client.post(self.url, content=alert.to_json_line().encode(),
                                             headers={"Content-Type": "application/json"})
        except httpx.HTTPError as error:
            log.warning("%s: %s: %s (%s)", self.name, shown_target(self.url),
                        _one_line(f"{type(error).__name__} {error}"), alert.line())
            return
        if not response.is_success:
            log.warning("%s: %s answered %d (%s)", self.name, shown_target(self.url), response.status_code,
                        alert.line())


def _one_line(text: str, limit: int = 300) -> str:
    line = " / ".join(part.strip() for part in text.strip().splitlines() if part.strip())
    return line if len(line) <= limit else line[: limit - 1] + "…"
