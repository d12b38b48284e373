"""`--sandbox` for the commands that talk to a gateway (`status`, `connect`, `doctor`, `call`, `send`, `fleet`), so a
newcomer can try them without making a profile: the sandbox of the running app (`gateway-tui --sandbox`, which
shares its address and credentials with this user's commands: tui.sandbox.process) when one runs, else one started
for the command, in the dialects given, and stopped after it. The one helper for "the sandbox profile for this
command"; `message`, `events` and `locate` take `--sandbox` for the sandbox's event store only.

Imported for the parsers: nothing here is loaded before a command with `--sandbox` runs.
"""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tui.core.accounts.account import Tokens
    from tui.local.config import Profile
    from tui.local.secrets import SecretName

HELP = ("use the sandbox: the running app's (gateway-tui --sandbox), else one started for this command "
        "(in the dialects of --instance-dialect and --session-dialect)")


def add_sandbox_flag(parser: argparse.ArgumentParser) -> None:
    """`--sandbox` after the subcommand (as before it, `gateway-tui --sandbox status`), with the sandbox's dialects."""
    from tui.api.dialects import InstanceDialect, SessionDialect

    parser.add_argument("--sandbox", action="store_true", default=argparse.SUPPRESS, help=HELP)
    parser.add_argument("--instance-dialect", choices=[dialect.value for dialect in InstanceDialect],
                        default=argparse.SUPPRESS, help="with --sandbox and no app running: spec (default), zapi or evolution")
    parser.add_argument("--session-dialect", choices=[dialect.value for dialect in SessionDialect],
                        default=argparse.SUPPRESS, help="with --sandbox and no app running: spec (default) or wuzapi")


def wants_sandbox(args: argparse.Namespace) -> bool:
    return bool(getattr(args, "sandbox", False))


def share_name() -> str:
    """The name the app's sandbox shares itself under: one per user and data dir (so two test runs, or two users,
    never meet). The app and its commands compute it alike."""
    import os
    import zlib

    from tui.local.paths import data_dir

    return f"gateway-tui-sandbox-{os.getuid()}-{zlib.crc32(str(data_dir()).encode()):08x}"


@dataclass(frozen=True)
class CommandSandbox:
    """The sandbox a command uses: its profile (both families, named `sandbox`), its secrets, and whether it is the
    running app's (`shared`: its listener and event store are the app's) or started for this command."""

    profile: Profile
    secrets: Mapping[SecretName, str | None] = field(repr=False)
    shared: bool


class SandboxNotStarted(Exception):
    """The sandbox for the command did not start (its own words)."""


@contextlib.asynccontextmanager
async def sandbox_for_command(args: argparse.Namespace) -> AsyncIterator[CommandSandbox | None]:
    """The command's sandbox while the command runs; None without `--sandbox` (the command uses its profile)."""
    if not wants_sandbox(args):
        yield None
        return
    import asyncio

    from tui.core.accounts.account import Tokens, sandbox_profile
    from tui.sandbox.process import SandboxProcess, SandboxProcessError, share_socket_answer

    # A dialect other than the spec's (every parser's default) is one the command asked for.
    wanted = tuple(value if value not in (None, "spec") else None
                   for value in (getattr(args, "instance_dialect", None), getattr(args, "session_dialect", None)))
    logged_out = bool(getattr(args, "logged_out", False))
    running = await asyncio.to_thread(share_socket_answer, share_name())
    if running is not None and (logged_out or not _speaks(running, wanted)):
        # The app's sandbox is paired, in its own dialects: a command asking for another (or for none paired) gets
        # a sandbox of its own, as it asked, rather than the app's without a word.
        import sys

        asked = "no phone paired" if logged_out else "other dialects"
        print(f"(a sandbox started for this command, with {asked} as asked: the running app's {_describe(running)})",
              file=sys.stderr)
        running = None
    if running is not None:
        try:
            dialects = (str(running["dialects"][0]), str(running["dialects"][1]))
            profile = sandbox_profile(str(running["url"]).rstrip("/"), dialects)
            tokens = Tokens.from_names({str(key): str(value) for key, value in dict(running["tokens"]).items()})
            key = running.get("hmac_key")
        except (KeyError, IndexError, TypeError, ValueError):
            running = None  # not an answer we can use: a sandbox of our own instead
        else:
            yield CommandSandbox(profile, _secrets(tokens, key if isinstance(key, str) else None), shared=True)
            return
    from tui.sandbox.dialect import PairingOptions

    dialects = (wanted[0] or "spec", wanted[1] or "spec")
    process = SandboxProcess.spawn(dialects, logged_out=logged_out, pairing=PairingOptions.from_plain(vars(args)).plain())
    try:
        try:
            url = await process.wait_ready()
        except SandboxProcessError as error:
            raise SandboxNotStarted(str(error)) from None
        yield CommandSandbox(sandbox_profile(url.rstrip("/"), dialects), _secrets(Tokens.from_names(process.tokens), None),
                             shared=False)
    finally:
        await process.stop()


def _speaks(running: Mapping[str, object], wanted: tuple[str | None, ...]) -> bool:
    """Whether the running sandbox speaks the dialects the command names (a dialect not named: any)."""
    spoken = running.get("dialects")
    if not isinstance(spoken, list) or len(spoken) != 2:
        return False
    return all(want is None or want == str(have) for want, have in zip(wanted, spoken, strict=True))


def _describe(running: Mapping[str, object]) -> str:
    spoken = running.get("dialects")
    return f"speaks {'/'.join(str(part) for part in spoken)}" if isinstance(spoken, list) else "is another"


def _secrets(tokens: Tokens, hmac_key: str | None) -> dict[SecretName, str | None]:
    from tui.local.secrets import SecretName

    return {**tokens.by_secret(), SecretName.HMAC_KEY: hmac_key}
