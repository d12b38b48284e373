"""`gateway-tui call`: argparse and printing around `tui.core.calls` (which does the work).

    gateway-tui call --list
    gateway-tui call send-text --help
    gateway-tui call send-text --profile work --data '{"phone": "5511999999999", "message": "hi"}'
    gateway-tui call group-metadata --data @group.json

Exit codes (tui.cli.exit_codes, the README's table): 0 the gateway's answer is on stdout; 1 the gateway said no (error
status, or success/value false), explained on stderr; 2 nothing was sent (bad data, unknown operation, no profile or
secret); 3 nothing was sent because the profile is read-only and the operation writes (`writes` in the operations
table; reads still work).
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any, TextIO

from tui.api.dialects import InstanceDialect, SessionDialect
from tui.cli.command_sandbox import add_sandbox_flag, sandbox_for_command
from tui.cli.exit_codes import Exit

if TYPE_CHECKING:  # the module itself is imported for the parser, before the operations table is needed
    from collections.abc import Awaitable, Callable

    from tui.api.operations import ErasedOperation
    from tui.core.calls import CallOutcome

def add_parser(commands: Any, global_flags: Any) -> None:
    call = commands.add_parser(
        "call",
        help="run one gateway operation with JSON data and print the answer (see `call --list`)",
        add_help=False,
    )
    call.add_argument("operation", nargs="?", metavar="OPERATION", help="an operation id from `call --list`")
    call.add_argument("--list", action="store_true", help="list the operations")
    call.add_argument("--json", action="store_true",
                      help="with --list: a JSON array of {id, number, family, method, writes, title}")
    call.add_argument("--data", metavar="JSON|@FILE", default="{}", help="the operation's fields as a JSON object")
    call.add_argument("-h", "--help", action="store_true", help="this help, or an operation's fields")
    add_timeout_flag(call)
    global_flags(call)
    add_sandbox_flag(call)
    call.set_defaults(call_parser=call)


def seconds(text: str) -> float:
    """A `--timeout`: a number of seconds above zero."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError("a number of seconds, such as 30") from None
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError("a number of seconds above 0, such as 30")
    return value


def add_timeout_flag(parser: argparse.ArgumentParser) -> None:
    """`--timeout SECONDS`: the whole of each call to the gateway (and of reading `--data @FILE`), answer included."""
    parser.add_argument("--timeout", type=seconds, default=None, metavar="SECONDS",
                        help="give up a call that has not ended after this many seconds, answer included (default 120)")


def run_cli(args: argparse.Namespace, out: TextIO | None = None, err: TextIO | None = None) -> int:
    return _run_cli(args, out or sys.stdout, err or sys.stderr)


def _run_cli(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from tui.api.operations import all_operations, operation

    if args.list:
        if args.json:
            import json

            print(json.dumps([{"id": op.id.value, "number": op.number, "family": op.family.value, "method": op.method,
                               "writes": op.writes, "title": op.title} for op in all_operations()], indent=2), file=out)
            return Exit.OK
        for op in all_operations():
            number = f"#{op.number}" if op.number else "  "
            access = "writes" if op.writes else "reads"
            print(f"{op.id.value:26} {number:>4} {op.family.value:8} {op.method:6} {access:6} {op.title}", file=out)
        return Exit.OK
    if args.json:
        print("gateway-tui call: --json is for --list (an operation's answer is JSON already)", file=err)
        return Exit.BAD_INPUT
    if args.operation is None:
        args.call_parser.print_help(out)
        return Exit.OK if args.help else Exit.BAD_INPUT
    try:
        op = operation(args.operation)
    except KeyError:
        print(f"gateway-tui call: no operation {args.operation!r}; `gateway-tui call --list` lists them", file=err)
        return Exit.BAD_INPUT
    if args.help:
        print(describe_operation(op), file=out)
        return Exit.OK
    import asyncio  # here: the app imports this module for its parser, and starts its sandbox before asyncio

    return asyncio.run(_call(op, args, out, err))


async def _call(op: ErasedOperation, args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    import asyncio

    from tui.core.calls import call_operation, parse_data, refuse_secrets_in_arguments

    async def outcome() -> CallOutcome:
        data = await asyncio.to_thread(parse_data, args.data, seconds=args.timeout)
        if not args.data.startswith("@"):
            refuse_secrets_in_arguments(op, data)
        async with sandbox_for_command(args) as sandbox:
            return await call_operation(
                op, data, profile=getattr(args, "profile", None),
                insecure_storage=bool(getattr(args, "insecure_storage", False)),
                given=(sandbox.profile, sandbox.secrets) if sandbox is not None else None,
                deadline=args.timeout,
            )

    return await report("gateway-tui call", op.id.value, outcome, out, err)


async def report(
    command: str, what: str, outcome: Callable[[], Awaitable[CallOutcome]], out: TextIO, err: TextIO
) -> int:
    """Run one call and print it as `call` does: the answer on stdout (0), the gateway's no on stderr (1), or why
    nothing was sent (2), or the profile is read-only (3). `send` prints through here too. Every line on `err` is
    one line, whatever the user or the gateway wrote into it (`echoed`)."""
    from tui.api.errors import GatewayError, ReadOnlyRefused
    from tui.api.wording import echoed
    from tui.api.operations import DialectRefusal
    from tui.core.calls import CallRefused
    from tui.cli.command_sandbox import SandboxNotStarted
    from tui.local.config import ConfigError

    try:
        result = await outcome()
    except (CallRefused, ConfigError) as refused:
        print(echoed(f"{command}: {refused}"), file=err)
        return Exit.BAD_INPUT
    except SandboxNotStarted as error:
        print(echoed(f"{command}: {error}"), file=err)
        return Exit.REFUSED
    except ReadOnlyRefused as refused:
        print(echoed(f"{command}: {refused.message}"), file=err)
        return Exit.READ_ONLY
    except DialectRefusal as refused:  # found out after a read (WuzAPI's webhook): still nothing was changed
        print(echoed(f"{command}: {what}: {refused.message}"), file=err)
        return Exit.BAD_INPUT
    except GatewayError as error:
        print(echoed(f"{command}: {what}: {error.message}"), file=err)
        return Exit.REFUSED
    if result.failure is not None:
        print(echoed(f"{command}: {result.failure}"), file=err)
        return Exit.REFUSED
    if result.note:  # before the answer: a reader that leaves early (`| head`) must not lose it
        print(echoed(f"{command}: {result.note}"), file=err)
    print(result.answer, file=out)  # a reader gone (`| head`): tui.cli.main's quiet_when_the_reader_leaves
    return Exit.OK


def describe_operation(op: ErasedOperation) -> str:
    """`call OP --help`: the operation, its path and every field (spec names; path parameters marked)."""
    schema = op.request.model_json_schema()
    required = set(schema.get("required", ()))
    lines = [
        f"{op.id.value}: {op.title}" + (f" (spec operation {op.number})" if op.number else ""),
        f"  {op.family.value} family, {op.method} {op.path_template}" + ("  [destructive]" if op.destructive else ""),
        "",
        "fields (--data JSON object):" if schema.get("properties") else "no fields: --data may be omitted",
    ]
    for name, prop in (schema.get("properties") or {}).items():
        where = "path parameter, " if name in op.path_params else ""
        need = "required" if name in required else "optional"
        lines.append(f"  {name:20} {_type_of(prop, schema):28} {where}{need}")
    dialects = InstanceDialect if op.family.value == "instance" else SessionDialect
    lines += ["", f"written in the profile's {op.family.value}_dialect: {', '.join(d.value for d in dialects)}"]
    lines += [f"  in {dialect.value}: {note}" for dialect, note in op.notes.items()]
    return "\n".join(lines)


def _object_of(target: dict[str, Any], schema: dict[str, Any]) -> str:
    """An object's fields, so `--help` says what goes inside: `{id, text}`, `{id?, label}` (? = optional);
    a field that is not a plain string, number or boolean shows its type."""
    properties = target.get("properties")
    if not properties:
        return "object"
    required = set(target.get("required", ()))
    fields = []
    for name, sub in properties.items():
        kind = _type_of(sub, schema)
        plain = kind in ("string", "integer", "number", "boolean") or kind.endswith(" or null")
        fields.append(name + ("" if name in required else "?") + ("" if plain else f": {kind}"))
    return "{" + ", ".join(fields) + "}"


def _type_of(prop: dict[str, Any], schema: dict[str, Any]) -> str:
    if "$ref" in prop:
        target = schema.get("$defs", {}).get(prop["$ref"].rsplit("/", 1)[-1], {})
        if "enum" in target:
            return "one of " + "|".join(str(value) for value in target["enum"])
        return _object_of(target, schema)
    if "anyOf" in prop:
        kinds = [_type_of(choice, schema) for choice in prop["anyOf"] if choice.get("type") != "null"]
        return " or ".join(kinds) or "null"
    kind = prop.get("type", "any")
    if kind == "array":
        return f"array of {_type_of(prop.get('items', {}), schema)}"
    return str(kind)
