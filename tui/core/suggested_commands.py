"""A command for one account as the user types it, and as it runs when typed: what the app and the doctor suggest
(`gateway-tui listen --profile work`, `gateway-tui --sandbox call groups --data '{"page": 2}'`). Quoted as a shell
splits it; the sandbox with the dialects it speaks, so that a sandbox started for the command (no app running to
share its own) answers as the app's did."""

from __future__ import annotations

import shlex

SPEC = "spec"


def profile_command(profile: str, *words: str) -> str:
    """`gateway-tui WORDS[0] --profile NAME WORDS[1:]`; no words: the app on that profile."""
    if not words:
        return shlex.join(["gateway-tui", "--profile", profile])
    return shlex.join(["gateway-tui", words[0], "--profile", profile, *words[1:]])


def sandbox_command(dialects: tuple[str, str], *words: str) -> str:
    """`gateway-tui --sandbox [--instance-dialect D] [--session-dialect D] WORDS` (before the subcommand: `listen`
    takes `--sandbox` only there); no words: the app on the sandbox."""
    return shlex.join(["gateway-tui", *sandbox_flags(dialects), *words])


def sandbox_flags(dialects: tuple[str, str]) -> list[str]:
    """`--sandbox` and its dialects; the spec's are the default, unsaid."""
    instance, session = dialects
    return ["--sandbox", *(["--instance-dialect", instance] if instance != SPEC else []),
            *(["--session-dialect", session] if session != SPEC else [])]


def account_flags(profile: str | None, dialects: tuple[str, str]) -> list[str]:
    """What names the account after a subcommand that talks to a gateway (`call`, `status`, ...): `--profile NAME`,
    or the sandbox's flags when `profile` is None (the app runs on its sandbox)."""
    return ["--profile", profile] if profile is not None else sandbox_flags(dialects)

