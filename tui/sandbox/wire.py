"""Request bodies in, answers out: the error shapes of both families, and body validation with the client's models.

Handlers raise `ApiError`; each family renders it in its own shape:
* instance family: `{"error": "<field>: <rule>", "field": "<field>"}` (`field` only when one is to blame);
* session family: WuzAPI's envelope `{"code": <status>, "error": "...", "success": false}`.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import Any, TypeVar

from aiohttp import web
from pydantic import ValidationError

from tui.api.models import Request, field_errors

RequestModel = TypeVar("RequestModel", bound=Request)
Handler = Callable[[web.Request], Awaitable[web.Response]]


def guarded(handler: Handler, check: Callable[[web.Request], None], render: Callable[[ApiError], web.Response]) -> Handler:
    """`handler` behind `check` (credentials, connection); an ApiError from either is answered by `render`, the
    family's (or the gateway's) own error shape."""

    async def run(request: web.Request) -> web.Response:
        try:
            check(request)
            return await handler(request)
        except ApiError as error:
            return render(error)

    return run


class ApiError(Exception):
    def __init__(
        self, status: int, message: str, *, field: str | None = None, headers: dict[str, str] | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.field = field
        self.headers = headers or {}


def not_found(what: str, field: str | None = None) -> ApiError:
    return ApiError(404, f"{what} not found", field=field)


def not_in_spec(what: str, kind: str = "list") -> Handler:
    """A list (or call) the real gateways offer but the spec does not: the spec dialect answers 404, as a gateway
    that implements only the spec would (the app refuses to ask in that dialect anyway)."""

    async def refuse(_request: web.Request) -> web.Response:
        raise ApiError(404, f"{what} not found: the service has no such {kind}")

    return refuse


def bad_field(field: str, rule: str) -> ApiError:
    return ApiError(400, f"{field}: {rule}", field=field)


async def read_json_object(request: web.Request) -> dict[str, Any]:
    """The body as a JSON object; an empty body counts as `{}` so the model names the missing fields."""
    raw = await request.read()
    if not raw.strip():
        return {}
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):
        raise bad_field("body", "must be a JSON object") from None
    if not isinstance(data, dict):
        raise bad_field("body", "must be a JSON object")
    return data


def parse(model: type[RequestModel], data: dict[str, Any]) -> RequestModel:
    """Validate with the same model the client uses, so both sides apply exactly the same rules."""
    try:
        return model.model_validate(data)
    except ValidationError as error:
        problems = field_errors(error)
        first_field = next(iter(problems), "body")
        # A server names fields as they are on the wire (hmac_key), not by the app's labels.
        text = "; ".join(f"{field}: {problem}" for field, problem in problems.items())
        raise ApiError(400, text, field=first_field) from None


def instance_error(error: ApiError) -> web.Response:
    body: dict[str, Any] = {"error": error.message}
    if error.field:
        body["field"] = error.field
    return web.json_response(body, status=error.status, headers=error.headers)


def session_error(error: ApiError) -> web.Response:
    return web.json_response(
        {"code": error.status, "error": error.message, "success": False}, status=error.status, headers=error.headers
    )


def envelope(data: Any, status: int = 200) -> web.Response:
    return web.json_response({"code": status, "data": data, "success": True}, status=status)


def iso(moment: datetime) -> str:
    """ISO 8601 with offset and whole seconds, as the session family writes times."""
    return moment.isoformat(timespec="seconds")
