"""The two kinds of model: a Request (strict: every rule of the spec checked before anything is sent; the phone
sends' common shape) and a Response (lenient: every shape the real gateways give, unknown keys ignored)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any, Protocol, runtime_checkable

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
)

from tui.api.models.fields import Recipient

# ---------------------------------------------------------------------------------------------
# Requests


class Request(BaseModel):
    """A request body. `wire()` is exactly what goes on the wire: spec field names, unset optionals left out."""

    model_config = ConfigDict(extra="forbid", frozen=True, str_strip_whitespace=False, defer_build=True)

    def wire(self) -> dict[str, Any]:
        return self.model_dump(mode="json", exclude_none=True, by_alias=True)


DelayMs = Annotated[int, Field(ge=0, description="milliseconds to wait before sending")]


@runtime_checkable
class Sendable(Protocol):
    """The request of an operation that sends a message (its row's `sends`): to whom it goes, and how it reads in
    the inbox once the gateway took it (`tui.webhooks.sent`). Written with the model, so a new kind of message
    needs no list elsewhere; tests/test_operations_complete.py checks each send's model is one."""

    @property
    def recipient(self) -> str: ...

    def reads_as(self) -> str: ...


def _lines(*parts: str | None) -> str:
    return "\n".join(part for part in parts if part)


class ToPhone(Request):
    """A send addressed by `phone` (a number or a group JID); the subclass says how it reads (`Sendable`)."""

    phone: Recipient

    @property
    def recipient(self) -> str:
        return self.phone


class NoBody(Request):
    """Operations that take nothing (status reads, HMAC status and removal)."""


# ---------------------------------------------------------------------------------------------
# Responses


class Response(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True, populate_by_name=True, defer_build=True)


def _boolish(value: Any) -> Any:
    # Z-API lists carry booleans as strings ("false", "0").
    if isinstance(value, str) and value.lower() in ("true", "false", "1", "0"):
        return value.lower() in ("true", "1")
    return value


LenientBool = Annotated[bool, BeforeValidator(_boolish)]


def _epoch_or_iso(value: Any) -> Any:
    # Instance-family timestamps come as epoch milliseconds, session-family ones as ISO text or Unix seconds;
    # Go's zero time means "never".
    if value in ("", None) or (isinstance(value, str) and value.startswith("0001-01-01")):
        return None
    if isinstance(value, str) and value.isdigit():
        value = int(value)
    if isinstance(value, int | float) and not isinstance(value, bool):
        seconds = value / 1000 if value > 10**11 else value
        return datetime.fromtimestamp(seconds, tz=UTC)
    return value


FlexibleTime = Annotated[datetime | None, BeforeValidator(_epoch_or_iso)]
