"""The arguments of the commands whose modules are heavy (the sandbox, the listener, the store, the keyring), declared
here, light, because the parser is built at every start, the app's included; and the argument types every command
shares. The commands run from `tui.cli.commands`."""

from __future__ import annotations

import argparse
from typing import Any

from tui.api.dialects import InstanceDialect, SessionDialect

# tui.api.signing.Verdict's values (not imported: the app's start must not pay for the webhook modules).
VERDICTS = ("valid", "invalid", "unsigned", "no-key", "apikey-ok", "apikey-wrong", "apikey-unchecked", "no-apikey",
            "path-secret-ok", "path-secret-wrong", "rejected")


def port(text: str) -> int:
    value = int(text)
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError("a port is a number from 0 to 65535")
    return value


def count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError("a whole number, such as 100") from None
    if value < 1:
        raise argparse.ArgumentTypeError("at least 1")
    return value


def byte_size(text: str) -> int:
    """Bytes, or a number with K, M or G (binary: 150M = 150 MiB)."""
    units = {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3}
    cleaned = text.strip().upper().removesuffix("B").removesuffix("I")
    number, unit = (cleaned[:-1], cleaned[-1]) if cleaned[-1:] in units else (cleaned, "")
    try:
        value = int(number) * units[unit]
    except ValueError:
        raise argparse.ArgumentTypeError("a size in bytes, or with K, M or G, such as 150M") from None
    if value < 1:
        raise argparse.ArgumentTypeError("at least 1 byte")
    return value


def profile_names(text: str) -> tuple[str, ...]:
    """`a,b,c` as names (spaces and empty entries dropped); refused when none is left."""
    names = tuple(dict.fromkeys(name.strip() for name in text.split(",") if name.strip()))
    if not names:
        raise argparse.ArgumentTypeError("name at least one profile, such as --profiles shop,support")
    return names


def global_flags_after_subcommand(parser: argparse.ArgumentParser) -> None:
    """--profile and --insecure-storage also after the subcommand; SUPPRESS keeps a value given before it."""
    parser.add_argument("--profile", metavar="NAME", default=argparse.SUPPRESS, help="profile to use")
    parser.add_argument(
        "--insecure-storage", action="store_true", default=argparse.SUPPRESS, help="as before the subcommand"
    )


def seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not 0 <= value <= 3600:
        raise argparse.ArgumentTypeError("seconds from 0 to 3600")
    return value


def positive_seconds(text: str) -> float:
    value = seconds(text)
    if value == 0:
        raise argparse.ArgumentTypeError("a code must last longer than 0 seconds")
    return value


def dialect_flags(parser: argparse.ArgumentParser, *, for_app: bool = False) -> None:
    """The sandbox's dialects: `gateway-tui sandbox …` and `gateway-tui --sandbox …` take the same flags.

    The subcommand's copies default to SUPPRESS so a value given before `sandbox` is not reset by them."""
    where = "with --sandbox, " if for_app else ""
    default = "spec" if for_app else argparse.SUPPRESS
    parser.add_argument(
        "--instance-dialect",
        choices=[dialect.value for dialect in InstanceDialect],
        default=default,
        help=f"{where}the instance family speaks the spec (default) or Z-API",
    )
    parser.add_argument(
        "--session-dialect",
        choices=[dialect.value for dialect in SessionDialect],
        default=default,
        help=f"{where}the session family speaks the spec (default) or WuzAPI",
    )
    parser.add_argument(
        "--logged-out",
        action="store_true",
        default=False if for_app else argparse.SUPPRESS,
        help=f"{where}the sandbox starts with no phone paired (pair by QR or phone code; POST /sandbox/scan)",
    )
    parser.add_argument(
        "--wuzapi-release", choices=["newer", "older"], default="newer" if for_app else argparse.SUPPRESS,
        help=f"{where}the WuzAPI release the wuzapi dialect plays for a user never paired: newer (status always "
             "answers) or older (status 500 \"No session\" until connected; integer user ids in its admin API)")
    parser.add_argument(
        "--connect-delay", type=seconds, metavar="SECONDS", default=1.0 if for_app else argparse.SUPPRESS,
        help=f"{where}WuzAPI's websocket comes up this long after an immediate connect (it answers \"not "
             "connected\" meanwhile; default 1)")
    parser.add_argument(
        "--code-lifetime", type=positive_seconds, metavar="SECONDS", default=20.0 if for_app else argparse.SUPPRESS,
        help=f"{where}how long a pairing code lasts (WhatsApp's 20 s by default)")


def allow_remote(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--allow-remote",
        action="store_true",
        help="allow a target URL on another host (by default only loopback addresses receive events)",
    )


def add_event_parsers(commands: Any) -> None:
    events = commands.add_parser("events", help="list, show, export and replay stored webhook events")
    actions = events.add_subparsers(dest="events_command", metavar="ACTION", required=True)

    def store_option(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--db", metavar="PATH", help="event store file (default: the profile's)")
        global_flags_after_subcommand(parser)
        parser.add_argument("--sandbox", action="store_true", default=argparse.SUPPRESS,
                            help="the sandbox's event store")
        parser.add_argument("--all", action="store_true",
                            help="the one store of `listen --all` (every profile's events; --profile keeps one's)")

    def filter_options(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--kind", metavar="K", help="only events of this kind (Message, ReadReceipt, ...)")
        parser.add_argument("--verdict", choices=VERDICTS, help="only events with this verdict, or rejected")
        parser.add_argument("--search", metavar="TEXT", help="only events whose body has all these words")
        parser.add_argument("--limit", type=int, metavar="N", help="at most N events, the newest")
        store_option(parser)

    listing = actions.add_parser("list", help="the newest events (50 unless --limit)")
    filter_options(listing)
    listing.add_argument("--json", action="store_true", help="a JSON array, newest first")
    show = actions.add_parser("show", help="one event in full, with its forward attempts")
    show.add_argument("id", type=int)
    show.add_argument("--json", action="store_true", help="one JSON object")
    store_option(show)
    export = actions.add_parser("export", help="matching events as JSON lines, oldest first")
    filter_options(export)
    export.add_argument("--output", "-o", metavar="FILE", help="write to FILE instead of standard output")
    replay = actions.add_parser("replay", help="send a stored event again: same body, content type and signature")
    replay.add_argument("id", type=int)
    replay.add_argument("--to", required=True, metavar="URL", help="your app's webhook URL")
    replay.add_argument("--timeout", type=float, default=10.0, metavar="SECONDS")
    allow_remote(replay)
    store_option(replay)

    trigger = commands.add_parser(
        "trigger",
        help="send a realistic sample event to URL, signed like the gateway signs it",
        description="Kinds: Message, ReadReceipt, ChatPresence, Presence, Connected (WuzAPI session events); "
        "ReceivedCallback, DeliveryCallback, MessageStatusCallback, PresenceChatCallback, ConnectedCallback, "
        "DisconnectedCallback (Z-API callbacks). Signed with GATEWAY_TUI_HMAC_KEY or the profile's key when the "
        "dialect signs (gateway, wuzapi; Z-API never signs).",
    )
    trigger.add_argument("kind", metavar="KIND")
    trigger.add_argument("--to", required=True, metavar="URL", help="where to send it (your app, or the listener)")
    trigger.add_argument("--format", choices=("json", "form"), help="session events: JSON (default) or WuzAPI's form")
    trigger.add_argument("--dialect", choices=("spec", "wuzapi", "zapi"), default="spec",
                         help="whose webhooks to imitate (default: spec, the spec's service, as profiles name it)")
    trigger.add_argument("--timeout", type=float, default=10.0, metavar="SECONDS")
    allow_remote(trigger)
    global_flags_after_subcommand(trigger)


def add_sandbox_parser(commands: Any) -> None:
    """`gateway-tui sandbox`: the sandbox gateway in the foreground."""
    sandbox = commands.add_parser("sandbox", help="run the sandbox gateway in the foreground (Ctrl+C stops it)")
    sandbox.add_argument("--port", type=port, default=8099)
    sandbox.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    sandbox.add_argument("--instance-id", default="sandbox", help="instance id expected in instance-family paths")
    sandbox.add_argument(
        "--accounts", type=int, default=1, metavar="N",
        help="serve N accounts on the one port, behind WuzAPI's admin API (needs GATEWAY_TUI_ADMIN_TOKEN) and "
        "Z-API's partner API (with GATEWAY_TUI_PARTNER_TOKEN); default 1, the single sandbox",
    )
    sandbox.add_argument(
        "--rate",
        type=float,
        default=None,
        metavar="PER_SECOND",
        help="requests per second per instance before answering 429 (default: unlimited)",
    )
    sandbox.add_argument("--ban-after", type=count, default=None, metavar="N",
                         help="the account is banned at its Nth send: every call answers 403 from then (a campaign's "
                              "safety stop; POST /sandbox/fault {\"kind\": \"none\"} lifts it)")
    sandbox.add_argument(
        "--webhook-format",
        choices=("json", "form"),
        default=None,
        help="body format of session webhooks: JSON, or WuzAPI's form-encoded jsonData "
        "(default: form with --session-dialect wuzapi, else json)",
    )
    dialect_flags(sandbox)


def add_listen_parser(commands: Any) -> None:
    """`gateway-tui listen`: the webhook listener headless."""
    listen = commands.add_parser("listen", help="run the webhook listener headless")
    listen.add_argument("--port", type=port, default=8787)
    listen.add_argument(
        "--host",
        default="127.0.0.1",
        help="address to bind (default 127.0.0.1; anything else exposes the listener to the network)",
    )
    listen.add_argument("--print-json", action="store_true", help="print one JSON line per stored event (instead of the readable line printed by default)")
    listen.add_argument(
        "--accept-unsigned",
        action="store_true",
        help="with a key set, still store unsigned or badly signed events instead of answering 401",
    )
    listen.add_argument(
        "--require-signatures",
        action="store_true",
        help="with a key set, refuse unsigned events on every path, the instance family's /delivery included",
    )
    listen.add_argument(
        "--max-body",
        type=byte_size,
        default=None,
        metavar="SIZE",
        help="largest body accepted, in bytes or with K/M/G (default 150M: a 100 MB document inlined as base64)",
    )
    listen.add_argument(
        "--media-limit",
        type=byte_size,
        default=None,
        metavar="SIZE",
        help="received media kept beside the store, in bytes or with K/M/G; past it the oldest files go (default 512M)",
    )
    listen.add_argument(
        "--all",
        action="store_true",
        help="serve every profile on this port, each on /a/<profile>/session and /a/<profile>/delivery with its own key",
    )
    listen.add_argument("--db", metavar="PATH", help="event store file (default: in the user data dir)")
    listen.add_argument(
        "--forward-to",
        metavar="URL",
        help="send every accepted event on to your app at URL (original body and signature, retried when it is down)",
    )
    listen.add_argument("--alert-command", metavar="CMD",
                        help="run CMD (no shell) with each alert as one JSON object on stdin (docs/listener.md)")
    listen.add_argument("--alert-webhook", metavar="URL", help="POST each alert as JSON to URL (loopback unless --allow-remote)")
    listen.add_argument("--print-unit", action="store_true",
                        help="print a systemd user unit that runs this listen (--all unless --profile) as a service, "
                        "and start nothing")
    allow_remote(listen)
    global_flags_after_subcommand(listen)


def add_profile_parser(commands: Any) -> None:
    """`gateway-tui profile add | list | remove`."""
    profile = commands.add_parser("profile", help="manage profiles and their secrets")
    profile_commands = profile.add_subparsers(dest="profile_command", metavar="ACTION", required=True)
    add = profile_commands.add_parser(
        "add",
        help="add or update a profile; secrets come from hidden prompts, or from GATEWAY_TUI_* variables without a terminal",
        description="Add or update a profile for one gateway or both: Z-API (--base-url and --instance-id, the instance "
        "family), WuzAPI (--session-url, the session family). With neither on a terminal, it asks which. Only the "
        "given gateway's secrets are asked for (hidden prompts) or read (GATEWAY_TUI_* without a terminal).",
    )
    add.add_argument("name")
    add.add_argument("--base-url", help="instance-family base URL (Z-API; with --instance-id)")
    add.add_argument("--instance-id", help="instance id (Z-API; with --base-url)")
    add.add_argument(
        "--session-url",
        help="session-family base URL (WuzAPI). Give Z-API's, WuzAPI's or both; none on a terminal: asked",
    )
    add.add_argument("--listener-host", default="127.0.0.1")
    add.add_argument("--listener-port", type=port, default=8787)
    add.add_argument("--public-url", default="", help="URL the gateway should call for webhooks (e.g. a tunnel)")
    add.add_argument("--theme", default="textual-dark")
    add.add_argument(
        "--max-body", type=byte_size, default=None, metavar="SIZE",
        help="largest webhook body the listener accepts (default 150M; bytes or with K/M/G)",
    )
    add.add_argument(
        "--require-signatures", action="store_true",
        help="with an HMAC key, refuse unsigned webhooks on every path (Z-API never signs: leave off for it)",
    )
    add.add_argument(
        "--instance-dialect",
        choices=[dialect.value for dialect in InstanceDialect],
        default=InstanceDialect.SPEC.value,
        help="how instance-family requests are written: the spec's shapes, or Z-API's (default: spec)",
    )
    add.add_argument(
        "--session-dialect",
        choices=[dialect.value for dialect in SessionDialect],
        default=SessionDialect.SPEC.value,
        help="how session-family requests are written: the spec's shapes, or WuzAPI's (default: spec)",
    )
    add.add_argument(
        "--read-only", action=argparse.BooleanOptionalAction, default=None,
        help="refuse every operation that writes (sends, settings, pairing), in the app and in `call`; alone, on an "
        "existing profile, changes only this (default: as it was; a new profile is writable)",
    )
    listing = profile_commands.add_parser("list", help="list profiles and which secrets are set (never their values)")
    add.add_argument("--forward-to", default="", metavar="URL", help="forward every accepted event to your app at URL")
    add.add_argument("--forward-allow-remote", action="store_true", help="let --forward-to name a host other than this one")
    remove = profile_commands.add_parser("remove", help="remove a profile and its keyring entries")
    remove.add_argument("name")
    for action in (add, listing, remove):
        action.add_argument(
            "--insecure-storage", action="store_true", default=argparse.SUPPRESS, help="as before the subcommand"
        )
