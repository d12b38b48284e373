"""The sandbox gateway: a real aiohttp server on 127.0.0.1 that speaks both endpoint families.

Embedded (`await SandboxGateway(...).start()` inside the app's loop: no signal handlers) or in the foreground
through `gateway-tui sandbox` (`run_cli`). Both families share one base URL. The aiohttp access log is off:
instance-family paths carry the instance token.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import Awaitable, Callable, Mapping
from datetime import datetime

from aiohttp import web

from tui.api.operations import Family, OperationId, all_operations
from tui.sandbox.context import Context
from tui.sandbox.delivery import Deliverer
from tui.sandbox.dialect import InstanceDialect, PairingOptions, SessionDialect, default_webhook_format
from tui.sandbox.events import (
    MEDIA_PATH,
    REPLY_FILES,
    WEBHOOK_FORMATS,
    session_connected,
    session_disconnected,
    session_logged_out,
    session_pair_success,
)
from tui.sandbox.faults import FaultRoutes
from tui.sandbox.flap import Flap, FlapRefused, run_flap
from tui.sandbox.handlers import SandboxDialects, require_served
from tui.sandbox.incoming import IncomingRoutes
from tui.sandbox.pairing import DEVICE, CodeIssuer, Link, LinkEvent, PhoneSide
from tui.sandbox.rate_limit import RateLimiter
from tui.sandbox.state import SandboxState, SentMessage, seed_demo_state
from tui.sandbox.wire import Handler
from tui.api.addresses import http_base

INSTANCE_PREFIX = "/instances/{instance_id}/token/{instance_token}"
INSTANCE_TOKEN_ENV = "GATEWAY_TUI_INSTANCE_TOKEN"
CLIENT_TOKEN_ENV = "GATEWAY_TUI_CLIENT_TOKEN"
SESSION_TOKEN_ENV = "GATEWAY_TUI_SESSION_TOKEN"

_log = logging.getLogger(__name__)

# Media sends carry the file as base64 in the JSON body: room for the largest the gateways take (a 100 MB
# document is about 134 MB of base64), where aiohttp's default would refuse anything over 1 MiB.
MAX_BODY = 150 * 1024 * 1024


def new_message_id() -> str:
    """An id shaped like the network's: `3EB0` and 16 upper-case hex digits."""
    return "3EB0" + secrets.token_hex(8).upper()


def local_now() -> datetime:
    return datetime.now().astimezone()


@web.middleware
async def _json_errors(
    request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
) -> web.StreamResponse:
    """Routing failures and crashes answer JSON too, and never echo the path (it may hold a token)."""
    try:
        return await handler(request)
    except web.HTTPMethodNotAllowed as error:
        return web.json_response(
            {"error": "method not allowed"}, status=405, headers={"Allow": ",".join(sorted(error.allowed_methods))}
        )
    except web.HTTPException as error:
        return web.json_response({"error": error.reason.lower()}, status=error.status)
    except Exception:
        _log.exception("sandbox handler failed")
        return web.json_response({"error": "internal server error"}, status=500)


class SandboxGateway:
    """One sandbox account: the host's state, checks, deliveries and pairing, serving the routes each family's
    dialect hands it (`dialects`: the gateways' sandbox dialects, tui.gateways.sandbox)."""

    def __init__(
        self,
        *,
        dialects: SandboxDialects,
        instance_id: str = "sandbox",
        instance_token: str,
        client_token: str,
        session_token: str,
        host: str = "127.0.0.1",
        port: int = 0,
        rate_limit: float | None = None,
        webhook_format: str | None = None,
        instance_dialect: InstanceDialect = InstanceDialect.SPEC,
        session_dialect: SessionDialect = SessionDialect.SPEC,
        clock: Callable[[], datetime] | None = None,
        id_factory: Callable[[], str] | None = None,
        delivery_delay: float = 0.05,
        delivery_retry_delay: float = 0.2,
        state: SandboxState | None = None,
        logged_out: bool = False,
        pairing: PairingOptions | None = None,
    ) -> None:
        instance_dialect, session_dialect = InstanceDialect(instance_dialect), SessionDialect(session_dialect)
        require_served(dialects, Family.INSTANCE, instance_dialect.value)
        require_served(dialects, Family.SESSION, session_dialect.value)
        if webhook_format is None:
            webhook_format = default_webhook_format(session_dialect)
        if webhook_format not in WEBHOOK_FORMATS:
            raise ValueError(f"webhook_format must be one of {', '.join(WEBHOOK_FORMATS)}")
        if rate_limit is not None and rate_limit <= 0:
            raise ValueError("rate_limit must be positive (or None for no limit)")
        for name, value in (("instance_token", instance_token), ("client_token", client_token), ("session_token", session_token)):
            if not value:
                raise ValueError(f"{name} must not be empty")
        pairing = pairing or PairingOptions()
        self.dialects = dialects
        self.host = host
        self.instance_dialect = instance_dialect
        self.session_dialect = session_dialect
        self.webhook_format = webhook_format
        self._requested_port = port
        self.state = state if state is not None else seed_demo_state()
        if logged_out:  # `--logged-out`: nothing paired; Z-API has no client notion, WuzAPI waits for connect
            self.state.instance_link = Link.unpaired(client=True)
            self.state.session_link = Link.unpaired(client=False)
        for link in (self.state.instance_link, self.state.session_link):
            if link.paired and link.number is None:
                link.number = self.state.own_phone
        self.clock = clock or local_now
        self.id_factory = id_factory or new_message_id
        self.deliveries = Deliverer(
            self.state,
            instance_id=instance_id,
            webhook_format=webhook_format,
            clock=self.clock,
            new_id=self.id_factory,
            delay=delivery_delay,
            retry_delay=delivery_retry_delay,
        )
        self.context = Context(
            state=self.state,
            instance_id=instance_id,
            instance_token=instance_token,
            client_token=client_token,
            session_token=session_token,
            limiter=RateLimiter(rate_limit),
            clock=self.clock,
            new_id=self.id_factory,
            on_sent=self._on_sent,
            codes=CodeIssuer(f"sandbox-codes:{instance_id}:{secrets.token_hex(8)}", pairing.code_lifetime),
            announce=self._announce,
            wuzapi_release=pairing.wuzapi_release,
            connect_delay=pairing.connect_delay,
            deliver=self.deliveries.post_in_order,
            server_url=lambda: self.deliveries.base_url,
        )
        self.deliveries.instance_webhooks = dialects[(Family.INSTANCE, instance_dialect.value)].webhooks(self.context)
        self.deliveries.encode_session = dialects[(Family.SESSION, session_dialect.value)].session_encoder()
        self.phone = PhoneSide(
            lambda: {Family.INSTANCE: self.state.instance_link, Family.SESSION: self.state.session_link},
            number=lambda: self.state.own_phone, clock=self.clock, announce=self._announce,
        )
        self._runner: web.AppRunner | None = None
        self._flaps: set[asyncio.Task[None]] = set()
        self.port = 0

    def __repr__(self) -> str:  # the tokens are secrets
        return f"SandboxGateway(url={self.url!r}, instance_id={self.instance_id!r})"

    @property
    def instance_id(self) -> str:
        return self.context.instance_id

    @property
    def url(self) -> str:
        """Base URL of both families, e.g. `http://127.0.0.1:8099`."""
        return http_base(self.host, self.port)

    @property
    def instance_url(self) -> str:
        """Prefix of every instance-family path; contains the instance token."""
        return f"{self.url}/instances/{self.context.instance_id}/token/{self.context.instance_token}"

    def build_app(self) -> web.Application:
        app = web.Application(middlewares=[_json_errors], client_max_size=MAX_BODY)
        app.add_routes(self.routes())
        return app

    def routes(self) -> list[web.RouteDef]:
        """Every route of this account, in an order fixed by the dialects (a fleet of accounts of the same
        dialects lines them up: tui.sandbox.fleet)."""
        app = _RouteList()
        for family, dialect, prefix in ((Family.INSTANCE, self.instance_dialect, INSTANCE_PREFIX),
                                        (Family.SESSION, self.session_dialect, "")):
            api = self.dialects[(family, dialect.value)](self.context)
            own = api.routes(prefix)
            app.add_routes(own if own is not None else _operation_routes(api.handlers(), family, prefix))
            app.add_routes(api.extra_routes(prefix))
        app.add_routes(self.phone.routes())
        app.add_routes(FaultRoutes(lambda: self.state, self._info, flap=self._start_flap).routes())
        zapi = self.instance_dialect is InstanceDialect.ZAPI
        app.add_routes(IncomingRoutes(lambda: self.state, self.deliveries.announce_session, self.clock,
                                      self.id_factory, self._incoming_on_instance, instance_id=self.instance_id,
                                      received=self._announce_received if zapi else None).routes())
        app.add_routes([web.get(f"{MEDIA_PATH}/{{name}}", _reply_file)])
        return app.routes

    @property
    def session_token(self) -> str:
        return self.context.session_token

    @property
    def instance_token(self) -> str:
        return self.context.instance_token

    def _info(self) -> dict[str, object]:
        """What `GET /sandbox/info` says of this sandbox (no secret): the doctor probes it without asking."""
        return {"instance_dialect": self.instance_dialect.value, "session_dialect": self.session_dialect.value,
                "own_phone": self.state.own_phone}

    async def start(self) -> None:
        if self._runner is not None:
            raise RuntimeError("the sandbox is already running")
        await self.deliveries.start()
        runner = web.AppRunner(self.build_app(), access_log=None, handle_signals=False)
        await runner.setup()
        try:
            site = web.TCPSite(runner, self.host, self._requested_port)
            await site.start()
        except BaseException:
            await runner.cleanup()
            await self.deliveries.stop()
            raise
        self._runner = runner
        self.port = runner.addresses[0][1]
        self.deliveries.base_url = self.url

    async def stop(self) -> None:
        """Stop serving, cancel deliveries still pending, close the delivery client. Safe to call twice."""
        runner, self._runner = self._runner, None
        for flap in list(self._flaps):
            flap.cancel()
        if runner is not None:
            await runner.cleanup()
        await self.deliveries.stop()

    async def wait_for_deliveries(self, timeout: float = 10.0) -> None:
        """Wait until every delivery scheduled so far (and any it led to) is done; TimeoutError past `timeout`."""
        await self.deliveries.wait(timeout)

    async def __aenter__(self) -> SandboxGateway:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.stop()

    def _announce_received(self, payload: dict[str, object]) -> None:
        """A Z-API `ReceivedCallback` to the received URL (else the delivery URL)."""
        webhooks = self.deliveries.instance_webhooks
        if webhooks is not None:
            self.deliveries.post_in_order(webhooks.received(payload))

    def _on_sent(self, sent: SentMessage) -> None:
        self.deliveries.after_send(sent)

    @property
    def flapping(self) -> bool:
        """A flap fault is still changing a link (its announcements may still be on their way)."""
        return bool(self._flaps)

    def _start_flap(self, flap: Flap) -> None:
        """The flapping fault (tui.sandbox.flap) on the family's link; FlapRefused (409) when it is not connected."""
        link = self.state.instance_link if flap.family is Family.INSTANCE else self.state.session_link
        if not link.connected:
            raise FlapRefused(f"the {flap.family} family is not connected: a flap starts from a connected link", 409)
        task = asyncio.get_running_loop().create_task(
            run_flap(flap, link, clock=self.clock, announce=self._announce))
        self._flaps.add(task)
        task.add_done_callback(self._flaps.discard)

    def _incoming_on_instance(self, phone: str, text: str, message_id: str, alt: bool) -> None:
        webhooks = self.deliveries.instance_webhooks
        if webhooks is not None:
            self.deliveries.post_in_order(webhooks.incoming(phone, text, message_id, alt=alt))

    def _announce(self, family: Family, event: LinkEvent) -> None:
        """What the family's gateway tells its webhook when its link changes (tui.sandbox.events)."""
        if family is Family.INSTANCE:  # in the instance dialect's own format (its gateway package's)
            if self.deliveries.instance_webhooks is not None:
                self.deliveries.post_in_order(self.deliveries.instance_webhooks.link_changed(event))
            return
        payloads = {
            LinkEvent.PAIRED: [session_pair_success(self.state.session_link.number or self.state.own_phone, DEVICE),
                               session_connected()],
            LinkEvent.CONNECTED: [session_connected()],
            LinkEvent.LOGGED_OUT: [session_logged_out()],
            LinkEvent.NETWORK_LOST: [session_disconnected()],
        }[event]
        self.deliveries.announce_session(*payloads)


class _RouteList:
    def __init__(self) -> None:
        self.routes: list[web.RouteDef] = []

    def add_routes(self, routes: list[web.RouteDef]) -> None:
        self.routes.extend(routes)


async def _reply_file(request: web.Request) -> web.Response:
    """The files seeded contacts answer with, public as Z-API's storage URLs are (no credentials in the URL)."""
    reply = next((file for file in REPLY_FILES.values() if file.name == request.match_info["name"]), None)
    if reply is None:
        raise web.HTTPNotFound()
    return web.Response(body=reply.data(), content_type=reply.mime_type)


def _operation_routes(handlers: Mapping[OperationId, Handler], family: Family, prefix: str) -> list[web.RouteDef]:
    """One route per operation of `family`, from the operations table; a missing handler, or one for an
    operation the family does not have, is a programming error."""
    ops = [op for op in all_operations() if op.family is family]
    missing = [op.id for op in ops if op.id not in handlers]
    stray = sorted(set(handlers) - {op.id for op in ops})
    if missing or stray:
        raise LookupError(f"the sandbox's {family} handlers lack {missing} and have stray {stray}")
    return [web.route(op.method, f"{prefix}/{op.path}", handlers[op.id]) for op in ops]


# ---------------------------------------------------------------------------------------------
# Foreground command
