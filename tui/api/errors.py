"""Typed errors of the gateway client: one per status of the spec (§7), plus transport faults.

Every message is safe to show and log: the client redacts secrets before building one.
"""

from __future__ import annotations


class GatewayError(Exception):
    """Base of everything the client raises for a failed exchange."""

    status: int | None = None

    def __init__(self, message: str, *, status: int | None = None, body: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        if status is not None:
            self.status = status
        self.body = body


class BadRequest(GatewayError):
    status = 400


class Unauthorized(GatewayError):
    status = 401


class NotFound(GatewayError):
    status = 404


class Conflict(GatewayError):
    """409: the instance already exists or is not connected."""

    status = 409


class RateLimited(GatewayError):
    status = 429

    def __init__(self, message: str, *, retry_after: float | None = None, **kwargs) -> None:
        super().__init__(message, **kwargs)
        self.retry_after = retry_after


class ServerError(GatewayError):
    status = 500


class UnexpectedStatus(GatewayError):
    """Any other non-success status (405, 415, 502, ...), or a 2xx whose body is only an error report."""


class NoCodeYet(UnexpectedStatus):
    """A 2xx to a pairing call that has no code in it yet (Evolution's first connect: `{"count": 0}`): asking
    again shortly gives one."""


class ReadOnlyRefused(GatewayError):
    """The profile is read-only and the operation writes (`writes` in the operations table): refused by the client
    before anything was sent, not even a read that would come first. `status` stays None."""

    def __init__(self, profile: str, operation: str) -> None:
        super().__init__(
            f"This profile ({profile}) is read-only; nothing was sent. Make it writable with "
            f"`gateway-tui profile add {profile} --no-read-only`."
        )
        self.profile = profile
        self.operation = operation


class TransportFault(GatewayError):
    """The exchange never produced an HTTP answer; `status` stays None."""


class GatewayTimeout(TransportFault):
    pass


class ConnectionRefused(TransportFault):
    """Nothing accepted the connection (refused, unreachable, unknown host)."""


class ConnectionLost(TransportFault):
    """The connection broke after it was made (reset, closed mid-answer, protocol error)."""


class AnswerTooLarge(GatewayError):
    """The answer was larger than the client reads (GatewayHttp's `max_answer`): it was dropped unread."""


class InvalidBaseUrl(GatewayError):
    """The configured base URL cannot be used for a request (no http:// or https://, bad host)."""


class MalformedResponse(GatewayError):
    """The status said success but the body is not the JSON shape the operation answers."""


ERRORS_BY_STATUS: dict[int, type[GatewayError]] = {
    400: BadRequest,
    401: Unauthorized,
    404: NotFound,
    409: Conflict,
    429: RateLimited,
    500: ServerError,
}
