"""`gateway-tui fleet import --session-url URL | --zapi-partner [--partner-url URL] | --evolution-url URL`: the
command line of tui.core.accounts.fleet_import. Each flag names a gateway's fleet source (tui.gateways.fleets);
what the import does for it is the source's. The gateway's own token (WuzAPI's admin token, Z-API's partner
token, Evolution's global key) comes from its variable (GATEWAY_TUI_ADMIN_TOKEN, GATEWAY_TUI_PARTNER_TOKEN), else
the keyring (under the gateway's URL), else a hidden prompt on a terminal (stored once the import worked); a secret
the source asks once for all accounts (Z-API's Client-Token) from a hidden prompt, or its variable without a
terminal. None is ever an argument, printed or logged."""

from __future__ import annotations

import argparse
import getpass
import os
import sys
from dataclasses import dataclass, field

from typing import TYPE_CHECKING

from tui.cli.exit_codes import Exit
from tui.cli.call import add_timeout_flag

if TYPE_CHECKING:  # the module is imported for the parser: what the import needs is loaded when it runs
    from tui.local.secrets import GatewaySecret, SecretName, SecretStore



def _port(value: str) -> int:
    number = int(value)
    if not 0 <= number <= 65535:
        raise argparse.ArgumentTypeError("a port is from 0 to 65535")
    return number


class _Source(argparse.Action):
    """A flag that names a gateway's fleet source (tui.gateways.fleets) and, with a value, its URL: the command
    then never asks which gateway it imports from."""

    def __init__(self, option_strings: list[str], dest: str, source: str, **kwargs: object) -> None:
        self.source = source
        super().__init__(option_strings, dest, **kwargs)  # type: ignore[arg-type]

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: object,
                 option_string: str | None = None) -> None:
        namespace.fleet_source = self.source
        namespace.source_url = values if isinstance(values, str) else None


def add_import_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    """`import` under the `fleet` command's subparsers."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "import",
        help="one profile per account of a gateway's admin API (WuzAPI users, Z-API partner instances, Evolution "
             "instances)",
        description="Create or update one profile per account the gateway's admin API lists, store their secrets as "
        "`profile add` does, and point each account's webhooks at the listener's /a/<profile>/ paths. Importing "
        "again updates the same profiles.",
    )
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--session-url", metavar="URL", action=_Source, source="wuzapi",
                        help="a WuzAPI server: its users (admin token: GATEWAY_TUI_ADMIN_TOKEN or the keyring)")
    source.add_argument("--zapi-partner", nargs=0, action=_Source, source="zapi",
                        help="the instances of a Z-API partner account (partner token: GATEWAY_TUI_PARTNER_TOKEN "
                        "or the keyring)")
    source.add_argument("--evolution-url", metavar="URL", action=_Source, source="evolution",
                        help="an Evolution API server: its instances (global API key: GATEWAY_TUI_ADMIN_TOKEN or "
                        "the keyring)")
    parser.add_argument("--partner-url", metavar="URL", default=None,
                        help="with --zapi-partner: where Z-API answers (default: Z-API's own, api.z-api.io)")
    parser.add_argument("--public-url", default=None, help="URL the gateways call for webhooks (e.g. a tunnel)")
    parser.add_argument("--listener-host", default=None, help="the listener's host when no public URL "
                        "(default 127.0.0.1, or what an imported profile has)")
    parser.add_argument("--listener-port", type=_port, default=None, help="the listener's port (default 8787)")
    parser.add_argument("--insecure-storage", action="store_true", default=argparse.SUPPRESS,
                        help="as before the subcommand")
    add_timeout_flag(parser)
    return parser


def add_admin_parsers(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`users` (WuzAPI's /admin/users) and `instances` (Z-API's partner API) under the `fleet` command."""
    users = subparsers.add_parser("users", help="WuzAPI's users through its admin API: list, create, delete")
    user_actions = users.add_subparsers(dest="admin_action", metavar="ACTION", required=True)
    listing = user_actions.add_parser("list", help="every user: id, name, connection, webhook (never a token)")
    create = user_actions.add_parser(
        "create", help="a new user with a token made here (never shown); `fleet import` then makes its profile")
    create.add_argument("name")
    create.add_argument("--webhook", default="", metavar="URL", help="where WuzAPI sends the user's events")
    create.add_argument("--events", default="Message,ReadReceipt,ChatPresence",
                        help="the kinds of events, comma-separated (default Message,ReadReceipt,ChatPresence)")
    delete = user_actions.add_parser("delete", help="remove a user from WuzAPI (asks first; --yes without a terminal)")
    delete.add_argument("user_id")
    delete.add_argument("--yes", action="store_true", help="do not ask")
    for action in (listing, create, delete):
        action.add_argument("--session-url", required=True, metavar="URL", help="the WuzAPI server")
    instances = subparsers.add_parser("instances", help="Z-API's instances through its partner API: list, create")
    instance_actions = instances.add_subparsers(dest="admin_action", metavar="ACTION", required=True)
    listing = instance_actions.add_parser("list", help="every instance: id, name, connection (never a token)")
    create = instance_actions.add_parser(
        "create", help="a new instance: it costs money after Z-API's 2-day trial, so it asks first (--yes: not)")
    create.add_argument("name")
    create.add_argument("--yes", action="store_true", help="do not ask (Z-API bills the instance after its trial)")
    for action in (listing, create):
        action.add_argument("--partner-url", metavar="URL", default=None,
                            help="where Z-API answers (default: Z-API's own, api.z-api.io)")
    for parser in (users, instances):
        parser.add_argument("--insecure-storage", action="store_true", default=argparse.SUPPRESS,
                            help="as before the subcommand")
    for action in (*user_actions.choices.values(), *instance_actions.choices.values()):
        add_timeout_flag(action)


class _Refused(Exception):
    pass


def run_cli(args: argparse.Namespace) -> int:
    from tui.local import config
    from tui.api.errors import GatewayError
    from tui.api.wording import echoed
    from tui.local.secrets import KeyringUnavailable

    import asyncio  # here, not at the top: `gateway-tui --sandbox` spawns its sandbox before asyncio's import (~25 ms)

    action = {"import": _import, "users": _users, "instances": _instances}[args.fleet_command]
    try:
        return asyncio.run(action(args))
    except (_Refused, config.ConfigError, KeyringUnavailable) as error:
        print(echoed(f"gateway-tui: {error}"), file=sys.stderr)
        return Exit.BAD_INPUT
    except GatewayError as error:
        done = "nothing imported" if args.fleet_command == "import" else "not done"
        print(echoed(f"gateway-tui: {done}: {error.message}"), file=sys.stderr)
        return Exit.REFUSED
    except (KeyboardInterrupt, EOFError):
        print("\ngateway-tui: cancelled.", file=sys.stderr)
        return Exit.INTERRUPTED


async def _import(args: argparse.Namespace) -> int:
    from tui.local import config
    from tui.api.gateway_http import GatewayHttp
    from tui.core.accounts.fleet_import import ImportRefused, ListenerPlace, import_fleet
    from tui.gateways.fleets import fleet_source

    insecure = bool(getattr(args, "insecure_storage", False))
    config.load_profiles()  # a broken file stops us before any question
    place = None
    if args.public_url is not None or args.listener_host is not None or args.listener_port is not None:
        place = ListenerPlace(args.listener_host or "127.0.0.1",
                              config.DEFAULT_LISTENER_PORT if args.listener_port is None else args.listener_port,
                              args.public_url or "")
    source = fleet_source(args.fleet_source)
    access = _access(args, source.admin_secret, args.source_url or args.partner_url or source.default_url,
                     source.admin_label)
    store, url, token = access.store, access.url, access.token
    try:
        async with GatewayHttp(deadline=args.timeout) as http:
            given = {asked.name: _asked_secret(asked.name, asked.hint) for asked in source.asked}
            report = await import_fleet(source, http, url, token, store, given=given, place=place,
                                        secrets_file=insecure)
    except ImportRefused as refused:
        raise _Refused(str(refused)) from None
    access.keep()
    if report.created or report.updated:
        from tui.cli.listen_reload import tell_listeners_serving_all

        tell_listeners_serving_all(sys.stderr)  # a running `listen --all` serves the new profiles without a restart
    print(f"Imported {len(report.accounts)} {source.accounts_word} from {url}: {report.created} new profile(s), "
          f"{report.updated} updated; secrets stored in "
          f"{'a 0600 file (--insecure-storage)' if store.kind == 'insecure-file' else 'the OS keyring'}.")
    for item in report.accounts:
        state = "new" if item.created else "updated"
        print(f"  {item.profile or '(skipped)':<24} {state:<8} {item.account}")
        for problem in item.problems:
            print(f"    {problem}")
    return Exit.OK if all(not item.problems for item in report.accounts) else Exit.REFUSED


async def _users(args: argparse.Namespace) -> int:
    import secrets as random

    from tui.api.admin import AdminCredentials
    from tui.gateways.wuzapi.admin import NewUser, WuzapiAdminClient
    from tui.api.gateway_http import GatewayHttp
    from tui.local.secrets import GatewaySecret

    access = _access(args, GatewaySecret.ADMIN_TOKEN, args.session_url)
    url = access.url
    async with GatewayHttp(deadline=args.timeout) as http:
        client = WuzapiAdminClient(http, AdminCredentials(url, access.token))
        if args.admin_action == "list":
            users = await client.list_users()
            for user in users:
                state = "connected" if user.connected else ("logged in" if user.loggedIn else "not connected")
                print(f"{user.id}  {user.name:<24} {state:<14} {user.webhook or '(no webhook)'}")
            print(f"{len(users)} user(s) at {url}.")
        elif args.admin_action == "create":
            events = tuple(kind.strip() for kind in args.events.split(",") if kind.strip())
            created = await client.create_user(
                NewUser(name=args.name, token=random.token_urlsafe(24), webhook=args.webhook, events=events))
            print(f"Created user {created.name!r} (id {created.id}) at {url}. Its token is not shown: "
                  f"`gateway-tui fleet import --session-url {url}` makes its profile and stores it.")
        else:
            if not _confirmed(args.yes, f"Delete WuzAPI user {args.user_id} at {url}?"):
                print("Nothing deleted.")
                return Exit.OK
            deleted = await client.delete_user(args.user_id)
            print(f"Deleted user {deleted.id} at {url} (its profiles, if any, are kept: `profile remove` removes them).")
    access.keep()
    return Exit.OK


async def _instances(args: argparse.Namespace) -> int:
    from tui.api.admin import AdminCredentials
    from tui.gateways.zapi.admin import ZAPI_PARTNER_URL, NewInstance, ZapiPartnerClient
    from tui.api.gateway_http import GatewayHttp
    from tui.local.secrets import GatewaySecret

    access = _access(args, GatewaySecret.PARTNER_TOKEN, args.partner_url or ZAPI_PARTNER_URL)
    async with GatewayHttp(deadline=args.timeout) as http:
        client = ZapiPartnerClient(http, AdminCredentials(access.url, access.token))
        if args.admin_action == "list":
            instances = await client.all_instances()
            for instance in instances:
                state = "connected" if instance.phoneConnected else "not connected"
                print(f"{instance.id}  {instance.name:<24} {state:<14} {instance.paymentStatus}")
            print(f"{len(instances)} instance(s).")
        else:
            question = (f"Create Z-API instance {args.name!r}? Z-API bills it once its 2-day trial ends unless it is "
                        "cancelled.")
            if not _confirmed(args.yes, question):
                print("Nothing created.")
                return Exit.OK
            created = await client.create_instance(NewInstance(name=args.name))
            print(f"Created instance {args.name!r} (id {created.id}). Its token is not shown: `gateway-tui fleet "
                  "import --zapi-partner` makes its profile and stores it.")
    access.keep()
    return Exit.OK


def _checked_url(url: str) -> str:
    from tui.local import config

    try:
        return config.check_http_url(url.strip()).rstrip("/")
    except ValueError as error:
        raise _Refused(f"{url!r}: {error}") from None


@dataclass(frozen=True)
class _Access:
    """What a command needs to reach a gateway's admin API; a token typed at the prompt is stored by `keep`
    once it worked, for the next command."""

    store: SecretStore
    secret: GatewaySecret
    url: str
    token: str = field(repr=False)
    asked: bool = False

    def keep(self) -> None:
        from tui.local.secrets import gateway_scope

        if self.asked:
            self.store.set(gateway_scope(self.url), self.secret, self.token)


def _access(args: argparse.Namespace, secret: GatewaySecret, url: str, label: str | None = None) -> _Access:
    from tui.local.secrets import open_secret_store

    checked = _checked_url(url)
    store = open_secret_store(bool(getattr(args, "insecure_storage", False)))
    token, asked = _gateway_token(store, secret, checked, label or secret.label)
    return _Access(store, secret, checked, token, asked)


def _confirmed(yes: bool, question: str) -> bool:
    if yes:
        return True
    if not sys.stdin.isatty():
        raise _Refused(f"{question} Not without a terminal to ask on: add --yes.")
    return input(f"{question} [y/N] ").strip().lower() in ("y", "yes")


def _gateway_token(store: SecretStore, secret: GatewaySecret, url: str, label: str) -> tuple[str, bool]:
    """(token, asked): the variable, else the stored one, else a hidden prompt on a terminal."""
    from tui.local.secrets import gateway_scope

    from_env = os.environ.get(secret.env_var, "").strip()
    if from_env:
        return from_env, False
    stored = store.get(gateway_scope(url), secret)
    if stored:
        return stored, False
    if not sys.stdin.isatty():
        raise _Refused(f"no {label} for {url}: set {secret.env_var}, or run on a terminal to be asked once.")
    value = getpass.getpass(f"{label} for {url} (stored once the import works): ").strip()
    if not value:
        raise _Refused(f"no {label} given; nothing imported.")
    return value, True


def _asked_secret(name: SecretName, hint: str) -> str:
    """A secret the admin API never returns, the same for every account (Z-API's Client-Token): asked once
    (hidden), or read from its variable without a terminal."""
    if sys.stdin.isatty():
        value = getpass.getpass(f"{name.label} ({hint}): ").strip()
    else:
        value = os.environ.get(name.env_var, "").strip()
    if not value:
        raise _Refused(f"no {name.label}: enter it when asked, or set {name.env_var} without a terminal; "
                       "nothing imported.")
    return value
