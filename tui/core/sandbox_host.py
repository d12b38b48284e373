"""The embedded sandbox gateway for the app: started in this process (the tests read its state directly), as a
fleet of accounts on one port (`--sandbox --accounts N` here), or already started in a process of its own
(`gateway-tui --sandbox`); its accounts opened with throwaway secrets, its webhooks and keys pointed at the
listener as a user would, its demo chats written into the inbox, and the ids it really has for placeholders.

`deterministic=True` (tests and snapshots): fixed tokens and HMAC key, the sandbox's clock and id factory fixed.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import secrets as _random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from tui.core.accounts.account import SANDBOX_PROFILE, Tokens, sandbox_account_name, sandbox_profile
from tui.core.accounts.accounts import Accounts
from tui.core.errors import StartupError
from tui.core.feed.feed import EventFeed
from tui.core.inbox import now_us
from tui.core.webhook_setup import WebhookSetup
from tui.webhooks.receipts import Status

if TYPE_CHECKING:  # pragma: no cover - imports for type checkers only
    import sqlite3

    from tui.gateways.sandbox import SandboxFleet
    from tui.sandbox.process import SandboxProcess
    from tui.gateways.sandbox import SandboxGateway
    from tui.sandbox.state import SandboxState
    from tui.local.secrets import SecretStore
    from tui.webhooks.store import EventStore

# Fixed secrets of deterministic mode. Only ever used with the in-process sandbox on loopback.
DETERMINISTIC_TOKENS = {
    "instance_token": "sandbox-instance-token",
    "client_token": "sandbox-client-token",
    "session_token": "sandbox-session-token",
}
DETERMINISTIC_HMAC_KEY = "sandbox-hmac-key-0123456789abcdef-deterministic"
# Shown instead of event reception times in deterministic mode: this base plus one second per event id.
DETERMINISTIC_EPOCH = datetime(2025, 1, 1, 12, 0, 0, tzinfo=UTC)
SEEDED_HISTORY_ENDS_BEFORE_US = 5 * 60 * 1_000_000


@dataclass(frozen=True)
class SandboxSamples:
    """(id, name) pairs the sandbox really has: groups (digits; the account is admin of them), communities,
    visible products and contacts (phones); `own`: the account's own phone (what a phone code pairs)."""

    groups: tuple[tuple[str, str], ...]
    communities: tuple[tuple[str, str], ...]
    products: tuple[tuple[str, str], ...]
    contacts: tuple[tuple[str, str], ...]
    own: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class StartSignals:
    """What the runtime's start tells the app while the sandbox starts: `beside_loop` once what runs beside the
    event loop is going, `clients_coming` once the UI need not wait for the clients, `clients_built` awaited as soon
    as the clients can be used."""

    beside_loop: asyncio.Event
    clients_coming: asyncio.Event
    clients_built: Callable[[], Awaitable[None]]


class SandboxHost:
    """The sandbox of a `--sandbox` run (`sandbox` is None until `start`, and outside sandbox mode)."""

    def __init__(self, accounts: Accounts, feed: EventFeed, webhooks: WebhookSetup, *, dialects: tuple[str, str],
                 deterministic: bool, logged_out: bool, process: SandboxProcess | None, accounts_count: int) -> None:
        self._accounts = accounts
        self._feed = feed
        self._webhooks = webhooks
        self.dialects = dialects  # (instance, session) dialect of the embedded sandbox
        self.deterministic = deterministic
        self.logged_out = logged_out
        """The sandbox in this process starts with no phone paired (`--sandbox --logged-out`'s in-process twin)."""
        self.process = process
        """The sandbox already started in a process of its own (`gateway-tui --sandbox`); None: in this one."""
        self.accounts_count = process.accounts if process is not None else accounts_count
        """Accounts the sandbox serves (`--sandbox --accounts N`): with more than one, each is an open account,
        sandbox-01 … sandbox-NN, on its own listener paths with its own key."""
        self.sandbox: SandboxGateway | SandboxProcess | SandboxFleet | None = None

    async def start(self, signals: StartSignals) -> None:
        from tui.local.secrets import MemorySecrets

        hmac_key = DETERMINISTIC_HMAC_KEY if self.deterministic else "sbx-" + _random.token_urlsafe(36)
        secrets = MemorySecrets()  # the sandbox's throwaway secrets: its account keeps them
        if self.process is not None:
            tokens = Tokens.from_names(self.process.tokens)
            _write_tokens(secrets, SANDBOX_PROFILE, tokens)  # in memory: no thread needed
            self.sandbox = self.process
            from tui.sandbox.process import SandboxProcessError

            # The clients' modules and connection pool now, while the sandbox may still be starting, not after it;
            # the clients are built before the UI's first section is mounted (`clients_coming`). The sandbox speaks
            # plain http: no CA bundle is read (it was, in a thread, and the clients waited ~40-50 ms for it).
            signals.beside_loop.set()
            self._accounts.build_http()
            if not self.process.answered():
                signals.clients_coming.set()  # the UI need not wait for the sandbox: its section first
            try:
                await self.process.wait_ready()
            except SandboxProcessError as error:
                raise StartupError(str(error)) from None
            logins = [(instance_id, Tokens.from_names(names)) for instance_id, names in
                      zip(self.process.instance_ids, self.process.account_tokens, strict=True)]
        elif self.accounts_count > 1:
            logins = await self._start_fleet_here()
        else:
            tokens = Tokens.from_names(DETERMINISTIC_TOKENS) if self.deterministic else Tokens.from_names({
                name: _random.token_urlsafe(24) for name in DETERMINISTIC_TOKENS
            })
            await asyncio.to_thread(_write_tokens, secrets, SANDBOX_PROFILE, tokens)
            await self._start_here(tokens)
            logins = [("sandbox", tokens)]
        if len(logins) > 1:
            await self._accounts_started(secrets, logins, signals)
        else:
            await self._started(secrets, logins[0][1], hmac_key, signals)

    async def _start_fleet_here(self) -> list[tuple[str, Tokens]]:
        """`--sandbox --accounts N` in this process (the tests): every account on one port (tui.sandbox.fleet)."""
        from tui.api.dialects import InstanceDialect, SessionDialect
        from tui.gateways.sandbox import SandboxFleet

        def made(number: int, name: str) -> str:
            return f"sandbox-{number:02d}-{name}" if self.deterministic else _random.token_urlsafe(24)

        client_token = made(0, "client-token")
        logins = [(made(number, "instance-token"), made(number, "session-token"))
                  for number in range(1, self.accounts_count + 1)]
        fleet = SandboxFleet(
            accounts=self.accounts_count, admin_token=_random.token_urlsafe(24), client_token=client_token,
            logins=logins, instance_dialect=InstanceDialect(self.dialects[0]),
            session_dialect=SessionDialect(self.dialects[1]),
        )
        self.sandbox = fleet
        await fleet.start()
        return [(account.instance_id, Tokens(account.gateway.instance_token, client_token, account.gateway.session_token))
                for account in fleet.accounts]

    async def _accounts_started(self, secrets: SecretStore, logins: list[tuple[str, Tokens]],
                                signals: StartSignals) -> None:
        """The accounts of `--sandbox --accounts N`: sandbox-01 … (the first current), each with its tokens and an
        HMAC key of its own in the in-memory secrets, all watched, served on their own `/a/<name>/` listener paths,
        and each sandbox account's webhooks and key pointed there, so its traffic lands under it."""
        from tui.api.models import HmacKey
        from tui.api.operations import Family
        from tui.local.paths import profile_events_path
        from tui.local.secrets import SecretName

        assert self.sandbox is not None
        base = self.sandbox.url.rstrip("/")
        accounts = self._accounts
        accounts.all = []
        for number, (instance_id, tokens) in enumerate(logins, start=1):
            name = sandbox_account_name(number)
            key = (f"{DETERMINISTIC_HMAC_KEY}-{number:02d}" if self.deterministic
                   else "sbx-" + _random.token_urlsafe(36))
            await asyncio.to_thread(_write_tokens, secrets, name, tokens)
            await asyncio.to_thread(secrets.set, name, SecretName.HMAC_KEY, key)
            accounts.all.append(accounts.new(sandbox_profile(base, self.dialects, name=name, instance_id=instance_id),
                                             secrets))
        accounts.current = accounts.all[0]
        http = accounts.build_http()
        for account, (_instance_id, tokens) in zip(accounts.all, logins, strict=True):
            account.connect(http, tokens)
        await signals.clients_built()

        await self._feed.open_store(profile_events_path(SANDBOX_PROFILE))
        store, state = self._feed.store, self.sandbox.state
        ends_before_us = None if self.deterministic else now_us()
        names = [account.name for account in accounts.all]

        def seed_each() -> None:  # every sandbox account has the demo chats, in its own inbox
            assert store is not None
            for name in names:
                seed_sandbox_inbox(store, state, ends_before_us=ends_before_us, account=name)

        seeding = None if store is None else asyncio.ensure_future(asyncio.to_thread(seed_each))
        try:
            await accounts.start_listener("127.0.0.1", 0)  # each account's key from the secrets
            accounts.hmac_key = accounts.keys.get(accounts.all[0].name)
            if self._feed.listener is not None:
                for account in accounts.all:
                    await self._webhooks.configure_webhooks(self._feed.listener.url, account)
                    if account.has(Family.SESSION):  # Evolution's sandbox has no session family (nor HMAC)
                        await account.session_client().set_hmac_key(HmacKey(hmac_key=accounts.keys[account.name] or ""))
        finally:
            if seeding is not None:
                await seeding

    async def _start_here(self, tokens: Tokens) -> None:
        """The sandbox gateway on this process's event loop (the tests: its state is read directly)."""
        from tui.api.dialects import InstanceDialect, SessionDialect
        from tui.gateways.sandbox import SandboxGateway

        counter = itertools.count(1)

        def fixed_clock() -> datetime:
            return DETERMINISTIC_EPOCH

        def numbered_id() -> str:
            return f"SBX{next(counter):08d}"

        sandbox = SandboxGateway(
            instance_id="sandbox",
            instance_token=tokens.instance_token,
            client_token=tokens.client_token,
            session_token=tokens.session_token,
            host="127.0.0.1",
            port=0,
            instance_dialect=InstanceDialect(self.dialects[0]),
            session_dialect=SessionDialect(self.dialects[1]),
            # Deterministic mode: the sandbox's clock and message ids fixed, so screenshots do not differ.
            clock=fixed_clock if self.deterministic else None,
            id_factory=numbered_id if self.deterministic else None,
            logged_out=self.logged_out,
        )
        self.sandbox = sandbox
        await sandbox.start()

    async def _started(self, secrets: SecretStore, tokens: Tokens, hmac_key: str, signals: StartSignals) -> None:
        from tui.api.operations import Family
        from tui.local.paths import profile_events_path

        assert self.sandbox is not None
        base = self.sandbox.url.rstrip("/")
        account = self._accounts.open_current(sandbox_profile(base, self.dialects), secrets)
        # The clients first: the gateway answers from here on, and the app reads its status while the store, the
        # listener and the webhooks are set up (bench/start_interactive.py: ~150 ms sooner "connected").
        account.connect(self._accounts.build_http(), tokens)
        await signals.clients_built()

        await self._feed.open_store(profile_events_path(SANDBOX_PROFILE))
        # The demo chats are written (once per store) in a thread while the listener starts and the gateway is
        # configured: mostly SQLite commits, which need not hold up the rest of the start.
        store = self._feed.store
        seeding = None if store is None else asyncio.ensure_future(
            asyncio.to_thread(seed_sandbox_inbox, store, self.sandbox.state,
                              ends_before_us=None if self.deterministic else now_us()))
        try:
            await self._accounts.start_listener("127.0.0.1", 0)
            if self._feed.listener is not None:
                await self._webhooks.configure_webhooks(self._feed.listener.url)
                if account.has(Family.SESSION):  # Evolution's sandbox has no session family (nor HMAC)
                    await self._webhooks.set_hmac_key(hmac_key)
        finally:
            if seeding is not None:
                await seeding

    def samples(self) -> SandboxSamples | None:
        """Ids that exist in the running sandbox (read from its state, not copied), for placeholders and
        completion; None outside sandbox mode."""
        if self.sandbox is None:
            return None
        state = self.sandbox.state
        groups = [(group.digits, group.name) for group in state.groups.values()]
        admin_groups = [(g.digits, g.name) for g in state.groups.values() if g.is_admin(state.own_phone)]
        return SandboxSamples(
            groups=tuple(admin_groups or groups),
            communities=tuple((c.community_id, c.name) for c in state.communities.values()),
            products=tuple((p.product_id, p.name) for p in state.products.values() if not p.is_hidden),
            contacts=tuple((c.phone, c.name) for c in state.contacts.values()),
            own=((state.own_phone, "your own phone"),),
        )

    async def stop(self) -> None:
        """Stop the sandbox; a sandbox process is stopped for good (a retry starts the sandbox in this one)."""
        if self.sandbox is not None:
            with contextlib.suppress(Exception):
                await self.sandbox.stop()
        if self.process is not None:  # stopped for good (above, or before it was used): a retry starts
            process, self.process = self.process, None  # the sandbox in this process instead
            with contextlib.suppress(Exception):
                await process.stop()


def _write_tokens(store: SecretStore, profile: str, tokens: Tokens) -> None:
    for name, value in tokens.by_secret().items():
        store.set(profile, name, value)


def seed_sandbox_inbox(store: EventStore, state: SandboxState, *, ends_before_us: int | None = None,
                       account: str = "") -> None:
    """The sandbox's demo chats in the inbox: names from its contact and group lists, and the seeded history
    (once per store: a chat that already has messages keeps them). With `ends_before_us` (a live sandbox) the
    history keeps its spacing but ends a few minutes before that moment, so the inbox reads as this morning's
    chats rather than a day in 2025; deterministic runs keep the history's own times. `account`: whose inbox (one of
    `--sandbox --accounts N`'s)."""
    from tui.webhooks.conversations import Inbox
    from tui.webhooks.inbox_changes import ChatName, NameSource, NewMessage, StatusChange, is_group
    from tui.webhooks.inbox_sql import add_message, apply, set_names
    from tui.gateways.render import render_whatsmeow

    history = state.history()
    shift_us = 0
    if ends_before_us is not None and history:
        newest_us = max(int(item.at.timestamp() * 1_000_000) for item in history)
        shift_us = ends_before_us - SEEDED_HISTORY_ENDS_BEFORE_US - newest_us

    seeded = {row.chat_id for row in Inbox(store, account).conversations(limit=10_000)}
    names = [ChatName(phone, contact.name, NameSource.LIST) for phone, contact in state.contacts.items()]
    names += [ChatName(group.jid, group.name, NameSource.LIST) for group in state.groups.values()]

    def write(connection: sqlite3.Connection) -> None:  # one transaction: a commit each cost ~35 ms an account
        set_names(connection, names, account)
        for item in history:
            if item.chat in seeded:
                continue
            kind, body = render_whatsmeow(item.content)
            sender = None
            if item.sender is not None and is_group(item.chat):
                sender = state.contact_name(item.sender) or item.sender
            add_message(connection, NewMessage(item.chat, item.sender is None, kind, body, item.message_id, sender),
                        int(item.at.timestamp() * 1_000_000) + shift_us, None, account)
            if item.sender is None:  # the history's own messages were read long ago
                apply(connection, [StatusChange((item.message_id,), Status.READ)], 0, None, account)

    store.write(write)
