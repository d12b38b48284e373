"""Every subcommand in one table: the name it answers to and the function that runs it. A command's module is
imported only when it runs, so the app's start does not pay for aiohttp, SQLite or the keyring (the parsers are
declared beside `main`, light, in `tui.cli.arguments` and the commands' own `add_parser`)."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping

Runner = Callable[[argparse.Namespace], int]


def _sandbox(args: argparse.Namespace) -> int:
    from tui.cli.sandbox import run_cli

    return run_cli(args)


def _listen(args: argparse.Namespace) -> int:
    from tui.cli.listen import run_cli

    return run_cli(args)


def _profile(args: argparse.Namespace) -> int:
    from tui.cli.profile import run_cli

    return run_cli(args)  # add and remove tell a running `listen --all` themselves (tui.cli.listen_reload)


def _call(args: argparse.Namespace) -> int:
    from tui.cli.call import run_cli

    return run_cli(args)


def _doctor(args: argparse.Namespace) -> int:
    from tui.cli.doctor import run_cli

    return run_cli(args)


def _send(args: argparse.Namespace) -> int:
    from tui.cli.send import run_cli

    return run_cli(args)


def _locate(args: argparse.Namespace) -> int:
    from tui.cli.locate import run_cli

    return run_cli(args)


def _connection(args: argparse.Namespace) -> int:
    from tui.cli.connection import run_cli

    return run_cli(args)


def _fleet(args: argparse.Namespace) -> int:
    if args.fleet_command is None:  # `fleet` alone: the board
        from tui.cli.fleet import run_cli as run_board

        return run_board(args)
    from tui.cli.fleet_import import run_cli  # `fleet import`, and the gateways' admin APIs

    return run_cli(args)  # an import tells a running `listen --all` itself (tui.cli.listen_reload)


def _message(args: argparse.Namespace) -> int:
    from tui.cli.message import run_cli

    return run_cli(args)


def _campaign(args: argparse.Namespace) -> int:
    from tui.cli.campaign import run_cli

    return run_cli(args)


def _events(args: argparse.Namespace) -> int:
    from tui.cli.events import run_cli

    return run_cli(args)


COMMANDS: Mapping[str, Runner] = {
    "sandbox": _sandbox,
    "listen": _listen,
    "profile": _profile,
    "call": _call,
    "doctor": _doctor,
    "send": _send,
    "locate": _locate,
    "connect": _connection,
    "status": _connection,
    "fleet": _fleet,
    "message": _message,
    "campaign": _campaign,
    "events": _events,
    "trigger": _events,
}


def runner_for(args: argparse.Namespace) -> Runner | None:
    """The subcommand's runner; None: no subcommand, the app runs."""
    command: str | None = args.command
    return None if command is None else COMMANDS[command]
