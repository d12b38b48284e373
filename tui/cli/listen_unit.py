"""`gateway-tui listen --print-unit`: a systemd user unit that runs this `listen` as a service, around the clock.

The unit runs the same program with the same flags (without `--print-unit`; `--all` when no `--profile` is
given), under the same config and data directories. It never holds a secret: keys come from the OS keyring or
each profile's 0600 file, as for `listen` in a terminal, and a flag whose value carries one (a forward target's
token or password) is refused rather than written into a file any local program may read."""

from __future__ import annotations

import os
import shlex
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from tui.api.redaction import redact_url_secrets

UNIT_NAME = "gateway-tui-listen.service"
# The directories a profile, its secrets file and the store are found under: the service must see the same ones.
KEPT_ENVIRONMENT = ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME", "PYTHON_KEYRING_BACKEND")
URL_FLAGS = ("--forward-to", "--alert-webhook")


class UnitRefused(ValueError):
    """The unit cannot be written as asked (the message says why, in the product's words)."""


def listen_arguments(argv: Sequence[str]) -> list[str]:
    """The command line after the program's name, as the service runs it: without `--print-unit`, and serving
    every profile unless one is named. Raises UnitRefused for a secret in a flag's value."""
    arguments = [argument for argument in argv if argument != "--print-unit"]
    for index, argument in enumerate(arguments):
        flag, _, inline = argument.partition("=")
        if flag in URL_FLAGS:
            value = inline or (arguments[index + 1] if index + 1 < len(arguments) else "")
            if redact_url_secrets(value) != value:
                raise UnitRefused(
                    f"{flag}'s URL carries a secret (a token or password), and a unit file and the service's command "
                    "line are readable by other local programs: give a URL without it for the service")
    if "--all" not in arguments and not any(argument.split("=")[0] == "--profile" for argument in arguments):
        arguments.append("--all")
    return arguments


def program() -> list[str]:
    """How this program was started: its installed script when that is how (an absolute path, as systemd needs),
    else this Python running the package."""
    script = Path(sys.argv[0])
    if script.name == "gateway-tui" and script.exists():
        return [str(script.resolve())]
    return [sys.executable, "-m", "tui"]


def systemd_unit(argv: Sequence[str], environ: Mapping[str, str] = os.environ) -> str:
    """The unit's text for `gateway-tui <argv>` (argv as given after the program's name)."""
    command = " ".join(_systemd_quoted(word) for word in [*program(), *listen_arguments(argv)])
    environment = [f'Environment="{name}={_systemd_escaped(environ[name])}"'
                   for name in KEPT_ENVIRONMENT if environ.get(name)]
    lines = [
        f"# {UNIT_NAME}: gateway-tui's webhook listener as a systemd user service (written by `listen --print-unit`).",
        f"# Save it as ~/.config/systemd/user/{UNIT_NAME}, then:",
        "#   systemctl --user daemon-reload && systemctl --user enable --now gateway-tui-listen",
        "#   journalctl --user -u gateway-tui-listen -f   (a line per state change: started, store fault, recovered...)",
        "#   systemctl --user reload gateway-tui-listen   (serve changed profiles; `profile add` and `fleet import` do it)",
        "#   loginctl enable-linger \"$USER\"               (keep it running while you are logged out)",
        "# No secret is written here: the keys come from the OS keyring or each profile's 0600 file.",
        "[Unit]",
        "Description=gateway-tui webhook listener",
        "Wants=network-online.target",
        "After=network-online.target",
        "",
        "[Service]",
        "Type=simple",
        f"ExecStart={command}",
        "ExecReload=/bin/kill -HUP $MAINPID",
        "KillSignal=SIGTERM",
        "TimeoutStopSec=15",
        "Restart=on-failure",
        "RestartSec=2",
        "Environment=PYTHONUNBUFFERED=1",
        *environment,
        "",
        "[Install]",
        "WantedBy=default.target",
    ]
    return "\n".join(lines) + "\n"


def _systemd_escaped(text: str) -> str:
    """`%` and `$` are systemd's specifiers and variables; a backslash and a double quote are its escapes."""
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("%", "%%").replace("$", "$$")


def _systemd_quoted(word: str) -> str:
    """One word of ExecStart: quoted (double quotes, systemd's escapes) when a space or a quote would split it."""
    escaped = _systemd_escaped(word)
    if word and shlex.quote(word) == word:
        return escaped
    return f'"{escaped}"'
