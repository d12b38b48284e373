"""How the run's own details read on screen: in deterministic mode (tests, snapshots) the random loopback ports of
the sandbox and the listener become fixed names, so screenshots do not differ from run to run (the UI's
`tui.ui.widgets.timefmt` hides wall-clock times and durations the same way, given `deterministic`)."""

from __future__ import annotations

from tui.core.feed.feed import EventFeed
from tui.core.inbox import now_us
from tui.core.sandbox_host import SandboxHost
from tui.core.webhook_setup import WebhookSetup


class Display:
    def __init__(self, feed: EventFeed, sandbox: SandboxHost, webhooks: WebhookSetup, *, deterministic: bool) -> None:
        self._feed = feed
        self._sandbox = sandbox
        self._webhooks = webhooks
        self.deterministic = deterministic

    def now_us(self) -> int:
        return now_us()

    def scrub(self, text: str) -> str:
        """Text for display: in deterministic mode random loopback ports become fixed names."""
        if not self.deterministic or not text:
            return text
        for url, name in sorted(self._random_urls(), key=lambda pair: -len(pair[0])):  # longest first
            text = text.replace(url, name)
        return text

    def _random_urls(self) -> list[tuple[str, str]]:
        urls: list[tuple[str, str]] = []
        sandbox, listener, pointed = self._sandbox.sandbox, self._feed.listener, self._webhooks.webhooks_base
        if sandbox is not None and sandbox.url:
            urls.append((sandbox.url.rstrip("/"), "http://sandbox.test"))
            urls.append((sandbox.url.rstrip("/").removeprefix("http://"), "sandbox.test"))
        if listener is not None and listener.port:
            urls.append((listener.url, "http://listener.test"))
            urls.append((listener.url.removeprefix("http://"), "listener.test"))
        if pointed and pointed.startswith("http://127.0.0.1:") and pointed not in (url for url, _ in urls):
            # where the webhooks point after the listener moved (a random port of the previous listener)
            urls.append((pointed, "http://old-listener.test"))
        return urls

    def listener_address(self) -> str:
        intake = self._feed.intake_address()  # another process's listener, or none: said as such (issue 32)
        if intake is not None:
            return intake
        listener = self._feed.listener
        if listener is None or listener.port is None:
            return "not listening"
        if self.deterministic:
            return f"{listener.host}:port"
        return listener.url.removeprefix("http://")
