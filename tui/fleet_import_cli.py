"""`gateway-tui fleet import --session-url URL | --zapi-partner [--partner-url URL]`: the command line of
tui.fleet_import. The gateway's own token (WuzAPI's admin token, Z-API's partner token) comes from
GATEWAY_TUI_ADMIN_TOKEN / GATEWAY_TUI_PARTNER_TOKEN, else the keyring (under the gateway's URL), else a hidden
prompt on a terminal (stored once the import worked); the Z-API Client-Token from a hidden prompt, or
GATEWAY_TUI_CLIENT_TOKEN without a terminal. None is ever an argument, printed or logged."""

from __future__ import annotations

import argparse
import asyncio
import getpass
import os
import sys

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the module is imported for the parser: what the import needs is loaded when it runs
    from tui.secrets import GatewaySecret, SecretStore

EXIT_BAD_INPUT = 2
EXIT_GATEWAY = 1
EXIT_CANCELLED = 130


def _port(value: str) -> int:
    number = int(value)
    if not 0 <= number <= 65535:
        raise argparse.ArgumentTypeError("a port is from 0 to 65535")
    return number


def add_import_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    """`import` under the `fleet` command's subparsers."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "import",
        help="one profile per account of a gateway's admin API (WuzAPI users, Z-API partner instances)",
        description="Create or update one profile per account the gateway's admin API lists, store their secrets as "
        "`profile add` does, and point each account's webhooks at the listener's /a/<profile>/ paths. Importing "
        "again updates the same profiles.",
    )
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--session-url", metavar="URL", help="a WuzAPI server: its users (admin token: "
                        "GATEWAY_TUI_ADMIN_TOKEN or the keyring)")
    source.add_argument("--zapi-partner", action="store_true", help="the instances of a Z-API partner account "
                        "(partner token: GATEWAY_TUI_PARTNER_TOKEN or the keyring)")
    parser.add_argument("--partner-url", metavar="URL", default=None,
                        help="with --zapi-partner: where Z-API answers (default: Z-API's own, api.z-api.io)")
    parser.add_argument("--public-url", default=None, help="URL the gateways call for webhooks (e.g. a tunnel)")
    parser.add_argument("--listener-host", default=None, help="the listener's host when no public URL "
                        "(default 127.0.0.1, or what an imported profile has)")
    parser.add_argument("--listener-port", type=_port, default=None, help="the listener's port (default 8787)")
    parser.add_argument("--insecure-storage", action="store_true", default=argparse.SUPPRESS,
                        help="as before the subcommand")
    return parser


class _Refused(Exception):
    pass


def run_cli(args: argparse.Namespace) -> int:
    from tui import config
    from tui.api.errors import GatewayError
    from tui.secrets import KeyringUnavailable

    try:
        return asyncio.run(_import(args))
    except (_Refused, config.ConfigError, KeyringUnavailable) as error:
        print(f"gateway-tui: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except GatewayError as error:
        print(f"gateway-tui: nothing imported: {error.message}", file=sys.stderr)
        return EXIT_GATEWAY
    except (KeyboardInterrupt, EOFError):
        print("\ngateway-tui: cancelled.", file=sys.stderr)
        return EXIT_CANCELLED


async def _import(args: argparse.Namespace) -> int:
    from tui import config
    from tui.api.admin import ZAPI_PARTNER_URL
    from tui.api.gateway_http import GatewayHttp
    from tui.fleet_import import ImportRefused, ListenerPlace, import_wuzapi, import_zapi
    from tui.secrets import GatewaySecret, gateway_scope, open_secret_store

    insecure = bool(getattr(args, "insecure_storage", False))
    config.load_profiles()  # a broken file stops us before any question
    store = open_secret_store(insecure)
    place = None
    if args.public_url is not None or args.listener_host is not None or args.listener_port is not None:
        place = ListenerPlace(args.listener_host or "127.0.0.1",
                              config.DEFAULT_LISTENER_PORT if args.listener_port is None else args.listener_port,
                              args.public_url or "")
    url = args.session_url if args.session_url else (args.partner_url or ZAPI_PARTNER_URL)
    try:
        config.check_http_url(url)
    except ValueError as error:
        raise _Refused(f"{url!r}: {error}") from None
    secret = GatewaySecret.ADMIN_TOKEN if args.session_url else GatewaySecret.PARTNER_TOKEN
    token, asked = _gateway_token(store, secret, url)
    try:
        async with GatewayHttp() as http:
            if args.session_url:
                report = await import_wuzapi(http, url, token, store, place=place, secrets_file=insecure)
            else:
                client_token = _client_token()
                report = await import_zapi(http, url, token, client_token, store, place=place, secrets_file=insecure)
    except ImportRefused as refused:
        raise _Refused(str(refused)) from None
    if asked:  # it worked: keep it for the next import
        store.set(gateway_scope(url), secret, token)
    gateway = "WuzAPI users" if args.session_url else "Z-API instances"
    print(f"Imported {len(report.accounts)} {gateway} from {url}: {report.created} new profile(s), "
          f"{report.updated} updated; secrets stored in "
          f"{'a 0600 file (--insecure-storage)' if store.kind == 'insecure-file' else 'the OS keyring'}.")
    for item in report.accounts:
        state = "new" if item.created else "updated"
        print(f"  {item.profile or '(skipped)':<24} {state:<8} {item.account}")
        for problem in item.problems:
            print(f"    {problem}")
    return 0 if all(not item.problems for item in report.accounts) else EXIT_GATEWAY


def _gateway_token(store: SecretStore, secret: GatewaySecret, url: str) -> tuple[str, bool]:
    """(token, asked): the variable, else the stored one, else a hidden prompt on a terminal."""
    from tui.secrets import gateway_scope

    from_env = os.environ.get(secret.env_var, "").strip()
    if from_env:
        return from_env, False
    stored = store.get(gateway_scope(url), secret)
    if stored:
        return stored, False
    if not sys.stdin.isatty():
        raise _Refused(f"no {secret.label} for {url}: set {secret.env_var}, or run on a terminal to be asked once.")
    value = getpass.getpass(f"{secret.label} for {url} (stored once the import works): ").strip()
    if not value:
        raise _Refused(f"no {secret.label} given; nothing imported.")
    return value, True


def _client_token() -> str:
    """Z-API's Client-Token: the account's security token, the same for every instance; the partner API does not
    return it, so it is asked once (hidden), or read from GATEWAY_TUI_CLIENT_TOKEN without a terminal."""
    from tui.secrets import SecretName

    name = SecretName.CLIENT_TOKEN
    if sys.stdin.isatty():
        value = getpass.getpass(f"Z-API {name.label} (Security > Account security token; one for every "
                                "instance): ").strip()
    else:
        value = os.environ.get(name.env_var, "").strip()
    if not value:
        raise _Refused(f"no {name.label}: enter it when asked, or set {name.env_var} without a terminal; "
                       "nothing imported.")
    return value
