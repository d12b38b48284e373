"""What every sandbox handler needs: the state, the credentials, the rate limiter, clock and ids, and the send hook.

The checks shared by both families live here too, in the order a request meets them:
credentials (401), rate (429), connection (409).
"""

from __future__ import annotations

import hmac
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from aiohttp import web

from tui.sandbox.dialect import WuzapiRelease
from tui.sandbox.pairing import Announce, CodeIssuer
from tui.sandbox.rate_limit import RateLimiter
from tui.sandbox.state import SandboxState, SentMessage
from tui.sandbox.webhook_posts import Step, post_nothing
from tui.sandbox.wire import ApiError

CLIENT_TOKEN_HEADER = "Client-Token"
SESSION_TOKEN_HEADER = "token"
NOT_CONNECTED = "instance not connected"
BANNED = "this number is banned from WhatsApp"  # the sandbox's `ban` fault (tui.sandbox.faults)


def _same_secret(received: str | None, expected: str) -> bool:
    if received is None:
        return False
    # Bytes: compare_digest refuses non-ASCII str, and headers and paths are attacker-controlled.
    return hmac.compare_digest(received.encode("utf-8", "surrogateescape"), expected.encode("utf-8"))


@dataclass
class Context:
    state: SandboxState
    instance_id: str
    instance_token: str
    client_token: str
    session_token: str
    limiter: RateLimiter
    clock: Callable[[], datetime]
    new_id: Callable[[], str]
    on_sent: Callable[[SentMessage], None]
    codes: CodeIssuer
    announce: Announce  # a family's link changed: its gateway tells the webhook (tui.sandbox.pairing.LinkEvent)
    wuzapi_release: WuzapiRelease = WuzapiRelease.NEWER
    connect_delay: timedelta = timedelta(0)
    """WuzAPI after an immediate connect: how long (on `clock`) until its websocket is up and it gives codes."""
    server_url: Callable[[], str] = str
    """The sandbox's own URL once it listens ("" before): Evolution's deliveries carry it as `server_url`."""
    deliver: Callable[[list[Step]], None] = post_nothing
    """Post these steps to the webhooks, in order after those already scheduled (a dialect's own events: Evolution's
    qrcode.updated while pairing)."""

    def check_instance(self, request: web.Request, *, needs_connection: bool) -> None:
        client_token = request.headers.get(CLIENT_TOKEN_HEADER)
        if not client_token:
            raise ApiError(401, "Client-Token header is missing")
        # Evaluate every comparison so the time taken does not tell which credential was wrong.
        checks = [
            _same_secret(client_token, self.client_token),
            _same_secret(request.match_info.get("instance_id"), self.instance_id),
            _same_secret(request.match_info.get("instance_token"), self.instance_token),
        ]
        if not all(checks):
            raise ApiError(401, "invalid Client-Token, instance id or instance token")
        self._check_rate()
        if needs_connection and not self.state.instance_link.connected:
            raise ApiError(409, NOT_CONNECTED)

    def check_session(self, request: web.Request, *, needs_connection: bool) -> None:
        if not _same_secret(request.headers.get(SESSION_TOKEN_HEADER), self.session_token):
            raise ApiError(401, "unauthorized")  # WuzAPI's wording for a missing or unknown token
        self._check_rate()
        if needs_connection and not self.state.session_link.connected:
            raise ApiError(409, NOT_CONNECTED)

    def _check_rate(self) -> None:
        if self.state.banned:  # after the credentials: a banned account's token is still its own
            raise ApiError(403, BANNED)
        # Both families operate the same account, so they share its bucket.
        wait = self.limiter.retry_after(self.instance_id)
        if wait:
            raise ApiError(
                429, f"rate limit reached; retry in {wait} s", headers={"Retry-After": str(wait)}
            )
