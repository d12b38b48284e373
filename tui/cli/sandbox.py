"""`gateway-tui sandbox`: the sandbox gateway in the foreground, as a command (arguments, banner, signals); the
service itself is tui.sandbox.server."""

from __future__ import annotations

if __name__ == "__main__":  # the sandbox process of `gateway-tui --sandbox`: no collector passes while it imports and
    import gc  # starts (~20 ms of its ~220 before it listens, on the way to the app's "connected"); back on once it
    gc.disable()  # listens (tui.sandbox.process._answer)
    from tui.sandbox.ca_bundle import ca_bundle_held_back

    with ca_bundle_held_back():  # read a moment after it listens (tui.sandbox.ca_bundle says why)
        import aiohttp  # noqa: F401

import argparse
import asyncio
import logging
import os
import secrets
import sys
from tui.cli.serve import start_or_explain, stop_on_sigterm
from tui.cli.exit_codes import Exit
from tui.sandbox.dialect import InstanceDialect, PairingOptions, SessionDialect
from tui.gateways.sandbox import SANDBOX_DIALECTS, SandboxGateway
from tui.sandbox.server import CLIENT_TOKEN_ENV, INSTANCE_TOKEN_ENV, SESSION_TOKEN_ENV

_log = logging.getLogger(__name__)

def _secret_from_env(name: str) -> tuple[str, bool]:
    """(value, generated). Empty counts as unset."""
    value = os.environ.get(name, "")
    if value:
        return value, False
    return secrets.token_urlsafe(24), True


async def _serve(args: argparse.Namespace) -> int:
    if getattr(args, "accounts", 1) != 1:
        return await _serve_fleet(args)
    tokens = {name: _secret_from_env(name) for name in (INSTANCE_TOKEN_ENV, CLIENT_TOKEN_ENV, SESSION_TOKEN_ENV)}
    gateway = SandboxGateway(
        instance_id=args.instance_id,
        instance_token=tokens[INSTANCE_TOKEN_ENV][0],
        client_token=tokens[CLIENT_TOKEN_ENV][0],
        session_token=tokens[SESSION_TOKEN_ENV][0],
        host=args.host,
        port=args.port,
        rate_limit=args.rate,
        webhook_format=args.webhook_format,
        instance_dialect=InstanceDialect(args.instance_dialect),
        session_dialect=SessionDialect(args.session_dialect),
        logged_out=bool(getattr(args, "logged_out", False)),
        pairing=PairingOptions.from_plain(vars(args)),
    )
    if getattr(args, "ban_after", None):
        from tui.sandbox.faults import apply_fault

        apply_fault(gateway.state, {"kind": "ban", "after": args.ban_after})
    if not await start_or_explain(gateway.start, "sandbox", args.host, args.port):
        return Exit.REFUSED
    stopping = asyncio.Event()
    stop_on_sigterm(stopping)
    try:
        print(_banner(gateway, args, tokens), flush=True)
        await stopping.wait()
    finally:
        await gateway.stop()
    return Exit.OK


def _banner(gateway: SandboxGateway, args: argparse.Namespace, tokens: dict[str, tuple[str, bool]]) -> str:
    def shown(name: str) -> str:
        # Generated values are printed (it is a sandbox); values from the environment never are.
        value, generated = tokens[name]
        return value if generated else f"${name}"

    lines = [f"Sandbox gateway listening on {gateway.url}  (Ctrl+C stops it)"]
    if args.host not in ("127.0.0.1", "localhost", "::1"):
        lines.append(f"warning: bound to {args.host}, reachable from other machines")
    if gateway.instance_dialect is InstanceDialect.EVOLUTION:  # its routes hang off the root, its key in `apikey`
        lines.append(f"  instance family: {gateway.url}/  (Evolution API: instance {gateway.instance_id!r}, header "
                     f"apikey: {shown(INSTANCE_TOKEN_ENV)})")
    else:
        lines.append(f"  instance family: {gateway.url}/instances/{gateway.instance_id}/token/{shown(INSTANCE_TOKEN_ENV)}/")
    lines += [
        f"  session family:  {gateway.url}/",
        f"  Client-Token:    {shown(CLIENT_TOKEN_ENV)}",
        f"  session token:   {shown(SESSION_TOKEN_ENV)}",
    ]
    if args.rate:
        lines.append(f"  rate limit:      {args.rate:g} requests/s")
    lines.append(f"  instance dialect: {gateway.instance_dialect}   session dialect: {gateway.session_dialect}")
    lines.append(f"  session webhook format: {gateway.webhook_format}")
    if getattr(args, "ban_after", None):
        lines.append(f"  ban fault: banned at send {args.ban_after} (403 from then on)")
    if getattr(args, "logged_out", False):
        lines.append("  logged out: pair by QR or phone code, then POST /sandbox/scan {\"code\": ...}")
        pairing = PairingOptions.from_plain(vars(args))
        lines.append(f"  pairing: codes last {pairing.code_lifetime.total_seconds():g} s; WuzAPI "
                     f"({pairing.wuzapi_release}) is up {pairing.connect_delay.total_seconds():g} s after connect")
    return "\n".join(lines)


async def _serve_fleet(args: argparse.Namespace) -> int:
    """`--accounts N`: N accounts on one port, behind WuzAPI's admin API (and Z-API's partner API with a partner
    token). The admin token is never made up here: a generated one would have to be printed or written down."""
    from tui.gateways.sandbox import SandboxFleet
    from tui.sandbox.fleet import ADMIN_TOKEN_ENV, MAX_ACCOUNTS, PARTNER_TOKEN_ENV, fleet_accounts_summary

    if getattr(args, "ban_after", None):
        print("gateway-tui: --ban-after is for the single sandbox; with --accounts N, POST /sandbox/fault?account=ID "
              "with {\"kind\": \"ban\", \"after\": N} bans one account", file=sys.stderr)
        return Exit.BAD_INPUT
    if not 1 <= args.accounts <= MAX_ACCOUNTS:
        print(f"gateway-tui: --accounts must be from 1 to {MAX_ACCOUNTS}", file=sys.stderr)
        return Exit.BAD_INPUT
    admin_token = os.environ.get(ADMIN_TOKEN_ENV, "")
    if not admin_token:
        print(f"gateway-tui: a sandbox of {args.accounts} accounts serves WuzAPI's admin API: set {ADMIN_TOKEN_ENV} "
              f"to the admin token it should take (and {PARTNER_TOKEN_ENV} for Z-API's partner API).", file=sys.stderr)
        return Exit.BAD_INPUT
    client_token = _secret_from_env(CLIENT_TOKEN_ENV)
    fleet = SandboxFleet(
        accounts=args.accounts, admin_token=admin_token, client_token=client_token[0],
        partner_token=os.environ.get(PARTNER_TOKEN_ENV) or None, host=args.host, port=args.port,
        rate_limit=args.rate, webhook_format=args.webhook_format,
        instance_dialect=InstanceDialect(args.instance_dialect), session_dialect=SessionDialect(args.session_dialect),
        pairing=PairingOptions.from_plain(vars(args)),
    )
    if not await start_or_explain(fleet.start, "sandbox", args.host, args.port):
        return Exit.REFUSED
    stopping = asyncio.Event()
    stop_on_sigterm(stopping)
    try:
        partner = "" if os.environ.get(PARTNER_TOKEN_ENV) else f" (set {PARTNER_TOKEN_ENV} to serve it)"
        lines = [
            f"Sandbox gateway listening on {fleet.url} with {len(fleet.accounts)} accounts  (Ctrl+C stops it)",
            f"  WuzAPI admin API:   {fleet.url}/admin/users  (Authorization: ${ADMIN_TOKEN_ENV})",
            f"  Z-API partner API:  {fleet.url}/instances  (Authorization: Bearer ${PARTNER_TOKEN_ENV}){partner}",
            f"  Evolution (--instance-dialect evolution): {fleet.url}/instance/fetchInstances  "
            f"(apikey: ${ADMIN_TOKEN_ENV}, the global key)",
            f"  Client-Token (every instance): {client_token[0] if client_token[1] else '$' + CLIENT_TOKEN_ENV}",
            "  each account's tokens: from the admin APIs (gateway-tui fleet import)",
            f"  instance dialect: {fleet.instance_dialect}   session dialect: {fleet.session_dialect}",
            *fleet_accounts_summary(fleet.accounts[:10]),
        ]
        if len(fleet.accounts) > 10:
            lines.append(f"  … and {len(fleet.accounts) - 10} more")
        print("\n".join(lines), flush=True)
        await stopping.wait()
    finally:
        await fleet.stop()
    return Exit.OK


def run_cli(args: argparse.Namespace) -> int:
    try:
        return asyncio.run(_serve(args))
    except KeyboardInterrupt:
        print("Sandbox stopped.", flush=True)
        return Exit.OK


def serve_for_app() -> int:
    """`python -m tui.cli.sandbox`: the sandbox process of `gateway-tui --sandbox` (see tui.sandbox.process: the
    request comes on stdin, the port goes back on stdout, and the end of stdin stops it)."""
    import signal

    from tui.sandbox.process import serve_until_stdin_ends

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # ctrl+c in the app's terminal is the app's; EOF stops this
    try:
        return asyncio.run(serve_until_stdin_ends(SANDBOX_DIALECTS))
    except BrokenPipeError:
        return Exit.OK


if __name__ == "__main__":
    import sys

    sys.exit(serve_for_app())
