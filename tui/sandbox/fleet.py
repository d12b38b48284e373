"""A sandbox of many accounts on one port (`gateway-tui sandbox --accounts N`), with the gateways' admin APIs.

Each account is a whole `SandboxGateway` (its own state, number, contacts, tokens, rate bucket and deliveries),
all paired, and not served on a port of its own: one server takes every request and hands it to the account it
names, as the real gateways tell their accounts apart:

* the instance family (Z-API): by the instance id in `/instances/{id}/token/{token}/…`;
* the session family (WuzAPI): by the `token` header (one base URL, a token per user);
* the sandbox's own routes (`/sandbox/scan`, `/sandbox/fault`, `/sandbox/info`, …): by `?account=<instance id>`,
  the first account without it.

A request naming no account goes to the first one, which refuses it as a single sandbox would (401).

The admin APIs (docs/gateways/wuzapi.md §2.10, docs/gateways/zapi.md §7), answering in the real gateways' shapes:

* WuzAPI `GET/POST /admin/users`, `DELETE /admin/users/{id}`, with `Authorization: <admin token>`;
* Z-API's partner API, `GET /instances?page=&pageSize=&query=` and `POST /instances/integrator/on-demand`, with
  `Authorization: Bearer <partner token>`; only when a partner token is given.

Every account shares one Client-Token, as Z-API's is the security token of the whole Z-API account (its partner
API never returns it). Accounts created through an admin API start unpaired, as a new user or instance does.

With the older WuzAPI (`--wuzapi-release older`, asternic/wuzapi 79ee4cd) the admin API answers as its handlers.go
did: a user's id is the database's integer key (ListUsers, in the envelope, without proxy_config / s3_config);
AddUser answers a bare `{"id": N}` and DeleteUser a bare `{"Details": "User deleted successfully"}`.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from aiohttp import web

from tui.api.operations import Family
from tui.sandbox.context import Context, _same_secret
from tui.sandbox.dialect import InstanceDialect, PairingOptions, SessionDialect, WuzapiRelease
from tui.sandbox.handlers import DialectApiFactory, SandboxDialects
from tui.sandbox.server import MAX_BODY, SandboxGateway, _json_errors, local_now
from tui.sandbox.state import OWN_NAME, SandboxState, seed_demo_state
from tui.api.addresses import http_base

RouteHandler = Callable[[web.Request], Awaitable[web.StreamResponse]]

ADMIN_TOKEN_ENV = "GATEWAY_TUI_ADMIN_TOKEN"
PARTNER_TOKEN_ENV = "GATEWAY_TUI_PARTNER_TOKEN"
ACCOUNT_QUERY = "account"
MAX_ACCOUNTS = 1000
TRIAL_MS = 2 * 24 * 3600 * 1000  # Z-API's on-demand trial: two days


@dataclass
class FleetAccount:
    """One account: a WuzAPI user (`user_id`, `name`) and a Z-API instance at once, as every sandbox account is."""

    gateway: SandboxGateway
    user_id: str
    name: str
    created: datetime
    handlers: list[RouteHandler]

    @property
    def instance_id(self) -> str:
        return self.gateway.instance_id


def account_phone(number: int) -> str:
    """Account 1 has the single sandbox's number; the others a number of their own (5511 9 then 8 digits)."""
    return f"55119{12345677 + number:08d}"


class SandboxFleet:
    def __init__(
        self,
        *,
        accounts: int,
        admin_token: str,
        client_token: str,
        partner_token: str | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        rate_limit: float | None = None,
        webhook_format: str | None = None,
        instance_dialect: InstanceDialect = InstanceDialect.SPEC,
        session_dialect: SessionDialect = SessionDialect.SPEC,
        delivery_delay: float = 0.05,
        clock: Callable[[], datetime] | None = None,
        logins: Sequence[tuple[str, str]] = (),
        dialects: SandboxDialects,
        pairing: PairingOptions | None = None,
    ) -> None:
        """`logins`: the first accounts' (instance token, session token), chosen by the caller (the app's sandbox
        process: the app made them); the other accounts' are made here. `dialects`: the gateways' sandbox dialects
        (tui.gateways.sandbox), which every account serves. `pairing`: every account's (the WuzAPI release played
        by its session family and by the admin API)."""
        if not 1 <= accounts <= MAX_ACCOUNTS:
            raise ValueError(f"accounts must be from 1 to {MAX_ACCOUNTS}")
        if not admin_token or not client_token or partner_token == "":
            raise ValueError("the admin token, the Client-Token and a given partner token must not be empty")
        self.host = host
        self._requested_port = port
        self.port = 0
        self._admin_token = admin_token
        self._partner_token = partner_token
        self._client_token = client_token
        self._options: dict[str, Any] = {
            "rate_limit": rate_limit, "webhook_format": webhook_format, "instance_dialect": instance_dialect,
            "session_dialect": session_dialect, "delivery_delay": delivery_delay, "dialects": dialects,
            "pairing": pairing,
        }
        self.older = pairing is not None and pairing.wuzapi_release is WuzapiRelease.OLDER
        self._last_user_key = 0  # the older release's integer ids: SQLite's next rowid, never one taken
        self.instance_dialect, self.session_dialect = InstanceDialect(instance_dialect), SessionDialect(session_dialect)
        self.clock = clock or local_now
        self.accounts: list[FleetAccount] = []
        self._routes: list[web.RouteDef] = []
        self._runner: web.AppRunner | None = None
        for number in range(1, accounts + 1):
            instance_token, session_token = logins[number - 1] if number <= len(logins) else (None, None)
            self._add_account(f"Sandbox {number:02d}", number=number, instance_token=instance_token,
                              session_token=session_token)

    def __repr__(self) -> str:  # the tokens are secrets
        return f"SandboxFleet(url={self.url!r}, accounts={len(self.accounts)})"

    @property
    def url(self) -> str:
        return http_base(self.host, self.port)

    @property
    def state(self) -> SandboxState:
        """The first account's state (the one a request naming no account reaches)."""
        return self.accounts[0].gateway.state

    # -- accounts ----------------------------------------------------------------------------------------------

    def _add_account(self, name: str, *, number: int | None = None, session_token: str | None = None,
                     instance_token: str | None = None, paired: bool = True) -> FleetAccount:
        serial = number if number is not None else len(self.accounts) + 1
        state = seed_demo_state(own_phone=account_phone(serial),
                                own_name=OWN_NAME if serial == 1 else f"{OWN_NAME} {serial}")
        gateway = SandboxGateway(
            instance_id=self._instance_api().new_instance_id(serial),
            instance_token=instance_token or secrets.token_hex(12).upper(),
            client_token=self._client_token,
            session_token=session_token or secrets.token_urlsafe(18),
            state=state, logged_out=not paired, clock=self.clock, **self._options,
        )
        if self.older:
            self._last_user_key += 1
        user_id = str(self._last_user_key) if self.older else secrets.token_hex(16)
        account = FleetAccount(gateway=gateway, user_id=user_id, name=name, created=self.clock(),
                               handlers=[_function(route) for route in gateway.routes()])
        if not self._routes:
            self._routes = gateway.routes()
        self.accounts.append(account)
        return account

    async def _start_account(self, account: FleetAccount) -> None:
        account.gateway.host, account.gateway.port = self.host, self.port
        await account.gateway.deliveries.start()
        account.gateway.deliveries.base_url = self.url

    def _instance_api(self) -> DialectApiFactory:
        dialects: SandboxDialects = self._options["dialects"]
        return dialects[(Family.INSTANCE, self.instance_dialect.value)]

    def is_admin_key(self, key: str | None) -> bool:
        return _same_secret(key, self._admin_token)

    def contexts(self) -> list[Context]:
        return [account.gateway.context for account in self.accounts]

    def by_instance(self, instance_id: str | None) -> FleetAccount | None:
        return next((account for account in self.accounts if account.instance_id == instance_id), None)

    def by_session_token(self, token: str | None) -> FleetAccount | None:
        if not token:
            return None
        return next((account for account in self.accounts if _same_secret(token, account.gateway.session_token)), None)

    def _pick(self, request: web.Request) -> FleetAccount:
        if "instance_id" in request.match_info:
            found = self.by_instance(request.match_info["instance_id"])
        elif "token" in request.headers:
            found = self.by_session_token(request.headers["token"])
        else:
            found = self.by_instance(request.query.get(ACCOUNT_QUERY)) if ACCOUNT_QUERY in request.query else None
        return found or self.accounts[0]

    def _dispatch(self, position: int) -> RouteHandler:
        async def handler(request: web.Request) -> web.StreamResponse:
            return await self._pick(request).handlers[position](request)

        return handler

    # -- the server --------------------------------------------------------------------------------------------

    def build_app(self) -> web.Application:
        app = web.Application(middlewares=[_json_errors], client_max_size=MAX_BODY)
        app.add_routes([
            web.get("/admin/users", self.list_users),
            web.post("/admin/users", self.create_user),
            web.delete("/admin/users/{user_id}", self.delete_user),
            web.get("/instances", self.list_instances),
            web.post("/instances/integrator/on-demand", self.create_instance),
        ])
        # A dialect's own fleet routes (Evolution's fetchInstances with the global key) before the accounts' routes,
        # which then never see that method and path.
        own = self._instance_api().fleet_routes(self)
        taken = {(route.method, route.path) for route in own}
        app.add_routes(own)
        app.add_routes([web.route(route.method, route.path, self._dispatch(position), **route.kwargs)
                        for position, route in enumerate(self._routes) if (route.method, route.path) not in taken])
        return app

    async def start(self) -> None:
        if self._runner is not None:
            raise RuntimeError("the sandbox is already running")
        runner = web.AppRunner(self.build_app(), access_log=None, handle_signals=False)
        await runner.setup()
        try:
            site = web.TCPSite(runner, self.host, self._requested_port)
            await site.start()
        except BaseException:
            await runner.cleanup()
            raise
        self._runner = runner
        self.port = runner.addresses[0][1]
        for account in self.accounts:
            await self._start_account(account)

    async def stop(self) -> None:
        runner, self._runner = self._runner, None
        if runner is not None:
            await runner.cleanup()
        for account in self.accounts:
            await account.gateway.deliveries.stop()

    async def __aenter__(self) -> SandboxFleet:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.stop()

    # -- WuzAPI /admin/users (docs/gateways/wuzapi.md §2.10: the envelope, 201 on create, 409 on a taken token) -------

    def _admin_refusal(self, request: web.Request) -> web.Response | None:
        if _same_secret(request.headers.get("Authorization"), self._admin_token):
            return None
        return _envelope_error(401, "unauthorized")

    def _user(self, account: FleetAccount) -> dict[str, Any]:
        gateway, state = account.gateway, account.gateway.state
        link = state.session_link
        webhook = state.session_webhook
        user = {
            "id": int(account.user_id) if self.older else account.user_id, "name": account.name,
            "token": gateway.session_token,
            "webhook": webhook.url, "jid": f"{link.number}:12@s.whatsapp.net" if link.paired and link.number else "",
            "qrcode": "", "connected": link.connected, "loggedIn": link.paired, "expiration": 0, "proxy_url": "",
            "events": ",".join(webhook.events),
        }
        if self.older:
            return user
        return user | {
            "proxy_config": {"enabled": False, "proxy_url": ""},
            "s3_config": {"enabled": False, "endpoint": "", "region": "", "bucket": "", "access_key": "***",
                          "path_style": False, "public_url": "", "media_delivery": "", "retention_days": 0},
        }

    async def list_users(self, request: web.Request) -> web.Response:
        if refused := self._admin_refusal(request):
            return refused
        return web.json_response({"code": 200, "data": [self._user(account) for account in self.accounts],
                                  "success": True})

    async def create_user(self, request: web.Request) -> web.Response:
        if refused := self._admin_refusal(request):
            return refused
        body = await _json_body(request)
        name, token = body.get("name") if body else None, body.get("token") if body else None
        if not isinstance(name, str) or not name or not isinstance(token, str) or not token:
            return _envelope_error(400, "invalid request payload")
        if self.by_session_token(token) is not None:
            return _envelope_error(409, "user with this token already exists")
        account = self._add_account(name, session_token=token, paired=False)
        webhook, events = body.get("webhook"), body.get("events")  # type: ignore[union-attr]
        if isinstance(webhook, str):
            account.gateway.state.session_webhook.url = webhook
        if isinstance(events, str) and events.strip():
            account.gateway.state.session_webhook.events = [kind for kind in events.split(",") if kind]
        if self._runner is not None:
            await self._start_account(account)
        if self.older:  # AddUser at 79ee4cd: json.NewEncoder, no envelope, the new integer key only
            return web.json_response({"id": int(account.user_id)})
        user = self._user(account)
        data = {key: user[key] for key in ("id", "name", "token", "webhook", "expiration", "events", "proxy_config",
                                           "s3_config")} | {"hmac_key": False}
        return web.json_response({"code": 201, "data": data, "success": True}, status=201)

    async def delete_user(self, request: web.Request) -> web.Response:
        if refused := self._admin_refusal(request):
            return refused
        user_id = request.match_info["user_id"]
        account = next((account for account in self.accounts if account.user_id == user_id), None)
        if account is None:
            return web.json_response({"code": 404, "error": "user not found",
                                      "details": f"No user found with ID: {user_id}", "success": False}, status=404)
        if len(self.accounts) == 1:
            return _envelope_error(409, "the sandbox keeps its last account")
        self.accounts.remove(account)
        await account.gateway.deliveries.stop()
        if self.older:  # DeleteUser at 79ee4cd: json.NewEncoder, no envelope, no id
            return web.json_response({"Details": "User deleted successfully"})
        return web.json_response({"code": 200, "data": {"id": user_id}, "details": "user deleted successfully",
                                  "success": True})

    # -- Z-API's partner API (docs/gateways/zapi.md §7; developer.z-api.io/en/partner/list-instances) ----------------

    def _partner_refusal(self, request: web.Request) -> web.Response | None:
        if self._partner_token is None:
            return web.json_response({"error": "this sandbox has no partner API: set GATEWAY_TUI_PARTNER_TOKEN"},
                                     status=404)
        if _same_secret(request.headers.get("Authorization"), "Bearer " + self._partner_token):
            return None
        return web.json_response({"error": "invalid partner token"}, status=401)

    def _instance(self, account: FleetAccount) -> dict[str, Any]:
        state = account.gateway.state
        created_ms = int(account.created.timestamp() * 1000)
        return {
            "token": account.gateway.instance_token, "tenant": "sandbox", "created": account.created.isoformat(),
            "due": created_ms + TRIAL_MS, "paymentStatus": "TRIAL", "deliveryCallbackUrl": state.delivery_url,
            "phoneConnected": state.instance_link.connected, "whatsappConnected": state.instance_link.paired,
            "middleware": "web", "name": account.name, "id": account.instance_id,
        }

    async def list_instances(self, request: web.Request) -> web.Response:
        if refused := self._partner_refusal(request):
            return refused
        try:
            page, size = int(request.query.get("page", "1")), int(request.query.get("pageSize", "15"))
        except ValueError:
            page = size = 0
        if page < 1 or size < 1:
            return web.json_response({"error": "page and pageSize must be whole numbers from 1"}, status=400)
        query = request.query.get("query", "").lower()
        found = [account for account in self.accounts
                 if not query or query in account.name.lower() or query in account.instance_id.lower()]
        content = [self._instance(account) for account in found[(page - 1) * size: page * size]]
        return web.json_response({"total": len(found), "totalPage": -(-len(found) // size), "pageSize": size,
                                  "page": page, "content": content})

    async def create_instance(self, request: web.Request) -> web.Response:
        if refused := self._partner_refusal(request):
            return refused
        body = await _json_body(request)
        name = body.get("name") if body else None
        if not isinstance(name, str) or not name.strip():
            return web.json_response({"error": "name is required"}, status=400)
        account = self._add_account(name.strip(), paired=False)
        callback = body.get("deliveryCallbackUrl") if body else None
        if isinstance(callback, str):
            account.gateway.state.delivery_url = callback
        if self._runner is not None:
            await self._start_account(account)
        instance = self._instance(account)
        return web.json_response({key: instance[key] for key in ("id", "token", "due")})


def _function(route: web.RouteDef) -> RouteHandler:
    handler = route.handler
    if isinstance(handler, type):  # a class-based view: the sandbox has none
        raise TypeError(f"{route.method} {route.path}: the fleet dispatches handler functions only")
    return handler


def _envelope_error(status: int, error: str) -> web.Response:
    return web.json_response({"code": status, "error": error, "success": False}, status=status)


async def _json_body(request: web.Request) -> dict[str, Any] | None:
    try:
        body = json.loads(await request.read() or b"null")
    except ValueError:
        return None
    return body if isinstance(body, dict) else None


def fleet_accounts_summary(accounts: Sequence[FleetAccount]) -> list[str]:
    """One line per account for the banner: its name, instance id and number (no secret)."""
    return [f"  {account.name:<12} instance {account.instance_id}  number {account.gateway.state.own_phone}"
            for account in accounts]
