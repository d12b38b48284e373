"""Command line of gateway-tui: the app by default, plus `sandbox`, `listen` and `profile` subcommands.

Each subcommand's module is imported only when that subcommand runs, so starting the app
does not pay for aiohttp or the keyring before its first frame.
"""

from __future__ import annotations

import argparse
import sys


def _port(text: str) -> int:
    value = int(text)
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError("a port is a number from 0 to 65535")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="gateway-tui",
        description="Operate a messaging-gateway account from the terminal.",
    )
    parser.add_argument(
        "--sandbox",
        action="store_true",
        help="run the embedded sandbox gateway and the webhook listener in-process (no account needed)",
    )
    parser.add_argument("--profile", metavar="NAME", help="profile to use (see `gateway-tui profile list`)")
    parser.add_argument(
        "--insecure-storage",
        action="store_true",
        help="keep secrets in a 0600 file instead of the OS keyring (only when no keyring is available)",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    sandbox = commands.add_parser("sandbox", help="run the sandbox gateway in the foreground (Ctrl+C stops it)")
    sandbox.add_argument("--port", type=_port, default=8099)
    sandbox.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    sandbox.add_argument("--instance-id", default="sandbox", help="instance id expected in instance-family paths")
    sandbox.add_argument(
        "--rate",
        type=float,
        default=None,
        metavar="PER_SECOND",
        help="requests per second per instance before answering 429 (default: unlimited)",
    )
    sandbox.add_argument(
        "--webhook-format",
        choices=("json", "form"),
        default="json",
        help="body format of session webhooks: JSON, or WuzAPI's form-encoded jsonData",
    )

    listen = commands.add_parser("listen", help="run the webhook listener headless")
    listen.add_argument("--port", type=_port, default=8787)
    listen.add_argument(
        "--host",
        default="127.0.0.1",
        help="address to bind (default 127.0.0.1; anything else exposes the listener to the network)",
    )
    listen.add_argument("--print-json", action="store_true", help="print one JSON line per stored event")
    listen.add_argument(
        "--accept-unsigned",
        action="store_true",
        help="with a key set, still store unsigned or badly signed events instead of answering 401",
    )
    listen.add_argument("--max-body", type=int, default=1024 * 1024, metavar="BYTES", help="largest body accepted")
    listen.add_argument("--db", metavar="PATH", help="event store file (default: in the user data dir)")

    profile = commands.add_parser("profile", help="manage profiles and their secrets")
    profile_commands = profile.add_subparsers(dest="profile_command", metavar="ACTION", required=True)
    add = profile_commands.add_parser(
        "add",
        help="add or update a profile; secrets come from hidden prompts, or from GATEWAY_TUI_* variables without a terminal",
    )
    add.add_argument("name")
    add.add_argument("--base-url", required=True, help="instance-family base URL")
    add.add_argument("--instance-id", required=True)
    add.add_argument("--session-url", required=True, help="session-family base URL")
    add.add_argument("--listener-host", default="127.0.0.1")
    add.add_argument("--listener-port", type=_port, default=8787)
    add.add_argument("--public-url", default="", help="URL the gateway should call for webhooks (e.g. a tunnel)")
    add.add_argument("--theme", default="textual-dark")
    profile_commands.add_parser("list", help="list profiles and which secrets are set (never their values)")
    remove = profile_commands.add_parser("remove", help="remove a profile and its keyring entries")
    remove.add_argument("name")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command == "sandbox":
        from tui.sandbox.server import run_cli
    elif args.command == "listen":
        from tui.webhooks.listener import run_cli
    elif args.command == "profile":
        from tui.profile_cli import run_cli
    else:
        from tui.app import run_cli
    return run_cli(args)


if __name__ == "__main__":
    sys.exit(main())
