"""`gateway-tui fleet [--profiles a,b] [--json]`: the fleet board on standard output, one line (or one JSON object)
per profile: `profile`, `number`, `connected`, `health`, `unread`, `last_event_at`. The work is tui.core.accounts.fleet_board's.

`fleet` takes optional subcommands (`fleet_command`; None: print the board): `add_subcommand` hooks one in, as
`fleet import` (tui/cli/fleet_import.py) does.

Exit codes: 0 the board was printed; 2 nothing was read (an unknown profile, no profile, no keyring).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any, TextIO

from tui.cli.command_sandbox import SandboxNotStarted, add_sandbox_flag, sandbox_for_command
from tui.cli.arguments import profile_names
from tui.cli.exit_codes import Exit

if TYPE_CHECKING:
    from tui.core.accounts.fleet_board import FleetRow


def add_parser(commands: Any, global_flags: Any) -> Any:
    """The `fleet` parser; returns its subcommands (`fleet_command`) for `fleet import` and the like."""
    fleet = commands.add_parser(
        "fleet", help="the fleet board: every profile's number, connection, webhook health, unread, last event",
        description="One line per profile (all, or those of --profiles): its number, whether it is connected (a "
        "status read, never a connect), the webhook doctor's health, unread chats and the newest event it stored.",
    )
    fleet.add_argument("--json", action="store_true",
                       help="a JSON list of {profile, number, connected, health, unread, last_event_at}")
    fleet.add_argument("--profiles", metavar="A,B,C", type=profile_names, default=argparse.SUPPRESS,
                       help="only these profiles (default: all)")
    global_flags(fleet)
    add_sandbox_flag(fleet)
    return fleet.add_subparsers(dest="fleet_command", metavar="ACTION", required=False)


def run_cli(args: argparse.Namespace, out: TextIO | None = None, err: TextIO | None = None) -> int:
    import asyncio

    return asyncio.run(_run(args, out or sys.stdout, err or sys.stderr))


async def _run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from tui.core.accounts.fleet_board import read_board
    from tui.local.secrets import KeyringUnavailable

    names = getattr(args, "profiles", None) or None  # --profiles before or after `fleet`; none: every profile
    try:
        async with sandbox_for_command(args) as sandbox:
            rows = await read_board(names, insecure_storage=bool(getattr(args, "insecure_storage", False)),
                                    given=(sandbox.profile, sandbox.secrets) if sandbox is not None else None)
    except (LookupError, KeyringUnavailable) as error:
        print(f"gateway-tui fleet: {error}", file=err)
        return Exit.BAD_INPUT
    except SandboxNotStarted as error:
        print(f"gateway-tui fleet: {error}", file=err)
        return Exit.REFUSED
    if not rows:
        print("gateway-tui fleet: no profile yet; add one with `gateway-tui profile add NAME ...`", file=err)
        return Exit.BAD_INPUT
    if args.json:
        json.dump([row.as_json() for row in rows], out, indent=2)
        out.write("\n")
    else:
        out.write(board_text(rows))
    return Exit.OK


def board_text(rows: list[FleetRow]) -> str:
    """The board as aligned columns, for a terminal."""
    head = ("PROFILE", "NUMBER", "CONNECTED", "HEALTH", "UNREAD", "LAST EVENT")
    lines: list[tuple[str, ...]] = [head]
    for row in rows:
        data = row.as_json()
        lines.append((
            row.profile, row.number or "–", "yes" if row.connected else "no" if row.connected is False else "unknown",
            row.health, "–" if row.unread is None else str(row.unread), str(data["last_event_at"] or "–"),
        ))
    widths = [max(len(line[column]) for line in lines) for column in range(len(head))]
    return "".join("  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=True)).rstrip() + "\n"
                   for line in lines)
