"""`gateway-tui listen`: the listener and its store in the foreground, as a command (arguments, printing,
signals); the service itself is tui.webhooks.listener."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import ipaddress
import logging
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from tui.api.dialects import Family
from tui.cli.exit_codes import Exit
from tui.cli.listen_reload import ProfilesNow, Reloader
from tui.cli.serve import start_or_explain, stop_on_sigterm
from tui.webhooks.budget import DEFAULT_MAX_BODY
from tui.webhooks.events import StoredEvent, terminal_line
from tui.webhooks.identities import UNKNOWN_NUMBER, named_event
from tui.webhooks.inbox_changes import inbox_of
from tui.api.listener_paths import with_path_secret
from tui.api.redaction import MASK
from tui.webhooks.families import ACCOUNT_PREFIX, AccountSigning, PathFamily, evolution_url, family_urls
from tui.webhooks.store import EventStore
from tui.webhooks.store_faults import StoreHealth, StoreLocked, StoreUnusable
from tui.webhooks.listener import FORWARD_STOP_GRACE, HMAC_KEY_ENV, Listener

if TYPE_CHECKING:
    from tui.local.config import Profile
    from tui.core.alerts.headless import HeadlessAlerts
    from tui.api.gateway_http import GatewayHttp
    from tui.core.catchup import AccountClients, CatchUp, Gap, OutageCatchUp

log = logging.getLogger(__name__)


class _Served(NamedTuple):
    """What one `listen` serves: its store, the old paths' key, account and families, and each account on its
    `/a/<profile>/` paths (`listen --all`) with its key and families."""

    path: Path
    key: str | None
    families: tuple[Family, ...]
    account: str | None = None
    accounts: dict[str, str | None] = {}
    account_families: dict[str, tuple[Family, ...]] = {}
    old_paths: bool = True
    records: tuple[str, ...] = ()  # the listener records the doctor reads
    signing: dict[str, AccountSigning] = {}  # each profile's saved signature policy (its families, its setting)
    apikeys: dict[str, str | None] = {}  # Evolution profiles' instance keys (their deliveries' `apikey`)
    path_secrets: dict[str, str | None] = {}  # Z-API profiles' webhook URL secrets (`/delivery/secret/<secret>`)

    def __repr__(self) -> str:  # spelled out: the default would show the keys
        return f"<_Served {self.path} accounts={sorted(self.accounts)}>"


def run_cli(args: argparse.Namespace) -> int:
    """`gateway-tui listen`: serve until Ctrl+C or SIGTERM; status on stderr, a line per event on stdout (or, with
    `--print-json`, the event as a JSON line)."""
    if getattr(args, "print_unit", False):
        from tui.cli.listen_unit import UnitRefused, systemd_unit

        try:
            print(systemd_unit(sys.argv[1:]), end="")
        except UnitRefused as error:
            print(f"gateway-tui listen: {error}", file=sys.stderr)
            return Exit.BAD_INPUT
        return Exit.OK
    _log_briefly_to_stderr()
    if args.max_body is None:
        args.max_body = DEFAULT_MAX_BODY
    if args.max_body < 1:
        print("gateway-tui listen: --max-body must be at least 1", file=sys.stderr)
        return Exit.BAD_INPUT
    if not _is_loopback(args.host):
        print(
            f"warning: listening on {args.host}, not loopback: anyone who can reach this address can post events",
            file=sys.stderr,
        )
    forward_to = getattr(args, "forward_to", None)
    if forward_to:
        from tui.webhooks.forwarder import ForwardTargetRefused, check_target

        try:
            check_target(forward_to, allow_remote=args.allow_remote)
        except ForwardTargetRefused as error:  # it may quote the URL: its token= masked
            from tui.api.redaction import redact_url_secrets

            print(f"gateway-tui listen: --forward-to: {redact_url_secrets(str(error))}", file=sys.stderr)
            return Exit.BAD_INPUT
    try:
        alerts = _alerts_from_flags(args)
    except ValueError as error:
        print(f"gateway-tui listen: {error}", file=sys.stderr)
        return Exit.BAD_INPUT
    from tui.local.config import ConfigError
    from tui.local.secrets import KeyringUnavailable

    try:
        served = _every_profile(args) if getattr(args, "all", False) else _one_profile(args)
    except ConfigError as error:
        print(f"gateway-tui listen: {error}", file=sys.stderr)
        return Exit.BAD_INPUT
    except KeyringUnavailable as error:
        # Listening without the profile's key would take forged events: refuse, and say how to give the key.
        print(f"gateway-tui listen: cannot read {error.args[0] if error.args else error}", file=sys.stderr)
        return Exit.BAD_INPUT
    if (busy := _already_listening(served.records, args.port)) is not None:
        print(f"gateway-tui listen: {busy}", file=sys.stderr)
        return Exit.REFUSED
    store = EventStore(served.path)
    try:
        _open_waiting_for_its_lock(store)
    except KeyboardInterrupt:
        return Exit.OK
    except StoreUnusable as error:
        print(f"gateway-tui listen: {error}", file=sys.stderr)
        return Exit.REFUSED
    except Exception as error:
        print(f"gateway-tui listen: cannot open the event store {store.path}: {error}", file=sys.stderr)
        return Exit.REFUSED
    store.watch_health(_print_health)
    if alerts is not None:
        alerts.remember(store)
    try:
        return asyncio.run(_serve(store, args, served, alerts))
    except KeyboardInterrupt:
        return Exit.OK
    finally:
        store.close()


LOCK_FIRST_WAIT = 0.5
"""Seconds the store's lock is waited for before `listen` says it waits (then it waits until it is free)."""
LOCK_WAIT = 5.0


def _open_waiting_for_its_lock(store: EventStore) -> None:
    """Open the store; when another program holds its lock, say so at once (a service's log, a terminal) and wait
    until it lets go, rather than a silent wait and then an exit: nothing can be kept before the store opens."""
    try:
        store.open(lock_wait=LOCK_FIRST_WAIT)
        return
    except StoreLocked as error:
        print(f"gateway-tui listen: {error}; waiting for it (Ctrl-C to stop)", file=sys.stderr, flush=True)
    while True:
        try:
            store.open(lock_wait=LOCK_WAIT)
        except StoreLocked:
            continue
        print("gateway-tui listen: the event store is free: starting", file=sys.stderr, flush=True)
        return


def _already_listening(profiles: tuple[str, ...], port: int) -> str | None:
    """Who already listens for one of `profiles` on `port` (the app, or another `listen`), in one line; None when
    nobody does, or on another port (two listeners on two ports are the user's choice)."""
    from tui.local.listener_record import running

    for profile in profiles:
        record = running(profile)
        if record is not None and record.port == port:
            who = "the app" if record.who == "app" else "`gateway-tui listen`"
            return (f"{who} already listens for profile {profile!r} (pid {record.pid}, on {record.url}); the app "
                    "attaches to a running listener by itself: quit that one first, or pass another --port")
    return None


def _one_profile(args: argparse.Namespace) -> _Served:
    """`listen [--profile P]`: one profile's store and key on the old paths, as the app listens."""
    from tui.local.config import chosen_profile, events_store_path, load_profiles
    from tui.local.secrets import KeyringUnavailable, run_hmac_key, run_path_secret

    # Without --db, the store of the app's profile, so `gateway-tui events` and the app see what arrived.
    path = Path(args.db) if args.db else events_store_path(args.profile, sandbox=args.sandbox)
    name = None if args.sandbox else chosen_profile(args.profile)
    profile = next((profile for profile in load_profiles() if profile.name == name), None)
    families = profile.families if profile is not None else tuple(Family)
    # The key the app verifies with (GATEWAY_TUI_HMAC_KEY, else the profile's); never the sandbox's (thrown away).
    # Only the session family (WuzAPI) signs: a Z-API-only profile keeps no key, so none is read (no keyring
    # needed to listen for Z-API's callbacks).
    # A profile set up without a keyring remembers its 0600 file (Profile.secrets_file), as the app reads it.
    in_file = profile is not None and profile.secrets_file or args.insecure_storage
    try:
        key = run_hmac_key(name if Family.SESSION in families else None, in_file)
    except KeyringUnavailable as error:
        raise KeyringUnavailable(f"the profile's HMAC key: {error} (or set {HMAC_KEY_ENV} for this run)") from None
    record = name or ("sandbox" if args.sandbox else None)
    signing = {profile.name: _saved_signing(profile)} if profile is not None else {}
    apikeys = {profile.name: _instance_key(profile, in_file)} if profile is not None else {}
    path_secrets = {profile.name: run_path_secret(profile, in_file)} if profile is not None else {}
    return _Served(path, key, families, account=name, records=(record,) if record else (), signing=signing,
                   apikeys=apikeys, path_secrets=path_secrets)


def _saved_signing(profile: Profile) -> AccountSigning:
    """What `profile` saved about unsigned events: no unsigned `/delivery` without Z-API, its own setting, and
    whether its `/evolution` paths judge Evolution's apikey."""
    return AccountSigning(Family.INSTANCE in profile.families, profile.require_signatures, _speaks_evolution(profile))


def _speaks_evolution(profile: Profile) -> bool:
    from tui.api.dialects import InstanceDialect

    return Family.INSTANCE in profile.families and profile.instance_dialect is InstanceDialect.EVOLUTION


def _instance_key(profile: Profile, in_file: bool, environ: Mapping[str, str] | None = None) -> str | None:
    """An Evolution profile's instance key, its deliveries' `apikey` (None for other profiles: never read)."""
    from tui.local.secrets import KeyringUnavailable, run_instance_key

    if not _speaks_evolution(profile):
        return None
    try:
        return run_instance_key(profile.name, in_file, environ)
    except KeyringUnavailable as error:
        raise KeyringUnavailable(f"profile {profile.name!r}'s instance key: {error}") from None


def _every_profile(args: argparse.Namespace) -> _Served:
    """`listen --all`: every profile on its `/a/<profile>/` paths with its own key, one store (each event carries
    its account). With one profile, its old paths are served too, as `listen --profile P` serves them."""
    from tui.local.config import ConfigError
    from tui.local.paths import fleet_events_path

    if args.sandbox:
        raise ConfigError("--all serves your profiles, not the sandbox: leave out --sandbox")
    if args.profile:
        raise ConfigError("--all serves every profile: leave out --profile")
    now = _profiles_now(args)
    if not now.keys:
        raise ConfigError("there is no profile yet: add one with `gateway-tui profile add NAME`")
    path = Path(args.db) if args.db else fleet_events_path()
    keys, families, signing = now.keys, now.families, now.signing
    apikeys, path_secrets = dict(now.apikeys), dict(now.path_secrets)
    names = tuple(keys)
    if len(names) == 1:
        (name,) = names
        return _Served(path, keys[name], families[name], name, keys, families, records=names, signing=signing,
                       apikeys=apikeys, path_secrets=path_secrets)
    return _Served(path, None, tuple(Family), None, keys, families, old_paths=False, records=names, signing=signing,
                   apikeys=apikeys, path_secrets=path_secrets)


def _profiles_now(args: argparse.Namespace) -> ProfilesNow:
    """Every profile with its key, families and signature policy, as they are now (at start, and on SIGHUP)."""
    from tui.local.config import load_profiles
    from tui.local.secrets import KeyringUnavailable, run_environment, run_hmac_key, run_path_secret

    profiles = load_profiles()
    environ = run_environment(len(profiles), lambda line: print(line, file=sys.stderr, flush=True))
    keys: dict[str, str | None] = {}
    for profile in profiles:
        in_file = profile.secrets_file or args.insecure_storage
        try:
            keys[profile.name] = run_hmac_key(
                profile.name if Family.SESSION in profile.families else None, in_file, environ)
        except KeyringUnavailable as error:
            raise KeyringUnavailable(f"profile {profile.name!r}'s HMAC key: {error}") from None
    return ProfilesNow(keys, {profile.name: tuple(profile.families) for profile in profiles},
                       {profile.name: _saved_signing(profile) for profile in profiles},
                       {profile.name: _instance_key(profile, profile.secrets_file or args.insecure_storage, environ)
                        for profile in profiles},
                       {profile.name: run_path_secret(profile, profile.secrets_file or args.insecure_storage, environ)
                        for profile in profiles})


async def _serve(store: EventStore, args: argparse.Namespace, served: _Served,
                 alerts: HeadlessAlerts | None = None) -> int:
    forward_to = getattr(args, "forward_to", None)
    if not forward_to:
        return await _listen(store, args, served, None, alerts)
    from tui.webhooks.forwarder import Forwarder, ForwardLog, describe

    # The first line says where it listens (what scripts and the tests wait for): a forward resumed at start that is
    # done before it (the store's run is recorded first) is said right after it.
    held: list[str] | None = []

    def print_attempt(attempt: Any) -> None:
        line = f"event #{attempt.event_id}: {describe(attempt)}"
        if held is not None:
            held.append(line)
        else:
            print(line, file=sys.stderr, flush=True)

    def first_line_out() -> None:
        nonlocal held
        lines, held = held or [], None
        for line in lines:
            print(line, file=sys.stderr, flush=True)

    with ForwardLog(store.path) as forward_log:
        forwarder = Forwarder(forward_to, forward_log, on_attempt=print_attempt, store=store)
        await forwarder.start()
        try:
            return await _listen(store, args, served, forwarder, alerts, first_line_out)
        finally:
            abandoned = forwarder.waiting_ids()
            await forwarder.stop()
            if abandoned:
                print(f"{_not_forwarded(abandoned)}; {RESUMED_LATER}", file=sys.stderr)


RESUMED_LATER = "they are kept and go out when forwarding starts again (`listen --forward-to URL` or the app)"


def _not_forwarded(ids: list[int], shown: int = 20) -> str:
    """`2 events not forwarded yet: #4, #7` (the first `shown` ids, then how many more)."""
    listed = ", ".join(f"#{event_id}" for event_id in ids[:shown])
    more = f" and {len(ids) - shown} more" if len(ids) > shown else ""
    return f"{len(ids)} event{'' if len(ids) == 1 else 's'} not forwarded yet: {listed}{more}"


async def _listen(store: EventStore, args: argparse.Namespace, served: _Served, forwarder: Any,
                  alerts: HeadlessAlerts | None = None, first_line_out: Callable[[], None] | None = None) -> int:
    key, families = served.key, served.families
    printer = _JsonLinePrinter() if args.print_json else LinePrinter(asyncio.get_running_loop(),
                                                                     rename=known_names(store))
    outage_http: GatewayHttp | None = None
    outages: OutageCatchUp | None = None
    # Who is served now: under `listen --all`, what the listener serves after each SIGHUP (a profile added since the
    # start is caught up after its own disconnections too); set once the listener exists.
    serving = _Serving(served)
    if _profile_names(served) or getattr(args, "all", False):
        # A profile's account can be caught up after it was disconnected (not the sandbox's).
        from tui.api.gateway_http import GatewayHttp

        outage_http = GatewayHttp(timeout=10.0)
        outages = _outage_catch_up(store, serving, args, outage_http)
    consumers = [consumer for consumer in (printer, forwarder.submit if forwarder else None,
                                           alerts.observe if alerts else None,
                                           outages.observe if outages else None) if consumer is not None]
    listener = Listener(
        store,
        host=args.host,
        port=args.port,
        hmac_key=key,
        strict=not args.accept_unsigned,
        require_signatures=args.require_signatures,
        max_body=args.max_body,
        **({"media_limit": args.media_limit} if getattr(args, "media_limit", None) else {}),
        on_event=_each(consumers) if consumers else None,
        account=served.account,
        accounts=served.accounts,
        old_paths=served.old_paths,
        signing=served.signing,
    )
    for name, apikey in served.apikeys.items():
        listener.set_account_apikey(name, apikey)
    for name, secret in served.path_secrets.items():
        listener.set_account_path_secret(name, secret)
    if getattr(args, "all", False):
        serving.follow(listener)
    if not await start_or_explain(listener.start, "listen", args.host, args.port):
        if outages is not None and outage_http is not None:
            await outages.stop()
            await outage_http.aclose()
        return Exit.REFUSED
    if alerts is not None:
        await alerts.start()
    run, gap = await _run_started(store)  # before the first line: a stop asked for from then on records its end
    stopped = asyncio.Event()
    loop = asyncio.get_running_loop()
    undo_sigterm = stop_on_sigterm(stopped)
    serves_all = bool(getattr(args, "all", False))
    undo_sighup: Callable[[], None] = lambda: None  # noqa: E731 - only `listen --all` follows the profiles
    reloader = None
    if listener.port is not None:
        from tui.local.listener_record import remove_record, write_record, write_serving_all
        from tui.webhooks.forwarder import shown_target as forward_shown

        port = listener.port

        # An app attached to this listener shows its forwarding (as the store keeps the target: no secrets).
        forwarding_shown = forward_shown(args.forward_to) if forwarder is not None else None

        def record_profile(name: str) -> None:
            write_record(name, args.host, port, store=store.path, account_paths=not listener.old_paths,
                         all_profiles=serves_all, who="listen", forwarding=forwarding_shown)

        for record in served.records:  # with several profiles, each is served on its own paths only
            record_profile(record)
        if serves_all:
            write_serving_all(args.host, port, store=store.path)

            def announce(name: str, families: tuple[Family, ...], keyed: bool) -> None:
                _print_family_urls(listener, families, family_urls(listener.url, name), keyed, name,
                                   requires=_requires(listener, name))

            reloader = Reloader(listener, lambda: _profiles_now(args), announce, record_profile, remove_record,
                                dict(served.accounts))
            undo_sighup = reloader.install()
    if not served.old_paths:
        keyless = [name for name, keyed in listener.accounts.items() if not keyed]
        signing = (f"{len(served.accounts)} profiles, each verified with its own HMAC key on {ACCOUNT_PREFIX}<profile>/"
                   + (f" ({', '.join(keyless)}: no key)" if keyless else ""))
    elif key is None and Family.SESSION not in families and listener.signing_of(served.account).evolution:
        signing = "no HMAC key (Evolution API signs nothing: its deliveries' apikey is checked on /evolution)"
    elif key is None and Family.SESSION not in families:
        signing = "no HMAC key (Z-API does not sign its callbacks)"
    elif key is None:
        signing = f"no HMAC key (store one in the profile, or set {HMAC_KEY_ENV}, to verify signatures)"
    elif listener.strict and (_requires(listener, served.account) or Family.INSTANCE not in families):
        signing = "HMAC key set; unsigned or badly signed events are refused (401) on every path"
    elif listener.strict:
        signing = "HMAC key set; unsigned or badly signed events are refused (401), except unsigned instance callbacks"
    else:
        signing = "HMAC key set; unsigned or badly signed events are stored and flagged"
    from tui.webhooks.forwarder import shown_target

    # As the store keeps the target: no user:password, no query (an app's shared secret often rides there).
    forwarding = f"; forwarding to {shown_target(args.forward_to)}" if forwarder is not None else ""
    alerting = f"; {alerts.describe()}" if alerts is not None else ""
    print(f"listening on {listener.url}; store {store.path}; {signing}{forwarding}{alerting}", file=sys.stderr,
          flush=True)
    if first_line_out is not None:
        first_line_out()
    if served.old_paths:
        _print_family_urls(listener, families, family_urls(listener.url), listener.has_hmac_key,
                           requires=_requires(listener, served.account))
    for name, keyed in listener.accounts.items():
        _print_family_urls(listener, served.account_families[name], family_urls(listener.url, name), keyed, name,
                           requires=_requires(listener, name))
    print(f"  largest body accepted: {listener.max_body} bytes", file=sys.stderr, flush=True)
    catching_up: asyncio.Task[None] | None = None
    if gap is not None:
        profiles = _profile_names(served)
        reading = "; reading their histories of it" if profiles else ""
        print(f"  not listening {gap.words()} (since the last run ended): what the gateways sent then was not "
              f"received{reading}", file=sys.stderr, flush=True)
        if profiles:
            catching_up = loop.create_task(_catch_up(store, gap, served, args), name="catch up")
    try:
        await stopped.wait()
    finally:
        if catching_up is not None and not catching_up.done():
            catching_up.cancel()
            with contextlib.suppress(BaseException):
                await catching_up
        if outages is not None:
            await outages.stop()
        if outage_http is not None:
            await outage_http.aclose()
        undo_sigterm()
        undo_sighup()
        if reloader is not None:
            await reloader.wait()
        from tui.local.listener_record import remove_record, remove_serving_all

        for record in reloader.served if reloader is not None else served.records:
            remove_record(record)
        if serves_all:
            remove_serving_all()
        # The whole stop stays within 2 s in every state (issue 13): the forwards' grace runs from the signal,
        # beside the listener's own (STOP_GRACE, for requests being stored), not after it.
        forwards_by = loop.time() + FORWARD_STOP_GRACE
        store.stop_waiting()  # requests waiting for another program's lock are answered now, not after it
        await listener.stop()
        # Not while the store is failing: a lock another program holds would keep the stop waiting for the write
        # (30 s); the next run reads a run with no end as ended at its newest event (tui.core.catchup).
        if run is not None and not store.health.failing:
            await _run_stopped(store, run)
        if forwarder is not None and forwarder.pending:
            # A forward already under way usually ends in milliseconds: let it finish and be recorded.
            with contextlib.suppress(TimeoutError):
                await forwarder.wait_idle(max(0.0, forwards_by - loop.time()))
        if alerts is not None:  # the alerts of the last events go out within the same grace
            await alerts.stop(max(0.0, forwards_by - loop.time()))
        printer.flush()  # the lines of the last events, before the summary
        again = f"; {listener.duplicates} received again, stored as duplicates" if listener.duplicates else ""
        not_kept = listener.rejections.not_kept
        counted = f" ({not_kept} of them counted, not stored one by one: a flood)" if not_kept else ""
        print(f"stopped: {listener.received} events stored, {listener.rejected} rejected{counted}{again}",
              file=sys.stderr)
    return Exit.OK


def _now_us() -> int:
    import time

    return time.time_ns() // 1000


async def _run_started(store: EventStore) -> tuple[int | None, Gap | None]:
    """Record this run in the store (the catch-up's gap, tui.core.catchup): its id and the gap since the last run
    ended. (None, None) when the store cannot record it (read-only, failing): its health line says why."""
    from tui.core.catchup import listener_started

    try:
        run, gap = await asyncio.to_thread(store.write, lambda connection: listener_started(connection, _now_us()))
    except Exception as error:
        log.debug("listener runs: %s", error)
        return None, None
    return run, gap


def _profile_names(served: _Served) -> list[str]:
    """The profiles this listener serves (none for the sandbox's: its gateway starts afresh)."""
    return list(served.accounts) if served.accounts else [served.account] if served.account else []


async def _catch_up(store: EventStore, gap: Gap, served: _Served, args: argparse.Namespace) -> None:
    """In the background, while events come in: each served profile's messages of `gap`, read from its gateway's
    history and stored once, marked recovered (tui.core.catchup); one line each ("catch-up: 20 messages recovered
    from 03:10–03:42 (shop, WuzAPI)"), or the gap named."""
    from tui.api.gateway_http import GatewayHttp
    from tui.core.catchup import catch_up_accounts
    from tui.local.config import load_profiles

    names = _profile_names(served)
    try:
        profiles = {profile.name: profile for profile in await asyncio.to_thread(load_profiles)}
        async with GatewayHttp(timeout=10.0) as http:
            # Whose inbox: the profile's on its own /a/<profile>/ paths, the store's only one on the old paths.
            accounts = [await _profile_account(http, profiles[name], "" if served.old_paths else name, args)
                        for name in names if name in profiles]
            results = await catch_up_accounts(store, gap, accounts)
    except Exception as error:  # the store or the profiles failed: the gap stays as said above
        print(f"catch-up: not done: {error}", file=sys.stderr, flush=True)
        return
    for result in results:
        _say_caught_up(result, names)


def _say_caught_up(result: CatchUp, names: list[str]) -> None:
    """On the old paths the store's one inbox is "": the (first) profile served names it."""
    print(f"catch-up: {result.words()} ({result.account or (names or [''])[0]}, {result.gateway})",
          file=sys.stderr, flush=True)


async def _profile_account(http: GatewayHttp, profile: Profile, inbox: str,
                           args: argparse.Namespace) -> AccountClients:
    """A served profile's family clients, to read its gateway's history with into `inbox`."""
    from tui.core.calls import profile_secrets
    from tui.core.catchup import AccountClients, profile_clients

    secrets = await asyncio.to_thread(profile_secrets, profile.name, insecure_storage=bool(
        profile.secrets_file or args.insecure_storage))
    return AccountClients(inbox, profile_clients(http, profile, secrets))


class _Serving:
    """The profiles served now: those of the start, or, once `follow`ed, the accounts a `listen --all` listener
    serves (its SIGHUP reloads add and remove them)."""

    def __init__(self, served: _Served) -> None:
        self.served = served
        self._listener: Listener | None = None

    def follow(self, listener: Listener) -> None:
        self._listener = listener

    def names(self) -> list[str]:
        return list(self._listener.accounts) if self._listener is not None else _profile_names(self.served)

    def inbox_of(self, account: str | None) -> str:
        """The inbox an account's events feed: "" for the profile on the old paths (the store of one account), else
        its own (a profile a reload added is never the old paths')."""
        listener = self._listener
        if listener is None:
            return "" if self.served.old_paths else account or ""
        return "" if listener.old_paths and account == listener.account else account or ""


def _outage_catch_up(store: EventStore, serving: _Serving, args: argparse.Namespace,
                     http: GatewayHttp) -> OutageCatchUp:
    """Each served account's disconnected periods, recorded from its connection events and caught up when it is
    connected again (tui.core.catchup.outages), said as the start's catch-up is."""
    from tui.core.catchup import OutageCatchUp, family_only
    from tui.local.config import load_profiles

    async def clients_for(inbox: str, family: str) -> AccountClients | None:
        names = serving.names()
        name = inbox or (names or [""])[0]
        profile = next((profile for profile in await asyncio.to_thread(load_profiles) if profile.name == name), None)
        if profile is None or name not in names:
            return None
        return family_only(await _profile_account(http, profile, serving.inbox_of(name), args), family)

    return OutageCatchUp(store, clients_for, lambda result: _say_caught_up(result, serving.names()),
                         inbox_of=serving.inbox_of)


async def _run_stopped(store: EventStore, run: int) -> None:
    from tui.core.catchup import listener_stopped

    try:
        await asyncio.to_thread(store.write, lambda connection: listener_stopped(connection, run, _now_us()))
    except Exception as error:
        log.debug("listener runs: %s", error)


def _alerts_from_flags(args: argparse.Namespace) -> HeadlessAlerts | None:
    """The alerts `--alert-command`/`--alert-webhook` ask for (None: neither); ValueError naming the flag that
    cannot be used, before anything starts."""
    from tui.api.redaction import redact_url_secrets
    from tui.core.alerts.headless import HeadlessAlerts
    from tui.local.forward_targets import ForwardTargetRefused

    command, webhook = getattr(args, "alert_command", None), getattr(args, "alert_webhook", None)
    try:
        return HeadlessAlerts.from_flags(command, webhook, allow_remote=args.allow_remote,
                                         report=lambda line: print(line, file=sys.stderr, flush=True))
    except ForwardTargetRefused as error:  # it may quote the URL: its token= masked
        raise ValueError(f"--alert-webhook: {redact_url_secrets(str(error))}") from None
    except ValueError as error:
        raise ValueError(f"--alert-command: {error} (give the program and its arguments, as in a shell)") from None


def _print_health(health: StoreHealth) -> None:
    """One line per change of the store's health (called from the store's writer thread)."""
    if health.failing and health.appends_failing:
        line = f"{health}; events are answered 500 (not stored) until it clears"
    elif health.failing:
        line = f"{health}; events are still stored, the search index catches up when it clears"
    else:
        line = f"store recovered: events are stored again — {health.path}"
    print(line, file=sys.stderr, flush=True)


def _requires(listener: Listener, account: str | None) -> bool:
    """Whether unsigned events are refused on every path for `account`: the flag, or what its profile saved."""
    return listener.require_signatures or listener.signing_of(account).require_signatures


def _print_family_urls(
    listener: Listener, families: tuple[Family, ...], urls: dict[PathFamily, str], has_key: bool, account: str = "",
    *, requires: bool,
) -> None:
    """The URLs to give each gateway the profile has: the same paths the app configures (runtime.webhooks.configure_webhooks);
    for `account`, its own paths, named with it and whether it has a key (never the key)."""
    keyed = has_key and listener.strict
    instance_rule = "signature required" if keyed and requires else "unsigned accepted, as Z-API sends"
    session_rule = "signature required" if keyed else "signatures checked, not required"
    whose = f"{account} ({'HMAC key set' if has_key else 'no HMAC key'}): " if account else ""
    named = account or listener.account
    if Family.INSTANCE in families and listener.signing_of(named).evolution:
        apikey = ("apikey checked against the instance key" if listener.has_apikey(named)
                  else "no instance key here: apikey not checked")
        unsigned = "without one refused" if requires and listener.strict else "without one accepted"
        print(f"  {whose}instance family (Evolution API deliveries, and below it per event; {apikey}, {unsigned}): "
              f"{evolution_url(listener.url, account or None)}", file=sys.stderr)
        families = tuple(family for family in families if family is not Family.INSTANCE)
    if Family.INSTANCE in families and listener.has_path_secret(named):
        # Z-API's capability URL: the secret is never printed (a terminal's scrollback, a service's log)
        print(f"  {whose}instance family (Z-API callbacks on the profile's secret URL, believed; `gateway-tui doctor "
              f"--fix` points them there): {with_path_secret(urls[PathFamily.INSTANCE], MASK)}; "
              f"{urls[PathFamily.INSTANCE]} itself: {instance_rule}", file=sys.stderr)
    elif Family.INSTANCE in families:
        print(f"  {whose}instance family (delivery callbacks; {instance_rule}): {urls[PathFamily.INSTANCE]}",
              file=sys.stderr)
    if Family.SESSION in families:
        print(f"  {whose}session family (session events; {session_rule}): {urls[PathFamily.SESSION]}", file=sys.stderr)


def _each(consumers: list[Callable[[StoredEvent], None]]) -> Callable[[StoredEvent], None]:
    """One on_event hook calling each consumer in turn (the JSON printer, the forwarder)."""

    def call_each(event: StoredEvent) -> None:
        for consumer in consumers:
            consumer(event)

    return call_each


def known_names(store: EventStore) -> Callable[[StoredEvent], str]:
    """An event's summary with the number of a LID the store learned after (or before) the event named it alone:
    one indexed read, made only for a summary that says "unknown number"."""
    def rename(event: StoredEvent) -> str:
        try:
            return store.read(lambda c: named_event(c, event.payload, event.summary, inbox_of(event.path)).summary)
        except Exception:  # a failing store: the line as classified
            return event.summary

    return rename


class LinePrinter:
    """By default, one line per stored event on stdout for a person watching: local time, id, kind, verdict,
    summary. A line is formatted at once (no event, body included, is held), and the lines of one moment go out
    together FLUSH_DELAY later in one write: a flood costs a write per batch, not a system call per event (a
    terminal's stdout flushes at every newline), and each line still shows within a twentieth of a second."""

    FLUSH_DELAY = 0.05

    def __init__(self, loop: asyncio.AbstractEventLoop, *,
                 rename: Callable[[StoredEvent], str] | None = None) -> None:
        self._loop = loop
        self._rename = rename  # a summary with the phones the store learned since the event was classified
        self._lines: list[str] = []
        self._timer: asyncio.TimerHandle | None = None
        self._second, self._clock = -1, ""  # the local time of the last second seen: a flood shares a few
        self.broken = False

    def __call__(self, event: StoredEvent) -> None:
        if self.broken:
            return
        second = int(event.received_at.timestamp())
        if second != self._second:
            self._second, self._clock = second, time.strftime("%H:%M:%S", time.localtime(second))
        if self._rename is not None and UNKNOWN_NUMBER in event.summary:
            event = replace(event, summary=self._rename(event))
        self._lines.append(f"{self._clock}  #{event.id:<6} {terminal_line(event)}\n")
        if self._timer is None:
            self._timer = self._loop.call_later(self.FLUSH_DELAY, self.flush)

    def flush(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        lines, self._lines = self._lines, []
        if self.broken or not lines:
            return
        try:
            sys.stdout.write("".join(lines))
            sys.stdout.flush()
        except BrokenPipeError:
            self.broken = True  # the reading program went away; keep storing events, stop writing lines


class _JsonLinePrinter:
    def __init__(self) -> None:
        self.broken = False

    def flush(self) -> None:
        """Each line is written and flushed as its event arrives: nothing waits."""

    def __call__(self, event: StoredEvent) -> None:
        if self.broken:
            return
        try:
            sys.stdout.write(event.to_json_line() + "\n")
            sys.stdout.flush()
        except BrokenPipeError:
            # The reading script went away; keep storing events, stop writing lines.
            self.broken = True


def _log_briefly_to_stderr() -> None:
    """One line per problem: a logged exception (a handler failure, a store error) would print its full
    traceback each time, and a flood of them would become a flood of stderr."""
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)

    def without_traceback(entry: logging.LogRecord) -> bool:
        if entry.exc_info and entry.exc_info[1] is not None:
            entry.msg = f"{entry.getMessage()}: {type(entry.exc_info[1]).__name__}"
            entry.args = ()
            entry.exc_info = None
            entry.exc_text = None
        return True

    for handler in logging.getLogger().handlers:
        handler.addFilter(without_traceback)


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False
