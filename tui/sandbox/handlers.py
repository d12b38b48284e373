"""A sandbox dialect's handlers, registered by operation: one `@handles(OperationId.X)` on the method that answers
it, one registration per (operation, dialect). A handler two dialects answer alike is written once, in a base class
both inherit, and registered there; a dialect overrides it by registering its own for the same operation.

    class WuzapiSessionApi(SessionFamilyApi):
        @handles(OperationId.GROUP_INFO, needs_connection=True)
        async def group_info(self, request: web.Request) -> web.Response: ...

The host (tui.sandbox.server) asks a dialect for `handlers()` and serves each under its row's method and path;
a dialect hands its `REFUSED` operations (those its gateway has no call for: the adapter says which) a 404.
"""

from __future__ import annotations

import secrets
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol, TypeVar

from aiohttp import web

from tui.api.operations import Family, OperationId
from tui.sandbox.context import Context
from tui.sandbox.wire import Handler
from tui.sandbox.events import encode_session_event
from tui.sandbox.webhook_posts import InstanceWebhooks, SessionEncoder

Method = Callable[[Any, web.Request], Awaitable[web.Response]]  # an unbound handler method of a dialect
M = TypeVar("M", bound=Method)


@dataclass(frozen=True)
class Registration:
    method: Method
    needs_connection: bool | None  # None: the dialect's default for its family


# The marks `handles` leaves, by the marked function's identity (a class's functions live as long as the class).
_MARKED: dict[int, list[tuple[OperationId, Registration]]] = {}


def handles(op: OperationId, *, needs_connection: bool | None = None) -> Callable[[M], M]:
    """Register the decorated method as its dialect's handler of `op` (collected when the class is made)."""

    def mark(method: M) -> M:
        _MARKED.setdefault(id(method), []).append((op, Registration(method, needs_connection)))
        return method

    return mark


class DialectApi:
    """What every sandbox dialect is: its registered handlers, guarded by its own checks (credentials, the
    connection) and error shape, plus the operations it refuses. Subclasses say `guard`."""

    registered: ClassVar[Mapping[OperationId, Registration]] = {}
    REFUSED: ClassVar[frozenset[OperationId]] = frozenset()  # its gateway has no such call: answered with a 404

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        table = dict(cls.registered)  # the base classes' registrations, overridden below by this class's own
        for value in vars(cls).values():
            table.update(_MARKED.get(id(value), ()))
        cls.registered = table

    def __init__(self, context: Context) -> None:
        self.context = context
        self.state = context.state

    def guard(self, handler: Handler, *, needs_connection: bool | None) -> Handler:
        raise NotImplementedError

    def refusal(self, op_id: OperationId) -> Handler:
        """The handler of an operation this dialect refuses (a 404 in its own words)."""
        raise NotImplementedError

    def generated(self) -> dict[OperationId, Handler]:
        """Handlers made by code rather than registered one by one (a table of sends, one media call per kind)."""
        return {}

    def handlers(self) -> dict[OperationId, Handler]:
        table: dict[OperationId, Handler] = {}
        for op, registration in self.registered.items():
            table[op] = self.guard(_bound(self, registration.method), needs_connection=registration.needs_connection)
        table.update(self.generated())
        for op in self.REFUSED:
            table[op] = self.refusal(op)
        return table

    @classmethod
    def webhooks(cls, context: Context) -> InstanceWebhooks | None:
        """The instance family's webhook format of this dialect (its gateway package's), posted by the host; None:
        the host's own (the spec's delivery notification, Z-API's callbacks)."""
        return None

    @classmethod
    def session_encoder(cls) -> SessionEncoder:
        """How this session dialect's events travel (WuzAPI's form body: tui.gateways.wuzapi); the spec's JSON."""
        return encode_session_event

    def routes(self, prefix: str) -> list[web.RouteDef] | None:
        """A gateway whose routes are not one per operation under the family's prefix (Evolution: several
        operations share a route, off the server's root) gives them all here; None: one route per operation, at its
        row's method and path under `prefix`, each with its `handlers()` entry."""
        return None

    def extra_routes(self, prefix: str) -> list[web.RouteDef]:
        """Routes of the real gateway that are no operation of the app (none unless a dialect says)."""
        return []

    @classmethod
    def fleet_routes(cls, fleet: FleetAdmin) -> list[web.RouteDef]:
        """Routes a sandbox of many accounts serves for this dialect across its accounts (a gateway whose admin
        API is one of its own routes: Evolution's fetchInstances with the global key); they take precedence over
        an account's route at the same method and path. None unless a dialect says."""
        return []

    @classmethod
    def new_instance_id(cls, serial: int) -> str:
        """The instance id of a sandbox fleet's account number `serial`: Z-API's 32 upper-case hex digits unless
        the dialect names its instances otherwise."""
        return secrets.token_hex(16).upper()


class FleetAdmin(Protocol):
    """A sandbox of many accounts as a dialect's fleet routes see it (tui.sandbox.fleet.SandboxFleet)."""

    def is_admin_key(self, key: str | None) -> bool:
        """Whether `key` is the fleet's admin (global) token, compared in constant time."""
        ...

    def contexts(self) -> Sequence[Context]:
        """Every account's context, in the fleet's order."""
        ...


def _bound(api: DialectApi, method: Method) -> Handler:
    async def handler(request: web.Request) -> web.Response:
        return await method(api, request)

    return handler


class DialectApiFactory(Protocol):
    def __call__(self, context: Context) -> DialectApi: ...

    def webhooks(self, context: Context) -> InstanceWebhooks | None: ...

    def session_encoder(self) -> SessionEncoder: ...

    def fleet_routes(self, fleet: FleetAdmin) -> list[web.RouteDef]: ...

    def new_instance_id(self, serial: int) -> str: ...


SandboxDialects = Mapping[tuple[Family, str], DialectApiFactory]
"""Each family's sandbox dialects by the dialect's value: what the host serves (tui.gateways.sandbox fills it)."""


def require_served(dialects: SandboxDialects, family: Family, dialect: str) -> None:
    """ValueError, before anything starts, when no sandbox dialect speaks `dialect` (a gateway whose client side
    exists before its sandbox side), naming those that do."""
    if (family, dialect) not in dialects:
        served = " or ".join(value for served_family, value in dialects if served_family is family)
        raise ValueError(f"the sandbox does not speak the {dialect} {family.value} dialect yet: run it with "
                         f"--{family.value}-dialect {served}")
