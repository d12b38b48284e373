"""`gateway-tui locate`: where this machine keeps gateway-tui's files, for the chosen profile (or the sandbox).

    config file   /home/me/.config/gateway-tui/profiles.toml (exists)
    preferences   /home/me/.config/gateway-tui/preferences.toml (not created yet)
    data dir      /home/me/.local/share/gateway-tui
    event store   /home/me/.local/share/gateway-tui/events-work.sqlite3 (profile work; not created yet)
    secrets       OS keyring, service gateway-tui (or the insecure file with --insecure-storage)

`--json` prints the same as one object, for scripts. Nothing is created or opened for writing.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TextIO

from tui.local.preferences import preferences_path
from tui.cli.exit_codes import Exit
from tui.local.paths import config_dir, data_dir


def add_parser(commands: argparse._SubParsersAction, global_flags: object) -> None:
    locate = commands.add_parser(
        "locate", help="print where the config file, the preferences (theme), the data dir and the event store (of the profile or sandbox) are"
    )
    locate.add_argument("--json", action="store_true", help="one JSON object instead of lines")
    locate.add_argument("--sandbox", action="store_true", default=argparse.SUPPRESS,
                        help="the sandbox's event store instead of a profile's")
    global_flags(locate)  # type: ignore[operator]


def _state(path: Path) -> str:
    return "exists" if path.exists() else "not created yet"


def locations(*, profile: str | None, sandbox: bool, insecure_storage: bool) -> dict[str, str]:
    from tui.local import config  # here, not at the top: `gateway-tui` (the app) imports this module to build its parser
    from tui.local.secrets import INSECURE_FILE_NAME, KEYRING_SERVICE

    chosen = "sandbox" if sandbox else config.chosen_profile(profile)  # ConfigError for an unknown name
    found: dict[str, str] = {
        "config_file": str(config.profiles_path()),
        "config_dir": str(config_dir()),
        "preferences_file": str(preferences_path()),
        "data_dir": str(data_dir()),
        "event_store": str(config.events_store_path(profile, sandbox=sandbox)),
        "profile": chosen or "",
    }
    if sandbox:
        found["secrets"] = "in memory only (the sandbox's throwaway tokens)"
    elif config.secrets_in_file(profile, insecure_storage):
        found["secrets"] = str(config_dir() / INSECURE_FILE_NAME)
    else:
        found["secrets"] = f"OS keyring, service {KEYRING_SERVICE}"
    return found


def _is_file(secrets: str) -> bool:
    from tui.local.secrets import INSECURE_FILE_NAME

    return secrets == str(config_dir() / INSECURE_FILE_NAME)


def run_cli(args: argparse.Namespace, out: TextIO | None = None) -> int:
    from tui.local import config

    out = out or sys.stdout
    sandbox = bool(getattr(args, "sandbox", False))
    insecure = bool(getattr(args, "insecure_storage", False))
    try:
        found = locations(profile=getattr(args, "profile", None), sandbox=sandbox, insecure_storage=insecure)
    except config.ConfigError as error:
        print(f"gateway-tui locate: {error}", file=sys.stderr)
        return Exit.BAD_INPUT
    if getattr(args, "json", False):
        print(json.dumps(found, indent=2), file=out)
        return Exit.OK
    store_of = "sandbox" if sandbox else (f"profile {found['profile']}" if found["profile"] else "no profile yet")
    config_file = Path(found["config_file"])
    preferences = Path(found["preferences_file"])
    store = Path(found["event_store"])
    lines = [
        ("config file", f"{config_file} ({_state(config_file)})"),
        ("preferences", f"{preferences} ({_state(preferences)})"),
        ("data dir", found["data_dir"]),
        ("event store", f"{store} ({store_of}; {_state(store)})"),
        ("secrets", found["secrets"] + (f" ({_state(Path(found['secrets']))})" if _is_file(found["secrets"]) else "")),
    ]
    for label, value in lines:
        print(f"{label:<12}  {value}", file=out)
    return Exit.OK
