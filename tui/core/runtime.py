"""The lifecycle of one running app: start, stop, and which accounts are open. The work is done by the services it
builds and holds (docs/ARCHITECTURE.md, "Services, handed down"), each with a typed interface of its own:

    runtime = Runtime(sandbox=True)
    runtime.bus.subscribe(EventStored, on_event)   # tui.core.feed.bus: everything that happens, typed
    runtime.request_log.subscribe(on_exchange)
    await runtime.start()                          # servers, clients, gateway configuration
    await runtime.current.instance_client().send_poll(...)
    await runtime.webhooks.set_hmac_key("a" * 32)  # tui.core.webhook_setup: gateway op 17 + listener + secrets
    await runtime.stop()

`feed` (tui.core.feed.feed): the store, the listener, the forwarder; `open_accounts` (tui.core.accounts.accounts):
the open accounts, switching, dialects, the Fleet board; `webhooks` (tui.core.webhook_setup): pointing, fixing and
checking webhooks, the HMAC key, the doctor's inputs; `inbox_service` (tui.core.inbox): recording sends, media
files, contact names; `sandbox_host` (tui.core.sandbox_host): the embedded sandbox; `display` (tui.core.display):
the run's details as shown; `alerts` (tui.core.alerts.service): the alerts open per account. They exist from construction and do their work once started; `services` bundles them
for the UI.

Heavy modules (httpx, pydantic, aiohttp, keyring) are imported inside `start()`, never at import time, so
importing this module costs nothing before the app's first frame.

Sandbox mode: in-memory secrets, random tokens and a throwaway HMAC key, the sandbox gateway and the listener
on 127.0.0.1 port 0 (the gateway in this process, or, given a started `tui.sandbox.process.SandboxProcess` as
`gateway-tui --sandbox` does, in a process of its own: its tokens, and `runtime.sandbox.state` is then a copy of
the seeded state, not the live one), and the gateway configured through the API as a user would: delivery URL (op 16) →
listener `/delivery`, session webhook (op 24) → listener `/session` with Message, ReadReceipt and
ChatPresence active, HMAC key (op 17).

`deterministic=True` (tests and snapshots): fixed tokens and HMAC key, the sandbox's clock and id factory
fixed, and `display.scrub()` (tui.core.display) hides the random ports that would otherwise make screenshots differ from run to run (the UI's
`tui.ui.widgets.timefmt` hides wall-clock times and durations the same way, given `runtime.deterministic`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

# The inbox's row types and marks, for the UI (which reaches the webhooks layer only through the runtime): from the
# modules that hold them, not the inbox's SQL or the event store's (neither is read before the app takes keys).
from tui.webhooks.receipts import STATUS_MARKS, Status, stuck  # noqa: F401
from tui.webhooks.rows import ConversationRow, MessageRow, Step, Timeline  # noqa: F401

# The account (one profile's clients, secrets, dialects and events), its errors, and the services, for the UI.
from tui.core.accounts.account import SANDBOX_PROFILE, Account, ClientsNotReady, Opening, Tokens  # noqa: F401
from tui.core.accounts.accounts import MAX_ACCOUNTS, Accounts, serve_apikey
from tui.core.alerts.service import AlertService
from tui.core.display import Display
from tui.core.errors import SetupRequired, StartupError
from tui.core.feed.bus import EventBus, EventStored  # noqa: F401
from tui.core.feed.feed import EventFeed
from tui.core.inbox import InboxService, MediaUnavailable  # noqa: F401
from tui.core.sandbox_host import (  # noqa: F401
    DETERMINISTIC_EPOCH,
    DETERMINISTIC_HMAC_KEY,
    DETERMINISTIC_TOKENS,
    SandboxHost,
    SandboxSamples,
    StartSignals,
    seed_sandbox_inbox,
)
from tui.core.services import Services
from tui.core.webhook_setup import HmacDisagreement, WebhookSetup  # noqa: F401
from tui.core.accounts.fleet_board import FleetRow  # noqa: F401 - the Fleet section's rows (the standard library only)

if TYPE_CHECKING:  # pragma: no cover - imports for type checkers only
    from tui.api.client import InstanceClient, SessionClient
    from tui.api.exchange import RequestLog
    from tui.local.config import Profile
    from tui.core.doctor import DoctorRecord
    from tui.gateways.sandbox import SandboxFleet
    from tui.sandbox.process import SandboxProcess
    from tui.gateways.sandbox import SandboxGateway
    from tui.local.secrets import SecretStore
    from tui.webhooks.events import StoredEvent
    from tui.webhooks.forwarder import ForwardAttempt
    from tui.webhooks.conversations import Inbox
    from tui.webhooks.listener import Listener
    from tui.webhooks.store import EventStore

REQUEST_LOG_SIZE = 500


def duplicate_marker(event: StoredEvent) -> str:
    """The events panel's mark for a duplicate, as the CLI's (`tui.webhooks.events.duplicate_marker`), its module
    imported at the first event shown rather than with the UI's first frame."""
    from tui.webhooks.events import duplicate_marker as marker

    return marker(event)


class Runtime:
    """Starts and stops a run and knows which accounts are open; holds the services that do the work. What is
    process-wide lives in the services (the listener, the event store, the sandbox host, the request log,
    forwarding); each profile's clients, secrets and dialects live in its `Account`."""

    def __init__(
        self,
        *,
        sandbox: bool = False,
        profile: str | None = None,
        insecure_storage: bool = False,
        deterministic: bool = False,
        http_timeout: float = 10.0,
        sandbox_dialects: tuple[str, str] = ("spec", "spec"),
        sandbox_process: SandboxProcess | None = None,
        sandbox_logged_out: bool = False,
        profiles: tuple[str, ...] = (),
        all_profiles: bool = False,
        max_accounts: int = MAX_ACCOUNTS,
        sandbox_accounts: int = 1,
    ) -> None:
        self.sandbox_mode = sandbox
        self.more_profiles = profiles
        """The profiles opened beside the current one (`--profiles a,b,c`; the first is current without --profile)."""
        self.all_profiles = all_profiles
        self.max_accounts = max_accounts
        self.start_beside_loop = asyncio.Event()
        """Set once the start has set going what runs beside the event loop before the clients can exist (the sandbox
        process's answer; without one, the start's first step, the profiles file read in a thread): the UI may take
        the loop for its own start-up work meanwhile (the first section's import)."""
        self.clients_coming = asyncio.Event()
        """Set once the clients are built, or the start must wait for the sandbox process to answer, or the start
        has ended (or at once without a sandbox process): the UI mounts its first section from then on, while the
        header's first status read runs (before, its ~60 ms held the clients and that read back)."""
        if sandbox_process is None:  # the start's steps run on the loop: nothing to wait for but its beginning
            self.clients_coming.set()
        asked_name = SANDBOX_PROFILE if sandbox else (profile or (profiles[0] if profiles else None))
        self.insecure_storage = insecure_storage
        self.deterministic = deterministic
        self.started = False
        self.request_log: RequestLog = _new_request_log()
        doctor_records: dict[str, DoctorRecord] = {}  # each account's newest doctor report: written by the
        # webhook set-up, shown by the Fleet board
        self.bus = EventBus()
        self.feed = EventFeed(self.bus, owner_of=lambda event: self.open_accounts.owner_of(event))
        self.open_accounts = Accounts(self.feed, self.request_log, doctor_records, sandbox_mode=sandbox,
                                      http_timeout=http_timeout)
        self.open_accounts.asked_name = asked_name
        self.webhooks = WebhookSetup(self.open_accounts, self.feed, doctor_records, sandbox_mode=sandbox)
        self.inbox_service = InboxService(self.bus, self.feed, self.open_accounts, sandbox_mode=sandbox,
                                          scrub=lambda text: self.display.scrub(text))
        self.sandbox_host = SandboxHost(
            self.open_accounts, self.feed, self.webhooks, dialects=sandbox_dialects, deterministic=deterministic,
            logged_out=sandbox_logged_out, process=sandbox_process, accounts_count=sandbox_accounts)
        self.display = Display(self.feed, self.sandbox_host, self.webhooks, deterministic=deterministic)
        self.alerts = AlertService(self.bus)
        self.services = Services(self.bus, self.feed, self.open_accounts, self.webhooks, self.inbox_service,
                                 self.sandbox_host, self.display, self.alerts)
        """The services in one typed bundle, for the UI to hand down."""
        self._on_clients: Callable[[], Awaitable[None]] | None = None

    def __repr__(self) -> str:
        mode = "sandbox" if self.sandbox_mode else f"profile={self.profile_name!r}"
        hmac = "set" if self.webhooks.hmac_key_set else "none"
        return f"<Runtime {mode} started={self.started} hmac={hmac}>"

    # -- which accounts are open, and what the current one has -------------------------------------------------

    @property
    def profile_name(self) -> str | None:
        """The profile this run opens (`Accounts.asked_name`: None until the start picks one)."""
        return self.open_accounts.asked_name

    @profile_name.setter
    def profile_name(self, name: str | None) -> None:
        self.open_accounts.asked_name = name

    @property
    def accounts(self) -> list[Account]:
        """The open accounts, in the board's order."""
        return self.open_accounts.all

    @property
    def current(self) -> Account | None:
        """The account the UI works on (None until start has loaded its profile)."""
        return self.open_accounts.current

    @property
    def profile(self) -> Profile | None:
        """The current account's profile (None before start has loaded it)."""
        return self.current.profile if self.current is not None else None

    @property
    def secrets(self) -> SecretStore | None:
        return self.current.secrets if self.current is not None else None

    @property
    def instance(self) -> InstanceClient | None:
        """The current account's instance-family client (None before the clients are built, or without the family)."""
        return self.current.instance if self.current is not None else None

    @property
    def session(self) -> SessionClient | None:
        """The current account's session-family client (None before the clients are built, or without the family)."""
        return self.current.session if self.current is not None else None

    @property
    def inbox(self) -> Inbox | None:
        """The current account's conversations (`InboxService.inbox`)."""
        return self.inbox_service.inbox

    @property
    def store(self) -> EventStore | None:
        return self.feed.store

    @property
    def listener(self) -> Listener | None:
        return self.feed.listener

    @property
    def sandbox(self) -> SandboxGateway | SandboxProcess | SandboxFleet | None:
        return self.sandbox_host.sandbox

    # -- life cycle -----------------------------------------------------------------------------------------

    async def start(self, on_clients: Callable[[], Awaitable[None]] | None = None) -> None:
        """Start everything. Raises SetupRequired when there is no profile (real mode) and nothing else ran.

        `await on_clients()` as soon as the clients can be used, in sandbox mode: before the store, the listener and
        the webhook set-up, so that the app reads the connection first instead of after them."""
        if self.started:
            return
        self._on_clients = on_clients
        if self.sandbox_host.process is None:
            self.start_beside_loop.set()  # the UI's next step runs once this start waits for its first thread
        try:
            if self.sandbox_mode:
                self.open_accounts.run_name = SANDBOX_PROFILE
                await self.sandbox_host.start(StartSignals(self.start_beside_loop, self.clients_coming,
                                                           self._clients_built))
            else:
                await self._start_profile()
        except BaseException:
            await self.stop()
            raise
        finally:
            self.start_beside_loop.set()
            self.clients_coming.set()
        self.started = self.open_accounts.started = True
        self.inbox_service.started()  # the inbox opened before the clients were ready: its names now

    async def stop(self) -> None:
        """Stop servers, close the HTTP pool and the store. Safe to call twice or after a failed start."""
        self.started = self.open_accounts.started = False
        await self.open_accounts.stop_opening()
        await self.inbox_service.stop()
        await self.feed.stop()
        await self.sandbox_host.stop()
        await self.open_accounts.close_http()
        await self.feed.close_store()

    async def _clients_built(self) -> None:
        self.clients_coming.set()
        callback, self._on_clients = self._on_clients, None
        if callback is not None:
            await callback()

    async def _start_profile(self) -> None:
        from tui.local import config

        profiles = {profile.name: profile for profile in await asyncio.to_thread(config.load_profiles)}
        if not profiles:
            raise SetupRequired("no profile yet")
        name = self.profile_name
        if name is None:
            name = "default" if "default" in profiles else next(iter(profiles))
        if name not in profiles:
            known = ", ".join(sorted(profiles))
            raise StartupError(f"no profile named {name!r} (known: {known}); see `gateway-tui profile list`")
        self.profile_name = self.open_accounts.run_name = name
        profile = profiles[name]
        accounts = self.open_accounts
        others = accounts.other_profiles(name, profiles, self.more_profiles, everyone=self.all_profiles,
                                         at_most=self.max_accounts)

        from tui.local import secrets as secret_module

        if profile.secrets_file or any(profiles[other].secrets_file for other in others):
            self.insecure_storage = True  # set up without a keyring: its secrets are in the 0600 file, no flag needed
        secrets = await asyncio.to_thread(secret_module.open_secret_store_for_run, self.insecure_storage)
        account = accounts.open_current(profile, secrets)
        environ: dict[str, str] | None = None if not others else {}  # the GATEWAY_TUI_* variables name one account's secrets
        resolved = await asyncio.to_thread(secret_module.resolve_secrets, name, secrets, environ,
                                           secret_module.secrets_to_open(profile.families))
        accounts.hmac_key = resolved.get(secret_module.SecretName.HMAC_KEY) or None
        # The others are open from here on, their secrets still to read: the listener serves their paths from its
        # first request, answering 503 until their key is known (open_others).
        for other in others:  # watched beside the current one: clients built (no I/O), never connected by us
            more = accounts.new(profiles[other], secrets)
            more.reading()
            accounts.all.append(more)

        http = accounts.build_http()
        from tui.api.gateway_http import over_tls

        if any(over_tls(url) for url in (profile.base_url, profile.session_url) if url):
            http.prepare_tls()  # the CA bundle, read in a thread while the store and the listener start
        from tui.core.feed.attached import find_listener
        from tui.local.paths import fleet_events_path, profile_events_path

        # A listener of another process (`gateway-tui listen`, another app) already serving one of these profiles:
        # this run reads the store it writes instead of binding a port (issue 32).
        running = await asyncio.to_thread(find_listener, [name, *others])
        if running is not None and running.store is not None:
            await self.feed.open_store(running.store)
            if self.feed.store is not None:
                await accounts.attach(running)  # forwarding, its queue and the signature policy are the listener's
        else:
            # With several accounts open, the store they share (as `listen --all` writes it; each event names its
            # account).
            await self.feed.open_store(fleet_events_path() if others else profile_events_path(name))
            if self.feed.store is not None and profile.forward_to:
                await self.feed.set_forward_target(profile.forward_to, allow_remote=profile.forward_allow_remote)
            await accounts.start_listener(profile.listener_host or "127.0.0.1", profile.listener_port)
        account.connect(http, Tokens.from_secrets(resolved))
        if self.feed.listener is not None:
            serve_apikey(self.feed.listener, account)  # known now that its client is built
        if others and isinstance(secrets, secret_module.KeyringSecrets):
            # Each keyring read is a Secret Service round trip (~15 ms over D-Bus: seconds for a hundred accounts):
            # read after the start, which the current account alone needed.
            accounts.start_opening_others()
        elif others:
            await accounts.open_others()  # the 0600 file (or memory): read at once, the start ends with all of them open

def describe_forward_attempt(attempt: ForwardAttempt, *, duration: str) -> str:
    """The forwarder's own line about an attempt, with `duration` as the UI shows it (tui.ui.widgets.timefmt)."""
    from tui.webhooks.forwarder import describe

    return describe(attempt, duration=duration)


def _new_request_log() -> RequestLog:
    # tui.api.exchange imports only the standard library (and tui.api.redaction), so this is cheap.
    from tui.api.exchange import RequestLog

    return RequestLog(REQUEST_LOG_SIZE)
