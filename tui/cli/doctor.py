"""`gateway-tui doctor [--profile NAME | --sandbox] [--json] [--fix]`: why the gateway's webhooks do not reach the listener,
and (with --fix) the fixes that need no secret, then a second look. The work is tui.core.doctor's.

Exit codes: 0 healthy; 1 a finding remains; 2 nothing was examined (no profile, no secrets, a bad store).
The doctor uses the profile's running listener (the app's or `listen`'s, from its record in the data dir: where it
listens, the store it writes, and whether the profile has its own `/a/<profile>/` paths there), or starts one on the
profile's port for the check; then the finding `listener-not-running` says that nothing listens once it ends.
"""

from __future__ import annotations

from datetime import UTC, datetime

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any, TextIO

from tui.cli.command_sandbox import SandboxNotStarted, add_sandbox_flag, sandbox_for_command
from tui.cli.exit_codes import Exit

if TYPE_CHECKING:
    from tui.cli.command_sandbox import CommandSandbox
    from tui.core.doctor import Report


def add_parser(commands: Any, global_flags: Any) -> None:
    doctor = commands.add_parser(
        "doctor", help="find why webhooks do not arrive (and fix what needs no secret, with --fix)",
    )
    doctor.add_argument("--json", action="store_true", help="the findings as one JSON object")
    doctor.add_argument("--fix", action="store_true", help="apply the fixes that need no secret, then check again")
    global_flags(doctor)
    add_sandbox_flag(doctor)


def run_cli(args: argparse.Namespace, out: TextIO | None = None, err: TextIO | None = None) -> int:
    import asyncio

    async def run() -> int:
        async with sandbox_for_command(args) as sandbox:
            return await _run(args, out or sys.stdout, err or sys.stderr, sandbox)

    try:
        return asyncio.run(run())
    except SandboxNotStarted as error:
        print(f"gateway-tui doctor: {error}", file=err or sys.stderr)
        return Exit.REFUSED


async def _run(args: argparse.Namespace, out: TextIO, err: TextIO, sandbox: CommandSandbox | None) -> int:
    import asyncio

    from tui.local import config
    from tui.core.accounts.account import SANDBOX_PROFILE
    from tui.api.client import GatewayHttp
    from tui.gateways.clients import InstanceClient, SessionClient
    from tui.api.credentials import InstanceCredentials, SessionCredentials
    from tui.core.calls import CallRefused, load_profile, profile_secrets, refuse_missing_secrets
    from tui.core.doctor import Doctor, DoctorInputs, account_paths_of
    from tui.local.listener_record import running
    from tui.local.secrets import SecretName, run_path_secret
    from tui.webhooks.listener import Listener
    from tui.webhooks.store import EventStore

    insecure_storage = bool(getattr(args, "insecure_storage", False))
    try:
        if sandbox is not None:
            profile, secrets = sandbox.profile, dict(sandbox.secrets)
        else:
            profile = load_profile(getattr(args, "profile", None))
            secrets = profile_secrets(profile.name, insecure_storage=insecure_storage)
        refuse_missing_secrets(profile, profile.families, secrets, insecure_storage=insecure_storage)
    except (CallRefused, config.ConfigError) as refused:
        print(f"gateway-tui doctor: {refused}", file=err)
        return Exit.BAD_INPUT
    # The app's listener when the profile (or the app's own sandbox) has one running; a sandbox started for this
    # command has none.
    record = running(profile.name) if sandbox is None or sandbox.shared else None
    # The running listener's own store (`listen --all` writes one for every profile): the probe's events land there.
    store = EventStore(record.store if record is not None and record.store is not None
                       else config.events_store_path(profile.name, sandbox=sandbox is not None))
    try:
        store.open()
    except Exception as error:
        print(f"gateway-tui doctor: cannot open the event store {store.path}: {error}", file=err)
        return Exit.BAD_INPUT
    key = secrets.get(SecretName.HMAC_KEY)
    # A Z-API profile's webhook URL secret, made the first time as the app and `listen` make it. A sandbox's lives in
    # its app's memory only: unknown here, so its secret URL is taken as it is (Doctor._reaches).
    path_secret = (await asyncio.to_thread(run_path_secret, profile, insecure_storage or profile.secrets_file)
                   if sandbox is None else None)
    own_listener: Listener | None = None
    try:
        if record is None:
            # Both the old paths and the profile's own `/a/<name>/` ones (where `fleet import` points a profile for
            # `listen --all`): the probe reaches it wherever the gateway sends.
            own_listener = Listener(store, host=profile.listener_host, port=profile.listener_port, hmac_key=key,
                                    max_body=profile.max_body, require_signatures=profile.require_signatures,
                                    account=profile.name, accounts={profile.name: key})
            own_listener.set_account_path_secret(profile.name, path_secret)
            try:
                await own_listener.start()
            except OSError as error:
                own_listener = None
                print(f"gateway-tui doctor: could not start a listener on port {profile.listener_port}: {error}", file=err)
        listener_url = record.url if record is not None else (own_listener.url if own_listener is not None else "")
        base = profile.public_url.rstrip("/") or listener_url
        async with GatewayHttp(timeout=10.0) as http:
            instance = session = None
            if profile.instance is not None:
                instance = InstanceClient(http, InstanceCredentials(
                    profile.instance.base_url, profile.instance.instance_id,
                    secrets.get(SecretName.INSTANCE_TOKEN) or "", secrets.get(SecretName.CLIENT_TOKEN) or ""),
                    profile.instance.dialect, read_only=profile.refuses_writes_as)
            if profile.session is not None:
                session = SessionClient(http, SessionCredentials(
                    profile.session.url, secrets.get(SecretName.SESSION_TOKEN) or ""), profile.session.dialect,
                    read_only=profile.refuses_writes_as)
            sandbox_info = await _sandbox_info(profile)
            inputs = DoctorInputs(
                name=profile.name, instance=instance, session=session, hmac_key=key, listener_base=base, store=store,
                listener_running=bool(listener_url), is_sandbox=sandbox_info is not None,
                account_paths=account_paths_of(record, profile.name),
                listener_for_check=own_listener is not None,
                sandbox_for_check=sandbox is not None and not sandbox.shared,
                sandbox_app=bool(getattr(args, "sandbox", False)) and profile.name == SANDBOX_PROFILE,
                listen_port=record.port if record is not None else profile.listener_port,
                own_number=(sandbox_info or {}).get("own_phone"), may_probe=_ask_at_terminal(err),
                # Its own listener began now: no silence before it can be told from nothing listening.
                listening_since=datetime.now(UTC) if own_listener is not None else None,
                path_secret=path_secret,
            )
            doctor = Doctor(inputs)
            from tui.api.errors import GatewayError, ReadOnlyRefused

            try:
                report = await doctor.examine()
                changes: list[str] = []
                if args.fix and any(f.fix is not None for f in report.findings):
                    try:
                        changes = await doctor.fix(report)
                    except ReadOnlyRefused as refused:  # the findings still show; the fixes are writes
                        print(f"gateway-tui doctor: --fix: {refused.message}", file=err)
                    else:
                        report = await Doctor(inputs).examine()
            except GatewayError as error:
                print(f"gateway-tui doctor: the gateway said: {error.message}", file=err)
                return Exit.REFUSED
    finally:
        if own_listener is not None:
            await own_listener.stop()
        store.close()
    _show(report, changes, bool(args.json), out)
    return Exit.OK if report.healthy else Exit.REFUSED


async def _sandbox_info(profile: Any) -> dict[str, str] | None:
    from tui.core.doctor import sandbox_info

    urls = [family.url for family in (profile.session,) if family is not None]
    if profile.instance is not None:
        urls.append(profile.instance.base_url)
    return await sandbox_info(urls)


def _ask_at_terminal(err: TextIO) -> Any:
    async def ask() -> bool:
        if not sys.stdin.isatty():
            return False
        print("Send a probe message to the account's own number to time its events? [y/N] ", end="", file=err, flush=True)
        import asyncio

        answer = await asyncio.to_thread(sys.stdin.readline)
        return answer.strip().lower() in ("y", "yes")

    return ask


def _show(report: Report, changes: list[str], as_json: bool, out: TextIO) -> None:
    if as_json:
        print(json.dumps({**report.as_json(), "changes": changes}, indent=2), file=out)
        return
    for line in changes:
        print(f"fixed: {line}", file=out)
    for finding in report.findings:
        where = f" [{finding.family.value}]" if finding.family else ""
        fix = " (doctor --fix does this)" if finding.fix is not None else ""
        print(f"{finding.severity.value}: {finding.id.value}{where}: {finding.words}\n  fix: {finding.fix_words}{fix}",
              file=out)
    if report.probe_latency is not None:
        print(f"probe: first event after {report.probe_latency * 1000:.0f} ms ({report.probe_events} events)", file=out)
    print("healthy" if report.healthy else "not healthy", file=out)
