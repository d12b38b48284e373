"""Command line of gateway-tui: the app by default, plus `sandbox`, `listen`, `events`, `trigger`, `profile`, `call`,
`send`, `locate`, `connect`, `status`, `doctor` and `message`.

Each subcommand's module is imported only when that subcommand runs, so starting the app
does not pay for aiohttp or the keyring before its first frame.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Callable
from typing import Any

from tui.cli.arguments import (
    add_event_parsers,
    add_listen_parser,
    add_profile_parser,
    add_sandbox_parser,
    count,
    dialect_flags,
    global_flags_after_subcommand,
    profile_names,
)
from tui.cli.commands import COMMANDS, runner_for
from tui.cli.exit_codes import Exit

def _sandbox_pairing(args: argparse.Namespace) -> dict[str, float | str]:
    """The pairing flags as the sandbox process's start request carries them (tui.sandbox.process)."""
    return {"code_lifetime": float(getattr(args, "code_lifetime", 20.0)),
            "wuzapi_release": str(getattr(args, "wuzapi_release", "newer")),
            "connect_delay": float(getattr(args, "connect_delay", 1.0))}


def build_parser() -> argparse.ArgumentParser:
    """The whole command line: the app's flags and every subcommand's parser."""
    from tui.cli import (
        call as call_cli,
        campaign as campaign_cli,
        connection as connection_cli,
        doctor as doctor_cli,
        fleet as fleet_cli,
        fleet_import as fleet_import_cli,
        locate as locate_cli,
        message as message_cli,
        send as send_cli,
    )

    parser, commands = _app_parser()
    add_sandbox_parser(commands)
    add_listen_parser(commands)
    add_event_parsers(commands)
    add_profile_parser(commands)
    call_cli.add_parser(commands, global_flags_after_subcommand)
    doctor_cli.add_parser(commands, global_flags_after_subcommand)
    send_cli.add_parser(commands, global_flags_after_subcommand)
    locate_cli.add_parser(commands, global_flags_after_subcommand)
    connection_cli.add_parsers(commands, global_flags_after_subcommand)
    message_cli.add_parser(commands, global_flags_after_subcommand)
    campaign_cli.add_parser(commands, global_flags_after_subcommand)
    fleet_commands = fleet_cli.add_parser(commands, global_flags_after_subcommand)  # `fleet` alone: the board
    fleet_import_cli.add_import_parser(fleet_commands)  # `fleet import`, and the gateways' admin APIs
    fleet_import_cli.add_admin_parsers(fleet_commands)
    return parser


def parse_arguments(argv: list[str] | None = None) -> argparse.Namespace:
    """`argv` as `build_parser()` reads it. The app's own start (no subcommand, no --help) is read by the app's
    flags alone, each subcommand an empty placeholder: building every subcommand's parser imports their modules
    (~7 ms), and `gateway-tui --sandbox` spawns its sandbox only after this (bench/start_interactive.py). Anything
    else, a usage error included, is read again by the whole parser, so it says what it always said."""
    words = sys.argv[1:] if argv is None else argv
    if not any(word in ("-h", "--help") for word in words):
        parser, commands = _app_parser(exit_on_error=False)
        for name in COMMANDS:
            commands.add_parser(name, add_help=False)
        try:
            args, rest = parser.parse_known_args(words)
        except argparse.ArgumentError:
            pass  # a usage error: the whole parser says it (below)
        else:
            if args.command is None and not rest:
                return args
    return build_parser().parse_args(words)


def _app_parser(*, exit_on_error: bool = True) -> tuple[argparse.ArgumentParser, Any]:
    """The app's own flags, and the subparsers the commands are added to."""
    parser = argparse.ArgumentParser(
        prog="gateway-tui",
        description="Operate a messaging-gateway account from the terminal.",
        exit_on_error=exit_on_error,
    )
    parser.add_argument(
        "--sandbox",
        action="store_true",
        help="run the embedded sandbox gateway and the webhook listener in-process (no account needed)",
    )
    dialect_flags(parser, for_app=True)
    parser.add_argument("--profile", metavar="NAME", help="profile to use (see `gateway-tui profile list`)")
    parser.add_argument("--profiles", metavar="A,B,C", type=profile_names, default=(),
                        help="open these profiles at once (the first is current, unless --profile names one)")
    parser.add_argument("--all-profiles", action="store_true", help="open every profile at once (up to --max-accounts)")
    parser.add_argument("--max-accounts", metavar="N", type=count, default=100,
                        help="profiles open at once, at most (default 100)")
    parser.add_argument("--accounts", metavar="N", type=count, default=1,
                        help="with --sandbox, the sandbox serves N accounts and the app opens them all (default 1)")
    parser.add_argument(
        "--insecure-storage",
        action="store_true",
        help="keep secrets in a 0600 file instead of the OS keyring (only when no keyring is available)",
    )
    parser.add_argument("--version", action=_VersionAction)
    return parser, parser.add_subparsers(dest="command", metavar="COMMAND")


class _VersionAction(argparse.Action):
    """`--version`, the version read only when asked for: reading the installed package's metadata took ~10-50 ms
    of every start, before the sandbox process could even be spawned."""

    def __init__(self, option_strings: list[str], dest: str = argparse.SUPPRESS, **kwargs: Any) -> None:
        super().__init__(option_strings, dest=dest, default=argparse.SUPPRESS, nargs=0,
                         help="show the version and exit")

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        print(f"gateway-tui {_version()}")  # on stdout, as argparse's own version action
        parser.exit()


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("gateway-tui")
    except PackageNotFoundError:  # running from a source tree that was never installed
        return "unknown (not installed)"


def main(argv: list[str] | None = None) -> int:
    args = parse_arguments(argv)
    if args.command is None and args.accounts > 1:
        parser = build_parser()  # its usage line with the errors below
        if not args.sandbox:
            parser.error("--accounts N opens N sandbox accounts: give it with --sandbox (for your own profiles: "
                         "--profiles A,B,C or --all-profiles)")
        if args.logged_out:
            parser.error("--logged-out is for the single sandbox account: the accounts of --accounts N start paired")
        if args.accounts > args.max_accounts:
            parser.error(f"--accounts {args.accounts}: at most {args.max_accounts} accounts open at once "
                         "(--max-accounts N to change it)")
    run = runner_for(args)
    if run is None:
        return _run_app(args)
    return quiet_when_the_reader_leaves(lambda: run(args))


def quiet_when_the_reader_leaves(run: Callable[[], int]) -> int:
    """`gateway-tui … | head -1`: the reader went away before everything was written. Python's own recipe (the
    signal module's documentation): stdout pointed at /dev/null, so the interpreter's last flush prints no
    BrokenPipeError traceback, and no error. What the command decided stands when it had decided; a command cut off
    while it wrote exits OK (what the reader took was right). Every subcommand runs through here."""
    try:
        code = run()
    except BrokenPipeError:
        code = Exit.OK
    else:
        try:
            sys.stdout.flush()
            return code
        except BrokenPipeError:
            pass
    import os

    with contextlib.suppress(OSError, ValueError):  # no file descriptor (a test's captured stdout)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return code


def _run_app(args: argparse.Namespace) -> int:
    """`gateway-tui [--sandbox | --profile NAME]`: the app in this terminal until it quits."""
    app, process = prepare_app(args)
    try:
        app.run()
    finally:
        if process is not None:
            process.stop_now()  # the app stopped it already, unless it never started the runtime
    return app.return_code or 0


def prepare_app(args: argparse.Namespace) -> tuple[Any, Any]:
    """The app for these arguments, not running yet, and the sandbox process it uses (None without --sandbox; stop
    it after the app). The sandbox starts in a process of its own first thing, so that it gets ready on the other
    core while this one imports Textual and draws the first frame (bench/start_interactive.py measures this).

    The garbage collector is off from here until the app has built every section (the app turns it back on and
    freezes what the start built): its passes over the ~300,000 objects the start makes, all of them kept, cost
    ~50-80 ms before the app took keys."""
    import gc

    resume_collector = gc.isenabled()
    gc.disable()
    sandbox = bool(getattr(args, "sandbox", False))
    dialects = (getattr(args, "instance_dialect", "spec"), getattr(args, "session_dialect", "spec"))
    process = None
    if sandbox:
        from tui.cli.command_sandbox import share_name
        from tui.sandbox.process import SandboxProcess

        accounts = int(getattr(args, "accounts", 1))
        # A single sandbox is shared with this user's commands (`status --sandbox`, ...: tui.cli.command_sandbox).
        process = SandboxProcess.spawn(dialects, logged_out=bool(getattr(args, "logged_out", False)),
                                       pairing=_sandbox_pairing(args),
                                       accounts=accounts, share_as=share_name() if accounts == 1 else None)
    from tui.ui.app import build_app

    app = build_app(
        sandbox=sandbox,
        profile=getattr(args, "profile", None),
        profiles=tuple(getattr(args, "profiles", ())),
        all_profiles=bool(getattr(args, "all_profiles", False)),
        max_accounts=int(getattr(args, "max_accounts", 100)),
        insecure_storage=bool(getattr(args, "insecure_storage", False)),
        sandbox_dialects=dialects,
        sandbox_process=process,
        resume_collector=resume_collector,
    )
    return app, process


if __name__ == "__main__":
    sys.exit(main())
