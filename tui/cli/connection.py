"""`gateway-tui connect` and `gateway-tui status`: pair a profile's account from the command line, and read where
each family stands (issue 23).

    gateway-tui connect [--profile NAME | --sandbox] [--family instance|session] [--phone NUMBER] [--timeout SECONDS]
    gateway-tui status [--profile NAME | --sandbox] [--json]

`connect` writes the QR code to stdout (in colour, dark on light, in a terminal that is big enough, in sextants
where half blocks do not fit, as at 80×24; plain
characters when stdout is not a terminal: no escape codes, no size check), asks for a new one before each expires,
and prints `connected as <number>` once a phone paired (exit 0). With `--phone` it prints the code to type on the
phone instead. Exit 1 after three unanswered codes or at `--timeout`; 2 when nothing could be asked (no profile,
no secret, a family the profile lacks). Words for people go to stderr.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any, TextIO

from tui.cli.command_sandbox import SandboxNotStarted, add_sandbox_flag, sandbox_for_command
from tui.cli.exit_codes import Exit

if TYPE_CHECKING:  # pragma: no cover
    from tui.core.accounts.account import Account
    from tui.cli.command_sandbox import CommandSandbox
    from tui.api.connection import ConnectionState
    from tui.api.operations import Family
    from tui.core.pairing import Code, Waiting


def add_parsers(commands: Any, global_flags: Any) -> None:
    connect = commands.add_parser(
        "connect", help="pair the profile's account: show the QR code (or a phone code) until a phone pairs")
    connect.add_argument("--family", choices=("instance", "session"),
                         help="which family to pair (default: the profile's only one, else instance)")
    connect.add_argument("--phone", metavar="NUMBER",
                         help="print a code to type on this phone (country code and number) instead of a QR code")
    connect.add_argument("--timeout", type=float, default=None, metavar="SECONDS",
                         help="give up after this many seconds (exit 1)")
    global_flags(connect)
    add_sandbox_flag(connect)
    status = commands.add_parser("status", help="where each family's connection stands")
    status.add_argument("--json", action="store_true",
                        help='{"instance": {...}, "session": {...}}, a family the profile lacks is null; "waiting_for_scan": '
                             'connected to WhatsApp, no phone paired yet')
    global_flags(status)
    add_sandbox_flag(status)


def run_cli(args: argparse.Namespace, out: TextIO | None = None, err: TextIO | None = None) -> int:
    import asyncio

    runner = _connect if args.command == "connect" else _status
    errors: TextIO = err or sys.stderr

    async def run() -> int:
        async with sandbox_for_command(args) as sandbox:
            return await runner(args, out or sys.stdout, errors, sandbox)

    try:
        return asyncio.run(run())
    except SandboxNotStarted as error:
        print(f"gateway-tui {args.command}: {error}", file=errors)
        return Exit.REFUSED
    except KeyboardInterrupt:
        print(f"gateway-tui {args.command}: stopped; nothing else was asked of the gateway", file=errors)
        return Exit.INTERRUPTED


async def _open(args: argparse.Namespace, err: TextIO, sandbox: CommandSandbox | None) -> tuple[Account, Any] | None:
    """The profile's account (or the sandbox's) with its clients, and the HTTP pool to close; None (said on `err`)
    when it cannot be."""
    import asyncio

    from tui.core.accounts.account import Tokens, new_account
    from tui.api.gateway_http import GatewayHttp
    from tui.api.operations import Family
    from tui.core.calls import CallRefused, load_profile, profile_secrets, refuse_missing_secrets
    from tui.local.config import ConfigError
    from tui.local.secrets import MemorySecrets

    insecure_storage = bool(getattr(args, "insecure_storage", False))
    try:
        if sandbox is not None:
            profile, resolved = sandbox.profile, dict(sandbox.secrets)
        else:
            profile = await asyncio.to_thread(load_profile, getattr(args, "profile", None))
            resolved = await asyncio.to_thread(profile_secrets, profile.name, insecure_storage=insecure_storage)
        chosen = getattr(args, "family", None)
        # `status` reads every family; `connect` pairs one (a family the profile lacks is said by `_family`)
        families = (Family(chosen),) if chosen and profile.has(Family(chosen)) else (
            profile.families if args.command == "status" else profile.families[:1])
        await asyncio.to_thread(refuse_missing_secrets, profile, families, resolved, insecure_storage=insecure_storage)
    except (CallRefused, ConfigError) as refused:
        print(f"gateway-tui {args.command}: {refused}", file=err)
        return None
    account = new_account(profile, MemorySecrets(), store=lambda: None)
    http = GatewayHttp()
    account.connect(http, Tokens.from_secrets(resolved))
    return account, http


def _family(account: Account, chosen: str | None) -> Family:
    from tui.local.config import MissingFamily
    from tui.api.operations import Family

    if chosen is not None:
        family = Family(chosen)
        if not account.has(family):
            raise MissingFamily(account.name, family)
        return family
    families = sorted(account.families, key=lambda family: family is not Family.INSTANCE)
    if not families:
        raise MissingFamily(account.name, Family.INSTANCE)
    return families[0]


async def _connect(args: argparse.Namespace, out: TextIO, err: TextIO, sandbox: CommandSandbox | None) -> int:
    from tui.local.config import MissingFamily
    from tui.core.pairing import Outcome, PairingActions, PairingRefused, connected_words, run_codes

    opened = await _open(args, err, sandbox)
    if opened is None:
        return Exit.BAD_INPUT
    account, http = opened
    try:
        try:
            family = _family(account, args.family)
        except MissingFamily as missing:
            print(f"gateway-tui connect: {missing}", file=err)
            return Exit.BAD_INPUT
        actions = PairingActions(account, family)
        terminal = out.isatty()
        state = await actions.check()
        if state is not None and state.connected and state.logged_in:
            print(connected_words(state.number), file=out)
            return Exit.OK
        contradiction = account.watch.contradiction(family)
        if contradiction is not None:
            print(f"gateway-tui connect: the gateway contradicts itself: {contradiction}. Use the Account section's "
                  "reconnect (or `gateway-tui call restart` / disconnect then connect) first.", file=err)
            return Exit.REFUSED
        try:
            result = await run_codes(actions, phone=args.phone, timeout=args.timeout,
                                     on_code=lambda code: _show(code, out, err, terminal=terminal),
                                     on_wait=lambda waiting: _waiting(actions.gateway, waiting, err))
        except PairingRefused as refused:
            print(f"gateway-tui connect: {refused}", file=err)
            return Exit.REFUSED
        if result.outcome is Outcome.PAIRED:
            print(result.words(), file=out)
            return Exit.OK
        print(f"gateway-tui connect: {result.words()}", file=err)
        return Exit.REFUSED
    finally:
        await http.aclose()


def _show(code: Code, out: TextIO, err: TextIO, *, terminal: bool) -> None:
    import shutil

    from tui.api import qr
    from tui.core.pairing import CodeKind, UNANSWERED_LIMIT

    where = "WhatsApp › Linked devices › Link a device"
    if code.expired:
        print(f"Code {code.number} of {UNANSWERED_LIMIT} has expired: the gateway closed its pairing; asking for a "
              "new one.", file=err, flush=True)
        return
    lasts = code.seconds_left(code.shown_at)
    if code.kind is CodeKind.PHONE:
        print(code.text, file=out)
        print(f"Type this code on the phone ({where} › Link with phone number instead); code {code.number} of "
              f"{UNANSWERED_LIMIT}, it lasts {lasts} s.", file=err)
        out.flush()
        return
    drawn = qr.render(code.text)
    if terminal:
        columns, rows = shutil.get_terminal_size()
        # Half blocks where they fit; else sextants (33×22 for a typical code: 80×24 has room); a code cut short
        # cannot be scanned, so it is not drawn at all.
        on_screen: qr.QRText | qr.CompactQRText = drawn
        if not drawn.size.fits(columns, rows - 2):
            on_screen = qr.render_compact(code.text)
        if not on_screen.size.fits(columns, rows - 2):
            print(f"gateway-tui connect: the QR code needs {on_screen.size} cells and this terminal is "
                  f"{columns}×{rows}: make it larger (code {code.number + 1} is drawn if it fits, in {lasts} s), or "
                  "use --phone NUMBER for a code to type instead.", file=err, flush=True)
            return
        out.write("\x1b[H\x1b[2J" + on_screen.ansi())
    else:
        out.write(drawn.plain() + "\n")
    out.flush()
    print(f"Scan with the phone ({where}); code {code.number} of {UNANSWERED_LIMIT}, it lasts {lasts} s.", file=err)


def _waiting(gateway: str, waiting: Waiting, err: TextIO) -> None:
    """The gateway's session is still starting: what it said, and the countdown of the wait (one line a try)."""
    print(f"{gateway} is starting the session (it says \"{waiting.said}\"): asking again, "
          f"{waiting.seconds_left} s left.", file=err, flush=True)


def state_json(state: ConnectionState | None, problem: str | None) -> dict[str, Any]:
    if state is None:
        return {"connected": None, "logged_in": None, "waiting_for_scan": None, "number": None, "since": None,
                "reason": problem}
    return {"connected": state.connected, "logged_in": state.logged_in, "waiting_for_scan": state.waiting_for_scan,
            "number": state.number, "since": state.since.isoformat() if state.since else None,
            "reason": state.reason}


async def status_answer(account: Account) -> tuple[dict[str, Any], bool]:
    """`{"instance": {...} | null, "session": {...} | null}` read now, and whether every family could be read. A
    family whose dialect has no status call (the spec's session family) is no failure: nothing could say more, and
    `status` would otherwise exit 1 for one family's dialect and 0 for the other's."""
    from tui.api.operations import Family
    from tui.core.watch import NO_STATUS_READ

    answer: dict[str, Any] = {}
    read_all = True
    for family in Family:
        if not account.has(family):
            answer[family.value] = None
            continue
        state = await account.watch.read(account, family)
        read_all = read_all and (state is not None or account.watch.problem(family) == NO_STATUS_READ)
        answer[family.value] = state_json(state, account.watch.problem(family))
        contradiction = account.watch.contradiction(family)
        if contradiction is not None:
            answer[family.value]["reason"] = f"stuck: the gateway contradicts itself: {contradiction}"
    return answer, read_all


async def _status(args: argparse.Namespace, out: TextIO, err: TextIO, sandbox: CommandSandbox | None) -> int:
    opened = await _open(args, err, sandbox)
    if opened is None:
        return Exit.BAD_INPUT
    account, http = opened
    try:
        answer, read_all = await status_answer(account)
    finally:
        await http.aclose()
    if args.json:
        print(json.dumps(answer, ensure_ascii=False), file=out)
    else:
        for name, value in answer.items():
            print(f"{name}: {status_line(value)}", file=out)
    return Exit.OK if read_all else Exit.REFUSED


def status_line(value: dict[str, Any] | None) -> str:
    from tui.core.pairing import connected_words

    if value is None:
        return "not in this profile"
    if value["connected"] is None:
        return f"unknown ({value['reason']})"
    if value["connected"]:
        return connected_words(value["number"])
    if value["waiting_for_scan"]:
        return "connected, waiting for a scan (no phone paired yet: gateway-tui connect shows the code)"
    words = "not connected, still paired" if value["logged_in"] else "not connected"
    return f"{words}" + (f" ({value['reason']})" if value["reason"] else "")
