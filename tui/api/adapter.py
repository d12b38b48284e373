"""The one interface a gateway implements: everything that differs between the spec, Z-API and WuzAPI (and the next
gateway) sits behind a `GatewayAdapter`, one package per gateway under `tui.gateways`, registered there by dialect.

    adapter = adapter_for(InstanceDialect.ZAPI)          # tui.gateways: the registry
    wire = adapter.wire(ops.SEND_POLL, SendPoll(...))    # WireRequest, or DialectRefusal before anything is sent
    endpoint = adapter.instance_endpoint(credentials)    # where the family lives and how it authenticates

The table (`tui.api.operations`) says what an operation is; an adapter says how its gateway writes it. An adapter
knows an operation in one of three ways: a wire form of its own (`WireForms.form`), a refusal that needs no request
to say why (`Refusal`: the gateway has no such call), or neither, when its gateway writes the request as the spec's
model says (`request.wire()`, the row's path and query): so a new row is sent by every adapter of its family until
one says otherwise.

The client (`tui.api.client`) takes an adapter and never asks which gateway it is; the sandbox (`tui.sandbox`)
serves the routes an adapter's sandbox dialect hands it; the listener asks the adapters to recognise deliveries
(`deliveries`, tui.api.deliveries).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Protocol, TypeVar, cast
from urllib.parse import quote

from pydantic import BaseModel

from tui.api import models as m
from tui.api.answers import decode_success
from tui.api.connection import ConnectionState, ZapiQr
from tui.api.credentials import InstanceCredentials, SessionCredentials
from tui.api.deliveries import NO_DELIVERIES, DeliveryFormat
from tui.api.dialects import Dialect, Family
from tui.api.errors import GatewayError
from tui.api.listener_paths import INSTANCE_PATH
from tui.api.media import MediaRule
from tui.api.operations import Body, DialectRefusal, Operation, OperationId, SendKind, WireRequest
from tui.api.redaction import INSTANCE_TOKEN_PLACEHOLDER

__all__ = [
    "AnswerReader",
    "ConnectionReads",
    "Endpoint",
    "GatewayAdapter",
    "ReadFirst",
    "Refusal",
    "WireForms",
    "instance_family_endpoint",
    "session_family_endpoint",
]

Req = TypeVar("Req", bound=m.Request)
Res = TypeVar("Res", bound=BaseModel)

JSON = "application/json"


@dataclass(frozen=True)
class Refusal:
    """An operation a gateway cannot say at all, whatever the request: `field` and why, as the user reads it."""

    field: str
    problem: str

    def error(self) -> DialectRefusal:
        return DialectRefusal(self.field, self.problem)


Encoder = Callable[[Req], Body | None]  # a request as the gateway writes its body (None: no body)


def _model_body(request: m.Request) -> Body:
    return request.wire()


def no_body(_request: m.Request) -> None:
    """For a GET, or a call the gateway takes with nothing in its body."""
    return None


class WireForms:
    """One gateway's wire forms by operation: an encoder where the gateway's body differs from the request model's,
    a `Refusal` where it has no such call. An operation named in neither is written as its model says."""

    def __init__(self, gateway: str) -> None:
        self.gateway = gateway
        self._encoders: dict[OperationId, Callable[[m.Request], Body | None]] = {}
        self._refusals: dict[OperationId, Refusal] = {}
        self._routes: dict[OperationId, tuple[str, str]] = {}

    def form(self, op: Operation[Req, BaseModel], encoder: Encoder[Req]) -> None:
        """Register `encoder` for `op`, typed by the row's request (the one place its type is forgotten: sound
        because `wire` checks the request's type against the row before calling it)."""
        self._take(op.id)
        self._encoders[op.id] = cast("Callable[[m.Request], Body | None]", encoder)

    def form_each(self, op_ids: Iterable[OperationId], encoder: Callable[[m.Request], Body | None]) -> None:
        """Register one encoder that takes any request (a phone rewrite, no body) for each of `op_ids`."""
        for op_id in op_ids:
            self._take(op_id)
            self._encoders[op_id] = encoder

    def route(self, op: Operation[Req, BaseModel], method: str, path: str, encoder: Encoder[Req] | None = None) -> None:
        """The gateway's own method and path for `op` (a template over the request's fields; a `{name}` that is
        none of them is the endpoint's, e.g. `message/sendText/{instance}`), and its body (None: none for a GET,
        the model's own otherwise)."""
        self.form(op, encoder if encoder is not None else (no_body if method == "GET" else _model_body))
        self._routes[op.id] = (method, path)

    def refuse(self, op_id: OperationId, refusal: Refusal) -> None:
        self._take(op_id)
        self._refusals[op_id] = refusal

    def _take(self, op_id: OperationId) -> None:
        if op_id in self._encoders or op_id in self._refusals:
            raise ValueError(f"{self.gateway} writes {op_id} twice")

    def refusal(self, op_id: OperationId) -> Refusal | None:
        return self._refusals.get(op_id)

    def wire(self, op: Operation[Req, Res], request: Req) -> WireRequest:
        op.check(request)
        refusal = self._refusals.get(op.id)
        if refusal is not None:
            raise refusal.error()
        encoder = self._encoders.get(op.id, _model_body)
        wire = op.wire_request(request, encoder(request))
        route = self._routes.get(op.id)
        if route is None:
            return wire
        method, template = route
        values = request.model_dump(mode="json")
        path = tuple(str(values[part[1:-1]]) if part.startswith("{") and part[1:-1] in values else part
                     for part in template.split("/"))
        return WireRequest(path, wire.body, wire.query, method=method)


@dataclass(frozen=True)
class Endpoint:
    """Where a family's operations live and how they authenticate: `url` and `headers` carry secrets, `shown_url`
    is what logs and errors show. A wire path is appended to both, after a `/`, its `{name}` segments filled from
    `placeholders` (a gateway that names the instance inside its paths)."""

    url: str
    shown_url: str
    headers: Mapping[str, str]
    placeholders: Mapping[str, str] = field(default_factory=dict)  # `{name}` path segments' values (not secret)


def _segment(value: str) -> str:
    return quote(value, safe="")


def instance_family_endpoint(credentials: InstanceCredentials) -> Endpoint:
    """The spec's instance family (§4.1), as Z-API has it: `/instances/{id}/token/{token}`, header Client-Token."""
    base = f"{credentials.base_url.rstrip('/')}/instances/{_segment(credentials.instance_id)}/token/"
    return Endpoint(
        url=base + _segment(credentials.instance_token),
        shown_url=base + INSTANCE_TOKEN_PLACEHOLDER,
        headers={"Client-Token": credentials.client_token, "Content-Type": JSON},
    )


def session_family_endpoint(credentials: SessionCredentials) -> Endpoint:
    """The spec's session family (§4.2), as WuzAPI has it: paths from the base URL, header `token`."""
    url = credentials.base_url.rstrip("/")
    return Endpoint(url=url, shown_url=url, headers={"token": credentials.token, "Content-Type": JSON})


class AnswerReader(Protocol):
    """How a gateway's 2xx answer becomes the operation's typed result (its envelope, its message id, `false` on a
    200 as a failure); a non-2xx is an error by its status alone (`tui.api.answers.error_for_status`)."""

    def __call__(self, model: type[Res], status: int, text: str, operation: str) -> Res: ...


read_liberally: AnswerReader = decode_success
"""The reader every gateway of today uses: bodies with or without WuzAPI's `{code,data,success}` envelope, Z-API's
`{"error":"NOT_FOUND"}` on a 200 and a `success:false` / `value:false` as failures (tui.api.answers)."""


@dataclass(frozen=True)
class ReadFirst:
    """A write the gateway takes only whole (WuzAPI's PUT /webhook blanks what it is not sent): read the current
    state with `read` (answered as `answer`), then send `merge(current)` as the body. `failed` says, when the
    read fails, why nothing was sent."""

    operation: str
    read: WireRequest
    answer: type[BaseModel]
    merge: Callable[[BaseModel], Body]
    failed: Callable[[GatewayError], str]


class ConnectionReads(Protocol):
    """The reads a gateway's connection check may make on an open account: its families' QR calls (reads only: asked
    while connected, they give no code)."""

    async def instance_qr(self) -> ZapiQr: ...

    async def session_qr(self) -> object: ...


class GatewayAdapter(Protocol):
    """Everything one gateway says differently. Implemented once per gateway package (tui.gateways.<name>)."""

    @property
    def name(self) -> str:
        """How the user reads the gateway's name: `Z-API`, `WuzAPI`, `the spec`."""
        ...

    @property
    def dialects(self) -> Mapping[Family, Dialect]:
        """The families it serves, each with the dialect value a profile names it by (a gateway may serve both)."""
        ...

    @property
    def session_through_instance(self) -> bool:
        """Whether it serves the operations the spec puts in the session family through its instance endpoint (one
        profile, one key: Evolution API); False for a gateway whose session family has settings of its own."""
        ...

    def wire(self, op: Operation[Req, Res], request: Req) -> WireRequest:
        """`request` as this gateway writes `op`; DialectRefusal naming the field when it cannot, before sending."""
        ...

    def refusal(self, op_id: OperationId) -> Refusal | None:
        """Why this gateway cannot say `op_id` whatever the request (no such call), or None."""
        ...

    def read_first(self, op: Operation[Req, Res], request: Req) -> ReadFirst | None:
        """A read the gateway needs before `op` can be written whole, or None (the common case)."""
        ...

    def instance_endpoint(self, credentials: InstanceCredentials) -> Endpoint:
        """Where its instance-family operations go, and their authentication headers."""
        ...

    def session_endpoint(self, credentials: SessionCredentials) -> Endpoint:
        """Where its session-family operations go, and their authentication headers."""
        ...

    @property
    def read_answer(self) -> AnswerReader:
        """How its answers read: envelope, message id, `false` on a 200 as a failure."""
        ...

    @property
    def media_rules(self) -> Mapping[SendKind, MediaRule]:
        """What it takes as media, by kind: types, largest size, and where each comes from (empty: no media call)."""
        ...

    @property
    def deliveries(self) -> DeliveryFormat:
        """How its webhook deliveries are recognised and described (kind, summary, message ids)."""
        ...

    @property
    def instance_listener_path(self) -> str:
        """The listener's path its instance-family webhooks are pointed at (tui.api.listener_paths): `/delivery`,
        or a gateway's own (Evolution's `/evolution`); under `listen --all`, below `/a/<profile>`."""
        ...

    async def contradiction(self, family: Family, state: ConnectionState, reads: ConnectionReads) -> str | None:
        """When this gateway's answers about `family`'s connection disagree (a status that says connected beside a
        QR call that says not), what they said, in the words the Account section shows; None when they agree or
        the gateway has no such quirk (nothing is read then)."""
        ...


@dataclass(frozen=True)
class FamilyAdapter:
    """A `GatewayAdapter` of the families the spec lays out (spec, Z-API, WuzAPI): its wire forms, the families'
    endpoints, the liberal answer reader. A gateway that differs further (its own auth header, one profile for
    both families, a read before a write) overrides the member that differs."""

    name: str
    dialects: Mapping[Family, Dialect]
    forms: WireForms
    read_answer: AnswerReader = field(default=read_liberally)
    media_rules: Mapping[SendKind, MediaRule] = field(default_factory=dict)
    deliveries: DeliveryFormat = field(default=NO_DELIVERIES)
    instance_listener_path: str = INSTANCE_PATH
    session_through_instance: bool = False

    def wire(self, op: Operation[Req, Res], request: Req) -> WireRequest:
        return self.forms.wire(op, request)

    def refusal(self, op_id: OperationId) -> Refusal | None:
        return self.forms.refusal(op_id)

    def read_first(self, op: Operation[Req, Res], request: Req) -> ReadFirst | None:
        return None

    def instance_endpoint(self, credentials: InstanceCredentials) -> Endpoint:
        return instance_family_endpoint(credentials)

    def session_endpoint(self, credentials: SessionCredentials) -> Endpoint:
        return session_family_endpoint(credentials)

    async def contradiction(self, family: Family, state: ConnectionState, reads: ConnectionReads) -> str | None:
        return None
