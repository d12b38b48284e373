"""`gateway-tui profile add|list|remove`: first set-up and scripting. Secrets come from hidden prompts on a
terminal, else from the GATEWAY_TUI_* variables; they are never arguments, never printed, never logged.
"""

from __future__ import annotations

import argparse
import getpass
import os
import sys
from collections.abc import Callable
from typing import TextIO

from pydantic import ValidationError

from tui.local import config
from tui.api.dialects import Dialect, Family
from tui.api.models import HmacKey, field_errors
from tui.cli.exit_codes import Exit
from tui.local.secrets import (
    InsecureFileSecrets,
    KeyringUnavailable,
    ListenerSecret,
    NoKeyring,
    SecretName,
    SecretStore,
    open_secret_store,
    secret_sources,
    secrets_in_environment,
    store_then_save,
)

OPTIONAL_SECRETS = {SecretName.HMAC_KEY}
PROMPT_ATTEMPTS = 3


class _Refused(Exception):
    """Input the command cannot use; the message says which and why (never a secret's value)."""


def run_cli(args: argparse.Namespace) -> int:
    action = {"add": _add, "list": _list, "remove": _remove}[args.profile_command]
    try:
        code = action(args)
        if code == Exit.OK and args.profile_command in ("add", "remove"):
            from tui.cli.listen_reload import tell_listeners_serving_all

            tell_listeners_serving_all(sys.stderr)  # a running `listen --all` serves the change without a restart
        return code
    except (_Refused, config.ConfigError, KeyringUnavailable) as error:
        print(f"gateway-tui: {error}", file=sys.stderr)
        return Exit.BAD_INPUT
    except BrokenPipeError:  # before OSError, which it is
        raise  # tui.cli.main's quiet_when_the_reader_leaves, as for every command
    except OSError as error:
        print(f"gateway-tui: {getattr(error, 'filename', None) or 'file'}: {error.strerror or error}", file=sys.stderr)
        return Exit.BAD_INPUT
    except (KeyboardInterrupt, EOFError):
        print("\ngateway-tui: cancelled; nothing was saved.", file=sys.stderr)
        return Exit.INTERRUPTED


_SET_BY_ADD = frozenset({
    "name", "base_url", "instance_id", "session_url", "listener_host", "listener_port", "public_url", "theme",
    "instance_dialect", "session_dialect", "forward_to", "forward_allow_remote", "require_signatures", "secrets_file",
    "read_only", "max_body",
})
"""The profile's fields `profile add` sets from its arguments (or their defaults)."""


def _add(args: argparse.Namespace) -> int:
    interactive = sys.stdin.isatty()
    families = {"base_url": args.base_url, "instance_id": args.instance_id, "session_url": args.session_url}
    existing = {profile.name: profile for profile in config.load_profiles()}.get(args.name)
    if args.read_only is not None and existing is not None and not any(families.values()):
        return _set_read_only(existing, args.read_only)
    if not any(families.values()):
        if not interactive:
            raise _Refused(f"profile {args.name!r} not saved: {NO_GATEWAY}")
        config.load_profiles()  # a broken file stops us before any question
        families = _ask_gateway()
    try:
        profile = config.Profile(
            name=args.name,
            **families,
            listener_host=args.listener_host,
            listener_port=args.listener_port,
            public_url=args.public_url,
            theme=args.theme,
            instance_dialect=args.instance_dialect,
            session_dialect=args.session_dialect,
            forward_to=args.forward_to,
            forward_allow_remote=args.forward_allow_remote,
            require_signatures=args.require_signatures,
            secrets_file=bool(args.insecure_storage),  # later runs find them there without the flag
            read_only=args.read_only if args.read_only is not None else existing is not None and existing.read_only,
            **({"max_body": args.max_body} if args.max_body is not None else {}),
            # What `add` has no flag for (set in the app's Settings) stays as it was on an update.
            **(existing.model_dump(exclude=set(_SET_BY_ADD)) if existing is not None else {}),
        )
    except ValidationError as error:
        raise _Refused(f"profile {args.name!r} not saved: {config.describe_profile_error(error)}") from None
    config.load_profiles()  # a broken file stops us here, before any secret is asked for or stored
    try:
        store = open_secret_store(args.insecure_storage)
    except KeyringUnavailable:
        if not secrets_in_environment():
            raise
        return _add_without_keyring(profile)
    wanted = SecretName.of(profile.families, profile.instance_dialect)
    stored = {name for name in SecretName if store.get(profile.name, name) is not None}
    already = stored & set(wanted)
    values: dict[SecretName, str | None] = dict(_read_secrets(profile.name, wanted, already, interactive=interactive))
    # A family the profile no longer has (updated to one gateway): its secrets go with it.
    dropped = [name for name in SecretName if name in stored and name not in wanted]
    store_then_save(profile, store, values | dict.fromkeys(dropped))
    where = "a 0600 file (--insecure-storage)" if store.kind == "insecure-file" else "the OS keyring"
    kept = [name.label for name in wanted if name in already and name not in values]
    unset = [name.label for name in wanted if name not in already and name not in values]
    notes = ([f"kept as stored: {', '.join(kept)}"] if kept else []) + ([f"not set: {', '.join(unset)}"] if unset else [])
    if dropped:
        notes.append(f"removed: {', '.join(name.label for name in dropped)} (no {dropped[0].family.label} now)")
    from tui.core.pairing import gateway_name

    dialects = {Family.INSTANCE: profile.instance_dialect.value, Family.SESSION: profile.session_dialect.value}
    gateways = " and ".join(f"{family.value} family ({gateway_name(family, dialects[family])})"
                            for family in profile.families)
    parts = [f"Profile {profile.name!r} ({gateways}) saved to {config.profiles_path()}",
             f"{len(values) - len(dropped)} secret(s) stored in {where}"]
    print("; ".join(parts + notes) + ".")
    return Exit.OK


def _set_read_only(profile: config.Profile, read_only: bool) -> int:
    """`profile add NAME --read-only` (or `--no-read-only`) on its own: the flag changes, nothing else (no secret is
    asked for, none is touched)."""
    config.save_profile(profile.model_copy(update={"read_only": read_only}))
    if read_only:
        print(f"Profile {profile.name!r} is now read-only: every operation that writes (sends, settings, pairing) is "
              "refused, in the app and in `call`.")
    else:
        print(f"Profile {profile.name!r} is now writable.")
    return Exit.OK


NO_GATEWAY = (
    "no gateway given: add --base-url and --instance-id for Z-API (the instance family), --session-url for WuzAPI "
    "(the session family), or both."
)
GATEWAY_CHOICES = {"1": (Family.INSTANCE,), "2": (Family.SESSION,), "3": (Family.INSTANCE, Family.SESSION)}
FAMILY_QUESTIONS = {
    Family.INSTANCE: (("base_url", "Z-API base URL (instance family)", True), ("instance_id", "Z-API instance id", False)),
    Family.SESSION: (("session_url", "WuzAPI URL (session family)", True),),
}


def _ask_gateway() -> dict[str, str | None]:
    """On a terminal with no gateway flags: which gateway (Z-API, WuzAPI or both), then its address. Each answer is
    asked again when it breaks its rule, a bounded number of times."""
    print("Which gateway is this account on?\n  1  Z-API (the instance family)\n  2  WuzAPI (the session family)\n"
          "  3  both")
    choice = _ask("Gateway [1/2/3]: ", lambda answer: None if answer in GATEWAY_CHOICES else "answer 1, 2 or 3")
    answers: dict[str, str | None] = {"base_url": None, "instance_id": None, "session_url": None}
    for family in GATEWAY_CHOICES[choice]:
        for field, label, is_url in FAMILY_QUESTIONS[family]:
            answers[field] = _ask(f"{label}: ", _url_problem if is_url else _required_problem)
    return answers


def _ask(question: str, problem_of: Callable[[str], str | None]) -> str:
    problem: str | None = None
    for _ in range(PROMPT_ATTEMPTS):
        answer = input(question).strip()
        problem = problem_of(answer)
        if problem is None:
            return answer
        print(f"  {problem}; try again.", file=sys.stderr)
    raise _Refused(f"{question.rstrip(': ')}: {problem}; nothing was saved.")


def _url_problem(url: str) -> str | None:
    try:
        config.check_http_url(url)
    except ValueError as error:
        return str(error)
    return None


def _required_problem(answer: str) -> str | None:
    return None if answer else "required"


def _add_without_keyring(profile: config.Profile) -> int:
    """No keyring, secrets in the environment: save the profile (nothing secret in it) and store no secret, so
    runs take them from the same variables, as the no-keyring message says they can."""
    wanted = SecretName.of(profile.families, profile.instance_dialect)
    _read_secrets(profile.name, wanted, set(), interactive=False)  # the variables must hold every required secret
    config.save_profile(profile)
    variables = ", ".join(name.env_var for name in wanted)
    print(
        f"Profile {profile.name!r} saved to {config.profiles_path()}; no secret was stored (no OS keyring). "
        f"Set {variables} for every run, or add --insecure-storage to keep them in a file readable only by you."
    )
    return Exit.OK


def _read_secrets(
    profile: str, wanted: list[SecretName], already: set[SecretName], *, interactive: bool
) -> dict[SecretName, str]:
    """The secrets to store (those of the profile's families), validated: prompted (Enter keeps a stored one) or
    from the environment."""
    values: dict[SecretName, str] = {}
    missing: list[str] = []
    for name in wanted:
        value = _prompt(name, name in already) if interactive else os.environ.get(name.env_var, "").strip()
        if value:
            values[name] = value
        elif name not in already and name not in OPTIONAL_SECRETS:
            missing.append(name.label if interactive else name.env_var)
    if missing:
        how = ("enter " if interactive else "set ") + ", ".join(missing)
        raise _Refused(f"profile {profile!r} not saved: missing secrets ({how}).")
    hmac_key = values.get(SecretName.HMAC_KEY)
    if hmac_key is not None and (problem := _hmac_key_problem(hmac_key)):
        raise _Refused(f"profile {profile!r} not saved: {SecretName.HMAC_KEY.env_var}: {problem}.")
    return values


def _prompt(name: SecretName, already: bool) -> str:
    """One hidden prompt; an HMAC key that breaks the rule is asked for again, a bounded number of times."""
    hint = "Enter keeps the stored one" if already else ("Enter to skip" if name in OPTIONAL_SECRETS else "required")
    problem: str | None = None
    for _ in range(PROMPT_ATTEMPTS):
        value = getpass.getpass(f"{name.label} ({hint}): ").strip()
        problem = _hmac_key_problem(value) if name is SecretName.HMAC_KEY and value else None
        if problem is None:
            return value
        print(f"  {name.label}: {problem}; try again.", file=sys.stderr)
    raise _Refused(f"{name.label}: {problem}; nothing was saved.")


def _hmac_key_problem(key: str) -> str | None:
    try:
        HmacKey(hmac_key=key)
    except ValidationError as error:
        return "; ".join(field_errors(error).values()).lower()
    return None


def _list(args: argparse.Namespace, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    profiles = config.load_profiles()
    if not profiles:
        print("No profiles yet. Add one with `gateway-tui profile add NAME` and --base-url … --instance-id … (Z-API), "
              "--session-url … (WuzAPI), or both; or try `gateway-tui --sandbox`.", file=out)
        return Exit.OK
    keyring: SecretStore | None = None
    if args.insecure_storage or not all(profile.secrets_file for profile in profiles):
        try:
            keyring = open_secret_store(args.insecure_storage)
        except KeyringUnavailable:
            in_file = InsecureFileSecrets().path.exists()
            print("No OS keyring here, so stored secrets cannot be checked"
                  + ("; some are in the 0600 file: add --insecure-storage." if in_file else "."), file=out)
    private_file = InsecureFileSecrets()
    for profile in profiles:
        print(f"{profile.name}", file=out)
        instance, session = profile.instance, profile.session
        print(f"  instance family  {instance.base_url}  (instance {instance.instance_id}; "
              f"{_spoken(instance.dialect)})" if instance else "  instance family  none (no Z-API)", file=out)
        print(f"  session family   {session.url}  ({_spoken(session.dialect)})" if session
              else "  session family   none (no WuzAPI)", file=out)
        public = f", public URL {profile.public_url}" if profile.public_url else ""
        print(f"  listener         {profile.listener_host}:{profile.listener_port}{public}", file=out)
        access = (f"read-only (`gateway-tui profile add {profile.name} --no-read-only` makes it writable)"
                  if profile.read_only else "writable")
        print(f"  access           {access}", file=out)
        print(f"  signatures       {_signature_policy(profile)}", file=out)
        # a profile saved with --insecure-storage (or set up without a keyring) keeps its secrets in the 0600 file
        store = private_file if profile.secrets_file else keyring
        stored_label = "set (0600 file)" if store is not None and store.kind == "insecure-file" else "set (keyring)"
        not_set_label = "not set" if store is not None else "unknown (no keyring)"
        sources = secret_sources(profile.name, store)
        for name in SecretName.of(profile.families, profile.instance_dialect):
            shown = {"stored": stored_label, "environment": "from environment", "not set": not_set_label}[sources[name]]
            print(f"  {name.label:<16} {shown}", file=out)
    return Exit.OK


def _spoken(dialect: Dialect) -> str:
    """`Evolution API, dialect evolution`: the gateway the dialect is, which is not always the family's usual one
    (Evolution API speaks the instance family too); the spec's dialect is no gateway's."""
    from tui.gateways import adapter_for

    return f"dialect {dialect.value}" if dialect.value == "spec" else f"{adapter_for(dialect).name}, dialect {dialect.value}"


def _signature_policy(profile: config.Profile) -> str:
    """What the listener (the app's, `listen --profile`, `listen --all`) asks of this profile's events, with its key."""
    if not profile.has(Family.SESSION):
        return "none checked (Z-API does not sign; no HMAC key)"
    if profile.require_signatures or not profile.has(Family.INSTANCE):
        return "required on every path" + (" (/delivery included)" if profile.has(Family.INSTANCE) else "")
    return "required, except Z-API's unsigned callbacks on /delivery"


def _remove(args: argparse.Namespace) -> int:
    """The secrets first, then the profile: a keyring that refuses leaves the profile, so a later remove finds its
    secrets again. A keyring is needed only where secrets may be: not for a profile whose secrets are in the 0600
    file, and not on a machine with no keyring at all (nothing can have been stored in one; removing what is not
    there succeeds)."""
    profile = next((profile for profile in config.load_profiles() if profile.name == args.name), None)
    keyring_optional = args.insecure_storage or (profile is not None and profile.secrets_file)
    stores = _stores_holding_secrets(args.insecure_storage)
    keyring_looked_in = any(store.kind == "keyring" for store in stores)
    for store in stores:
        try:
            for name in (*SecretName, *ListenerSecret):  # the webhook URL secret it made goes with it
                store.delete(args.name, name)
        except NoKeyring:
            keyring_looked_in = False
        except KeyringUnavailable as error:
            if store.kind != "keyring" or not keyring_optional:
                raise _Refused(f"profile {args.name!r} not removed (its secrets could not be): {error}") from None
            keyring_looked_in = False
    if not config.remove_profile(args.name):
        print(f"No profile named {args.name!r}; any secrets stored under that name were removed.")
        return Exit.REFUSED
    if keyring_looked_in or keyring_optional:
        print(f"Profile {args.name!r} and its secrets removed.")
    else:
        print(f"Profile {args.name!r} removed; there is no OS keyring here, so none of its secrets was looked for "
              "in one.")
    return Exit.OK


def _stores_holding_secrets(insecure: bool) -> list[SecretStore]:
    """Every store a profile's secrets may be in: the keyring (when this machine has one) and the 0600 file when it
    exists (or with --insecure-storage), so removing a profile never leaves its secrets behind in either."""
    stores: list[SecretStore] = []
    try:
        stores.append(open_secret_store(False))
    except NoKeyring:
        pass
    file_store = InsecureFileSecrets()
    if insecure or file_store.path.exists():
        stores.append(file_store)
    return stores
