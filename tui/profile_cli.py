"""`gateway-tui profile add|list|remove`: first set-up and scripting. Secrets come from hidden prompts on a
terminal, else from the GATEWAY_TUI_* variables; they are never arguments, never printed, never logged.
"""

from __future__ import annotations

import argparse
import getpass
import os
import sys
from typing import TextIO

from pydantic import ValidationError

from tui import config
from tui.api.models import HMAC_KEY_MIN_LENGTH
from tui.secrets import KeyringUnavailable, SecretName, SecretStore, open_secret_store, secret_sources

OPTIONAL_SECRETS = {SecretName.HMAC_KEY}
EXIT_BAD_INPUT = 2


class _Refused(Exception):
    """Input the command cannot use; the message says which and why."""


def run_cli(args: argparse.Namespace) -> int:
    action = {"add": _add, "list": _list, "remove": _remove}[args.profile_command]
    try:
        return action(args)
    except (_Refused, config.ConfigError, KeyringUnavailable) as error:
        print(f"gateway-tui: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT


def _add(args: argparse.Namespace) -> int:
    try:
        profile = config.Profile(
            name=args.name,
            base_url=args.base_url,
            instance_id=args.instance_id,
            session_url=args.session_url,
            listener_host=args.listener_host,
            listener_port=args.listener_port,
            public_url=args.public_url,
            theme=args.theme,
        )
    except ValidationError as error:
        problems = "; ".join(
            f"{'.'.join(map(str, problem['loc']))}: {str(problem['msg']).removeprefix('Value error, ')}"
            for problem in error.errors()
        )
        raise _Refused(f"profile {args.name!r} not saved: {problems}") from None
    config.load_profiles()  # a broken file stops us here, before any secret is stored
    store = open_secret_store(args.insecure_storage)
    interactive = sys.stdin.isatty()
    values = _read_secrets(profile.name, store, interactive=interactive)
    config.save_profile(profile)
    for name, value in values.items():
        store.set(profile.name, name, value)
    where = "a 0600 file (--insecure-storage)" if store.kind == "insecure-file" else "the OS keyring"
    print(f"Profile {profile.name!r} saved to {config.profiles_path()}; {len(values)} secret(s) stored in {where}.")
    return 0


def _read_secrets(profile: str, store: SecretStore, *, interactive: bool) -> dict[SecretName, str]:
    """The secrets to store: prompted (Enter keeps a stored one) or from the environment. Validated first."""
    values: dict[SecretName, str] = {}
    missing: list[str] = []
    for name in SecretName:
        already = store.get(profile, name) is not None
        if interactive:
            hint = "Enter keeps the stored one" if already else ("Enter to skip" if name in OPTIONAL_SECRETS else "required")
            value = getpass.getpass(f"{name.label} ({hint}): ")
        else:
            value = os.environ.get(name.env_var, "")
        if value:
            values[name] = value
        elif not already and name not in OPTIONAL_SECRETS:
            missing.append(name.env_var if not interactive else name.label)
    if missing:
        how = "set " + ", ".join(missing) if not interactive else "enter " + ", ".join(missing)
        raise _Refused(f"profile {profile!r} not saved: missing secrets ({how}).")
    hmac_key = values.get(SecretName.HMAC_KEY)
    if hmac_key is not None and len(hmac_key) < HMAC_KEY_MIN_LENGTH:
        raise _Refused(
            f"profile {profile!r} not saved: the HMAC key must be at least {HMAC_KEY_MIN_LENGTH} characters."
        )
    return values


def _list(args: argparse.Namespace, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    profiles = config.load_profiles()
    if not profiles:
        print("No profiles yet. Add one with `gateway-tui profile add NAME --base-url … --instance-id … "
              "--session-url …`, or try `gateway-tui --sandbox`.", file=out)
        return 0
    try:
        store: SecretStore | None = open_secret_store(args.insecure_storage)
        unavailable = ""
    except KeyringUnavailable:
        store, unavailable = None, " (keyring unavailable: stored secrets cannot be checked)"
    stored_label = "set (0600 file)" if store is not None and store.kind == "insecure-file" else "set (keyring)"
    for profile in profiles:
        print(f"{profile.name}", file=out)
        print(f"  instance family  {profile.base_url}  (instance {profile.instance_id})", file=out)
        print(f"  session family   {profile.session_url}", file=out)
        public = f", public URL {profile.public_url}" if profile.public_url else ""
        print(f"  listener         {profile.listener_host}:{profile.listener_port}{public}", file=out)
        sources = secret_sources(profile.name, store)
        for name in SecretName:
            shown = {"stored": stored_label, "environment": "from environment", "not set": "not set"}[sources[name]]
            print(f"  {name.label:<16} {shown}{unavailable if sources[name] == 'not set' else ''}", file=out)
    return 0


def _remove(args: argparse.Namespace) -> int:
    store = open_secret_store(args.insecure_storage)
    removed = config.remove_profile(args.name)
    for name in SecretName:
        store.delete(args.name, name)
    if not removed:
        print(f"No profile named {args.name!r}; any secrets stored under that name were removed.")
        return 1
    print(f"Profile {args.name!r} and its secrets removed.")
    return 0
